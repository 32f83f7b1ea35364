//! Property tests of the text formats: for random types and values, the CQL literal and the JSON read
//! back to the same value (`parse_cql ∘ format_cql` and `from_json ∘ to_json` are identities), and
//! arbitrary text never makes the readers panic. The binary round trips are in roundtrip.rs.

use cqlwire::types::{CqlType, NativeType, UdtType};
use cqlwire::value::cql::{format_cql, parse_cql};
use cqlwire::value::json::{from_json, to_json};
use cqlwire::value::{Value, NANOS_PER_DAY};
use num_bigint::BigInt;
use proptest::prelude::*;
use std::net::IpAddr;

/// Field names that need quoting in CQL as well as plain ones.
const FIELD_NAMES: [&str; 6] = ["a", "zip_code", "Mixed", "with space", "quo\"te", "x1"];

fn native_type() -> impl Strategy<Value = NativeType> {
    use NativeType as N;
    proptest::sample::select(vec![
        N::Ascii,
        N::BigInt,
        N::Blob,
        N::Boolean,
        N::Counter,
        N::Date,
        N::Decimal,
        N::Double,
        N::Duration,
        N::Float,
        N::Inet,
        N::Int,
        N::SmallInt,
        N::Text,
        N::Time,
        N::Timestamp,
        N::TimeUuid,
        N::TinyInt,
        N::Uuid,
        N::Varint,
    ])
}

fn cql_type() -> impl Strategy<Value = CqlType> {
    native_type()
        .prop_map(CqlType::Native)
        .prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| CqlType::List(Box::new(t))),
                inner.clone().prop_map(|t| CqlType::Set(Box::new(t))),
                (inner.clone(), inner.clone())
                    .prop_map(|(k, v)| CqlType::Map(Box::new(k), Box::new(v))),
                proptest::collection::vec(inner.clone(), 1..4).prop_map(CqlType::Tuple),
                (
                    proptest::sample::subsequence(FIELD_NAMES.to_vec(), 1..4),
                    proptest::collection::vec(inner.clone(), 4)
                )
                    .prop_map(|(names, types)| CqlType::Udt(UdtType {
                        keyspace: None,
                        name: "u".into(),
                        fields: names.iter().map(|n| n.to_string()).zip(types).collect(),
                    })),
                (inner, 1usize..4).prop_map(|(t, n)| CqlType::Vector(Box::new(t), n)),
            ]
        })
}

/// Text with the characters that stress quoting: quotes, `$`, brackets, commas, newlines, unicode.
fn tricky_text() -> impl Strategy<Value = String> {
    "[a-z' \"$,:{}\\[\\]()\\n\\\\é日🎉]{0,12}"
}

fn native_value(native: NativeType) -> BoxedStrategy<Value> {
    use NativeType as N;
    match native {
        N::Ascii => "[ -~]{0,10}".prop_map(Value::Text).boxed(),
        N::Text => tricky_text().prop_map(Value::Text).boxed(),
        N::Blob => any::<Vec<u8>>().prop_map(Value::Blob).boxed(),
        N::Boolean => any::<bool>().prop_map(Value::Boolean).boxed(),
        N::TinyInt => any::<i8>().prop_map(Value::TinyInt).boxed(),
        N::SmallInt => any::<i16>().prop_map(Value::SmallInt).boxed(),
        N::Int => any::<i32>().prop_map(Value::Int).boxed(),
        N::BigInt | N::Counter => any::<i64>().prop_map(Value::BigInt).boxed(),
        N::Varint => any::<Vec<u8>>()
            .prop_map(|b| Value::Varint(BigInt::from_signed_bytes_be(&b)))
            .boxed(),
        N::Decimal => (any::<Vec<u8>>(), any::<i32>())
            .prop_map(|(b, scale)| Value::Decimal {
                unscaled: BigInt::from_signed_bytes_be(&b),
                scale,
            })
            .boxed(),
        N::Float => any::<u32>()
            .prop_map(|b| Value::Float(f32::from_bits(b)))
            .boxed(),
        N::Double => any::<u64>()
            .prop_map(|b| Value::Double(f64::from_bits(b)))
            .boxed(),
        N::Uuid | N::TimeUuid => any::<u128>()
            .prop_map(|n| Value::Uuid(uuid::Uuid::from_u128(n)))
            .boxed(),
        N::Inet => prop_oneof![
            any::<[u8; 4]>().prop_map(|b| Value::Inet(IpAddr::from(b))),
            any::<[u8; 16]>().prop_map(|b| Value::Inet(IpAddr::from(b))),
        ]
        .boxed(),
        N::Timestamp => prop_oneof![any::<i64>(), -62_135_596_800_000i64..253_402_300_800_000]
            .prop_map(Value::Timestamp)
            .boxed(),
        N::Date => any::<u32>().prop_map(Value::Date).boxed(),
        N::Time => (0..NANOS_PER_DAY).prop_map(Value::Time).boxed(),
        // Mixed signs included: the text forms keep them even though the codec refuses them.
        N::Duration => (any::<i32>(), any::<i32>(), any::<i64>())
            .prop_map(|(months, days, nanoseconds)| Value::Duration {
                months,
                days,
                nanoseconds,
            })
            .boxed(),
    }
}

/// A value of `ty`; `nullable` for elements, fields and components.
fn value_of(ty: &CqlType, nullable: bool) -> BoxedStrategy<Value> {
    let value = match ty {
        CqlType::Native(native) => {
            if matches!(
                native,
                NativeType::Text | NativeType::Ascii | NativeType::Blob
            ) {
                native_value(*native)
            } else {
                prop_oneof![6 => native_value(*native), 1 => Just(Value::Empty)].boxed()
            }
        }
        CqlType::List(element) | CqlType::Set(element) => {
            proptest::collection::vec(value_of(element, true), 0..4)
                .prop_map(Value::List)
                .boxed()
        }
        CqlType::Vector(element, dimension) => {
            proptest::collection::vec(value_of(element, false), *dimension)
                .prop_map(Value::List)
                .boxed()
        }
        CqlType::Map(key, value) => {
            proptest::collection::vec((value_of(key, true), value_of(value, true)), 0..4)
                .prop_map(Value::Map)
                .boxed()
        }
        CqlType::Tuple(components) => {
            let all: Vec<_> = components.iter().map(|c| value_of(c, true)).collect();
            (all, 0..=components.len())
                .prop_map(|(mut values, n)| {
                    values.truncate(n);
                    Value::Tuple(values)
                })
                .boxed()
        }
        CqlType::Udt(udt) => {
            let names: Vec<String> = udt.fields.iter().map(|(n, _)| n.clone()).collect();
            let all: Vec<_> = udt.fields.iter().map(|(_, t)| value_of(t, true)).collect();
            (all, 0..=udt.fields.len())
                .prop_map(move |(values, n)| {
                    Value::Udt(names.iter().cloned().zip(values).take(n).collect())
                })
                .boxed()
        }
    };
    if nullable {
        prop_oneof![6 => value, 1 => Just(Value::Null)].boxed()
    } else {
        value
    }
}

fn type_and_value() -> impl Strategy<Value = (CqlType, Value)> {
    cql_type().prop_flat_map(|ty| {
        let value = value_of(&ty, false);
        (Just(ty), value)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn cql_literals_read_back((ty, value) in type_and_value()) {
        let text = format_cql(&ty, &value);
        prop_assert_eq!(parse_cql(&ty, &text), Ok(value), "{} as {}", text, ty);
    }

    #[test]
    fn json_reads_back((ty, value) in type_and_value()) {
        let json = to_json(&ty, &value);
        let reparsed: serde_json::Value =
            serde_json::from_str(&json.to_string()).expect("printed JSON parses");
        prop_assert_eq!(from_json(&ty, &reparsed), Ok(value), "{} as {}", json, ty);
    }

    #[test]
    fn arbitrary_text_never_panics(ty in cql_type(), text in "\\PC{0,40}") {
        let _ = parse_cql(&ty, &text);
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
            let _ = from_json(&ty, &json);
        }
    }

    #[test]
    fn mangled_literals_never_panic(
        (ty, value) in type_and_value(),
        cut in any::<prop::sample::Index>(),
        insert in "[\\[\\]{}(),:'\"0-9a-z<> -]{0,3}",
    ) {
        let text = format_cql(&ty, &value);
        let chars: Vec<char> = text.chars().collect();
        let at = cut.index(chars.len() + 1);
        let mangled: String = chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[at..].iter()).collect();
        let _ = parse_cql(&ty, &mangled);
    }
}
