//! cqlsh-style literals: [`format_cql`] prints a value as valid CQL, [`parse_cql`] reads it back (and the
//! common forms people type into cqlsh), guided by the type.
//!
//! Decisions (docs/decode-encode.md documents them for users):
//! - timestamps, dates, times and inet addresses print **quoted** (`'2024-01-01 12:00:00.000Z'`,
//!   `'2024-01-01'`, `'12:34:56.123456789'`, `'10.0.0.1'`) so the output is valid CQL; quotes are
//!   optional when parsing;
//! - a timestamp outside years 1–9999 prints as its raw millisecond count, a date outside that range as
//!   its raw unsigned wire day count (2^31 = 1970-01-01), a time outside a day as its nanosecond count —
//!   all forms Cassandra accepts as literals; timestamps without a zone are read as UTC;
//! - floats print in the shortest form that reads back to the same bits (`0.1`, `1e300`, `-0.0`), and
//!   `NaN`, `Infinity`, `-Infinity`;
//! - decimals print like Java's `BigDecimal.toString` (`1.50`, `1E+3`, `1.2E-8`), which keeps the scale;
//! - durations print in Cassandra's units (`1y2mo3d4h5m6s7ms8us9ns`, `-` prefix, `0s` for zero); a
//!   duration whose components have mixed signs (legal bytes, no CQL form) prints each component with its
//!   own sign (`+13mo-1d`), which this parser reads back;
//! - the empty value prints as `<empty>`; a UDT or tuple that ended early prints only its present
//!   fields/components, and reads back the same way.

mod calendar;
mod error;
mod format;
mod parse;
mod scalar;

pub use error::{LiteralError, LiteralErrorKind, LiteralForm};
pub use format::format_cql;
pub use parse::parse_cql;

pub(crate) use error::wrong_dimension;
pub(crate) use scalar::{double_text, float_text};
// The pieces the JSON form shares with this one.
#[cfg(feature = "json")]
pub(crate) use calendar::{date_text, duration_text, time_text, timestamp_text};
#[cfg(feature = "json")]
pub(crate) use parse::encodable;
#[cfg(feature = "json")]
pub(crate) use scalar::{decimal_text, native_from_text};

use crate::types::CqlType;

/// Deepest nesting of collections, tuples and UDTs that [`parse_cql`] and the JSON reader accept.
pub const MAX_LITERAL_DEPTH: usize = 128;

// ---------------------------------------------------------------------------------------------------
// Types as seen from a value: what the elements of a composite are.
// ---------------------------------------------------------------------------------------------------

/// The element type of a list, set or vector.
pub(crate) fn element_type(ty: Option<&CqlType>) -> Option<&CqlType> {
    match ty {
        Some(CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _)) => Some(t),
        _ => None,
    }
}

/// The key and value types of a map.
pub(crate) fn entry_types(ty: Option<&CqlType>) -> (Option<&CqlType>, Option<&CqlType>) {
    match ty {
        Some(CqlType::Map(k, v)) => (Some(k), Some(v)),
        _ => (None, None),
    }
}

/// The type of component `index` of a tuple.
pub(crate) fn component_type(ty: Option<&CqlType>, index: usize) -> Option<&CqlType> {
    match ty {
        Some(CqlType::Tuple(components)) => components.get(index),
        _ => None,
    }
}

/// The type of the field `name` of a UDT.
pub(crate) fn field_type<'t>(ty: Option<&'t CqlType>, name: &str) -> Option<&'t CqlType> {
    match ty {
        Some(CqlType::Udt(udt)) => udt.fields.iter().find(|(n, _)| n == name).map(|(_, t)| t),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
