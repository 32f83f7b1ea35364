//! Why a value could not be encoded, and the range check of `time` values.

use super::Step;
use crate::types::CqlType;
use std::fmt;

/// Nanoseconds in a day: a `time` value must be below this.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// A `time` value outside a day (0 to [`NANOS_PER_DAY`] - 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("time value {nanos} is out of range 0..{}", NANOS_PER_DAY - 1)]
#[non_exhaustive]
pub struct TimeOutOfRange {
    /// The nanoseconds given.
    pub nanos: i64,
}

/// `nanos` when it is a time of day (0 to [`NANOS_PER_DAY`] - 1), the one range check of `time`
/// values that decoding, encoding and the text forms share.
pub fn time_of_day(nanos: i64) -> Result<i64, TimeOutOfRange> {
    if (0..NANOS_PER_DAY).contains(&nanos) {
        Ok(nanos)
    } else {
        Err(TimeOutOfRange { nanos })
    }
}

/// Why a value could not be encoded for a type: `<kind> (<path>)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct EncodeError {
    /// What is wrong.
    pub kind: EncodeErrorKind,
    /// Where in the value, e.g. `element 3 / field zip`; empty at the top level.
    pub path: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        Ok(())
    }
}

impl EncodeError {
    /// The same error seen from the enclosing value: `step` is prepended to the path.
    pub(super) fn within(mut self, step: Step<'_>) -> Self {
        self.path = if self.path.is_empty() {
            step.to_string()
        } else {
            format!("{step} / {}", self.path)
        };
        self
    }
}

impl From<EncodeErrorKind> for EncodeError {
    /// An error at the top level of the value being encoded.
    fn from(kind: EncodeErrorKind) -> Self {
        EncodeError {
            kind,
            path: String::new(),
        }
    }
}

/// What makes a value impossible to encode as its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A value of another kind than the type (`expected a int value, found text`).
    #[error("expected a {ty} value, found {found}")]
    Mismatch {
        /// The type.
        ty: Box<CqlType>,
        /// The kind of value found, e.g. `text`, `a list`.
        found: &'static str,
    },
    /// A null at the top level, which has no bytes.
    #[error("a null value has no bytes (only elements, fields and components can be null)")]
    TopLevelNull,
    /// The empty value for a type that has none (text, ascii, blob and composites).
    #[error("a {ty} value cannot be empty")]
    CannotBeEmpty {
        /// The type.
        ty: Box<CqlType>,
    },
    /// A tuple with more components than its type.
    #[error("{ty} has {count} components, found {found}")]
    TooManyComponents {
        /// The tuple type.
        ty: Box<CqlType>,
        /// Its number of components.
        count: usize,
        /// The number of components given.
        found: usize,
    },
    /// A vector with another number of elements than its dimension.
    #[error("{ty} needs {dimension} elements, found {found}")]
    WrongDimension {
        /// The vector type.
        ty: Box<CqlType>,
        /// Its dimension.
        dimension: usize,
        /// The number of elements given.
        found: usize,
    },
    /// A UDT value giving a field twice.
    #[error("field {field} is given twice")]
    FieldGivenTwice {
        /// The field's name.
        field: String,
    },
    /// A UDT value with a field its type does not have.
    #[error("type {udt} has no field {field}")]
    NoSuchField {
        /// The UDT's name.
        udt: String,
        /// The field given.
        field: String,
    },
    /// A collection with more elements than an `[int]` count can say.
    #[error("{count} elements are too many for a collection")]
    TooManyElements {
        /// The number of elements.
        count: usize,
    },
    /// An item longer than an `[int]` length can say.
    #[error("a value of {len} bytes is too long")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A null vector element (vectors have no nulls).
    #[error("null element in a vector")]
    NullVectorElement,
    /// An empty vector element.
    #[error("empty element in a vector")]
    EmptyVectorElement,
    /// A time of day outside a day.
    #[error(transparent)]
    TimeOutOfRange(#[from] TimeOutOfRange),
    /// A timeuuid value that is not a version 1 UUID.
    #[error("timeuuid value is a version {version} UUID, not version 1")]
    NotTimeUuid {
        /// The UUID's version.
        version: usize,
    },
    /// An ascii value with text outside US-ASCII.
    #[error("ascii value contains non-ASCII text {text:?}")]
    NonAscii {
        /// The text.
        text: String,
    },
    /// A duration whose components have different signs.
    #[error("duration has mixed signs (months {months}, days {days}, nanoseconds {nanoseconds})")]
    MixedSigns {
        /// Months.
        months: i64,
        /// Days.
        days: i64,
        /// Nanoseconds.
        nanoseconds: i64,
    },
}
