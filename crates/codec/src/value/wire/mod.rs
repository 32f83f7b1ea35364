//! The strict binary codec between [`Value`]s and CQL native protocol v4 value bytes.
//!
//! Decoding checks every length against the bytes left before allocating, never trusts a count,
//! rejects trailing bytes, and reports the absolute byte offset and the path of the fault inside the
//! value (`element 3 / field zip`; indexes count from 0). [`explain`] runs the same decoder with a
//! tracer that records one [`ExplainLine`] per wire item.

mod error;
mod read;
mod write;

pub use error::{time_of_day, EncodeError, EncodeErrorKind, TimeOutOfRange, NANOS_PER_DAY};

use super::Value;
use crate::cursor::{trailing, DecodeError};
use crate::types::CqlType;
use read::Decoder;
use std::fmt;
use write::{write_value, write_vector_element};

/// One wire item of an explained payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainLine {
    /// Absolute offset of the item's first byte.
    pub offset: usize,
    /// Its length in bytes (0 for a header line that only announces a tuple, UDT or vector).
    pub len: usize,
    /// Nesting depth: 0 for the top-level value, one more inside each element, field or component.
    pub depth: usize,
    /// Where in the value (`element 3 / field zip`), empty at the top level.
    pub path: String,
    /// What the bytes mean: `count 3 (elements)`, `length 5`, `null`, `vint length 2`, `int 42`,
    /// `text "abc"`, ...
    pub meaning: String,
}

/// The result of [`explain`]: the wire items read (up to the fault, if any) and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// One line per wire item, in byte order.
    pub lines: Vec<ExplainLine>,
    /// The decoded value, or the error that stopped decoding after the last line.
    pub result: Result<Value, DecodeError>,
}

/// Decodes a whole payload: the bytes must be exactly one value of `ty`.
pub fn decode(ty: &CqlType, bytes: &[u8]) -> Result<Value, DecodeError> {
    Decoder::new(bytes, None).value(ty, 0, bytes.len())
}

/// Decodes one value of `ty` at the start of `bytes` and returns it with the number of bytes it took,
/// allowing trailing bytes (`--allow-trailing`). A fixed-size native (e.g. `int`) or fixed-size vector
/// takes its size; any other native takes all the bytes.
pub fn decode_prefix(ty: &CqlType, bytes: &[u8]) -> Result<(Value, usize), DecodeError> {
    Decoder::new(bytes, None).prefix(ty)
}

/// Decodes like [`decode`] (or [`decode_prefix`] when `allow_trailing`), handing the value to `each`
/// piece by piece in wire order instead of building it: composites as [`Piece::Open`], one
/// [`Piece::Enter`] before each item and [`Piece::Close`], natives and nulls as [`Piece::Leaf`]. Keeps
/// nothing, so a payload of millions of items at any depth needs memory for one native value.
/// Returns the number of bytes the value took; after an error, the pieces handed out so far are
/// those before the fault.
pub fn decode_pieces<'t>(
    ty: &'t CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    each: &mut dyn FnMut(Piece<'t>),
) -> Result<usize, DecodeError> {
    let mut decoder = Decoder::new(bytes, None);
    decoder.stream = Some(each);
    let (value, used) = if allow_trailing {
        decoder.prefix(ty)?
    } else {
        (decoder.value(ty, 0, bytes.len())?, bytes.len())
    };
    if matches!(ty, CqlType::Native(_)) {
        decoder.emit(Piece::Leaf(ty, value));
    }
    Ok(used)
}

/// Decodes like [`decode_pieces`] without handing out pieces, handing `each` what Apache Cassandra
/// refuses instead (see [`crate::value::refused`]).
pub(crate) fn find_refusals(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    each: &mut dyn FnMut(crate::value::refused::Refused),
) -> Result<usize, DecodeError> {
    let mut keep_nothing = |_: Piece<'_>| {};
    let mut decoder = Decoder::new(bytes, None);
    decoder.stream = Some(&mut keep_nothing);
    decoder.refused = Some(each);
    let (value, used) = if allow_trailing {
        decoder.prefix(ty)?
    } else {
        (decoder.value(ty, 0, bytes.len())?, bytes.len())
    };
    decoder.note(crate::value::refused::Place::Other, ty, &value, 0);
    Ok(used)
}

/// A piece of a value, as [`decode_pieces`] hands them out.
#[derive(Debug)]
#[non_exhaustive]
pub enum Piece<'t> {
    /// A list, set, vector, map, tuple or UDT of this type begins.
    Open(&'t CqlType),
    /// The next item of the innermost open value begins.
    Enter(Step<'t>),
    /// A native value, or a null, of this type.
    Leaf(&'t CqlType, Value),
    /// The innermost open value (of this type) ends.
    Close(&'t CqlType),
}

/// Decodes a whole payload like [`decode`], recording one line per wire item.
pub fn explain(ty: &CqlType, bytes: &[u8]) -> Explanation {
    collect_explanation(ty, bytes, false)
}

/// Decodes like [`decode_prefix`], recording one line per wire item; trailing bytes get a last line of
/// their own (`N trailing bytes (ignored)`).
pub fn explain_allowing_trailing(ty: &CqlType, bytes: &[u8]) -> Explanation {
    collect_explanation(ty, bytes, true)
}

/// [`explain`] or [`explain_allowing_trailing`].
fn collect_explanation(ty: &CqlType, bytes: &[u8], allow_trailing: bool) -> Explanation {
    let mut lines = Vec::new();
    let result = explain_with(
        ty,
        bytes,
        allow_trailing,
        &mut |line| lines.push(line),
        None,
    );
    Explanation { lines, result }
}

/// Explains like [`explain`] (or [`explain_allowing_trailing`]) but hands each line to `each` as
/// it is read and keeps neither lines nor values, so a payload of millions of items needs memory for
/// one. Returns the error that stopped it, if any
/// (after the lines before it).
pub fn explain_each(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    each: &mut dyn FnMut(ExplainLine),
) -> Result<(), DecodeError> {
    explain_with(ty, bytes, allow_trailing, each, Some(&mut drop)).map(drop)
}

/// Decodes with a tracer, streaming the value's pieces when given somewhere to put them.
fn explain_with<'t, 'x>(
    ty: &'t CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    each: &'x mut dyn FnMut(ExplainLine),
    stream: Option<&'x mut dyn FnMut(Piece<'t>)>,
) -> Result<Value, DecodeError> {
    let mut decoder = Decoder::new(bytes, Some(each));
    decoder.stream = stream;
    if !allow_trailing {
        return decoder.value(ty, 0, bytes.len());
    }
    decoder.prefix(ty).map(|(value, used)| {
        let left = bytes.len().saturating_sub(used);
        if left > 0 {
            decoder.line(used, left, || format!("{} (ignored)", trailing(left)));
        }
        value
    })
}

/// Encodes `value` as the bytes of one value of `ty` (no length prefix).
pub fn encode(ty: &CqlType, value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_into(ty, value, &mut out)?;
    Ok(out)
}

/// Appends the bytes of `value` as a value of `ty` to `out` (no length prefix); on error `out` is left
/// as it was. Does not allocate for native types other than varint and decimal (beyond growing `out`).
pub fn encode_into(ty: &CqlType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let start = out.len();
    let result = if matches!(value, Value::Null) {
        Err(EncodeErrorKind::TopLevelNull.into())
    } else {
        write_value(ty, value, out)
    };
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Appends `value` as one element of a vector whose element type is `element`: fixed-size subtypes
/// as their bare bytes, every other subtype behind an unsigned vint length. Null and empty elements
/// are errors. On error `out` is left as it was.
pub fn encode_vector_element(
    element: &CqlType,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let result = write_vector_element(element, value, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// One step of a path inside a value.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Step<'t> {
    /// An element of a list, set or vector.
    Element(usize),
    /// The key of a map entry.
    MapKey(usize),
    /// The value of a map entry.
    MapValue(usize),
    /// A UDT field.
    Field(&'t str),
    /// A tuple component.
    Component(usize),
}

impl fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Element(i) => write!(f, "element {i}"),
            Step::MapKey(i) => write!(f, "map key #{i}"),
            Step::MapValue(i) => write!(f, "map value #{i}"),
            Step::Field(name) => write!(f, "field {name}"),
            Step::Component(i) => write!(f, "component {i}"),
        }
    }
}

/// Whether the three duration parts are all ≥ 0 or all ≤ 0.
fn same_sign(months: i64, days: i64, nanoseconds: i64) -> bool {
    let parts = [months, days, nanoseconds];
    parts.iter().all(|&p| p >= 0) || parts.iter().all(|&p| p <= 0)
}

/// The error for a duration whose components have mixed signs.
fn mixed_signs(months: i64, days: i64, nanoseconds: i64) -> EncodeErrorKind {
    EncodeErrorKind::MixedSigns {
        months,
        days,
        nanoseconds,
    }
}

#[cfg(test)]
mod tests;
