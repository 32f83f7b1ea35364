//! Typed element buffers that bytes are read straight into, and their byte-order conversion.

use super::{ElementType, Elements};
use half::f16;

/// Plain numbers, whose memory [`bytes_mut`] lends out as bytes for a read to fill.
///
/// # Safety
///
/// An implementing type promises that any `size_of::<Self>()` initialised bytes, whatever their
/// values, are a valid value of it: it has no padding bytes, no invalid bit patterns (unlike `bool`
/// or `char`), and no pointers, references or other invariants that arbitrary bytes could break.
/// Primitive integers and floats, and `half::f16` (a `#[repr(transparent)]` `u16`), keep that
/// promise.
pub(crate) unsafe trait Plain: Copy + Default + Send + 'static {
    /// The value with its bytes in the opposite order.
    fn reversed_bytes(self) -> Self;
}

macro_rules! plain_integer {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive integer has no padding and every bit pattern is a value.
        unsafe impl Plain for $t {
            fn reversed_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
        }
    )*};
}
plain_integer!(i8, u8, i16, i32, i64);

// SAFETY: `f16` is a `#[repr(transparent)]` `u16`: no padding, and every bit pattern is a value
// (NaNs included).
unsafe impl Plain for f16 {
    fn reversed_bytes(self) -> Self {
        f16::from_bits(self.to_bits().swap_bytes())
    }
}
// SAFETY: an `f32` has no padding and every bit pattern is a value (NaNs included).
unsafe impl Plain for f32 {
    fn reversed_bytes(self) -> Self {
        f32::from_bits(self.to_bits().swap_bytes())
    }
}
// SAFETY: an `f64` has no padding and every bit pattern is a value (NaNs included).
unsafe impl Plain for f64 {
    fn reversed_bytes(self) -> Self {
        f64::from_bits(self.to_bits().swap_bytes())
    }
}

/// The bytes of a slice of plain numbers, for reading into it.
pub(crate) fn bytes_mut<T: Plain>(values: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(values);
    // SAFETY: `T: Plain` promises no padding and that any bytes are a valid `T`, so the bytes may
    // be read (all initialised) and overwritten with anything. The pointer and length come from a
    // live, exclusively borrowed slice, which the result borrows for as long, and u8 has
    // alignment 1.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), len) }
}

/// Applies `$body` to the vector inside an [`Elements`], whatever its type.
macro_rules! with_vec {
    ($elements:expr, $v:ident => $body:expr) => {
        match $elements {
            Elements::F16($v) => $body,
            Elements::F32($v) => $body,
            Elements::F64($v) => $body,
            Elements::I8($v) => $body,
            Elements::U8($v) => $body,
            Elements::I16($v) => $body,
            Elements::I32($v) => $body,
            Elements::I64($v) => $body,
        }
    };
}

impl ElementType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementType::I8 | ElementType::U8 => 1,
            ElementType::F16 | ElementType::I16 => 2,
            ElementType::F32 | ElementType::I32 => 4,
            ElementType::F64 | ElementType::I64 => 8,
        }
    }

    /// The NumPy-style name: `f2 f4 f8 i1 u1 i2 i4 i8`.
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F16 => "f2",
            ElementType::F32 => "f4",
            ElementType::F64 => "f8",
            ElementType::I8 => "i1",
            ElementType::U8 => "u1",
            ElementType::I16 => "i2",
            ElementType::I32 => "i4",
            ElementType::I64 => "i8",
        }
    }
}

impl Elements {
    /// `count` zeros of `element_type`.
    pub fn zeroed(element_type: ElementType, count: usize) -> Elements {
        match element_type {
            ElementType::F16 => Elements::F16(vec![f16::ZERO; count]),
            ElementType::F32 => Elements::F32(vec![0.0; count]),
            ElementType::F64 => Elements::F64(vec![0.0; count]),
            ElementType::I8 => Elements::I8(vec![0; count]),
            ElementType::U8 => Elements::U8(vec![0; count]),
            ElementType::I16 => Elements::I16(vec![0; count]),
            ElementType::I32 => Elements::I32(vec![0; count]),
            ElementType::I64 => Elements::I64(vec![0; count]),
        }
    }

    /// `count` elements of `element_type` to be overwritten: `spare`'s memory when it is of that
    /// type and large enough (resized, its old contents left in place), else zeros.
    pub(crate) fn reuse_or_zeroed(
        spare: Option<Elements>,
        element_type: ElementType,
        count: usize,
    ) -> Elements {
        match spare {
            Some(mut e) if e.element_type() == element_type && e.capacity() >= count => {
                with_vec!(&mut e, v => v.resize(count, Default::default()));
                e
            }
            _ => Elements::zeroed(element_type, count),
        }
    }

    /// Elements the memory holds without reallocating.
    fn capacity(&self) -> usize {
        with_vec!(self, v => v.capacity())
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        match self {
            Elements::F16(_) => ElementType::F16,
            Elements::F32(_) => ElementType::F32,
            Elements::F64(_) => ElementType::F64,
            Elements::I8(_) => ElementType::I8,
            Elements::U8(_) => ElementType::U8,
            Elements::I16(_) => ElementType::I16,
            Elements::I32(_) => ElementType::I32,
            Elements::I64(_) => ElementType::I64,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_vec!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element widened to `f64` (exact for every element type except `i64` beyond 2^53);
    /// meant for tests and diagnostics, not for the conversion path.
    pub fn to_f64(&self) -> Vec<f64> {
        crate::kernel::Rows::from(self).to_f64()
    }

    /// The elements' memory as bytes, for reading into.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        with_vec!(self, v => bytes_mut(v))
    }

    /// Reverses the byte order of every element (big-endian input on a little-endian machine).
    pub(crate) fn swap_bytes(&mut self) {
        with_vec!(self, v => v.iter_mut().for_each(|x| *x = x.reversed_bytes()))
    }

    /// Keeps the first `len` elements.
    pub(crate) fn truncate(&mut self, len: usize) {
        with_vec!(self, v => v.truncate(len))
    }

    /// The transpose of these elements read as a row-major `rows × columns` matrix.
    pub(crate) fn transposed(&self, rows: usize, columns: usize) -> Elements {
        match self {
            Elements::F16(v) => Elements::F16(transpose(v, rows, columns)),
            Elements::F32(v) => Elements::F32(transpose(v, rows, columns)),
            Elements::F64(v) => Elements::F64(transpose(v, rows, columns)),
            Elements::I8(v) => Elements::I8(transpose(v, rows, columns)),
            Elements::U8(v) => Elements::U8(transpose(v, rows, columns)),
            Elements::I16(v) => Elements::I16(transpose(v, rows, columns)),
            Elements::I32(v) => Elements::I32(transpose(v, rows, columns)),
            Elements::I64(v) => Elements::I64(transpose(v, rows, columns)),
        }
    }

    /// Removes a prefix of `prefix` elements from each of the consecutive records of
    /// `prefix + dimension` elements, keeping the rows' elements in order.
    pub(crate) fn strip_record_prefixes(&mut self, prefix: usize, dimension: usize) {
        with_vec!(self, v => strip_prefixes(v, prefix, dimension))
    }
}

/// See [`Elements::transposed`]; works in square tiles so both sides stay in cache.
fn transpose<T: Copy + Default>(values: &[T], rows: usize, columns: usize) -> Vec<T> {
    const TILE: usize = 32;
    let mut out = vec![T::default(); values.len()];
    for row_tile in (0..rows).step_by(TILE) {
        for column_tile in (0..columns).step_by(TILE) {
            for row in row_tile..(row_tile + TILE).min(rows) {
                for column in column_tile..(column_tile + TILE).min(columns) {
                    if let (Some(to), Some(&from)) = (
                        out.get_mut(column * rows + row),
                        values.get(row * columns + column),
                    ) {
                        *to = from;
                    }
                }
            }
        }
    }
    out
}

/// See [`Elements::strip_record_prefixes`].
fn strip_prefixes<T: Copy>(values: &mut Vec<T>, prefix: usize, dimension: usize) {
    let record = prefix + dimension;
    let rows = values.len() / record;
    for row in 0..rows {
        let from = row * record + prefix;
        values.copy_within(from..from + dimension, row * dimension);
    }
    values.truncate(rows * dimension);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_read_in_place_and_swapped() {
        let mut elements = Elements::zeroed(ElementType::F32, 2);
        elements
            .bytes_mut()
            .copy_from_slice(&[0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0]);
        elements.swap_bytes();
        assert_eq!(elements.to_f64(), [1.0, -2.0]);
    }

    #[test]
    fn record_prefixes_are_stripped() {
        let mut elements = Elements::I32(vec![2, 10, 11, 2, 20, 21, 2, 30, 31]);
        elements.strip_record_prefixes(1, 2);
        assert_eq!(elements.to_f64(), [10.0, 11.0, 20.0, 21.0, 30.0, 31.0]);
    }
}
