//! Wire-legal bytes that Apache Cassandra (5.0.9, as the conformance corpus records its answers)
//! refuses: the one rule ([`Refusal::of`]) and where it finds them in a payload
//! ([`refusals_each`]). `decode`, `explain`, the Python `decode` and `inspect`'s bound values all
//! go through these.
//!
//! What the server does, case by case (conformance/cases.jsonl, `server`):
//! - a null element of a list, set or map (key or value): a set or map answers "Null value read
//!   when not allowed", a list column a `NullPointerException`, a literal "null is not supported
//!   inside collections" (a frozen list bound as bytes alone keeps it, and then fails to read as
//!   JSON);
//! - an empty (zero-length) element of a list: a list column fails (`NullPointerException`), a
//!   frozen list keeps it as a null element; the same rule is applied to sets and maps;
//! - the empty value of smallint, tinyint, date, time, duration and counter, wherever it is (the
//!   top level, a tuple component, a UDT field): "Expected 2 bytes for a smallint (0)" and the like.
//!
//! Vectors need no rule: a null or empty vector element is already a decoding error.

use super::Value;
use crate::types::{CqlType, NativeType};
use std::fmt;

/// Where an item sits, as far as the rule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// An element of a list.
    ListElement,
    /// An element of a set.
    SetElement,
    /// The key of a map entry.
    MapKey,
    /// The value of a map entry.
    MapValue,
    /// The top level, a tuple component, a UDT field or a vector element.
    Other,
}

impl Place {
    /// Whether the place is inside a list, set or map.
    fn in_collection(self) -> bool {
        !matches!(self, Place::Other)
    }

    /// `a null element in a list`, `a null key in a map`, … with `what` ("null", "empty").
    fn describe(self, article: &str, what: &str) -> String {
        let (item, collection) = match self {
            Place::ListElement => ("element", "list"),
            Place::SetElement => ("element", "set"),
            Place::MapKey => ("key", "map"),
            Place::MapValue => ("value", "map"),
            Place::Other => ("value", "collection"),
        };
        format!("{article} {what} {item} in a {collection}")
    }
}

/// Something in a wire-legal value that Apache Cassandra refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A null (length -1) element of a list or set, or key or value of a map.
    NullElement(Place),
    /// A zero-length element of a list or set, or key or value of a map, of a type whose
    /// zero-length value is the empty value.
    EmptyElement(Place),
    /// The empty value of smallint, tinyint, date, time, duration or counter.
    EmptyValue(NativeType),
}

/// Whether Apache Cassandra refuses the empty value of this native type: its validators want
/// exactly 1, 2, 4 or 8 bytes (at least 3 for duration; a counter is 8 bytes).
pub fn refuses_empty(native: NativeType) -> bool {
    use NativeType::*;
    matches!(
        native,
        SmallInt | TinyInt | Date | Time | Duration | Counter
    )
}

impl Refusal {
    /// The rule: what Apache Cassandra refuses in `value`, an item of type `ty` at `place`
    /// (composite values are judged item by item: this looks at `value` itself, not inside it).
    pub fn of(place: Place, ty: &CqlType, value: &Value) -> Option<Refusal> {
        match value {
            Value::Null if place.in_collection() => Some(Refusal::NullElement(place)),
            Value::Empty if place.in_collection() => Some(Refusal::EmptyElement(place)),
            Value::Empty => match ty {
                CqlType::Native(native) if refuses_empty(*native) => {
                    Some(Refusal::EmptyValue(*native))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Apache Cassandra refuses ")?;
        match self {
            Refusal::NullElement(place) => write!(
                f,
                "{} (null is not supported inside collections)",
                place.describe("a", "null")
            ),
            Refusal::EmptyElement(place) => write!(
                f,
                "{} (it keeps no empty value inside a collection)",
                place.describe("an", "empty")
            ),
            Refusal::EmptyValue(native) => {
                let wanted = match native {
                    NativeType::TinyInt => "exactly 1 byte",
                    NativeType::SmallInt => "exactly 2 bytes",
                    NativeType::Date => "exactly 4 bytes",
                    NativeType::Time | NativeType::Counter => "exactly 8 bytes",
                    NativeType::Duration => "at least 3 bytes",
                    _ => "bytes",
                };
                write!(f, "the empty value of {native} (it wants {wanted})")
            }
        }
    }
}

/// A [`Refusal`] found in a payload: where its item starts and its path in the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// What is refused.
    pub refusal: Refusal,
    /// The offset of the item's first byte (its length prefix, inside a collection).
    pub offset: usize,
    /// Where in the value (`element 1`, `map value #0 / element 1`), empty at the top level.
    pub path: String,
}

impl fmt::Display for Refused {
    /// `Apache Cassandra refuses a null element in a list (…) at byte 8 (element 1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.refusal, self.offset)?;
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        Ok(())
    }
}

/// Whether a value of `ty` can hold anything Apache Cassandra refuses (a list, set or map, or
/// one of the natives whose empty value it refuses, anywhere in it): when not, [`refusals_each`]
/// finds nothing in any payload that decodes.
pub fn can_be_refused(ty: &CqlType) -> bool {
    match ty {
        CqlType::Native(native) => refuses_empty(*native),
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _) => true,
        CqlType::Tuple(components) => components.iter().any(can_be_refused),
        CqlType::Udt(udt) => udt.fields.iter().any(|(_, t)| can_be_refused(t)),
        CqlType::Vector(element, _) => can_be_refused(element),
    }
}

/// Decodes a payload like [`super::decode`] (or [`super::decode_prefix`] when `allow_trailing`),
/// keeping nothing, and hands `each` every item Apache Cassandra refuses, in byte order. Returns
/// the number of bytes the value took, or the decoding error (after the findings before it).
pub fn refusals_each(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    each: &mut dyn FnMut(Refused),
) -> Result<usize, super::DecodeError> {
    super::wire::find_refusals(ty, bytes, allow_trailing, each)
}

/// Every item of a payload that Apache Cassandra refuses ([`refusals_each`] collected; a payload
/// holds at most one per 4 bytes).
pub fn refusals(ty: &CqlType, bytes: &[u8]) -> Result<Vec<Refused>, super::DecodeError> {
    let mut found = Vec::new();
    refusals_each(ty, bytes, false, &mut |r| found.push(r))?;
    Ok(found)
}

/// The most findings [`refusal_lines`] lists, one line each.
pub const LISTED_REFUSALS: usize = 100;

/// What every face says of a payload ([`refusal_lines`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// One line per finding ([`Refused`]'s text), at most [`LISTED_REFUSALS`], the last one then
    /// ending `; and N more items Apache Cassandra refuses, not listed`.
    pub lines: Vec<String>,
    /// How many findings there are, listed or not.
    pub total: usize,
}

/// The findings of a payload as every face says them ([`Listed`]). Nothing for a type that
/// [`can_be_refused`] calls free of them (without decoding), else the decoding error of a
/// malformed payload.
pub fn refusal_lines(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
) -> Result<Listed, super::DecodeError> {
    let mut listed = Listed::default();
    if !can_be_refused(ty) {
        return Ok(listed);
    }
    refusals_each(ty, bytes, allow_trailing, &mut |finding| {
        listed.total += 1;
        if listed.total <= LISTED_REFUSALS {
            listed.lines.push(finding.to_string());
        }
    })?;
    let more = listed.total.saturating_sub(LISTED_REFUSALS);
    if let Some(last) = listed.lines.last_mut().filter(|_| more > 0) {
        last.push_str(&format!(
            "; and {more} more items Apache Cassandra refuses, not listed"
        ));
    }
    Ok(listed)
}
