//! Lossless JSON for values: [`to_json`] and its inverse [`from_json`], guided by the type.
//!
//! | CQL type | JSON |
//! | --- | --- |
//! | tinyint, smallint, int, bigint, counter | number |
//! | varint, decimal | string (`"-12"`, `"1.50"`, `"1E+3"`) |
//! | float, double | number in shortest round-trip form; `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | boolean | `true` / `false` |
//! | text, ascii, varchar | string |
//! | blob | `"0x…"` |
//! | uuid, timeuuid, inet, duration | string in the CQL form |
//! | timestamp, date, time | string in the CQL form; a number (raw millis, wire days, nanos) when out of range |
//! | list, set, vector, tuple | array (a tuple that ended early is shorter) |
//! | map | array of `[key, value]` pairs |
//! | UDT | object in field order (fields missing at the end are omitted) |
//! | null / empty | `null` / `{"$empty": true}` |
//!
//! [`from_json`] also accepts numbers as strings and vice versa where unambiguous, and a JSON object
//! for a map (keys read as the key type's text form).

use super::cql::{
    date_text, decimal_text, double_text, duration_text, element_type, entry_types, float_text,
    native_from_text, time_text, timestamp_text, wrong_dimension, LiteralError, LiteralErrorKind,
    MAX_LITERAL_DEPTH,
};
use crate::types::{CqlType, NativeType};
use crate::value::Value;
use serde_json::Value as Json;
use std::borrow::Cow;

/// The key of the object that stands for the empty value: `{"$empty": true}`.
const EMPTY_KEY: &str = "$empty";

/// Why writing JSON into a `Vec` cannot fail.
const WRITE_TO_VEC: &str = "writing to a Vec cannot fail";

/// Compact JSON written straight into a byte buffer, byte for byte as serde_json prints the same
/// document (its string escaping, its integer and shortest round-trip float forms), without
/// building a [`Json`] tree: the writer places the commas.
#[derive(Debug, Default)]
pub struct JsonWriter {
    /// The JSON text written so far.
    pub buf: Vec<u8>,
    /// Whether the next value or key follows another one at its level.
    comma: bool,
    /// Scratch text for [`JsonWriter::display`].
    text: String,
}

impl JsonWriter {
    /// An empty writer.
    pub fn new() -> Self {
        JsonWriter::default()
    }

    /// Empties the buffer (its capacity stays) to start a new document.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.comma = false;
    }

    /// Ends a line of JSON lines: the next value starts a new document.
    pub fn end_line(&mut self) {
        self.buf.push(b'\n');
        self.comma = false;
    }

    /// Writes the comma a value or key needs after a sibling.
    fn separate(&mut self) {
        if self.comma {
            self.buf.push(b',');
        }
    }

    /// Writes a leaf with `f`, after the comma it needs.
    fn leaf(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        self.separate();
        f(&mut self.buf);
        self.comma = true;
    }

    /// `{`.
    pub fn begin_object(&mut self) {
        self.separate();
        self.buf.push(b'{');
        self.comma = false;
    }

    /// `}`.
    pub fn end_object(&mut self) {
        self.buf.push(b'}');
        self.comma = true;
    }

    /// `[`.
    pub fn begin_array(&mut self) {
        self.separate();
        self.buf.push(b'[');
        self.comma = false;
    }

    /// `]`.
    pub fn end_array(&mut self) {
        self.buf.push(b']');
        self.comma = true;
    }

    /// An object key and its colon; the value follows.
    pub fn key(&mut self, key: &str) {
        self.str(key);
        self.buf.push(b':');
        self.comma = false;
    }

    /// A string, escaped as serde_json escapes (`"`, `\\` and the control characters below
    /// 0x20); text without any of them, the common case, is copied as it is.
    pub fn str(&mut self, text: &str) {
        let plain = !needs_escape(text.as_bytes());
        self.leaf(|buf| {
            if plain {
                buf.reserve(text.len() + 2);
                buf.push(b'"');
                buf.extend_from_slice(text.as_bytes());
                buf.push(b'"');
            } else {
                serde_json::to_writer(buf, text).expect(WRITE_TO_VEC);
            }
        });
    }

    /// A value written by `write` as JSON text straight into [`JsonWriter::buf`], after the
    /// comma it needs (`write` must write exactly one JSON value).
    pub fn raw_value<T>(&mut self, write: impl FnOnce(&mut JsonWriter) -> T) -> T {
        self.separate();
        let result = write(self);
        self.comma = true;
        result
    }

    /// A value's `Display` form as a string, through a buffer the writer keeps.
    pub fn display(&mut self, value: &dyn std::fmt::Display) {
        use std::fmt::Write;
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        write!(text, "{value}").expect("writing to a String cannot fail");
        self.str(&text);
        self.text = text;
    }

    /// An array of strings.
    pub fn strs<S: AsRef<str>>(&mut self, items: &[S]) {
        self.begin_array();
        for item in items {
            self.str(item.as_ref());
        }
        self.end_array();
    }

    /// `null`.
    pub fn null(&mut self) {
        self.leaf(|buf| buf.extend_from_slice(b"null"));
    }

    /// `true` or `false`.
    pub fn bool(&mut self, value: bool) {
        self.leaf(|buf| buf.extend_from_slice(if value { b"true" } else { b"false" }));
    }

    /// A signed integer.
    pub fn i64(&mut self, n: i64) {
        self.leaf(|buf| serde_json::to_writer(buf, &n).expect(WRITE_TO_VEC));
    }

    /// An unsigned integer.
    pub fn u64(&mut self, n: u64) {
        self.leaf(|buf| serde_json::to_writer(buf, &n).expect(WRITE_TO_VEC));
    }

    /// A float in serde_json's shortest round-trip form (`null` when not finite, as serde_json).
    pub fn f64(&mut self, x: f64) {
        self.leaf(|buf| serde_json::to_writer(buf, &x).expect(WRITE_TO_VEC));
    }

    /// Bytes as the string `"0x…"` (lowercase hex).
    pub fn hex(&mut self, bytes: &[u8]) {
        self.leaf(|buf| {
            buf.extend_from_slice(b"\"0x");
            crate::hex::encode_into(bytes, buf);
            buf.push(b'"');
        });
    }

    /// Bytes as the string `"0x…"` like [`JsonWriter::hex`], `chunk` bytes at a time with
    /// `between` called after each (it may write out and empty [`JsonWriter::buf`]).
    pub fn hex_in_chunks(
        &mut self,
        bytes: &[u8],
        chunk: usize,
        between: &mut dyn FnMut(&mut JsonWriter),
    ) {
        self.separate();
        self.buf.extend_from_slice(b"\"0x");
        for piece in bytes.chunks(chunk.max(1)) {
            crate::hex::encode_into(piece, &mut self.buf);
            between(self);
        }
        self.buf.push(b'"');
        self.comma = true;
    }

    /// A JSON object of `entries` as serde_json's map makes it: a repeated key keeps its first
    /// place and takes its last value. `value` writes each value.
    pub fn object<K: AsRef<str>, V>(
        &mut self,
        entries: &[(K, V)],
        mut value: impl FnMut(&mut JsonWriter, &str, &V),
    ) {
        self.begin_object();
        // Few entries (the common case): look around without allocating.
        if entries.len() <= 16 {
            for (i, (key, v)) in entries.iter().enumerate() {
                let key = key.as_ref();
                if entries[..i].iter().any(|(k, _)| k.as_ref() == key) {
                    continue;
                }
                let last = entries[i + 1..]
                    .iter()
                    .rev()
                    .find(|(k, _)| k.as_ref() == key);
                self.key(key);
                value(self, key, last.map_or(v, |(_, v)| v));
            }
        } else {
            let mut last: std::collections::HashMap<&str, usize> = entries
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.as_ref(), i))
                .collect();
            for (key, _) in entries {
                if let Some(j) = last.remove(key.as_ref()) {
                    self.key(key.as_ref());
                    value(self, key.as_ref(), &entries[j].1);
                }
            }
        }
        self.end_object();
    }
}

/// Whether text has a byte JSON escapes: `"`, `\\` or a control character below 0x20. Eight bytes
/// at a time as one word: a byte below 0x20 borrows into its high bit when 0x20 is taken from it
/// (and a byte of 0x80 or more has that bit set already, so it is left out), and a byte equal to
/// `"` or `\\` is a zero byte after an exclusive or; each test is exact for the word as a whole.
/// The last word overlaps the one before it; text under eight bytes is padded with spaces.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x;
    let escapes = |x: u64| {
        let equal = |b: u8| below(x ^ (ONES * u64::from(b)), 1);
        (below(x, 0x20) | equal(b'"') | equal(b'\\')) & HIGHS != 0
    };
    let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().expect("eight bytes"));
    match bytes.len() {
        0..8 => {
            // Spaces, each byte of the text put in place of one (no call to copy so few bytes).
            let padded = bytes
                .iter()
                .enumerate()
                .fold(ONES * u64::from(b' '), |x, (i, &b)| {
                    x ^ (u64::from(b ^ b' ') << (8 * i))
                });
            escapes(padded)
        }
        len => bytes.chunks_exact(8).any(|w| escapes(word(w))) || escapes(word(&bytes[len - 8..])),
    }
}

/// The double that a float's JSON number stands for: the nearest to its shortest decimal form
/// (what `decode --format json` has always printed for a float).
fn float_as_double(x: f32) -> f64 {
    use std::io::Write;
    let mut text = [0u8; 64];
    let mut rest = &mut text[..];
    // A finite float's `Debug` form is at most a few dozen bytes; it fits.
    let _ = write!(rest, "{x:?}");
    let len = 64 - rest.len();
    std::str::from_utf8(&text[..len])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(f64::from(x))
}

/// A JSON object key (a UDT field name) as JSON text: quoted and escaped.
pub(crate) fn to_json_string(name: &str) -> String {
    Json::String(name.to_owned()).to_string()
}

/// Converts a value to lossless JSON (see the module documentation for the mapping).
pub fn to_json(ty: &CqlType, value: &Value) -> Json {
    let mut w = JsonWriter::new();
    write_json(&mut w, ty, value);
    serde_json::from_slice(&w.buf).expect("the writer writes valid JSON")
}

/// Writes a value's lossless JSON ([`to_json`]) into `w`.
pub fn write_json(w: &mut JsonWriter, ty: &CqlType, value: &Value) {
    write_of(w, Some(ty), value);
}

fn write_of(w: &mut JsonWriter, ty: Option<&CqlType>, value: &Value) {
    match value {
        Value::Null => w.null(),
        Value::Empty => {
            w.begin_object();
            w.key(EMPTY_KEY);
            w.bool(true);
            w.end_object();
        }
        Value::Boolean(b) => w.bool(*b),
        Value::TinyInt(n) => w.i64(i64::from(*n)),
        Value::SmallInt(n) => w.i64(i64::from(*n)),
        Value::Int(n) => w.i64(i64::from(*n)),
        Value::BigInt(n) => w.i64(*n),
        Value::Varint(n) => w.display(n),
        Value::Float(x) if x.is_finite() => w.f64(float_as_double(*x)),
        Value::Float(x) => w.str(&float_text(*x)),
        Value::Double(x) if x.is_finite() => w.f64(*x),
        Value::Double(x) => w.str(&double_text(*x)),
        Value::Decimal { unscaled, scale } => w.str(&decimal_text(unscaled, *scale)),
        Value::Text(s) => w.str(s),
        Value::Blob(b) => w.hex(b),
        Value::Uuid(u) => w.str(
            u.hyphenated()
                .encode_lower(&mut uuid::Uuid::encode_buffer()),
        ),
        Value::Inet(ip) => w.display(ip),
        Value::Timestamp(ms) => match timestamp_text(*ms) {
            Some(text) => w.str(&text),
            None => w.i64(*ms),
        },
        Value::Date(d) => match date_text(*d) {
            Some(text) => w.str(&text),
            None => w.u64(u64::from(*d)),
        },
        Value::Time(n) => match time_text(*n) {
            Some(text) => w.str(&text),
            None => w.i64(*n),
        },
        Value::Duration {
            months,
            days,
            nanoseconds,
        } => w.str(&duration_text(*months, *days, *nanoseconds)),
        Value::List(items) => {
            let element = element_type(ty);
            w.begin_array();
            for item in items {
                write_of(w, element, item);
            }
            w.end_array();
        }
        Value::Map(entries) => {
            let (key_type, value_type) = entry_types(ty);
            w.begin_array();
            for (k, v) in entries {
                w.begin_array();
                write_of(w, key_type, k);
                write_of(w, value_type, v);
                w.end_array();
            }
            w.end_array();
        }
        Value::Tuple(components) => {
            w.begin_array();
            for (i, v) in components.iter().enumerate() {
                write_of(w, super::cql::component_type(ty, i), v);
            }
            w.end_array();
        }
        Value::Udt(fields) => w.object(fields, |w, name, v| {
            write_of(w, super::cql::field_type(ty, name), v)
        }),
    }
}

/// Parses a JSON document for [`from_json`]: numbers keep their text, and an object that gives a
/// key twice is an error (serde_json alone would keep the last value and drop the others).
pub fn parse_document(text: &str) -> Result<Json, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    UniqueKeys.deserialize(&mut deserializer)?;
    serde_json::from_str(text)
}

/// A serde visitor that walks a JSON document and fails on the first object with a repeated key.
struct UniqueKeys;

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(UniqueKeys)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "key {} given twice in an object",
                    to_json_string(&key)
                )));
            }
            map.next_value_seed(UniqueKeys)?;
        }
        Ok(())
    }
}

/// Reads a value of the type from JSON (the inverse of [`to_json`]); refuses what the binary codec
/// cannot encode, as [`super::cql::parse_cql`] does. Errors name the path in the value.
pub fn from_json(ty: &CqlType, json: &Json) -> Result<Value, LiteralError> {
    let mut reader = Reader { path: Vec::new() };
    super::cql::encodable(ty, reader.value(ty, json, 0)?)
}

/// The path to the JSON value being read, for error messages.
struct Reader {
    path: Vec<String>,
}

/// A short description of a JSON value's kind, for error messages.
fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

impl Reader {
    /// An error of `kind` with the current path.
    fn error(&self, kind: LiteralErrorKind) -> LiteralError {
        LiteralError {
            kind,
            position: None,
            path: self.path.join(" / "),
        }
    }

    /// The error for `json`, a value of another kind than `expected`.
    fn wrong(&self, expected: String, json: &Json) -> LiteralError {
        self.error(LiteralErrorKind::WrongJson {
            expected,
            found: kind(json),
        })
    }

    /// Reads `json` as `ty` with `segment` pushed on the path.
    fn nested(
        &mut self,
        segment: String,
        ty: &CqlType,
        json: &Json,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        self.path.push(segment);
        let value = self.value(ty, json, depth + 1)?;
        self.path.pop();
        Ok(value)
    }

    fn array<'j>(&self, ty: &CqlType, json: &'j Json) -> Result<&'j Vec<Json>, LiteralError> {
        json.as_array()
            .ok_or_else(|| self.wrong(format!("an array for {ty}"), json))
    }

    fn value(&mut self, ty: &CqlType, json: &Json, depth: usize) -> Result<Value, LiteralError> {
        if depth > MAX_LITERAL_DEPTH {
            return Err(self.error(LiteralErrorKind::TooDeep));
        }
        if json.is_null() {
            return Ok(Value::Null);
        }
        if let Some(object) = json.as_object() {
            if object.len() == 1 && object.get(EMPTY_KEY) == Some(&Json::Bool(true)) {
                return if matches!(ty, CqlType::Native(n) if super::has_empty_value(*n)) {
                    Ok(Value::Empty)
                } else {
                    Err(self.error(LiteralErrorKind::CannotBeEmpty {
                        ty: Box::new(ty.clone()),
                    }))
                };
            }
        }
        match ty {
            CqlType::Native(native) => self.native(*native, json),
            CqlType::List(element) | CqlType::Set(element) => {
                self.elements(element, ty, json, depth)
            }
            CqlType::Vector(element, dimension) => {
                let value = self.elements(element, ty, json, depth)?;
                match wrong_dimension(ty, *dimension, &value) {
                    Some(kind) => Err(self.error(kind)),
                    None => Ok(value),
                }
            }
            CqlType::Map(key_type, value_type) => {
                let mut entries = Vec::new();
                if let Some(object) = json.as_object() {
                    for (i, (key, value)) in object.iter().enumerate() {
                        let key = self.nested(
                            format!("map key #{i}"),
                            key_type,
                            &Json::String(key.clone()),
                            depth,
                        )?;
                        let value =
                            self.nested(format!("map value #{i}"), value_type, value, depth)?;
                        entries.push((key, value));
                    }
                    return Ok(Value::Map(entries));
                }
                for (i, pair) in self.array(ty, json)?.iter().enumerate() {
                    let (key, value) = match pair.as_array().map(Vec::as_slice) {
                        Some([key, value]) => (key, value),
                        _ => {
                            self.path.push(format!("map entry #{i}"));
                            return Err(self.wrong("a [key, value] pair".to_string(), pair));
                        }
                    };
                    let key = self.nested(format!("map key #{i}"), key_type, key, depth)?;
                    let value = self.nested(format!("map value #{i}"), value_type, value, depth)?;
                    entries.push((key, value));
                }
                Ok(Value::Map(entries))
            }
            CqlType::Tuple(component_types) => {
                let items = self.array(ty, json)?;
                if items.len() > component_types.len() {
                    return Err(self.error(LiteralErrorKind::TooManyComponents {
                        ty: Box::new(ty.clone()),
                        count: component_types.len(),
                        found: Some(items.len()),
                    }));
                }
                let mut components = Vec::new();
                for (i, (item, component_type)) in items.iter().zip(component_types).enumerate() {
                    components.push(self.nested(
                        format!("component {i}"),
                        component_type,
                        item,
                        depth,
                    )?);
                }
                Ok(Value::Tuple(components))
            }
            CqlType::Udt(udt) => {
                let object = json
                    .as_object()
                    .ok_or_else(|| self.wrong(format!("an object for {}", udt.name), json))?;
                if let Some(unknown) = object
                    .keys()
                    .find(|k| !udt.fields.iter().any(|(n, _)| n == *k))
                {
                    return Err(self.error(LiteralErrorKind::NoSuchField {
                        udt: udt.name.clone(),
                        field: unknown.clone(),
                    }));
                }
                let present = udt
                    .fields
                    .iter()
                    .rposition(|(name, _)| object.contains_key(name))
                    .map_or(0, |i| i + 1);
                let mut fields = Vec::new();
                for (name, field_type) in udt.fields.iter().take(present) {
                    let value = match object.get(name) {
                        Some(field) => {
                            self.nested(format!("field {name}"), field_type, field, depth)?
                        }
                        None => Value::Null,
                    };
                    fields.push((name.clone(), value));
                }
                Ok(Value::Udt(fields))
            }
        }
    }

    /// Reads the elements of a list, set or vector.
    fn elements(
        &mut self,
        element: &CqlType,
        ty: &CqlType,
        json: &Json,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let mut items = Vec::new();
        for (i, item) in self.array(ty, json)?.iter().enumerate() {
            items.push(self.nested(format!("element {i}"), element, item, depth)?);
        }
        Ok(Value::List(items))
    }

    /// Reads a native value: JSON booleans directly, numbers and strings through the CQL text forms.
    fn native(&self, native: NativeType, json: &Json) -> Result<Value, LiteralError> {
        use NativeType as N;
        let text = match (native, json) {
            (N::Boolean, Json::Bool(b)) => return Ok(Value::Boolean(*b)),
            (N::Text | N::Ascii | N::Blob, Json::String(s)) => Cow::Borrowed(s.as_str()),
            (N::Text | N::Ascii | N::Blob, other) => {
                return Err(self.wrong(format!("a string for {native}"), other))
            }
            // The number's own text (serde_json's `arbitrary_precision`), read as the CQL literal
            // of the same text is: every digit and the scale kept, floats rounded once.
            (_, Json::Number(n)) => Cow::Borrowed(n.as_str()),
            (_, Json::String(s)) => Cow::Borrowed(s.as_str()),
            (_, other) => return Err(self.wrong(native.to_string(), other)),
        };
        native_from_text(native, text).map_err(|kind| self.error(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use serde_json::json;

    fn native(n: NativeType) -> CqlType {
        CqlType::Native(n)
    }

    fn round_trip(ty: &CqlType, value: Value) -> Json {
        let json = to_json(ty, &value);
        assert_eq!(from_json(ty, &json), Ok(value), "{json}");
        json
    }

    #[test]
    fn scalars() {
        assert_eq!(
            round_trip(&native(NativeType::Float), Value::Float(0.1)),
            json!(0.1)
        );
        assert_eq!(
            round_trip(&native(NativeType::Double), Value::Double(f64::NAN)),
            json!("NaN")
        );
        assert_eq!(
            round_trip(&native(NativeType::Float), Value::Float(f32::NEG_INFINITY)),
            json!("-Infinity")
        );
        round_trip(&native(NativeType::Double), Value::Double(-0.0));
        round_trip(&native(NativeType::Double), Value::Double(1.0));
        assert_eq!(
            round_trip(
                &native(NativeType::Varint),
                Value::Varint(BigInt::from(i128::MIN))
            ),
            json!(i128::MIN.to_string())
        );
        assert_eq!(
            round_trip(&native(NativeType::Int), Value::Empty),
            json!({"$empty": true})
        );
        assert_eq!(
            round_trip(&native(NativeType::Date), Value::Date(7)),
            json!(7)
        );
        assert_eq!(
            round_trip(&native(NativeType::Blob), Value::Blob(vec![1, 0xab])),
            json!("0x01ab")
        );
        round_trip(&native(NativeType::BigInt), Value::BigInt(i64::MIN));
        assert!(from_json(&native(NativeType::TinyInt), &json!(128)).is_err());
        assert!(from_json(&native(NativeType::Text), &json!(1)).is_err());
    }

    #[test]
    fn floats_survive_the_trip_through_a_json_double() {
        // A stride across the whole bit space: finite floats, subnormals, both signs.
        let ty = native(NativeType::Float);
        for bits in (0..=u32::MAX).step_by(40_009) {
            let x = f32::from_bits(bits);
            let back = from_json(&ty, &to_json(&ty, &Value::Float(x)));
            assert_eq!(back, Ok(Value::Float(x)), "{bits:#010x}");
        }
    }

    #[test]
    fn repeated_object_keys_come_out_as_a_serde_json_map_makes_them() {
        // Few keys (scanned in place) and many (looked up in a hash map), repeats included.
        for n in [5usize, 40] {
            let entries: Vec<(String, u64)> = (0..n as u64)
                .map(|i| (format!("k{}", (i * 7) % (n as u64 / 2 + 1)), i))
                .collect();
            let mut w = JsonWriter::new();
            w.object(&entries, |w, _, v| w.u64(*v));
            let expected: serde_json::Map<String, Json> = entries
                .iter()
                .map(|(k, v)| (k.clone(), Json::from(*v)))
                .collect();
            assert_eq!(
                String::from_utf8(w.buf).unwrap(),
                Json::Object(expected).to_string()
            );
        }
    }

    #[test]
    fn the_writer_escapes_and_separates_as_serde_json() {
        let text = "quote \" backslash \\ tab \t nul \u{0} del \u{7f} é 🦀 \u{2028}";
        let mut w = JsonWriter::new();
        w.begin_array();
        w.str(text);
        w.begin_object();
        w.key(text);
        w.f64(1e-7);
        w.key("e");
        w.begin_array();
        w.end_array();
        w.end_object();
        w.i64(i64::MIN);
        w.u64(u64::MAX);
        w.hex(&[0, 0xab]);
        w.end_array();
        let expected = json!([text, {text: 1e-7, "e": []}, i64::MIN, u64::MAX, "0x00ab"]);
        assert_eq!(String::from_utf8(w.buf).unwrap(), expected.to_string());
    }

    #[test]
    fn the_escape_check_finds_every_byte_to_escape_at_every_place() {
        // Each byte value alone, then next to neighbours that could disturb the word tests (a
        // byte just above a limit, high bytes, borrows), at every place of two words and a tail.
        for b in 0..=255u8 {
            let naive = b < 0x20 || b == b'"' || b == b'\\';
            for len in 1..20 {
                for at in 0..len {
                    for filler in [b'a', 0x20, 0x21, 0x23, 0x5d, 0x7f, 0x80, 0xff] {
                        let mut bytes = vec![filler; len];
                        bytes[at] = b;
                        assert_eq!(needs_escape(&bytes), naive, "{b:#x} at {at} of {len}");
                    }
                }
            }
        }
    }

    #[test]
    fn composites() {
        let ty = CqlType::Map(
            Box::new(native(NativeType::Text)),
            Box::new(CqlType::Tuple(vec![
                native(NativeType::Int),
                native(NativeType::Text),
            ])),
        );
        let value = Value::Map(vec![(
            Value::Text("k".into()),
            Value::Tuple(vec![Value::Int(1)]),
        )]);
        assert_eq!(round_trip(&ty, value), json!([["k", [1]]]));
        assert_eq!(
            from_json(&ty, &json!({"k": [1, "x"]})),
            Ok(Value::Map(vec![(
                Value::Text("k".into()),
                Value::Tuple(vec![Value::Int(1), Value::Text("x".into())])
            )]))
        );
        let udt = CqlType::Udt(crate::types::UdtType {
            keyspace: None,
            name: "addr".into(),
            fields: vec![
                ("street".into(), native(NativeType::Text)),
                ("zip".into(), native(NativeType::Int)),
            ],
        });
        assert_eq!(
            round_trip(&udt, Value::Udt(vec![("street".into(), Value::Null)])),
            json!({"street": null})
        );
        assert_eq!(
            from_json(&udt, &json!({"zip": 5})),
            Ok(Value::Udt(vec![
                ("street".into(), Value::Null),
                ("zip".into(), Value::Int(5))
            ]))
        );
        let error =
            from_json(&CqlType::List(Box::new(udt)), &json!([{}, {"zip": "x"}])).unwrap_err();
        assert_eq!(error.path, "element 1 / field zip");
    }
}
