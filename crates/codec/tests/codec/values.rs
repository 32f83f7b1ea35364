//! The one generator of random CQL types and values for the property tests (roundtrip.rs on the wire
//! bytes, text_formats.rs on the CQL and JSON forms): every value it makes is one the codec encodes.

use cqlwire_codec::types::{CqlType, NativeType, UdtType};
use cqlwire_codec::value::{Value, NANOS_PER_DAY};
use num_bigint::BigInt;
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every native type.
const NATIVES: [NativeType; 20] = [
    NativeType::Ascii,
    NativeType::BigInt,
    NativeType::Blob,
    NativeType::Boolean,
    NativeType::Counter,
    NativeType::Date,
    NativeType::Decimal,
    NativeType::Double,
    NativeType::Duration,
    NativeType::Float,
    NativeType::Inet,
    NativeType::Int,
    NativeType::SmallInt,
    NativeType::Text,
    NativeType::Time,
    NativeType::Timestamp,
    NativeType::TimeUuid,
    NativeType::TinyInt,
    NativeType::Uuid,
    NativeType::Varint,
];

/// UDT field names: plain ones and ones that need quoting in CQL.
const FIELD_NAMES: [&str; 6] = ["a", "zip_code", "Mixed", "with space", "quo\"te", "x1"];

/// Random types nested up to `depth` levels.
pub fn any_type(depth: u32) -> impl Strategy<Value = CqlType> {
    let leaf = proptest::sample::select(NATIVES.to_vec()).prop_map(CqlType::Native);
    leaf.prop_recursive(depth, 8 * depth, depth, |inner| {
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

/// Text with the characters that stress quoting (quotes, `$`, brackets, commas, newlines, unicode),
/// or any text.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z' \"$,:{}\\[\\]()\\n\\\\é日🎉]{0,12}", ".{0,8}"]
}

/// A non-null, non-empty value of a native type.
fn native_value(native: NativeType) -> BoxedStrategy<Value> {
    use NativeType as N;
    match native {
        N::Ascii => "[\\x00-\\x7f]{0,8}".prop_map(Value::Text).boxed(),
        N::Text => text().prop_map(Value::Text).boxed(),
        N::Blob => proptest::collection::vec(any::<u8>(), 0..8)
            .prop_map(Value::Blob)
            .boxed(),
        N::Boolean => any::<bool>().prop_map(Value::Boolean).boxed(),
        N::TinyInt => any::<i8>().prop_map(Value::TinyInt).boxed(),
        N::SmallInt => any::<i16>().prop_map(Value::SmallInt).boxed(),
        N::Int => any::<i32>().prop_map(Value::Int).boxed(),
        N::BigInt | N::Counter => any::<i64>().prop_map(Value::BigInt).boxed(),
        N::Float => any::<u32>()
            .prop_map(|bits| Value::Float(f32::from_bits(bits)))
            .boxed(),
        N::Double => any::<u64>()
            .prop_map(|bits| Value::Double(f64::from_bits(bits)))
            .boxed(),
        N::Varint => proptest::collection::vec(any::<u8>(), 1..20)
            .prop_map(|b| Value::Varint(BigInt::from_signed_bytes_be(&b)))
            .boxed(),
        N::Decimal => (any::<i128>(), any::<i32>())
            .prop_map(|(unscaled, scale)| Value::Decimal {
                unscaled: BigInt::from(unscaled),
                scale,
            })
            .boxed(),
        N::Uuid => any::<u128>()
            .prop_map(|n| Value::Uuid(uuid::Uuid::from_u128(n)))
            .boxed(),
        N::TimeUuid => any::<u128>()
            .prop_map(|n| {
                // Force version 1: the high nibble of byte 6.
                let n = (n & !(0xf << 76)) | (1 << 76);
                Value::Uuid(uuid::Uuid::from_u128(n))
            })
            .boxed(),
        N::Inet => prop_oneof![
            any::<[u8; 4]>().prop_map(|b| Value::Inet(IpAddr::V4(Ipv4Addr::from(b)))),
            any::<[u8; 16]>().prop_map(|b| Value::Inet(IpAddr::V6(Ipv6Addr::from(b)))),
        ]
        .boxed(),
        // Any count, and years 1–9999 (printed as text rather than as the count).
        N::Timestamp => prop_oneof![any::<i64>(), -62_135_596_800_000i64..253_402_300_800_000]
            .prop_map(Value::Timestamp)
            .boxed(),
        N::Date => any::<u32>().prop_map(Value::Date).boxed(),
        N::Time => (0..NANOS_PER_DAY).prop_map(Value::Time).boxed(),
        N::Duration => (any::<bool>(), 0..=i32::MAX, 0..=i32::MAX, 0..=i64::MAX)
            .prop_map(|(negative, months, days, nanoseconds)| {
                let sign = if negative { -1 } else { 1 };
                Value::Duration {
                    months: sign * months,
                    days: sign * days,
                    nanoseconds: i64::from(sign) * nanoseconds,
                }
            })
            .boxed(),
        other => panic!("not covered here: {other:?}"),
    }
}

/// Where a value sits, which decides whether null and empty are allowed.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// The whole payload: never null.
    Top,
    /// A collection element, field or component: may be null.
    Item,
    /// A vector element: neither null nor empty.
    VectorElement,
}

/// The first of the items whose keys (of type `ty`) have the same bytes: the text forms refuse a set
/// element or map key given twice.
fn first_of_each<T>(ty: &CqlType, items: Vec<T>, key: impl Fn(&T) -> &Value) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|item| cqlwire_codec::value::encode(ty, key(item)).map_or(true, |b| seen.insert(b)))
        .collect()
}

/// A random value of `ty` for `place`; tuples and UDTs may end early (down to no component).
fn value_of(ty: &CqlType, place: Place) -> BoxedStrategy<Value> {
    let value = match ty {
        CqlType::Native(native) => {
            let plain = native_value(*native);
            let has_empty = !matches!(
                native,
                NativeType::Text | NativeType::Ascii | NativeType::Blob
            );
            if has_empty && place != Place::VectorElement {
                prop_oneof![4 => plain, 1 => Just(Value::Empty)].boxed()
            } else {
                plain
            }
        }
        CqlType::List(element) => proptest::collection::vec(value_of(element, Place::Item), 0..4)
            .prop_map(Value::List)
            .boxed(),
        CqlType::Set(element) => {
            let element = element.as_ref().clone();
            proptest::collection::vec(value_of(&element, Place::Item), 0..4)
                .prop_map(move |items| Value::List(first_of_each(&element, items, |v| v)))
                .boxed()
        }
        CqlType::Map(key, value) => {
            let key = key.as_ref().clone();
            proptest::collection::vec(
                (value_of(&key, Place::Item), value_of(value, Place::Item)),
                0..4,
            )
            .prop_map(move |entries| Value::Map(first_of_each(&key, entries, |(k, _)| k)))
            .boxed()
        }
        CqlType::Tuple(components) => {
            let all: Vec<_> = components
                .iter()
                .map(|c| value_of(c, Place::Item))
                .collect();
            (all, 0..=components.len())
                .prop_map(|(mut values, n)| {
                    values.truncate(n);
                    Value::Tuple(values)
                })
                .boxed()
        }
        CqlType::Udt(udt) => {
            let names: Vec<String> = udt.fields.iter().map(|(n, _)| n.clone()).collect();
            let all: Vec<_> = udt
                .fields
                .iter()
                .map(|(_, t)| value_of(t, Place::Item))
                .collect();
            (all, 0..=udt.fields.len())
                .prop_map(move |(values, n)| {
                    Value::Udt(names.iter().cloned().zip(values).take(n).collect())
                })
                .boxed()
        }
        CqlType::Vector(element, dimension) => {
            proptest::collection::vec(value_of(element, Place::VectorElement), *dimension)
                .prop_map(Value::List)
                .boxed()
        }
        other => panic!("not covered here: {other:?}"),
    };
    if place == Place::Item {
        prop_oneof![5 => value, 1 => Just(Value::Null)].boxed()
    } else {
        value
    }
}

/// A random type nested up to `depth` levels and a value of it.
pub fn type_and_value(depth: u32) -> impl Strategy<Value = (CqlType, Value)> {
    any_type(depth).prop_flat_map(|ty| {
        let value = value_of(&ty, Place::Top);
        (Just(ty), value)
    })
}
