//! Wire bytes read into values, optionally traced one [`ExplainLine`] per wire item.

use super::{mixed_signs, same_sign, time_of_day, ExplainLine, Piece, Step};
use crate::cursor::{trailing, Cursor, DecodeError};
use crate::types::{CqlType, NativeType, UdtType};
use crate::value::refused::{Place, Refusal, Refused};
use crate::value::{cql, has_empty_value, Value};
use crate::vint;
use num_bigint::BigInt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

type DecodeResult<T> = Result<T, DecodeError>;

/// `count` and the noun, singular for one (`1 element`, `3 elements`).
fn counted(count: usize, noun: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{count} {noun}{plural}")
}

/// What is wrong with a vector `ty` of `dimension` fixed-size elements of `size` bytes whose value
/// has `got` bytes: `vector<float, 4> needs 16 bytes (4 elements of 4), got 12 (3 elements)`.
fn fixed_vector_size(ty: &CqlType, dimension: usize, size: usize, got: usize) -> String {
    let needed = size as u128 * dimension as u128;
    let (whole, part) = (got / size.max(1), got % size.max(1));
    let mut elements = counted(whole, "element");
    if part > 0 {
        elements = format!("{elements} and {}", counted(part, "byte"));
    }
    let each = counted(dimension, "element");
    format!("{ty} needs {needed} bytes ({each} of {size}), got {got} ({elements})")
}

/// How many vint-prefixed items `bytes` holds when it is exactly a sequence of them (at least one).
fn whole_vint_items(bytes: &[u8]) -> Option<usize> {
    let (mut pos, mut count) = (0, 0usize);
    while pos < bytes.len() {
        let (length, width) = vint::decode_unsigned(&bytes[pos..]).ok()?;
        let length = usize::try_from(length).ok()?;
        pos = pos.checked_add(width)?.checked_add(length)?;
        count += 1;
    }
    (pos == bytes.len() && count > 0).then_some(count)
}

/// The decoder: a cursor over the payload (with the path to the current item) and an optional
/// tracer.
pub(super) struct Decoder<'b, 't, 'x> {
    /// The payload and the path; every offset is absolute in the payload.
    cursor: Cursor<'b, Step<'t>>,
    /// Where [`explain`] collects its lines.
    trace: Option<&'x mut dyn FnMut(ExplainLine)>,
    /// Where [`decode_pieces`] hands the pieces of the value, which is then not collected.
    pub(super) stream: Option<&'x mut dyn FnMut(Piece<'t>)>,
    /// Where [`find_refusals`](super::find_refusals) collects what Apache Cassandra refuses.
    pub(super) refused: Option<&'x mut dyn FnMut(Refused)>,
}

impl<'b, 't, 'x> Decoder<'b, 't, 'x> {
    /// A decoder over `bytes`, tracing into `trace` when given.
    pub(super) fn new(bytes: &'b [u8], trace: Option<&'x mut dyn FnMut(ExplainLine)>) -> Self {
        Decoder {
            cursor: Cursor::new(bytes),
            trace,
            stream: None,
            refused: None,
        }
    }

    /// Hands what Apache Cassandra refuses in the item `value` of type `ty` at `place`, which
    /// starts at `offset`, to the collector, if any (the item's step is still on the path).
    pub(super) fn note(&mut self, place: Place, ty: &CqlType, value: &Value, offset: usize) {
        let Some(refused) = self.refused.as_deref_mut() else {
            return;
        };
        if let Some(refusal) = Refusal::of(place, ty, value) {
            refused(Refused {
                refusal,
                offset,
                path: self.cursor.path(),
            });
        }
    }

    /// Hands a piece to the stream, if any.
    pub(super) fn emit(&mut self, piece: Piece<'t>) {
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
    pub(super) fn line(&mut self, offset: usize, len: usize, meaning: impl FnOnce() -> String) {
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
    pub(super) fn prefix(&mut self, ty: &'t CqlType) -> DecodeResult<(Value, usize)> {
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
    pub(super) fn value(
        &mut self,
        ty: &'t CqlType,
        start: usize,
        end: usize,
    ) -> DecodeResult<Value> {
        match ty {
            CqlType::Native(native) => self.native(*native, start, end),
            _ => {
                self.reject_empty(ty, start, end)?;
                let (value, pos) = self.composite(ty, start, end)?;
                if let (CqlType::Vector(element, dimension), true) = (ty, pos < end) {
                    return Err(self.too_many_elements(ty, element, *dimension, start..pos, end));
                }
                self.expect_end(pos, end)?;
                Ok(value)
            }
        }
    }

    /// The error for a vector value with bytes after its `dimension` elements (read from `read`,
    /// the value ending at `end`): its size in bytes and elements for fixed-size elements; else how
    /// many elements it holds when the rest is whole vint-prefixed elements, or how many bytes are
    /// left after them.
    fn too_many_elements(
        &self,
        ty: &CqlType,
        element: &CqlType,
        dimension: usize,
        read: std::ops::Range<usize>,
        end: usize,
    ) -> DecodeError {
        let pos = read.end;
        let rest = self.cursor.bytes().get(pos..end).unwrap_or_default();
        let message = match element.vector_element_size() {
            Some(size) => fixed_vector_size(ty, dimension, size, end - read.start),
            None => match whole_vint_items(rest) {
                Some(more) => format!(
                    "{ty} needs {}, got {}",
                    counted(dimension, "element"),
                    dimension.saturating_add(more)
                ),
                None => format!(
                    "{ty} needs {}, got {dimension} and {}",
                    counted(dimension, "element"),
                    trailing(rest.len())
                ),
            },
        };
        self.error(pos, message)
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
            CqlType::List(element) => self.list(element, Place::ListElement, start, end)?,
            CqlType::Set(element) => self.list(element, Place::SetElement, start, end)?,
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
            return Err(self.cursor.truncated(
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
        place: Place,
        start: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        let count = self.read_count(start, end, "element count", 4)?;
        let mut values = self.room(count);
        let mut pos = start + 4;
        for i in 0..count {
            self.enter(Step::Element(i));
            let (value, next) = self.item(element, pos, end, "element length")?;
            self.note(place, element, &value, pos);
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
            let (k, value_at) = self.item(key, pos, end, "key length")?;
            self.note(Place::MapKey, key, &k, pos);
            let k = self.leave(key, k);
            self.enter(Step::MapValue(i));
            let (v, next) = self.item(value, value_at, end, "value length")?;
            self.note(Place::MapValue, value, &v, value_at);
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
            self.note(Place::Other, component, &value, pos);
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
            self.note(Place::Other, field, &value, pos);
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
                    return Err(self.error(start, fixed_vector_size(ty, dimension, size, left)));
                };
                self.line(start, 0, || {
                    format!("vector of {dimension} {element} elements, {size} bytes each")
                });
                let mut values = self.room(dimension);
                let mut pos = start;
                for i in 0..dimension {
                    self.enter(Step::Element(i));
                    let value = self.value(element, pos, pos + size)?;
                    self.note(Place::Other, element, &value, pos);
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
                    let (value, next) = self.vector_element(ty, element, i, dimension, pos, end)?;
                    self.note(Place::Other, element, &value, pos);
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
            _ => Err(self.cursor.truncated(
                pos,
                format!("element length {length} exceeds the {left} bytes left"),
            )),
        }
    }

    /// Decodes the vint-prefixed element `index` of `dimension` at `pos`; returns it and the position
    /// after it.
    fn vector_element(
        &mut self,
        vector: &CqlType,
        element: &'t CqlType,
        index: usize,
        dimension: usize,
        pos: usize,
        end: usize,
    ) -> DecodeResult<(Value, usize)> {
        if pos >= end {
            return Err(self.error(
                pos,
                format!(
                    "{vector} needs {}, the value ends after {index}",
                    counted(dimension, "element")
                ),
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
                Value::Time(time_of_day(nanos).map_err(|e| self.error(start, e.to_string()))?)
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
            let kind = mixed_signs(months.into(), days.into(), nanoseconds);
            return Err(self.error(start, kind.to_string()));
        }
        Ok(Value::Duration {
            months,
            days,
            nanoseconds,
        })
    }
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
        Value::Float(x) => format!("{native} {}", cql::float_text(*x)),
        Value::Double(x) => format!("{native} {}", cql::double_text(*x)),
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
