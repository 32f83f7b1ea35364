//! The variable-size element kernels (text, ascii, varint, decimal): one loop per input element type
//! and target, each element written in place into the output with fixed-size stores.
//!
//! The common elements — integers, and floats whose shortest digits are positional (magnitudes from
//! 10^-4 to 10^7 for f32, to 10^15 for f64, and zero) — are formatted here: the digits of a float by zmij (the same digits as
//! [`super::float_text::push_number`]), of an integer by itoa; a varint's shortest two's-complement bytes; a
//! decimal's scale and unscaled value from zmij's shortest digits as numbers, without text. Every
//! other element (tiny and huge magnitudes, non-finite values, errors) goes through the general
//! [`general::write_variable`], so both paths give the same bytes and messages.

mod general;

pub(super) use general::write_variable;

use super::number::{Number, TWO_POW_63};
use super::rows::Rows;
use crate::types::NativeType;
use general::varint_bytes;
use half::f16;

/// Bytes kept writable past the end of the written output: more than the longest element a fast
/// path writes (a length byte, a 4-byte scale and 8 varint bytes; or a length byte and 24
/// characters) plus the slack of its fixed-size stores.
const ROOM: usize = 64;

/// Most zeroed room added at first when the output runs out of it (after that, as much as was
/// written so far: the room is zeroed about once, and a short call zeroes little more than it
/// writes).
const GROW: usize = 64 << 10;

/// Bytes of room added at first per element still to write (a typical element is shorter).
const ELEMENT_ROOM: usize = 16;

/// A float type zmij formats, with the magnitudes whose shortest digits it writes positionally.
trait Float: zmij::Float + Into<f64> {
    /// Magnitudes from 10^-4 (or zero) to below this have shortest digits that zmij writes without
    /// an exponent in every version (its positional range is at least 10^-4 to 10^7 for f32 and
    /// 10^-4 to 10^16 for f64; a float of at least 10^-4 has shortest digits of at least 10^-4);
    /// their text is at most 24 characters, with at most 17 significant digits.
    const POSITIONAL_END: f64;

    /// Whether zmij writes the finite or non-finite `self` without an exponent.
    #[inline(always)]
    fn positional(self) -> bool {
        let a = self.into().abs();
        a < Self::POSITIONAL_END && (a >= 1e-4 || a == 0.0)
    }
}

impl Float for f32 {
    const POSITIONAL_END: f64 = 1e7;
}

impl Float for f64 {
    const POSITIONAL_END: f64 = 1e15;
}

/// An input element type: how an element widens to a [`Number`] (also what [`Rows`] reads).
pub(super) trait Source: Copy {
    /// Whether every element is an integer ([`Number::Int`]).
    const INTEGER: bool = false;

    /// The element, widened without loss.
    fn number(self) -> Number;
}

impl Source for f16 {
    #[inline(always)]
    fn number(self) -> Number {
        Number::Single(f32::from(self))
    }
}

impl Source for f32 {
    #[inline(always)]
    fn number(self) -> Number {
        Number::Single(self)
    }
}

impl Source for f64 {
    #[inline(always)]
    fn number(self) -> Number {
        Number::Float(self)
    }
}

/// Integer input element types.
macro_rules! integer_source {
    ($($t:ty),*) => {$(
        impl Source for $t {
            const INTEGER: bool = true;

            #[inline(always)]
            fn number(self) -> Number {
                Number::Int(i64::from(self))
            }
        }
    )*};
}
integer_source!(i8, u8, i16, i32, i64);

/// The output being written: `out[..len]` is written, `out[len..]` is zeroed room for the next
/// elements (cut off by [`Sink::finish`]).
struct Sink<'a> {
    /// The output buffer.
    out: &'a mut Vec<u8>,
    /// Bytes written.
    len: usize,
    /// Where this sink started writing.
    start: usize,
    /// Room added when the output runs out of it, at least.
    step: usize,
}

impl<'a> Sink<'a> {
    /// Appends about `elements` elements to `out`.
    fn new(out: &'a mut Vec<u8>, elements: usize) -> Self {
        let len = out.len();
        let step = elements.saturating_mul(ELEMENT_ROOM).clamp(ROOM, GROW);
        Sink {
            out,
            len,
            start: len,
            step,
        }
    }

    /// The next [`ROOM`] bytes of the output, to write an element into (always there).
    #[inline(always)]
    fn room(&mut self) -> Option<&mut [u8; ROOM]> {
        if self.out.len() < self.len + ROOM {
            self.grow(self.len + ROOM);
        }
        self.out.get_mut(self.len..)?.first_chunk_mut::<ROOM>()
    }

    /// Makes the output at least `size` bytes long, adding zeroed room: [`Sink::step`] bytes, or
    /// as many as this sink has written if that is more.
    #[cold]
    fn grow(&mut self, size: usize) {
        let step = self.step.max(self.len - self.start);
        self.out.resize(size.max(self.len + step), 0);
    }

    /// Writes `number` through [`write_variable`] (the general path).
    #[cold]
    #[inline(never)]
    fn general(&mut self, number: Number, native: NativeType) -> Result<(), ()> {
        let mut element = Vec::new();
        write_variable(number, native, &mut Vec::new(), &mut element).map_err(drop)?;
        let end = self.len + element.len();
        if self.out.len() < end {
            self.grow(end);
        }
        if let Some(dst) = self.out.get_mut(self.len..end) {
            dst.copy_from_slice(&element);
        }
        self.len = end;
        Ok(())
    }

    /// Writes the element `text` (at most 32 bytes) with its one-byte length.
    #[inline(always)]
    fn short_text(&mut self, text: &[u8]) {
        let n = text.len();
        let Some(room) = self.room() else { return };
        room[0] = n as u8;
        copy_short(room, 1, text);
        self.len += 1 + n;
    }

    /// Writes the text element of `number` (see [`super::float_text::push_number`]).
    #[inline(always)]
    fn text(&mut self, number: Number) -> Result<(), ()> {
        match number {
            Number::Int(i) => {
                self.short_text(itoa::Buffer::new().format(i).as_bytes());
                Ok(())
            }
            Number::Single(x) => self.float_text(x, number),
            Number::Float(x) => self.float_text(x, number),
        }
    }

    /// Writes the text element of the float `x` (`number`) when it is positional, else through
    /// the general path.
    #[inline(always)]
    fn float_text<F: Float>(&mut self, x: F, number: Number) -> Result<(), ()> {
        if !x.positional() {
            return self.general(number, NativeType::Text);
        }
        let mut buffer = zmij::Buffer::new();
        self.short_text(trim(buffer.format_finite(x).as_bytes()));
        Ok(())
    }

    /// Writes a varint element of `value` (shortest two's complement).
    #[inline(always)]
    fn varint(&mut self, value: i64) {
        let n = varint_len(value);
        let Some(room) = self.room() else { return };
        room[0] = n as u8;
        store(room, 1, shortest_bytes(value, n));
        self.len += 1 + n;
    }

    /// Writes the [`SMALL_RUN`] integer elements of `chunk` as varint elements if all are within
    /// -128..=127 (each then `01` and its one byte, as [`Sink::varint`] writes it) and returns
    /// true; else writes nothing and returns false.
    #[inline(always)]
    fn small_varints<S: Source>(&mut self, chunk: &[S; SMALL_RUN]) -> bool {
        let mut bytes = [0u8; SMALL_RUN];
        let mut small = true;
        for (byte, &element) in bytes.iter_mut().zip(chunk) {
            let value = match element.number() {
                Number::Int(value) => value,
                _ => return false,
            };
            small &= (-128..=127).contains(&value);
            *byte = value as u8;
        }
        if !small {
            return false;
        }
        let Some(room) = self.room() else {
            return false;
        };
        for (pair, &byte) in room.chunks_exact_mut(2).zip(&bytes) {
            pair[0] = 1;
            pair[1] = byte;
        }
        self.len += 2 * SMALL_RUN;
        true
    }

    /// Writes a decimal element of `unscaled` × 10^-`scale`.
    #[inline(always)]
    fn decimal(&mut self, unscaled: i64, scale: u32) {
        let n = varint_len(unscaled);
        let Some(room) = self.room() else { return };
        room[0] = 4 + n as u8;
        store(room, 1, u64::from(scale) << 32);
        store(room, 5, shortest_bytes(unscaled, n));
        self.len += 5 + n;
    }

    /// Writes the element `number` of the target `KIND`.
    #[inline(always)]
    fn element<const KIND: u8>(&mut self, number: Number) -> Result<(), ()> {
        match (KIND, number) {
            (TEXT, _) => self.text(number),
            (VARINT, Number::Int(i)) => {
                self.varint(i);
                Ok(())
            }
            (DECIMAL, Number::Int(i)) => {
                self.decimal(i, 0);
                Ok(())
            }
            (VARINT, Number::Single(_) | Number::Float(_)) => {
                let x = number.float().unwrap_or(f64::NAN);
                // Integral and within i64's range (where `as` is exact).
                if x.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&x) {
                    self.varint(x as i64);
                    Ok(())
                } else {
                    self.general(number, NativeType::Varint)
                }
            }
            (DECIMAL, Number::Single(x)) => self.float_decimal(x, number),
            (DECIMAL, Number::Float(x)) => self.float_decimal(x, number),
            _ => Err(()),
        }
    }

    /// Writes the decimal element of the float `x` (`number`): its shortest digits as the
    /// unscaled value, their count after the point as the scale (none for an integer).
    #[inline(always)]
    fn float_decimal<F: Float>(&mut self, x: F, number: Number) -> Result<(), ()> {
        if !x.positional() {
            return self.general(number, NativeType::Decimal);
        }
        // The digits of zmij's text as a number: a positional magnitude (below 10^7 for f32,
        // 10^15 for f64) times a power of ten, so the unscaled value fits an i64.
        let (significand, exponent) = zmij::shortest_decimal(x);
        let (unscaled, scale) = match u32::try_from(exponent) {
            // Always in the table for a positional value; the general path otherwise, no panic.
            Ok(zeros) => match POW10.get(zeros as usize) {
                Some(&power) => (significand * power, 0),
                None => return self.general(number, NativeType::Decimal),
            },
            Err(_) => (significand, exponent.unsigned_abs()),
        };
        let unscaled = unscaled as i64;
        let negative = x.into().is_sign_negative();
        self.decimal(if negative { -unscaled } else { unscaled }, scale);
        Ok(())
    }

    /// Cuts the room off the output.
    fn finish(self) {
        self.out.truncate(self.len);
    }
}

/// 10^0 to 10^15: the trailing zeros of a positional integer's shortest digits.
const POW10: [u64; 16] = {
    let mut table = [1u64; 16];
    let mut i = 1;
    while i < 16 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// zmij's positional text without the `.0` it writes after an integer.
#[inline(always)]
fn trim(text: &[u8]) -> &[u8] {
    text.strip_suffix(b".0").unwrap_or(text)
}

/// Bytes in the shortest two's-complement form of `value` (1 to 8).
#[inline(always)]
fn varint_len(value: i64) -> usize {
    8 - varint_bytes(value).1
}

/// `value`'s last `n` big-endian bytes moved to the top of a u64 (to be stored big-endian).
#[inline(always)]
fn shortest_bytes(value: i64, n: usize) -> u64 {
    (value as u64) << ((8 - n) * 8)
}

/// StoreMode `value` big-endian at `room[at..at + 8]`.
#[inline(always)]
fn store(room: &mut [u8; ROOM], at: usize, value: u64) {
    if let Some(dst) = room.get_mut(at..at + 8) {
        dst.copy_from_slice(&value.to_be_bytes());
    }
}

/// Copies `src` (at most 32 bytes) to `room[at..]` with a few fixed-size moves that may overlap.
#[inline(always)]
fn copy_short(room: &mut [u8; ROOM], at: usize, src: &[u8]) {
    fn moves<const N: usize>(room: &mut [u8; ROOM], at: usize, src: &[u8]) {
        let n = src.len();
        if let (Some(dst), Some(head)) = (room.get_mut(at..at + N), src.get(..N)) {
            dst.copy_from_slice(head);
        }
        if let (Some(dst), Some(tail)) = (room.get_mut(at + n - N..at + n), src.get(n - N..)) {
            dst.copy_from_slice(tail);
        }
    }
    match src.len() {
        16.. => moves::<16>(room, at, src),
        8..=15 => moves::<8>(room, at, src),
        4..=7 => moves::<4>(room, at, src),
        _ => {
            for (dst, &byte) in room.iter_mut().skip(at).zip(src) {
                *dst = byte;
            }
        }
    }
}

/// Integer elements that [`Sink::small_varints`] writes at once (2 bytes each, within [`ROOM`]).
const SMALL_RUN: usize = 16;

/// Target kinds of [`encode`]: text and ascii (the same bytes for the ASCII digits of numbers).
const TEXT: u8 = 0;
/// See [`TEXT`].
const VARINT: u8 = 1;
/// See [`TEXT`].
const DECIMAL: u8 = 2;

/// Encodes `src` (whole rows of `dimension` elements) as `KIND` elements appended to `out`, pushing
/// each row's end offset to `ends`; on failure, returns the index of the failing element (`out` then
/// holds the rows before its row, and perhaps some of its elements).
fn encode<S: Source, const KIND: u8>(
    src: &[S],
    dimension: usize,
    out: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<(), usize> {
    let mut sink = Sink::new(out, src.len());
    let mut result = Ok(());
    'rows: for (row, elements) in src.chunks_exact(dimension.max(1)).enumerate() {
        let mut rest = elements;
        if KIND == VARINT && S::INTEGER {
            // Runs of small integers (tinyint-sized: one value byte each) 16 at a time.
            while let Some((chunk, after)) = rest.split_first_chunk::<SMALL_RUN>() {
                if !sink.small_varints(chunk) {
                    break;
                }
                rest = after;
            }
        }
        let first = elements.len() - rest.len();
        for (column, &element) in rest.iter().enumerate() {
            if sink.element::<KIND>(element.number()).is_err() {
                result = Err(row * dimension + first + column);
                break 'rows;
            }
        }
        ends.push(sink.len);
    }
    sink.finish();
    result
}

/// Encodes `rows` (whole rows of `dimension` elements) as `native` elements (text, ascii, varint,
/// decimal) appended to `out`, pushing each row's end offset to `ends`; on failure, returns the
/// index of the first element that does not convert.
pub(super) fn encode_rows(
    rows: Rows<'_>,
    dimension: usize,
    native: NativeType,
    out: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<(), usize> {
    /// One monomorphised loop per target kind.
    fn by_kind<S: Source>(
        src: &[S],
        dimension: usize,
        native: NativeType,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), usize> {
        match native {
            NativeType::Text | NativeType::Ascii => encode::<S, TEXT>(src, dimension, out, ends),
            NativeType::Varint => encode::<S, VARINT>(src, dimension, out, ends),
            NativeType::Decimal => encode::<S, DECIMAL>(src, dimension, out, ends),
            _ => Err(0),
        }
    }
    match rows {
        Rows::F16(v) => by_kind(v, dimension, native, out, ends),
        Rows::F32(v) => by_kind(v, dimension, native, out, ends),
        Rows::F64(v) => by_kind(v, dimension, native, out, ends),
        Rows::I8(v) => by_kind(v, dimension, native, out, ends),
        Rows::U8(v) => by_kind(v, dimension, native, out, ends),
        Rows::I16(v) => by_kind(v, dimension, native, out, ends),
        Rows::I32(v) => by_kind(v, dimension, native, out, ends),
        Rows::I64(v) => by_kind(v, dimension, native, out, ends),
    }
}
