//! What the target element type is: one encoded size ([`FixedTarget`]) or a variable one, and the
//! element types numbers convert to.

use crate::input::ElementType;
use crate::types::NativeType;

/// A target element type whose encoded elements all have one size (vint prefix included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FixedTarget {
    /// `boolean`: one byte, from the numbers 0 and 1 only.
    Boolean,
    /// `float`: 4 bytes.
    Float,
    /// `double`: 8 bytes.
    Double,
    /// `int`: 4 bytes.
    Int,
    /// `bigint` and `timestamp`: 8 bytes.
    BigInt,
    /// `tinyint`: the vint length `01`, then 1 byte.
    TinyInt,
    /// `smallint`: the vint length `02`, then 2 bytes.
    SmallInt,
    /// `date`: the vint length `04`, then 4 bytes (days, unsigned with 2^31 as the epoch).
    Date,
    /// `time`: the vint length `08`, then 8 bytes (nanoseconds since midnight).
    Time,
}

impl FixedTarget {
    /// Size of one element in bytes.
    pub(super) fn size(self) -> usize {
        match self {
            FixedTarget::Boolean => 1,
            FixedTarget::TinyInt => 2,
            FixedTarget::SmallInt => 3,
            FixedTarget::Float | FixedTarget::Int => 4,
            FixedTarget::Date => 5,
            FixedTarget::Double | FixedTarget::BigInt => 8,
            FixedTarget::Time => 9,
        }
    }
}

/// How the target element type is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// Elements of one size (fixed-size types, or a constant vint prefix and a fixed payload).
    Fixed(FixedTarget),
    /// Variable-size elements: vint length then the value, for this native type.
    Variable(NativeType),
}

impl Target {
    /// How elements of `native` are written, or None when numbers do not convert to it.
    pub(super) fn of(native: NativeType) -> Option<Target> {
        Some(match native {
            NativeType::Boolean => Target::Fixed(FixedTarget::Boolean),
            NativeType::Float => Target::Fixed(FixedTarget::Float),
            NativeType::Double => Target::Fixed(FixedTarget::Double),
            NativeType::Int => Target::Fixed(FixedTarget::Int),
            NativeType::BigInt | NativeType::Timestamp => Target::Fixed(FixedTarget::BigInt),
            NativeType::TinyInt => Target::Fixed(FixedTarget::TinyInt),
            NativeType::SmallInt => Target::Fixed(FixedTarget::SmallInt),
            NativeType::Date => Target::Fixed(FixedTarget::Date),
            NativeType::Time => Target::Fixed(FixedTarget::Time),
            NativeType::Varint | NativeType::Decimal | NativeType::Text | NativeType::Ascii => {
                Target::Variable(native)
            }
            _ => return None,
        })
    }
}

/// The element types a vector of numbers can be converted to (what [`super::VectorEncoder::new`] accepts).
pub const NUMBER_ELEMENTS: [NativeType; 14] = [
    NativeType::Float,
    NativeType::Double,
    NativeType::Int,
    NativeType::BigInt,
    NativeType::Timestamp,
    NativeType::Boolean,
    NativeType::SmallInt,
    NativeType::TinyInt,
    NativeType::Varint,
    NativeType::Decimal,
    NativeType::Date,
    NativeType::Time,
    NativeType::Text,
    NativeType::Ascii,
];

/// The default target element type for an input element type: f16/f32 → float,
/// f64 → double, i64 → bigint, every other integer → int.
pub fn default_element(source: ElementType) -> NativeType {
    match source {
        ElementType::F16 | ElementType::F32 => NativeType::Float,
        ElementType::F64 => NativeType::Double,
        ElementType::I64 => NativeType::BigInt,
        ElementType::I8 | ElementType::U8 | ElementType::I16 | ElementType::I32 => NativeType::Int,
    }
}
