use super::*;
use crate::hex;
use crate::types::{parse_type, NativeType, UdtRegistry};
use num_bigint::BigInt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A registry with `addr(street text, zip int)`.
fn udts() -> UdtRegistry {
    let mut udts = UdtRegistry::new();
    udts.declare("addr(street text, zip int)").unwrap();
    udts
}

fn ty(text: &str) -> CqlType {
    parse_type(text, &udts()).unwrap()
}

fn bytes(text: &str) -> Vec<u8> {
    hex::parse(text).unwrap()
}

fn decode_hex(type_text: &str, hex_text: &str) -> Result<Value, DecodeError> {
    decode(&ty(type_text), &bytes(hex_text))
}

/// Decodes, checks the value, and checks that encoding gives the same bytes back.
fn round_trip(type_text: &str, hex_text: &str, expected: Value) {
    let t = ty(type_text);
    let b = bytes(hex_text);
    assert_eq!(decode(&t, &b).unwrap(), expected, "{type_text} {hex_text}");
    assert_eq!(encode(&t, &expected).unwrap(), b, "{type_text} {hex_text}");
}

fn fails(type_text: &str, hex_text: &str, offset: usize, text: &str) -> DecodeError {
    let error = decode_hex(type_text, hex_text).unwrap_err();
    assert_eq!(error.offset, offset, "{error}");
    assert!(error.to_string().contains(text), "{error} lacks {text:?}");
    error
}

#[test]
fn natives_round_trip() {
    round_trip("int", "0000002a", Value::Int(42));
    round_trip("int", "", Value::Empty);
    round_trip("text", "", Value::Text(String::new()));
    round_trip("blob", "", Value::Blob(vec![]));
    round_trip("bigint", "ffffffffffffffff", Value::BigInt(-1));
    round_trip("counter", "0000000000000001", Value::BigInt(1));
    round_trip("smallint", "fffe", Value::SmallInt(-2));
    round_trip("tinyint", "80", Value::TinyInt(-128));
    round_trip("boolean", "01", Value::Boolean(true));
    round_trip("float", "3fc00000", Value::Float(1.5));
    round_trip("double", "3ff8000000000000", Value::Double(1.5));
    round_trip("text", "c3a9", Value::Text("é".into()));
    round_trip("ascii", "6162", Value::Text("ab".into()));
    round_trip("date", "80000000", Value::Date(1 << 31));
    round_trip("timestamp", "0000000000000064", Value::Timestamp(100));
    round_trip("time", "0000000000000001", Value::Time(1));
    round_trip("varint", "ff7f", Value::Varint(BigInt::from(-129)));
    round_trip("varint", "00", Value::Varint(BigInt::from(0)));
    round_trip("varint", "0080", Value::Varint(BigInt::from(128)));
    round_trip(
        "decimal",
        "0000000204d2",
        Value::Decimal {
            unscaled: BigInt::from(1234),
            scale: 2,
        },
    );
    round_trip(
        "inet",
        "7f000001",
        Value::Inet(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1))),
    );
    round_trip(
        "inet",
        "00000000000000000000000000000001",
        Value::Inet(IpAddr::V6(Ipv6Addr::LOCALHOST)),
    );
    round_trip(
        "timeuuid",
        "5a9a8e10000011ee8000000000000000",
        Value::Uuid(uuid::Uuid::from_u128(0x5a9a8e10000011ee8000000000000000)),
    );
    // zigzag: 1 → 2, 2 → 4, 3 → 6; -1 → 1
    round_trip(
        "duration",
        "020406",
        Value::Duration {
            months: 1,
            days: 2,
            nanoseconds: 3,
        },
    );
    round_trip(
        "duration",
        "000001",
        Value::Duration {
            months: 0,
            days: 0,
            nanoseconds: -1,
        },
    );
    round_trip("uuid", "", Value::Empty);
}

#[test]
fn non_minimal_numbers_decode_and_encode_minimally() {
    let t = ty("varint");
    let value = decode(&t, &bytes("000001")).unwrap();
    assert_eq!(value, Value::Varint(BigInt::from(1)));
    assert_eq!(encode(&t, &value).unwrap(), bytes("01"));
    assert_eq!(decode_hex("boolean", "02").unwrap(), Value::Boolean(true));
}

#[test]
fn bad_natives_fail_with_offsets() {
    fails("int", "000000", 0, "int value must be 4 bytes, not 3");
    fails("uuid", "00", 0, "uuid value must be 16 bytes, not 1");
    fails("text", "61ff62", 1, "invalid UTF-8");
    fails("ascii", "61c3a9", 1, "non-ASCII byte 0xc3");
    fails(
        "inet",
        "0102030405",
        0,
        "inet value must be 4 or 16 bytes, not 5",
    );
    fails("decimal", "0001", 0, "at least 4 bytes");
    fails("time", "00004e94914f0000", 0, "out of range");
    fails("time", "ffffffffffffffff", 0, "out of range");
    fails(
        "timeuuid",
        "5a9a8e10000041ee8000000000000000",
        0,
        "version 4",
    );
    fails("duration", "0201", 2, "truncated vint");
    fails("duration", "020100", 0, "mixed signs");
    fails("duration", "0204c0", 2, "truncated vint");
    fails("duration", "0204", 2, "truncated vint");
    fails("duration", "02040600", 3, "1 trailing byte");
    fails("duration", "f1000000000000", 0, "32-bit range");
}

#[test]
fn collections_round_trip_with_null_elements() {
    round_trip(
        "list<int>",
        "00000003 00000004 00000001 ffffffff 00000004 00000003",
        Value::List(vec![Value::Int(1), Value::Null, Value::Int(3)]),
    );
    round_trip("set<int>", "00000000", Value::List(vec![]));
    round_trip(
        "list<int>",
        "00000001 00000000",
        Value::List(vec![Value::Empty]),
    );
    round_trip(
        "map<text, int>",
        "00000001 00000001 61 00000004 00000002",
        Value::Map(vec![(Value::Text("a".into()), Value::Int(2))]),
    );
    round_trip(
        "tuple<int, text>",
        "00000004 00000001 ffffffff",
        Value::Tuple(vec![Value::Int(1), Value::Null]),
    );
    // A tuple value may end before its last components.
    round_trip(
        "tuple<int, text>",
        "00000004 00000001",
        Value::Tuple(vec![Value::Int(1)]),
    );
    round_trip(
        "addr",
        "00000001 78 00000004 00000005",
        Value::Udt(vec![
            ("street".into(), Value::Text("x".into())),
            ("zip".into(), Value::Int(5)),
        ]),
    );
    round_trip(
        "addr",
        "00000001 78",
        Value::Udt(vec![("street".into(), Value::Text("x".into()))]),
    );
}

#[test]
fn malformed_collections_fail_with_offset_and_path() {
    let e = fails("list<int>", "", 0, "empty value for type list<int>");
    assert_eq!(e.path, "");
    fails("list<int>", "000000", 0, "truncated element count");
    fails(
        "list<int>",
        "80000000 0000000000000000",
        0,
        "invalid element count -2147483648",
    );
    fails(
        "list<int>",
        "7fffffff 0000000000000000",
        0,
        "needs at least 8589934588 bytes but only 8",
    );
    fails(
        "map<int, int>",
        "00000002 00000000 00000000",
        0,
        "entry count 2 needs at least 16",
    );
    let e = fails(
        "list<int>",
        "00000001 00000008 000000",
        4,
        "element length 8 exceeds the 3 bytes left",
    );
    assert_eq!(e.path, "element 0");
    assert_eq!(
        e.to_string(),
        "element length 8 exceeds the 3 bytes left at byte 4 (element 0)"
    );
    fails(
        "list<int>",
        "00000001 fffffffe",
        4,
        "invalid element length -2",
    );
    fails(
        "list<text>",
        "00000002 00000001 61 000000",
        9,
        "truncated element length: needs 4 bytes but only 3",
    );
    fails(
        "list<int>",
        "00000000 00",
        4,
        "1 trailing byte after the value",
    );
    let e = fails(
        "map<text, blob>",
        "00000002 00000001 61 00000000 00000001 62 00000008 010203",
        18,
        "value length 8 exceeds the 3 bytes left",
    );
    assert_eq!(e.path, "map value #1");
    let e = fails(
        "list<frozen<addr>>",
        "00000002 00000008 00000000 00000000 0000000c 00000001 78 00000003 000000",
        29,
        "int value must be 4 bytes, not 3",
    );
    assert_eq!(e.path, "element 1 / field zip");
    fails(
        "list<list<int>>",
        "00000001 00000009 00000000 0000000000",
        12,
        "5 trailing bytes",
    );
    fails("tuple<int>", "00000004 00000001 00", 8, "1 trailing byte");
    fails(
        "tuple<int, int>",
        "00000004 00000001 0000",
        8,
        "truncated component length",
    );
    let e = fails(
        "list<list<int>>",
        "00000001 00000000",
        8,
        "empty value for type list<int>",
    );
    assert_eq!(e.path, "element 0");
}

#[test]
fn vectors_follow_the_product_rules() {
    round_trip(
        "vector<float, 2>",
        "3fc00000 bf800000",
        Value::List(vec![Value::Float(1.5), Value::Float(-1.0)]),
    );
    // As in Cassandra's VectorType: vector<smallint, 2> [1, -2] is 02 00 01 02 ff fe.
    round_trip(
        "vector<smallint, 2>",
        "020001 02fffe",
        Value::List(vec![Value::SmallInt(1), Value::SmallInt(-2)]),
    );
    round_trip(
        "vector<text, 2>",
        "0161 00",
        Value::List(vec![Value::Text("a".into()), Value::Text(String::new())]),
    );
    round_trip(
        "vector<vector<int, 1>, 2>",
        "00000001 00000002",
        Value::List(vec![
            Value::List(vec![Value::Int(1)]),
            Value::List(vec![Value::Int(2)]),
        ]),
    );
    round_trip(
        "vector<list<int>, 1>",
        "0c 00000001 00000004 00000007",
        Value::List(vec![Value::List(vec![Value::Int(7)])]),
    );
    fails(
        "vector<float, 3>",
        "3fc00000 bf800000",
        0,
        "vector<float, 3> needs 12 bytes (3 elements of 4), got 8 (2 elements)",
    );
    fails(
        "vector<float, 1>",
        "3fc00000 00",
        4,
        "vector<float, 1> needs 4 bytes (1 element of 4), got 5 (1 element and 1 byte)",
    );
    fails("vector<float, 1>", "", 0, "empty value");
    fails(
        "vector<smallint, 2>",
        "020001",
        3,
        "vector<smallint, 2> needs 2 elements, the value ends after 1",
    );
    fails(
        "vector<smallint, 2>",
        "020001 02fffe 00",
        6,
        "vector<smallint, 2> needs 2 elements, got 3",
    );
    fails(
        "vector<smallint, 2>",
        "020001 05fffe",
        3,
        "element length 5 exceeds the 2 bytes left",
    );
    fails(
        "vector<smallint, 2>",
        "00 02fffe",
        1,
        "empty element in a vector",
    );
    fails(
        "vector<text, 1>",
        "c0 01",
        0,
        "truncated vint: needs 3 bytes but only 2",
    );
    let e = fails(
        "vector<smallint, 2>",
        "020001 03000102",
        4,
        "smallint value must be 2 bytes, not 3",
    );
    assert_eq!(e.path, "element 1");
    let huge = CqlType::Vector(Box::new(CqlType::Native(NativeType::Double)), usize::MAX);
    assert!(decode(&huge, &[0; 8]).is_err());
    let huge = CqlType::Vector(Box::new(CqlType::Native(NativeType::Text)), usize::MAX);
    assert!(decode(&huge, &[0; 8]).is_err());
}

#[test]
fn a_vector_of_the_wrong_length_names_its_dimension_and_the_elements_it_has() {
    // Fixed-size elements: 4 floats are 16 bytes; 12 bytes are 3 floats, 20 bytes 5.
    let three = "3f800000 40000000 40400000";
    fails(
        "vector<float, 4>",
        three,
        0,
        "vector<float, 4> needs 16 bytes (4 elements of 4), got 12 (3 elements)",
    );
    fails(
        "vector<float, 4>",
        &format!("{three} 40800000 40a00000"),
        16,
        "vector<float, 4> needs 16 bytes (4 elements of 4), got 20 (5 elements)",
    );
    fails(
        "vector<bigint, 2>",
        "00000000000000010000",
        0,
        "vector<bigint, 2> needs 16 bytes (2 elements of 8), got 10 (1 element and 2 bytes)",
    );
    // Inside a list, the element's length says how long the vector is: it starts at byte 8,
    // its third float at byte 16.
    let e = fails(
        "list<vector<float, 2>>",
        &format!("00000001 0000000c {three}"),
        16,
        "vector<float, 2> needs 8 bytes (2 elements of 4), got 12 (3 elements)",
    );
    assert_eq!(e.path, "element 0");
    // Vint-prefixed elements: 02 0001 is smallint 1; the rest is counted in elements when it
    // is whole elements, else in bytes.
    fails(
        "vector<smallint, 3>",
        "020001 02fffe",
        6,
        "vector<smallint, 3> needs 3 elements, the value ends after 2",
    );
    fails(
        "vector<smallint, 1>",
        "020001 02fffe 020003",
        3,
        "vector<smallint, 1> needs 1 element, got 3",
    );
    fails(
        "vector<text, 1>",
        "0161 05",
        2,
        "vector<text, 1> needs 1 element, got 1 and 1 trailing byte",
    );
}

#[test]
fn the_deepest_parsable_type_decodes_and_explains() {
    let depth = crate::types::MAX_TYPE_DEPTH - 1;
    let t = ty(&format!(
        "{}int{}",
        "list<".repeat(depth),
        ">".repeat(depth)
    ));
    let mut value = Value::Int(1);
    for _ in 0..depth {
        value = Value::List(vec![value]);
    }
    let b = encode(&t, &value).unwrap();
    assert_eq!(b.len(), 8 * depth + 4);
    assert_eq!(decode(&t, &b).unwrap(), value);
    let explanation = explain(&t, &b);
    assert_eq!(explanation.lines.len(), 2 * depth + 1);
    let mut cut = b.clone();
    cut.pop();
    let error = decode(&t, &cut).unwrap_err();
    assert_eq!((error.offset, error.path.as_str()), (4, "element 0"));
    // The innermost element length sits just before the int.
    let mut corrupt = b.clone();
    let innermost = 8 * depth - 4;
    corrupt[innermost..innermost + 4].copy_from_slice(&(-2i32).to_be_bytes());
    let error = decode(&t, &corrupt).unwrap_err();
    assert_eq!(error.offset, innermost);
    assert_eq!(error.path.matches("element 0").count(), depth);
}

#[test]
fn prefix_decoding_reports_what_it_used() {
    let (value, used) = decode_prefix(&ty("int"), &bytes("0000000701")).unwrap();
    assert_eq!((value, used), (Value::Int(7), 4));
    let (_, used) = decode_prefix(&ty("list<int>"), &bytes("00000000 ffff")).unwrap();
    assert_eq!(used, 4);
    let (_, used) = decode_prefix(&ty("vector<int, 1>"), &bytes("00000001 ff")).unwrap();
    assert_eq!(used, 4);
    let (_, used) = decode_prefix(&ty("text"), &bytes("6162")).unwrap();
    assert_eq!(used, 2);
    assert!(decode_prefix(&ty("int"), &bytes("00")).is_err());
}

#[test]
fn explain_lists_each_wire_item_then_the_fault() {
    let explanation = explain(
        &ty("list<int>"),
        &bytes("00000002 00000004 0000002a ffffffff"),
    );
    let summary: Vec<(usize, usize, usize, &str, &str)> = explanation
        .lines
        .iter()
        .map(|l| {
            (
                l.offset,
                l.len,
                l.depth,
                l.path.as_str(),
                l.meaning.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, 4, 0, "", "element count 2"),
            (4, 4, 1, "element 0", "element length 4"),
            (8, 4, 1, "element 0", "int 42"),
            (12, 4, 1, "element 1", "null"),
        ]
    );
    assert_eq!(
        explanation.result,
        Ok(Value::List(vec![Value::Int(42), Value::Null]))
    );
    let broken = explain(
        &ty("list<text>"),
        &bytes("00000002 00000001 61 00000009 62"),
    );
    assert_eq!(broken.lines.len(), 3);
    assert_eq!(broken.lines[2].meaning, "text \"a\"");
    let error = broken.result.unwrap_err();
    assert_eq!((error.offset, error.path.as_str()), (9, "element 1"));
    let trailing = explain_allowing_trailing(&ty("int"), &bytes("00000001 0203"));
    assert_eq!(
        trailing.lines.last().unwrap().meaning,
        "2 trailing bytes (ignored)"
    );
    assert_eq!(trailing.result, Ok(Value::Int(1)));
    let vector = explain(&ty("vector<smallint, 1>"), &bytes("020001"));
    assert_eq!(vector.lines[1].meaning, "vint length 2");
    assert_eq!(vector.lines[2].meaning, "smallint 1");
    // Floats read as decode prints them (cql::float_text): infinities spelled out, NaN
    // payloads kept.
    let floats = explain(&ty("vector<float, 2>"), &bytes("7f800000 7fc12345"));
    let text = |x: f32| format!("float {}", crate::value::cql::float_text(x));
    assert_eq!(floats.lines[1].meaning, text(f32::INFINITY));
    assert_eq!(floats.lines[2].meaning, text(f32::from_bits(0x7fc1_2345)));
    assert_eq!(floats.lines[2].meaning, "float NaN(0x7fc12345)");
}

#[test]
fn encode_rejects_mismatches_with_a_path() {
    let list_of_addr = ty("list<frozen<addr>>");
    let value = Value::List(vec![
        Value::Null,
        Value::Udt(vec![("zip".into(), Value::Text("x".into()))]),
    ]);
    let e = encode(&list_of_addr, &value).unwrap_err();
    assert_eq!(e.path, "element 1 / field zip");
    assert_eq!(
        e.to_string(),
        "expected a int value, found text (element 1 / field zip)"
    );
    let e = encode(
        &ty("vector<float, 2>"),
        &Value::List(vec![Value::Float(1.0)]),
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind,
            EncodeErrorKind::WrongDimension {
                dimension: 2,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = encode(
        &ty("vector<float, 2>"),
        &Value::List(vec![Value::Float(1.0), Value::Null]),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "null element in a vector (element 1)");
    assert!(encode(&ty("ascii"), &Value::Text("é".into())).is_err());
    assert!(encode(&ty("int"), &Value::Null).is_err());
    assert!(encode(&ty("text"), &Value::Empty).is_err());
    assert!(encode(&ty("list<int>"), &Value::Empty).is_err());
    assert!(encode(&ty("time"), &Value::Time(NANOS_PER_DAY)).is_err());
    let mixed = Value::Duration {
        months: 1,
        days: -1,
        nanoseconds: 0,
    };
    assert!(encode(&ty("duration"), &mixed).is_err());
    let mut out = vec![9];
    assert!(encode_into(
        &ty("list<int>"),
        &Value::List(vec![Value::Text("x".into())]),
        &mut out
    )
    .is_err());
    assert_eq!(out, [9], "a failed encode leaves the output as it was");
}

#[test]
fn udt_fields_are_matched_by_name() {
    let value = Value::Udt(vec![("zip".into(), Value::Int(5))]);
    assert_eq!(
        encode(&ty("addr"), &value).unwrap(),
        bytes("ffffffff 00000004 00000005")
    );
    let unknown = Value::Udt(vec![("city".into(), Value::Int(5))]);
    assert_eq!(
        encode(&ty("addr"), &unknown).unwrap_err().to_string(),
        "type addr has no field city"
    );
    let twice = Value::Udt(vec![
        ("zip".into(), Value::Int(5)),
        ("zip".into(), Value::Int(6)),
    ]);
    assert!(encode(&ty("addr"), &twice).is_err());
}

#[test]
fn vector_elements_encode_with_their_prefixes() {
    let mut out = Vec::new();
    encode_vector_element(&ty("smallint"), &Value::SmallInt(1), &mut out).unwrap();
    encode_vector_element(&ty("float"), &Value::Float(1.5), &mut out).unwrap();
    assert_eq!(out, bytes("020001 3fc00000"));
    let long_text = Value::Text("x".repeat(200));
    out.clear();
    encode_vector_element(&ty("text"), &long_text, &mut out).unwrap();
    assert_eq!(&out[..2], &[0x80, 200]);
    assert_eq!(out.len(), 202);
    assert!(encode_vector_element(&ty("int"), &Value::Empty, &mut out).is_err());
    assert_eq!(out.len(), 202);
}

#[test]
fn errors_say_whether_bytes_ran_short_or_are_malformed() {
    use crate::cursor::DecodeErrorKind;
    // A list of one element whose length claims 8 bytes where 3 are left.
    let short = fails(
        "list<int>",
        "0000000100000008000000",
        4,
        "exceeds the 3 bytes left",
    );
    assert_eq!(short.kind, DecodeErrorKind::Truncated);
    // A fixed-size value of the wrong size is malformed: its length is the cell's.
    let bad = fails("bigint", "000000", 0, "must be 8 bytes");
    assert_eq!(bad.kind, DecodeErrorKind::Malformed);
    let bad = fails("text", "ff", 0, "UTF-8");
    assert_eq!(bad.kind, DecodeErrorKind::Malformed);
}
