//! Why a literal (CQL text or JSON) does not describe a value of its type.

use super::MAX_LITERAL_DEPTH;
use crate::types::{CqlType, NativeType};
use crate::value::{EncodeErrorKind, TimeOutOfRange, Value};
use num_bigint::BigInt;
use std::fmt;

/// Why a literal (CQL text or JSON) does not describe a value of the type:
/// `<kind> at character <position> (<path>)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}{}{}", position.map(|p| format!(" at character {p}")).unwrap_or_default(), if path.is_empty() { String::new() } else { format!(" ({path})") })]
#[non_exhaustive]
pub struct LiteralError {
    /// What is wrong.
    pub kind: LiteralErrorKind,
    /// Index in characters (from 0) in the CQL text, when the input is text.
    pub position: Option<usize>,
    /// Where in the value, e.g. `element 1 / field zip`; empty at the top level.
    pub path: String,
}

/// What is wrong with a literal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LiteralErrorKind {
    /// Something else than what the CQL syntax needs here (`expected ':' after a map key`).
    #[error("expected {expected}")]
    Expected {
        /// What the syntax needs, e.g. `'[' to start a list`.
        expected: String,
    },
    /// A JSON value of the wrong kind (`expected an array for list<int>, found a string`).
    #[error("expected {expected}, found {found}")]
    WrongJson {
        /// What the type needs, e.g. `an array for list<int>`.
        expected: String,
        /// The kind of JSON value found, e.g. `a string`.
        found: &'static str,
    },
    /// Text after a complete value.
    #[error("unexpected text after the value")]
    TrailingText,
    /// Composites nested deeper than [`MAX_LITERAL_DEPTH`] levels.
    #[error("nested deeper than {MAX_LITERAL_DEPTH} levels")]
    TooDeep,
    /// A quoted string without its closing quote.
    #[error("unterminated quoted string")]
    UnterminatedString,
    /// A `$$` string without its closing `$$`.
    #[error("unterminated $$ string")]
    UnterminatedDollarString,
    /// `<empty>` for a type that has no empty value (text, ascii, blob and composites).
    #[error("a {ty} value cannot be empty")]
    CannotBeEmpty {
        /// The type.
        ty: Box<CqlType>,
    },
    /// A vector literal with another number of elements than its dimension.
    #[error("{ty} needs {dimension} elements, found {found}")]
    WrongDimension {
        /// The vector type.
        ty: Box<CqlType>,
        /// Its dimension.
        dimension: usize,
        /// The number of elements given.
        found: usize,
    },
    /// A tuple literal with more components than its type.
    #[error("{ty} has {}{count} components{}", if found.is_none() { "only " } else { "" }, found.map(|n| format!(", found {n}")).unwrap_or_default())]
    TooManyComponents {
        /// The tuple type.
        ty: Box<CqlType>,
        /// Its number of components.
        count: usize,
        /// The number of components given, when known (JSON).
        found: Option<usize>,
    },
    /// A UDT literal naming a field its type does not have.
    #[error("{udt} has no field {field:?}")]
    NoSuchField {
        /// The UDT's name.
        udt: String,
        /// The field named.
        field: String,
    },
    /// A UDT literal giving a field twice.
    #[error("field {field:?} given twice")]
    FieldGivenTwice {
        /// The field's name.
        field: String,
    },
    /// A map key or set element given twice (the same bytes).
    #[error("{} {text} given twice ({what} #{first} and #{second})", what.rsplit(' ').next().unwrap_or(what))]
    Repeated {
        /// `map key` or `set element`.
        what: &'static str,
        /// The repeated key or element as a CQL literal (cut after 64 characters).
        text: String,
        /// The index of its first occurrence.
        first: usize,
        /// The index of the repeat.
        second: usize,
    },
    /// Text that is not a literal of the form the type needs.
    #[error("invalid {form} {text:?}{}", form.hint())]
    Invalid {
        /// The form expected.
        form: LiteralForm,
        /// The text found.
        text: String,
    },
    /// An integer literal whose exponent is too large to apply (`1e10001`).
    #[error("exponent too large in {text:?}")]
    ExponentTooLarge {
        /// The literal.
        text: String,
    },
    /// A number with a fraction given for an integer type.
    #[error("{text:?} is not an integer")]
    NotAnInteger {
        /// The literal.
        text: String,
    },
    /// A decimal whose scale does not fit 32 bits.
    #[error("decimal scale out of range in {text:?}")]
    ScaleOutOfRange {
        /// The literal.
        text: String,
    },
    /// `NaN(0x…)` with bits that are not a NaN of the type.
    #[error("{text:?} is not the bit pattern of a {native} NaN")]
    NotNan {
        /// `float` or `double`.
        native: NativeType,
        /// The literal.
        text: String,
    },
    /// An integer outside the range of its type.
    #[error("{value} is out of range for {native}")]
    IntegerOutOfRange {
        /// The integer type.
        native: NativeType,
        /// The integer given.
        value: BigInt,
    },
    /// A timestamp with digits below the millisecond.
    #[error("timestamp {text:?} is more precise than milliseconds")]
    SubMillisecond {
        /// The literal.
        text: String,
    },
    /// A well-formed timestamp, date or duration outside the range of its type.
    #[error("{native} {text:?} is out of range")]
    OutOfRange {
        /// `timestamp`, `date` or `duration`.
        native: NativeType,
        /// The literal.
        text: String,
    },
    /// A raw date (a wire day count) above 2^32 - 1.
    #[error("raw date {text} is out of range (0 to 4294967295)")]
    RawDateOutOfRange {
        /// The literal.
        text: String,
    },
    /// A time of day outside a day.
    #[error(transparent)]
    TimeOutOfRange(#[from] TimeOutOfRange),
    /// An ascii literal with a character outside US-ASCII.
    #[error("non-ASCII character {character:?} in ascii value")]
    NonAscii {
        /// The first such character.
        character: char,
    },
    /// A value the binary codec refuses (a top-level null, a duration with mixed signs, a null
    /// vector element, ...), with the codec's message.
    #[error(transparent)]
    Unencodable(#[from] EncodeErrorKind),
}

/// The text form a literal failed to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LiteralForm {
    /// An integer (tinyint, smallint, int, bigint, counter, varint).
    Integer,
    /// A decimal.
    Decimal,
    /// A double.
    Double,
    /// A float.
    Float,
    /// A boolean.
    Boolean,
    /// A timestamp.
    Timestamp,
    /// A date.
    Date,
    /// A time of day.
    Time,
    /// A duration.
    Duration,
    /// A blob (`0x…`).
    Blob,
    /// A uuid or timeuuid.
    Uuid,
    /// An inet address.
    Inet,
}

impl LiteralForm {
    /// What follows the text in the message: an example of the form, when it helps.
    fn hint(self) -> &'static str {
        match self {
            LiteralForm::Float => " (or out of range)",
            LiteralForm::Boolean => " (expected true or false)",
            LiteralForm::Timestamp => " (expected e.g. 2024-01-01 12:00:00.000Z)",
            LiteralForm::Date => " (expected e.g. 2024-01-01)",
            LiteralForm::Time => " (expected e.g. 12:34:56.123456789)",
            LiteralForm::Duration => " (expected e.g. 1h30m or P1DT2H)",
            LiteralForm::Blob => " (expected 0x followed by hex digit pairs)",
            _ => "",
        }
    }
}

impl fmt::Display for LiteralForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LiteralForm::Integer => "integer",
            LiteralForm::Decimal => "decimal",
            LiteralForm::Double => "double",
            LiteralForm::Float => "float",
            LiteralForm::Boolean => "boolean",
            LiteralForm::Timestamp => "timestamp",
            LiteralForm::Date => "date",
            LiteralForm::Time => "time",
            LiteralForm::Duration => "duration",
            LiteralForm::Blob => "blob",
            LiteralForm::Uuid => "uuid",
            LiteralForm::Inet => "inet address",
        })
    }
}

/// The error of a vector `value` of type `ty` (`vector<T, dimension>`) that does not hold
/// `dimension` elements; `None` when it does, or when it is not a list.
pub(crate) fn wrong_dimension(
    ty: &CqlType,
    dimension: usize,
    value: &Value,
) -> Option<LiteralErrorKind> {
    match value {
        Value::List(items) if items.len() != dimension => Some(LiteralErrorKind::WrongDimension {
            ty: Box::new(ty.clone()),
            dimension,
            found: items.len(),
        }),
        _ => None,
    }
}
