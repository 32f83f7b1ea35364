//! The value codec's targets: `type_parser`, `value_decoder` and `literal_parser`.

use cqlwire_codec::types::{
    parse_type, CqlType, NativeType, TypeErrorKind, UdtRegistry, UdtType, MAX_TYPE_DEPTH,
};
use cqlwire_codec::value::{self, cql, json, print, Value};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------------
// Types.
// ---------------------------------------------------------------------------------------------------

/// UDTs declared for the value targets' types.
const UDT_DECLARATIONS: [&str; 2] = [
    "addr(street text, zip int)",
    "person(name text, addresses list<frozen<addr>>, scores map<text, frozen<tuple<int, decimal>>>)",
];

/// The types `value_decoder` picks from with its first byte: every native, nested collections,
/// tuples, UDTs, and vectors of fixed-size and vint-prefixed subtypes (nested too).
pub(super) const DECODER_TYPES: [&str; 48] = [
    "ascii",
    "bigint",
    "blob",
    "boolean",
    "counter",
    "date",
    "decimal",
    "double",
    "duration",
    "float",
    "inet",
    "int",
    "smallint",
    "text",
    "time",
    "timestamp",
    "timeuuid",
    "tinyint",
    "uuid",
    "varint",
    "list<int>",
    "set<text>",
    "map<text, int>",
    "list<frozen<list<int>>>",
    "map<int, frozen<map<text, blob>>>",
    "set<frozen<set<varint>>>",
    "list<frozen<map<uuid, frozen<list<duration>>>>>",
    "tuple<int, text, list<int>>",
    "tuple<tuple<int, text>, blob>",
    "tuple<inet, date, time, decimal>",
    "addr",
    "person",
    "list<frozen<addr>>",
    "vector<float, 3>",
    "vector<double, 2>",
    "vector<boolean, 4>",
    "vector<uuid, 1>",
    "vector<bigint, 2>",
    "vector<smallint, 2>",
    "vector<tinyint, 3>",
    "vector<text, 2>",
    "vector<varint, 3>",
    "vector<duration, 2>",
    "vector<frozen<list<int>>, 2>",
    "vector<vector<float, 2>, 2>",
    "vector<vector<text, 2>, 2>",
    "map<text, frozen<vector<float, 2>>>",
    "tuple<vector<timestamp, 2>, vector<date, 1>, vector<addr, 1>>",
];

/// The types `literal_parser` picks from with its first byte.
const LITERAL_TYPES: [&str; 24] = [
    "int",
    "bigint",
    "varint",
    "decimal",
    "float",
    "double",
    "boolean",
    "text",
    "ascii",
    "blob",
    "timestamp",
    "date",
    "time",
    "duration",
    "inet",
    "uuid",
    "list<int>",
    "set<text>",
    "map<text, double>",
    "map<frozen<list<int>>, frozen<set<date>>>",
    "tuple<int, text, timestamp>",
    "person",
    "vector<float, 3>",
    "vector<text, 2>",
];

/// Parses a fixed list of type strings once, with the UDTs of [`UDT_DECLARATIONS`].
pub(super) fn parsed_types<const N: usize>(
    cache: &'static OnceLock<Vec<CqlType>>,
    texts: &[&str; N],
) -> &'static [CqlType] {
    cache.get_or_init(|| {
        let mut udts = UdtRegistry::new();
        for declaration in UDT_DECLARATIONS {
            udts.declare(declaration).expect("the fuzz UDTs declare");
        }
        texts
            .iter()
            .map(|text| parse_type(text, &udts).expect("the fuzz types parse"))
            .collect()
    })
}

/// The type that `selector` picks from `types`.
pub(super) fn pick(types: &[CqlType], selector: u8) -> &CqlType {
    let index = usize::from(selector) % types.len().max(1);
    types.get(index).expect("the type lists are not empty")
}

// ---------------------------------------------------------------------------------------------------
// type_parser
// ---------------------------------------------------------------------------------------------------

/// Parses the last line of the input as a type, after declaring every earlier line as a UDT (errors
/// ignored). An accepted type must display as CQL that parses back to the same type.
pub fn type_parser(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let type_text = lines.next_back().unwrap_or_default();
    let mut udts = UdtRegistry::new();
    for declaration in lines {
        let _ = udts.declare(declaration);
    }
    let Ok(ty) = parse_type(type_text, &udts) else {
        return;
    };
    let shown = ty.to_string();
    let mut redeclared = UdtRegistry::new();
    if !declare_udts(&ty, &mut redeclared) {
        return;
    }
    let reparsed = parse_type(&shown, &redeclared)
        .unwrap_or_else(|e| panic!("`{shown}` (shown for `{type_text}`) does not parse: {e}"));
    assert_eq!(
        without_keyspaces(&reparsed),
        without_keyspaces(&ty),
        "`{type_text}` shows as `{shown}`, which parses to another type"
    );
    if ty.depth() < MAX_TYPE_DEPTH {
        let frozen = format!("frozen<{shown}>");
        match parse_type(&frozen, &redeclared) {
            Ok(t) => assert_eq!(t, reparsed, "`{frozen}` parses to another type"),
            Err(e) => panic!("`{frozen}` does not parse: {e}"),
        }
    }
}

/// Declares the UDTs used by `ty` (innermost first) from their [`UdtType::declaration`]s. False when
/// the round trip cannot be expressed in CQL: two different UDTs share a name, or a UDT (read from
/// a Java class name) is named like a built-in type.
fn declare_udts(ty: &CqlType, udts: &mut UdtRegistry) -> bool {
    match ty {
        CqlType::Native(_) => true,
        CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _) => declare_udts(t, udts),
        CqlType::Map(k, v) => declare_udts(k, udts) && declare_udts(v, udts),
        CqlType::Tuple(components) => components.iter().all(|t| declare_udts(t, udts)),
        CqlType::Udt(udt) => {
            if !udt.fields.iter().all(|(_, t)| declare_udts(t, udts)) {
                return false;
            }
            if let Some(known) = udts.get(&udt.name) {
                return without_keyspace(known) == without_keyspace(udt);
            }
            match udts.declare(&udt.declaration()) {
                Ok(()) => true,
                Err(e) if matches!(e.kind, TypeErrorKind::BuiltInName { .. }) => false,
                Err(e) => panic!(
                    "declaration `{}` of a parsed UDT is refused: {e}",
                    udt.declaration()
                ),
            }
        }
        other => panic!("not covered here: {other:?}"),
    }
}

/// The type with every UDT's keyspace removed (CQL declarations have none).
fn without_keyspaces(ty: &CqlType) -> CqlType {
    match ty {
        CqlType::Native(n) => CqlType::Native(*n),
        CqlType::List(t) => CqlType::List(Box::new(without_keyspaces(t))),
        CqlType::Set(t) => CqlType::Set(Box::new(without_keyspaces(t))),
        CqlType::Vector(t, n) => CqlType::Vector(Box::new(without_keyspaces(t)), *n),
        CqlType::Map(k, v) => CqlType::Map(
            Box::new(without_keyspaces(k)),
            Box::new(without_keyspaces(v)),
        ),
        CqlType::Tuple(components) => {
            CqlType::Tuple(components.iter().map(without_keyspaces).collect())
        }
        CqlType::Udt(udt) => CqlType::Udt(without_keyspace(udt)),
        other => panic!("not covered here: {other:?}"),
    }
}

/// The UDT without its keyspace, fields included.
fn without_keyspace(udt: &UdtType) -> UdtType {
    UdtType {
        keyspace: None,
        name: udt.name.clone(),
        fields: udt
            .fields
            .iter()
            .map(|(name, t)| (name.clone(), without_keyspaces(t)))
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------------
// value_decoder and literal_parser
// ---------------------------------------------------------------------------------------------------

/// Decodes the input after its first byte as a value of the type that byte picks. `explain` must
/// agree with `decode` (and `decode_prefix` must take every byte of an accepted payload); an accepted
/// payload must re-encode to the same bytes, except where the wire rules allow other encodings (varint,
/// decimal, boolean, vints), which must re-encode no longer; the value must survive the encode,
/// CQL-literal and JSON round trips.
pub fn value_decoder(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &DECODER_TYPES), selector);
    let decoded = value::decode(ty, payload);
    let explained = value::explain(ty, payload);
    assert_eq!(
        explained.result, decoded,
        "explain and decode disagree ({ty})"
    );
    let mut previous = 0;
    for line in &explained.lines {
        assert!(
            line.offset >= previous && line.offset.saturating_add(line.len) <= payload.len(),
            "explain line out of order or past the payload ({ty}): {line:?}"
        );
        previous = line.offset;
    }
    check_streamed_text(ty, payload, &decoded);
    check_refusals(ty, payload, &decoded);
    let Ok(value) = decoded else {
        return;
    };
    match value::decode_prefix(ty, payload) {
        Ok((prefix_value, used)) => {
            assert_eq!(
                prefix_value, value,
                "decode_prefix reads another value ({ty})"
            );
            assert_eq!(used, payload.len(), "decode_prefix leaves bytes ({ty})");
        }
        Err(e) => panic!("decode_prefix refuses what decode accepts ({ty}): {e}"),
    }
    let encoded = check_value_forms(ty, &value);
    if has_alternative_encodings(ty) {
        assert!(
            encoded.len() <= payload.len(),
            "re-encoding is longer than the accepted payload ({ty})"
        );
    } else {
        assert_eq!(
            encoded, payload,
            "a non-canonical payload is accepted ({ty})"
        );
    }
}

/// Checks that what `refused::refusals_each` finds in a payload (while decoding it, keeping nothing)
/// is what the rule finds walking the whole decoded value, in the same order, at offsets inside the
/// payload and in byte order; that it fails where decode fails; and that a type `can_be_refused`
/// calls free of refusals has none.
fn check_refusals(ty: &CqlType, payload: &[u8], decoded: &Result<Value, value::DecodeError>) {
    use value::refused::{self, Place, Refusal};
    let mut found = Vec::new();
    let streamed = refused::refusals_each(ty, payload, false, &mut |r| found.push(r));
    let Ok(value) = decoded else {
        assert!(
            streamed.is_err(),
            "refusals_each accepts what decode refuses ({ty})"
        );
        return;
    };
    assert_eq!(
        streamed.ok(),
        Some(payload.len()),
        "refusals_each disagrees with decode ({ty})"
    );
    fn walk(place: Place, ty: &CqlType, value: &Value, out: &mut Vec<Refusal>) {
        out.extend(Refusal::of(place, ty, value));
        match (ty, value) {
            (CqlType::List(t), Value::List(items)) => items
                .iter()
                .for_each(|v| walk(Place::ListElement, t, v, out)),
            (CqlType::Set(t), Value::List(items)) => items
                .iter()
                .for_each(|v| walk(Place::SetElement, t, v, out)),
            (CqlType::Vector(t, _), Value::List(items)) => {
                items.iter().for_each(|v| walk(Place::Other, t, v, out))
            }
            (CqlType::Map(k, t), Value::Map(entries)) => entries.iter().for_each(|(key, v)| {
                walk(Place::MapKey, k, key, out);
                walk(Place::MapValue, t, v, out);
            }),
            (CqlType::Tuple(types), Value::Tuple(items)) => types
                .iter()
                .zip(items)
                .for_each(|(t, v)| walk(Place::Other, t, v, out)),
            (CqlType::Udt(udt), Value::Udt(fields)) => udt
                .fields
                .iter()
                .zip(fields)
                .for_each(|((_, t), (_, v))| walk(Place::Other, t, v, out)),
            _ => {}
        }
    }
    let mut expected = Vec::new();
    walk(Place::Other, ty, value, &mut expected);
    let got: Vec<Refusal> = found.iter().map(|r| r.refusal).collect();
    assert_eq!(
        got, expected,
        "refusals_each misses or adds findings ({ty})"
    );
    let mut previous = 0;
    for r in &found {
        assert!(
            r.offset >= previous && (r.offset < payload.len() || r.offset == 0),
            "a finding out of order or past the payload ({ty}): {r:?}"
        );
        previous = r.offset;
    }
    assert!(
        found.is_empty() || refused::can_be_refused(ty),
        "can_be_refused({ty}) is false, yet {found:?}"
    );
}

/// Checks that the streamed printer writes what formatting the whole decoded value gives, in CQL and
/// JSON, and on a malformed payload fails as decode does, writing nothing.
fn check_streamed_text(ty: &CqlType, payload: &[u8], decoded: &Result<Value, value::DecodeError>) {
    for form in [print::TextForm::Cql, print::TextForm::Json] {
        let mut out = Vec::new();
        let streamed = print::write_text(ty, payload, false, form, &|s| s.into(), &mut out);
        match (streamed, decoded) {
            (Ok(()), Ok(value)) => {
                let whole = match form {
                    print::TextForm::Cql => cql::format_cql(ty, value),
                    print::TextForm::Json => json::to_json(ty, value).to_string(),
                    other => panic!("not covered here: {other:?}"),
                };
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    whole + "\n",
                    "streamed {form:?} differs ({ty})"
                );
            }
            (Err(print::PrintError::Decode(e)), Err(d)) => {
                assert_eq!(&e, d, "streamed {form:?} fails otherwise ({ty})");
                assert!(out.is_empty(), "half-written {form:?} output ({ty})");
            }
            (streamed, _) => panic!("write_text and decode disagree ({ty}): {streamed:?}"),
        }
    }
}

/// Whether the wire rules let a value of `ty` have more than one encoding: varint and decimal (any
/// two's complement length), boolean (any non-zero byte is true), duration and vint-prefixed vector
/// elements (non-minimal vints).
fn has_alternative_encodings(ty: &CqlType) -> bool {
    match ty {
        CqlType::Native(n) => matches!(
            n,
            NativeType::Varint | NativeType::Decimal | NativeType::Boolean | NativeType::Duration
        ),
        CqlType::Vector(t, _) => t.vector_element_size().is_none() || has_alternative_encodings(t),
        CqlType::List(t) | CqlType::Set(t) => has_alternative_encodings(t),
        CqlType::Map(k, v) => has_alternative_encodings(k) || has_alternative_encodings(v),
        CqlType::Tuple(components) => components.iter().any(has_alternative_encodings),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| has_alternative_encodings(t)),
        other => panic!("not covered here: {other:?}"),
    }
}

/// Parses the input after its first byte as a CQL literal (even first byte) or JSON (odd) of the type
/// the rest of the first byte picks; an accepted value must survive the encode, CQL-literal and JSON
/// round trips.
pub fn literal_parser(data: &[u8]) {
    static TYPES: OnceLock<Vec<CqlType>> = OnceLock::new();
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let ty = pick(parsed_types(&TYPES, &LITERAL_TYPES), selector >> 1);
    let parsed = if selector & 1 == 0 {
        cql::parse_cql(ty, text)
    } else {
        match json::parse_document(text) {
            Ok(document) => json::from_json(ty, &document),
            Err(_) => return,
        }
    };
    if let Ok(value) = parsed {
        check_value_forms(ty, &value);
    }
}

/// Checks that an accepted value encodes and decodes back (the text readers refuse what the codec
/// cannot encode, with its message), prints as a CQL literal that parses back, and converts to JSON
/// that reads back, each time to the same value; returns its encoding.
fn check_value_forms(ty: &CqlType, value: &Value) -> Vec<u8> {
    let encoded = match value::encode(ty, value) {
        Ok(bytes) => bytes,
        Err(e) => panic!("an accepted value does not encode ({ty}): {e}: {value:?}"),
    };
    match value::decode(ty, &encoded) {
        Ok(decoded) => assert_eq!(&decoded, value, "encode/decode changes the value ({ty})"),
        Err(e) => panic!("the encoding of an accepted value does not decode ({ty}): {e}"),
    }
    let literal = cql::format_cql(ty, value);
    let document = json::to_json(ty, value);
    if let Err(repeat) = value::check_no_repeats(ty, value) {
        // A decoded payload may repeat a map key or set element; both text forms refuse it so.
        assert_eq!(
            cql::parse_cql(ty, &literal),
            Err(repeat.clone()),
            "`{literal}` ({ty})"
        );
        assert_eq!(
            json::from_json(ty, &document),
            Err(repeat),
            "{document} ({ty})"
        );
        return encoded;
    }
    match cql::parse_cql(ty, &literal) {
        Ok(parsed) => assert_eq!(&parsed, value, "`{literal}` parses to another value ({ty})"),
        Err(e) => panic!("printed literal `{literal}` does not parse ({ty}): {e}"),
    }
    match json::from_json(ty, &document) {
        Ok(read) => assert_eq!(
            &read, value,
            "JSON {document} reads as another value ({ty})"
        ),
        Err(e) => panic!("printed JSON {document} does not read ({ty}): {e}"),
    }
    encoded
}
