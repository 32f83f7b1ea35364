//! The strict binary codec between [`Value`]s and CQL native protocol v4 value bytes.
//!
//! Decoding checks every length against the bytes left before allocating, never trusts a count,
//! rejects trailing bytes, and reports the absolute byte offset and the path of the fault inside the
//! value (`element 3 / field zip`; indexes count from 0). [`explain`] runs the same decoder with a
//! tracer that records one [`ExplainLine`] per wire item.

use super::Value;
use crate::cursor::{trailing, Cursor, DecodeError};
use crate::types::{CqlType, NativeType, UdtType};
use crate::vint;
use num_bigint::BigInt;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Nanoseconds in a day: a `time` value must be below this.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// `nanos` when it is a time of day (0 to [`NANOS_PER_DAY`] - 1), the one range check of `time`
/// values that decoding, encoding and the text forms share.
pub fn time_of_day(nanos: i64) -> Result<i64, String> {
    if (0..NANOS_PER_DAY).contains(&nanos) {
        Ok(nanos)
    } else {
        Err(format!(
            "time value {nanos} is out of range 0..{}",
            NANOS_PER_DAY - 1
        ))
    }
}

/// Why a value could not be encoded for a type: `<message> (<path>)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct EncodeError {
    /// What is wrong, e.g. `expected an int value, found text`.
    pub message: String,
    /// Where in the value, e.g. `element 3 / field zip`; empty at the top level.
    pub path: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        Ok(())
    }
}

impl EncodeError {
    /// An error at the top level of the value being encoded.
    fn new(message: impl Into<String>) -> Self {
        EncodeError {
            message: message.into(),
            path: String::new(),
        }
    }

    /// The same error seen from the enclosing value: `step` is prepended to the path.
    fn within(mut self, step: Step<'_>) -> Self {
        self.path = if self.path.is_empty() {
            step.to_string()
        } else {
            format!("{step} / {}", self.path)
        };
        self
    }
}

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

/// A piece of a value, as [`decode_pieces`] hands them out.
#[derive(Debug)]
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
        Err(EncodeError::new(
            "a null value has no bytes (only elements, fields and components can be null)",
        ))
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

/// The size of a native type's value when it is fixed, whatever the context.
fn native_size(native: NativeType) -> Option<usize> {
    use NativeType::*;
    match native {
        Boolean | TinyInt => Some(1),
        SmallInt => Some(2),
        Int | Float | Date => Some(4),
        BigInt | Counter | Double | Timestamp | Time => Some(8),
        Uuid | TimeUuid => Some(16),
        Ascii | Blob | Decimal | Duration | Inet | Text | Varint => None,
    }
}

/// Whether a zero-length value of this native type is the empty value (rather than `''` or `0x`).
fn has_empty_value(native: NativeType) -> bool {
    !matches!(
        native,
        NativeType::Text | NativeType::Ascii | NativeType::Blob
    )
}

type DecodeResult<T> = Result<T, DecodeError>;

/// The decoder: a cursor over the payload (with the path to the current item) and an optional
/// tracer.
struct Decoder<'b, 't, 'x> {
    /// The payload and the path; every offset is absolute in the payload.
    cursor: Cursor<'b, Step<'t>>,
    /// Where [`explain`] collects its lines.
    trace: Option<&'x mut dyn FnMut(ExplainLine)>,
    /// Where [`decode_pieces`] hands the pieces of the value, which is then not collected.
    stream: Option<&'x mut dyn FnMut(Piece<'t>)>,
}

impl<'b, 't, 'x> Decoder<'b, 't, 'x> {
    /// A decoder over `bytes`, tracing into `trace` when given.
    fn new(bytes: &'b [u8], trace: Option<&'x mut dyn FnMut(ExplainLine)>) -> Self {
        Decoder {
            cursor: Cursor::new(bytes),
            trace,
            stream: None,
        }
    }

    /// Hands a piece to the stream, if any.
    fn emit(&mut self, piece: Piece<'t>) {
        if let Some(stream) = self.stream.as_deref_mut() {
            stream(piece);
        }
    }

    /// Room for `count` items of a composite: none when they are streamed.
    fn room<T>(&self, count: usize) -> Vec<T> {
        if self.stream.is_some() {
            Vec::new()
        } else {
            Vec::with_capacity(count)
        }
    }

    /// Starts the item `step` of the current composite.
    fn enter(&mut self, step: Step<'t>) {
        self.cursor.push(step);
        self.emit(Piece::Enter(step));
    }

    /// Ends the current item, whose value of type `ty` is `value`: returns it to keep, or streams it
    /// (when it is a native or a null; a composite was streamed as it was read) and returns nothing.
    fn leave(&mut self, ty: &'t CqlType, value: Value) -> Option<Value> {
        self.cursor.pop();
        let Some(stream) = self.stream.as_deref_mut() else {
            return Some(value);
        };
        if matches!(ty, CqlType::Native(_)) || matches!(value, Value::Null) {
            stream(Piece::Leaf(ty, value));
        }
        None
    }

    /// An error at `offset` with the current path.
    fn error(&self, offset: usize, message: impl Into<String>) -> DecodeError {
        self.cursor.error(offset, message)
    }

    /// Records a wire item when tracing; `meaning` is only called then.
    fn line(&mut self, offset: usize, len: usize, meaning: impl FnOnce() -> String) {
        if let Some(trace) = self.trace.as_deref_mut() {
            trace(ExplainLine {
                offset,
                len,
                depth: self.cursor.depth(),
                path: self.cursor.path(),
                meaning: meaning(),
            });
        }
    }

    /// The bytes `start..end` (callers check the range; an out-of-range request is an error, not a
    /// panic).
    fn slice(&self, start: usize, end: usize) -> DecodeResult<&'b [u8]> {
        self.cursor.slice(start, end)
    }

    /// Fails when the value ending at `end` was fully read at `pos` with bytes left over.
    fn expect_end(&self, pos: usize, end: usize) -> DecodeResult<()> {
        if pos < end {
            let left = end - pos;
            return Err(self.error(pos, format!("{} after the value", trailing(left))));
        }
        Ok(())
    }

    /// A value at the start of the payload that may be followed by other bytes.
    fn prefix(&mut self, ty: &'t CqlType) -> DecodeResult<(Value, usize)> {
        let end = self.cursor.bytes().len();
        match ty {
            CqlType::Native(native) => {
                let used = native_size(*native)
                    .filter(|&size| size < end)
                    .unwrap_or(end);
                Ok((self.native(*native, 0, used)?, used))
            }
            _ => {
                self.reject_empty(ty, 0, end)?;
                self.composite(ty, 0, end)
            }
        }
    }

    /// Fails for a zero-length value of a collection or vector type (a zero-length tuple or UDT is
    /// the legal value with no component present).
    fn reject_empty(&self, ty: &CqlType, start: usize, end: usize) -> DecodeResult<()> {
        if start == end && !matches!(ty, CqlType::Tuple(_) | CqlType::Udt(_)) {
            return Err(self.error(start, format!("empty value for type {ty}")));
        }
        Ok(())
    }

    /// Decodes a value occupying exactly `start..end`.
    fn value(&mut self, ty: &'t CqlType, start: usize, end: usize) -> DecodeResult<Value> {
        match ty {
            CqlType::Native(native) => self.native(*native, start, end),
            _ => {
                self.reject_empty(ty, start, end)?;
                let (value, pos) = self.composite(ty, start, end)?;
                self.expect_end(pos, end)?;
                Ok(value)
            }
        }
    }

    /// Decodes a value starting at `start` and reading no further than `end`; returns the position
    /// after it.
    fn composite(
        &mut self,
        ty: &'t CqlType,
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        let composite = !matches!(ty, CqlType::Native(_));
        if composite {
            self.emit(Piece::Open(ty));
        }
        let read = match ty {
            CqlType::Native(native) => (self.native(*native, start, end)?, end),
            CqlType::List(element) | CqlType::Set(element) => self.list(element, start, end)?,
            CqlType::Map(key, value) => self.map(key, value, start, end)?,
            CqlType::Tuple(components) => self.tuple(components, start, end)?,
            CqlType::Udt(udt) => self.udt(udt, start, end)?,
            CqlType::Vector(element, dimension) => {
                self.vector(ty, element, *dimension, start, end)?
            }
        };
        if composite {
            self.emit(Piece::Close(ty));
        }
        Ok(read)
    }

    /// Reads a collection count at `start` and checks that `count` items of at least `min_item` bytes
    /// fit in the value.
    fn read_count(
        &mut self,
        start: usize,
        end: usize,
        what: &str,
        min_item: u64,
    ) -> DecodeResult<usize> {
        let count = self.cursor.count_at(start, end, what, min_item)?;
        self.line(start, 4, || format!("{what} {count}"));
        Ok(count)
    }

    /// Decodes a `[int length][bytes]` item at `pos` (`-1` is null); returns it and the position
    /// after it.
    fn item(
        &mut self,
        ty: &'t CqlType,
        pos: usize,
        end: usize,
        what: &str,
    ) -> DecodeResult<(Value, usize)> {
        let length = self.cursor.int_at(pos, end, what)?;
        let body = pos + 4;
        if length == -1 {
            self.line(pos, 4, || "null".to_string());
            return Ok((Value::Null, body));
        }
        let Ok(length) = usize::try_from(length) else {
            return Err(self.error(pos, format!("invalid {what} {length}")));
        };
        let left = end.saturating_sub(body);
        if length > left {
            return Err(self.error(
                pos,
                format!("{what} {length} exceeds the {left} bytes left"),
            ));
        }
        self.line(pos, 4, || format!("{what} {length}"));
        let value = self.value(ty, body, body + length)?;
        Ok((value, body + length))
    }

    /// A list or set: a count, then length-prefixed elements.
    fn list(
        &mut self,
        element: &'t CqlType,
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        let count = self.read_count(start, end, "element count", 4)?;
        let mut values = self.room(count);
        let mut pos = start + 4;
        for i in 0..count {
            self.enter(Step::Element(i));
            let (value, next) = self.item(element, pos, end, "element length")?;
            values.extend(self.leave(element, value));
            pos = next;
        }
        Ok((Value::List(values), pos))
    }

    /// A map: a count, then length-prefixed keys and values.
    fn map(
        &mut self,
        key: &'t CqlType,
        value: &'t CqlType,
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        let count = self.read_count(start, end, "entry count", 8)?;
        let mut entries = self.room(count);
        let mut pos = start + 4;
        for i in 0..count {
            self.enter(Step::MapKey(i));
            let (k, next) = self.item(key, pos, end, "key length")?;
            let k = self.leave(key, k);
            self.enter(Step::MapValue(i));
            let (v, next) = self.item(value, next, end, "value length")?;
            let v = self.leave(value, v);
            entries.extend(k.zip(v));
            pos = next;
        }
        Ok((Value::Map(entries), pos))
    }

    /// A tuple: length-prefixed components, possibly fewer than the type has.
    fn tuple(
        &mut self,
        components: &'t [CqlType],
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        self.line(start, 0, || {
            format!("tuple of {} components", components.len())
        });
        let mut values = self.room(components.len().min(end.saturating_sub(start) / 4));
        let mut pos = start;
        for (i, component) in components.iter().enumerate() {
            if pos >= end {
                break;
            }
            self.enter(Step::Component(i));
            let (value, next) = self.item(component, pos, end, "component length")?;
            values.extend(self.leave(component, value));
            pos = next;
        }
        Ok((Value::Tuple(values), pos))
    }

    /// A UDT: length-prefixed fields in declaration order, possibly fewer than declared.
    fn udt(&mut self, udt: &'t UdtType, start: usize, end: usize) -> DecodeResult<(Value, usize)> {
        self.line(start, 0, || {
            format!("udt {} with {} fields", udt.name, udt.fields.len())
        });
        let mut values = self.room(udt.fields.len().min(end.saturating_sub(start) / 4));
        let mut pos = start;
        for (name, field) in &udt.fields {
            if pos >= end {
                break;
            }
            self.enter(Step::Field(name));
            let (value, next) = self.item(field, pos, end, "field length")?;
            let kept = self.leave(field, value);
            values.extend(kept.map(|value| (name.clone(), value)));
            pos = next;
        }
        Ok((Value::Udt(values), pos))
    }

    /// A vector: fixed-size elements concatenated, or each behind an unsigned vint length.
    fn vector(
        &mut self,
        ty: &'t CqlType,
        element: &'t CqlType,
        dimension: usize,
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        let left = end.saturating_sub(start);
        match element.vector_element_size() {
            Some(size) => {
                let needed = size.checked_mul(dimension).filter(|&n| n <= left);
                let Some(needed) = needed else {
                    let needed = size as u128 * dimension as u128;
                    return Err(self.error(
                        start,
                        format!("{ty} value needs {needed} bytes but only {left} are left"),
                    ));
                };
                self.line(start, 0, || {
                    format!("vector of {dimension} {element} elements, {size} bytes each")
                });
                let mut values = self.room(dimension);
                let mut pos = start;
                for i in 0..dimension {
                    self.enter(Step::Element(i));
                    let value = self.value(element, pos, pos + size)?;
                    values.extend(self.leave(element, value));
                    pos += size;
                }
                Ok((Value::List(values), start + needed))
            }
            None => {
                self.line(start, 0, || {
                    format!("vector of {dimension} {element} elements, each after a vint length")
                });
                let mut values = self.room(dimension.min(left));
                let mut pos = start;
                for i in 0..dimension {
                    self.enter(Step::Element(i));
                    let (value, next) = self.vector_element(element, i, dimension, pos, end)?;
                    values.extend(self.leave(element, value));
                    pos = next;
                }
                Ok((Value::List(values), pos))
            }
        }
    }

    /// Reads the vint length of a vector element at `pos`: the length and the vint's size.
    fn vint_length(&self, pos: usize, end: usize) -> DecodeResult<(usize, usize)> {
        let rest = self.slice(pos, end)?;
        let (length, width) =
            vint::decode_unsigned(rest).map_err(|e| self.error(pos, e.to_string()))?;
        let left = rest.len() - width;
        match usize::try_from(length) {
            Ok(length) if length <= left => Ok((length, width)),
            _ => Err(self.error(
                pos,
                format!("element length {length} exceeds the {left} bytes left"),
            )),
        }
    }

    /// Decodes the vint-prefixed element `index` of `dimension` at `pos`; returns it and the position
    /// after it.
    fn vector_element(
        &mut self,
        element: &'t CqlType,
        index: usize,
        dimension: usize,
        pos: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        if pos >= end {
            return Err(self.error(
                pos,
                format!("vector ends after {index} of {dimension} elements"),
            ));
        }
        let (length, width) = self.vint_length(pos, end)?;
        self.line(pos, width, || format!("vint length {length}"));
        let body = pos + width;
        let value = self.value(element, body, body + length)?;
        if matches!(value, Value::Empty) {
            return Err(self.error(body, "empty element in a vector"));
        }
        Ok((value, body + length))
    }

    /// Decodes a native value occupying exactly `start..end`.
    fn native(&mut self, native: NativeType, start: usize, end: usize) -> DecodeResult<Value> {
        use NativeType as N;
        let bytes = self.slice(start, end)?;
        if bytes.is_empty() && has_empty_value(native) {
            self.line(start, 0, || format!("empty {native} value"));
            return Ok(Value::Empty);
        }
        let value = match native {
            N::Boolean => {
                let [byte] = self.fixed(native, bytes, start)?;
                Value::Boolean(byte != 0)
            }
            N::TinyInt => Value::TinyInt(i8::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::SmallInt => Value::SmallInt(i16::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::Int => Value::Int(i32::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::BigInt | N::Counter => {
                Value::BigInt(i64::from_be_bytes(self.fixed(native, bytes, start)?))
            }
            N::Float => Value::Float(f32::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::Double => Value::Double(f64::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::Timestamp => Value::Timestamp(i64::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::Date => Value::Date(u32::from_be_bytes(self.fixed(native, bytes, start)?)),
            N::Time => {
                let nanos = i64::from_be_bytes(self.fixed(native, bytes, start)?);
                Value::Time(time_of_day(nanos).map_err(|e| self.error(start, e))?)
            }
            N::Uuid => Value::Uuid(uuid::Uuid::from_bytes(self.fixed(native, bytes, start)?)),
            N::TimeUuid => {
                let id = uuid::Uuid::from_bytes(self.fixed(native, bytes, start)?);
                if id.get_version_num() != 1 {
                    return Err(self.error(
                        start,
                        format!(
                            "timeuuid value is a version {} UUID, not version 1",
                            id.get_version_num()
                        ),
                    ));
                }
                Value::Uuid(id)
            }
            N::Text => match std::str::from_utf8(bytes) {
                Ok(text) => Value::Text(text.to_owned()),
                Err(e) => {
                    return Err(self.error(start + e.valid_up_to(), "invalid UTF-8 in text value"))
                }
            },
            N::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
                Some(i) => {
                    let byte = bytes.get(i).copied().unwrap_or_default();
                    return Err(self.error(
                        start + i,
                        format!("non-ASCII byte 0x{byte:02x} in ascii value"),
                    ));
                }
                None => Value::Text(bytes.iter().map(|&b| char::from(b)).collect()),
            },
            N::Blob => Value::Blob(bytes.to_vec()),
            N::Varint => Value::Varint(BigInt::from_signed_bytes_be(bytes)),
            N::Decimal => match bytes.split_first_chunk::<4>() {
                // Java's BigInteger (hence Cassandra) refuses a zero-length unscaled value, and it
                // would not re-encode to the same bytes.
                Some((_, [])) => {
                    return Err(self.error(
                        start + 4,
                        "decimal value has a scale but no unscaled value (an empty varint)",
                    ))
                }
                Some((scale, unscaled)) => Value::Decimal {
                    unscaled: BigInt::from_signed_bytes_be(unscaled),
                    scale: i32::from_be_bytes(*scale),
                },
                None => {
                    return Err(self.error(
                        start,
                        format!("decimal value needs at least 4 bytes, not {}", bytes.len()),
                    ))
                }
            },
            N::Inet => match bytes.len() {
                4 => Value::Inet(IpAddr::V4(Ipv4Addr::from(
                    self.fixed::<4>(native, bytes, start)?,
                ))),
                16 => Value::Inet(IpAddr::V6(Ipv6Addr::from(
                    self.fixed::<16>(native, bytes, start)?,
                ))),
                other => {
                    return Err(self.error(
                        start,
                        format!("inet value must be 4 or 16 bytes, not {other}"),
                    ))
                }
            },
            N::Duration => self.duration(start, end)?,
        };
        self.line(start, bytes.len(), || describe(native, &value));
        Ok(value)
    }

    /// The bytes of a fixed-size native value, or an error naming the expected size.
    fn fixed<const SIZE: usize>(
        &self,
        native: NativeType,
        bytes: &[u8],
        start: usize,
    ) -> DecodeResult<[u8; SIZE]> {
        <[u8; SIZE]>::try_from(bytes).map_err(|_| {
            self.error(
                start,
                format!("{native} value must be {SIZE} bytes, not {}", bytes.len()),
            )
        })
    }

    /// A duration: months, days and nanoseconds as signed vints, all of the same sign.
    fn duration(&self, start: usize, end: usize) -> DecodeResult<Value> {
        let mut pos = start;
        let mut read = |what: &str| -> DecodeResult<i64> {
            let (value, width) = vint::decode_signed(self.slice(pos, end)?)
                .map_err(|e| self.error(pos, format!("{e} (duration {what})")))?;
            pos += width;
            Ok(value)
        };
        let months = read("months")?;
        let days = read("days")?;
        let nanoseconds = read("nanoseconds")?;
        self.expect_end(pos, end)?;
        let (Ok(months), Ok(days)) = (i32::try_from(months), i32::try_from(days)) else {
            return Err(self.error(
                start,
                format!("duration months {months} or days {days} out of the 32-bit range"),
            ));
        };
        if !same_sign(months.into(), days.into(), nanoseconds) {
            return Err(self.error(
                start,
                format!(
                    "duration has mixed signs (months {months}, days {days}, nanoseconds {nanoseconds})"
                ),
            ));
        }
        Ok(Value::Duration {
            months,
            days,
            nanoseconds,
        })
    }
}

/// Whether the three duration parts are all ≥ 0 or all ≤ 0.
fn same_sign(months: i64, days: i64, nanoseconds: i64) -> bool {
    let parts = [months, days, nanoseconds];
    parts.iter().all(|&p| p >= 0) || parts.iter().all(|&p| p <= 0)
}

/// A short self-explanatory rendering of a native value for [`ExplainLine::meaning`].
fn describe(native: NativeType, value: &Value) -> String {
    match value {
        Value::Text(text) => format!("{native} {text:?}"),
        Value::Blob(bytes) => format!("blob 0x{}", crate::hex::encode(bytes)),
        Value::Boolean(b) => format!("boolean {b}"),
        Value::TinyInt(n) => format!("{native} {n}"),
        Value::SmallInt(n) => format!("{native} {n}"),
        Value::Int(n) => format!("{native} {n}"),
        Value::BigInt(n) => format!("{native} {n}"),
        Value::Varint(n) => format!("{native} {n}"),
        // As decode prints them: `Infinity`, and a NaN's payload kept (`NaN(0x7fc12345)`).
        Value::Float(x) => format!("{native} {}", super::cql::float_text(*x)),
        Value::Double(x) => format!("{native} {}", super::cql::double_text(*x)),
        Value::Decimal { unscaled, scale } => {
            format!(
                "decimal unscaled {unscaled} scale {scale} (= {unscaled}E{})",
                -i64::from(*scale)
            )
        }
        Value::Uuid(id) => format!("{native} {id}"),
        Value::Inet(ip) => format!("inet {ip}"),
        Value::Timestamp(ms) => match chrono::DateTime::from_timestamp_millis(*ms) {
            Some(t) => format!("timestamp {ms} ms ({})", t.format("%Y-%m-%d %H:%M:%S%.3fZ")),
            None => format!("timestamp {ms} ms since 1970-01-01"),
        },
        Value::Date(days) => {
            let from_epoch = i64::from(*days) - (1i64 << 31);
            let day = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).and_then(|epoch| {
                epoch.checked_add_signed(chrono::TimeDelta::try_days(from_epoch)?)
            });
            match day {
                Some(day) => format!("date {days} ({day})"),
                None => format!("date {days} ({from_epoch} days from 1970-01-01)"),
            }
        }
        Value::Time(nanos) => {
            let seconds = nanos / 1_000_000_000;
            format!(
                "time {nanos} ns ({:02}:{:02}:{:02}.{:09})",
                seconds / 3600,
                seconds / 60 % 60,
                seconds % 60,
                nanos % 1_000_000_000
            )
        }
        Value::Duration {
            months,
            days,
            nanoseconds,
        } => format!("duration {months} months, {days} days, {nanoseconds} ns"),
        other => format!("{native} {other:?}"),
    }
}

/// The name of a value's kind for mismatch messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Empty => "the empty value",
        Value::Boolean(_) => "a boolean",
        Value::TinyInt(_) => "a tinyint",
        Value::SmallInt(_) => "a smallint",
        Value::Int(_) => "an int",
        Value::BigInt(_) => "a bigint",
        Value::Varint(_) => "a varint",
        Value::Float(_) => "a float",
        Value::Double(_) => "a double",
        Value::Decimal { .. } => "a decimal",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
        Value::Uuid(_) => "a uuid",
        Value::Inet(_) => "an inet",
        Value::Timestamp(_) => "a timestamp",
        Value::Date(_) => "a date",
        Value::Time(_) => "a time",
        Value::Duration { .. } => "a duration",
        Value::List(_) => "a list",
        Value::Map(_) => "a map",
        Value::Tuple(_) => "a tuple",
        Value::Udt(_) => "a udt",
    }
}

/// The error for a value that does not fit the type.
fn mismatch(ty: &CqlType, value: &Value) -> EncodeError {
    EncodeError::new(format!("expected a {ty} value, found {}", kind(value)))
}

/// Appends a non-null value's bytes.
fn write_value(ty: &CqlType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match (ty, value) {
        (CqlType::Native(native), _) => write_native(*native, value, out),
        (_, Value::Empty) => Err(EncodeError::new(format!("a {ty} value cannot be empty"))),
        (CqlType::List(element) | CqlType::Set(element), Value::List(items)) => {
            write_count(items.len(), out)?;
            for (i, item) in items.iter().enumerate() {
                write_item(element, item, out).map_err(|e| e.within(Step::Element(i)))?;
            }
            Ok(())
        }
        (CqlType::Map(key_type, value_type), Value::Map(entries)) => {
            write_count(entries.len(), out)?;
            for (i, (key, value)) in entries.iter().enumerate() {
                write_item(key_type, key, out).map_err(|e| e.within(Step::MapKey(i)))?;
                write_item(value_type, value, out).map_err(|e| e.within(Step::MapValue(i)))?;
            }
            Ok(())
        }
        (CqlType::Tuple(components), Value::Tuple(values)) => {
            if values.len() > components.len() {
                return Err(EncodeError::new(format!(
                    "{ty} has {} components, found {}",
                    components.len(),
                    values.len()
                )));
            }
            for (i, (component, value)) in components.iter().zip(values).enumerate() {
                write_item(component, value, out).map_err(|e| e.within(Step::Component(i)))?;
            }
            Ok(())
        }
        (CqlType::Udt(udt), Value::Udt(fields)) => write_udt(udt, fields, out),
        (CqlType::Vector(element, dimension), Value::List(items)) => {
            if items.len() != *dimension {
                return Err(EncodeError::new(format!(
                    "{ty} needs {dimension} elements, found {}",
                    items.len()
                )));
            }
            for (i, item) in items.iter().enumerate() {
                write_vector_element(element, item, out).map_err(|e| e.within(Step::Element(i)))?;
            }
            Ok(())
        }
        _ => Err(mismatch(ty, value)),
    }
}

/// Appends UDT fields in declaration order, matched by name; fields after the last given one are
/// omitted, missing ones before it are written as null.
fn write_udt(
    udt: &UdtType,
    fields: &[(String, Value)],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let mut last_given = None;
    for (i, (name, _)) in fields.iter().enumerate() {
        if fields.iter().take(i).any(|(earlier, _)| earlier == name) {
            return Err(EncodeError::new(format!("field {name} is given twice")));
        }
        match udt.fields.iter().position(|(declared, _)| declared == name) {
            Some(index) => last_given = last_given.max(Some(index)),
            None => {
                return Err(EncodeError::new(format!(
                    "type {} has no field {name}",
                    udt.name
                )))
            }
        }
    }
    // No field given is the zero-byte value, which has no field present.
    let present = last_given.map_or(0, |last| last + 1);
    for (name, field_type) in udt.fields.iter().take(present) {
        let value = fields
            .iter()
            .find(|(given, _)| given == name)
            .map_or(&Value::Null, |(_, value)| value);
        write_item(field_type, value, out).map_err(|e| e.within(Step::Field(name)))?;
    }
    Ok(())
}

/// Appends a collection count.
fn write_count(count: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let count = i32::try_from(count)
        .map_err(|_| EncodeError::new(format!("{count} elements are too many for a collection")))?;
    out.extend_from_slice(&count.to_be_bytes());
    Ok(())
}

/// Appends an `[int length][bytes]` item; null is length -1.
fn write_item(ty: &CqlType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if matches!(value, Value::Null) {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return Ok(());
    }
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write_value(ty, value, out)?;
    let length = out.len() - at - 4;
    let length = i32::try_from(length)
        .map_err(|_| EncodeError::new(format!("a value of {length} bytes is too long")))?;
    if let Some(prefix) = out.get_mut(at..at + 4) {
        prefix.copy_from_slice(&length.to_be_bytes());
    }
    Ok(())
}

/// Appends a vector element: bare for fixed-size subtypes, else after an unsigned vint length.
fn write_vector_element(
    element: &CqlType,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match value {
        Value::Null => return Err(EncodeError::new("null element in a vector")),
        Value::Empty => return Err(EncodeError::new("empty element in a vector")),
        _ => {}
    }
    if element.vector_element_size().is_some() {
        return write_value(element, value, out);
    }
    let at = out.len();
    write_value(element, value, out)?;
    let length = out.len() - at;
    let (prefix, width) = vint::encode_unsigned_array(length as u64);
    out.extend_from_slice(prefix.get(..width).unwrap_or_default());
    // Move the prefix in front of the element's bytes.
    if let Some(written) = out.get_mut(at..) {
        written.rotate_right(width);
    }
    Ok(())
}

/// Appends a native value's bytes.
fn write_native(native: NativeType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    use NativeType as N;
    match (native, value) {
        (_, Value::Empty) if has_empty_value(native) => {}
        (N::Boolean, Value::Boolean(b)) => out.push(u8::from(*b)),
        (N::TinyInt, Value::TinyInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::SmallInt, Value::SmallInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::Int, Value::Int(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::BigInt | N::Counter, Value::BigInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::Float, Value::Float(x)) => out.extend_from_slice(&x.to_be_bytes()),
        (N::Double, Value::Double(x)) => out.extend_from_slice(&x.to_be_bytes()),
        (N::Timestamp, Value::Timestamp(ms)) => out.extend_from_slice(&ms.to_be_bytes()),
        (N::Date, Value::Date(days)) => out.extend_from_slice(&days.to_be_bytes()),
        (N::Time, Value::Time(nanos)) => {
            let nanos = time_of_day(*nanos).map_err(EncodeError::new)?;
            out.extend_from_slice(&nanos.to_be_bytes());
        }
        (N::Uuid, Value::Uuid(id)) => out.extend_from_slice(id.as_bytes()),
        (N::TimeUuid, Value::Uuid(id)) => {
            if id.get_version_num() != 1 {
                return Err(EncodeError::new(format!(
                    "timeuuid value is a version {} UUID, not version 1",
                    id.get_version_num()
                )));
            }
            out.extend_from_slice(id.as_bytes());
        }
        (N::Text, Value::Text(text)) => out.extend_from_slice(text.as_bytes()),
        (N::Ascii, Value::Text(text)) => {
            if !text.is_ascii() {
                return Err(EncodeError::new(format!(
                    "ascii value contains non-ASCII text {text:?}"
                )));
            }
            out.extend_from_slice(text.as_bytes());
        }
        (N::Blob, Value::Blob(bytes)) => out.extend_from_slice(bytes),
        (N::Varint, Value::Varint(n)) => out.extend_from_slice(&n.to_signed_bytes_be()),
        (N::Decimal, Value::Decimal { unscaled, scale }) => {
            out.extend_from_slice(&scale.to_be_bytes());
            out.extend_from_slice(&unscaled.to_signed_bytes_be());
        }
        (N::Inet, Value::Inet(IpAddr::V4(ip))) => out.extend_from_slice(&ip.octets()),
        (N::Inet, Value::Inet(IpAddr::V6(ip))) => out.extend_from_slice(&ip.octets()),
        (
            N::Duration,
            Value::Duration {
                months,
                days,
                nanoseconds,
            },
        ) => {
            if !same_sign((*months).into(), (*days).into(), *nanoseconds) {
                return Err(EncodeError::new(format!(
                    "duration has mixed signs (months {months}, days {days}, nanoseconds {nanoseconds})"
                )));
            }
            vint::encode_signed((*months).into(), out);
            vint::encode_signed((*days).into(), out);
            vint::encode_signed(*nanoseconds, out);
        }
        _ => return Err(mismatch(&CqlType::Native(native), value)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hex;
    use crate::types::{parse_type, UdtRegistry};

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
            "needs 12 bytes but only 8",
        );
        fails("vector<float, 1>", "3fc00000 00", 4, "1 trailing byte");
        fails("vector<float, 1>", "", 0, "empty value");
        fails(
            "vector<smallint, 2>",
            "020001",
            3,
            "vector ends after 1 of 2 elements",
        );
        fails(
            "vector<smallint, 2>",
            "020001 02fffe 00",
            6,
            "1 trailing byte",
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
        let text = |x: f32| format!("float {}", super::super::cql::float_text(x));
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
        assert!(e.message.contains("needs 2 elements"), "{e}");
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
        assert!(encode(&ty("addr"), &unknown)
            .unwrap_err()
            .message
            .contains("no field city"));
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
}
