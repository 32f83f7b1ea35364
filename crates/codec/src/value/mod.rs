//! The value model for every CQL type, and the codec between values and wire bytes.
//!
//! A [`Value`] is read together with its [`crate::types::CqlType`]: `Text` holds text, varchar and
//! ascii values, `BigInt` bigint and counter, `List` lists, sets and vectors.

pub mod cql;
pub mod explain;
#[cfg(feature = "json")]
pub mod json;
pub mod print;
pub mod refused;
mod unique;
mod wire;

pub use crate::cursor::DecodeError;
pub use unique::check_no_repeats;
pub use wire::{
    decode, decode_pieces, decode_prefix, encode, encode_into, encode_vector_element, explain,
    explain_allowing_trailing, explain_each, time_of_day, EncodeError, EncodeErrorKind,
    ExplainLine, Explanation, Piece, Step, TimeOutOfRange, NANOS_PER_DAY,
};

use crate::types::{CqlType, NativeType};
use num_bigint::BigInt;
use std::net::IpAddr;

/// A decoded CQL value.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Value {
    /// The null value (a length of -1).
    Null,
    /// The *empty* value: zero bytes for a native type that is not text, ascii, varchar or blob.
    Empty,
    /// boolean.
    Boolean(bool),
    /// tinyint.
    TinyInt(i8),
    /// smallint.
    SmallInt(i16),
    /// int.
    Int(i32),
    /// bigint and counter.
    BigInt(i64),
    /// varint.
    Varint(BigInt),
    /// float.
    Float(f32),
    /// double.
    Double(f64),
    /// decimal: `unscaled × 10^-scale`.
    Decimal {
        /// The unscaled integer.
        unscaled: BigInt,
        /// The power of ten to divide by.
        scale: i32,
    },
    /// text, varchar and ascii.
    Text(String),
    /// blob.
    Blob(Vec<u8>),
    /// uuid and timeuuid.
    Uuid(uuid::Uuid),
    /// inet.
    Inet(IpAddr),
    /// timestamp: milliseconds since 1970-01-01T00:00:00Z.
    Timestamp(i64),
    /// date: days with 2^31 = 1970-01-01 (the wire value).
    Date(u32),
    /// time: nanoseconds since midnight.
    Time(i64),
    /// duration.
    Duration {
        /// Months.
        months: i32,
        /// Days.
        days: i32,
        /// Nanoseconds.
        nanoseconds: i64,
    },
    /// list, set and vector elements, in wire order.
    List(Vec<Value>),
    /// map entries, in wire order.
    Map(Vec<(Value, Value)>),
    /// tuple components; may be shorter than the tuple type (missing trailing components).
    Tuple(Vec<Value>),
    /// UDT fields in declaration order; may be shorter than the type (missing trailing fields).
    Udt(Vec<(String, Value)>),
}

impl PartialEq for Value {
    /// Structural equality; floats compare by bit pattern so that NaN equals itself and -0.0 ≠ 0.0,
    /// which is what a round-trip check needs.
    fn eq(&self, other: &Self) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) | (Empty, Empty) => true,
            (Boolean(a), Boolean(b)) => a == b,
            (TinyInt(a), TinyInt(b)) => a == b,
            (SmallInt(a), SmallInt(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (Varint(a), Varint(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Double(a), Double(b)) => a.to_bits() == b.to_bits(),
            (
                Decimal {
                    unscaled: a,
                    scale: s,
                },
                Decimal {
                    unscaled: b,
                    scale: t,
                },
            ) => a == b && s == t,
            (Text(a), Text(b)) => a == b,
            (Blob(a), Blob(b)) => a == b,
            (Uuid(a), Uuid(b)) => a == b,
            (Inet(a), Inet(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (Date(a), Date(b)) => a == b,
            (Time(a), Time(b)) => a == b,
            (
                Duration {
                    months: a,
                    days: b,
                    nanoseconds: c,
                },
                Duration {
                    months: x,
                    days: y,
                    nanoseconds: z,
                },
            ) => a == x && b == y && c == z,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (Udt(a), Udt(b)) => a == b,
            _ => false,
        }
    }
}

/// Whether a zero-length value of this native type is the *empty* value ([`Value::Empty`],
/// `<empty>` in CQL, `{"$empty": true}` in JSON): every native but text, ascii and blob, whose
/// zero-length value is `''` or `0x` instead (as protocol v4 reads them).
pub(crate) fn has_empty_value(native: NativeType) -> bool {
    !matches!(
        native,
        NativeType::Text | NativeType::Ascii | NativeType::Blob
    )
}

/// Checks that `value` encodes as `ty`, with the error [`encode`] would give.
pub(crate) fn check_encodable(ty: &CqlType, value: &Value) -> Result<(), EncodeError> {
    encode(ty, value).map(drop)
}
