//! Row-major elements borrowed from a batch: the kernel's input.

use super::number::Number;
use super::variable::Source;
use crate::input::Elements;
use half::f16;

/// Row-major elements borrowed from a batch, in native byte order.
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    /// Half-precision floats.
    F16(&'a [f16]),
    /// Single-precision floats.
    F32(&'a [f32]),
    /// Double-precision floats.
    F64(&'a [f64]),
    /// Signed bytes.
    I8(&'a [i8]),
    /// Unsigned bytes.
    U8(&'a [u8]),
    /// 16-bit integers.
    I16(&'a [i16]),
    /// 32-bit integers.
    I32(&'a [i32]),
    /// 64-bit integers.
    I64(&'a [i64]),
}

impl<'a> From<&'a Elements> for Rows<'a> {
    fn from(elements: &'a Elements) -> Self {
        match elements {
            Elements::F16(v) => Rows::F16(v),
            Elements::F32(v) => Rows::F32(v),
            Elements::F64(v) => Rows::F64(v),
            Elements::I8(v) => Rows::I8(v),
            Elements::U8(v) => Rows::U8(v),
            Elements::I16(v) => Rows::I16(v),
            Elements::I32(v) => Rows::I32(v),
            Elements::I64(v) => Rows::I64(v),
        }
    }
}

impl<'a> Rows<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Rows::F16(v) => v.len(),
            Rows::F32(v) => v.len(),
            Rows::F64(v) => v.len(),
            Rows::I8(v) => v.len(),
            Rows::U8(v) => v.len(),
            Rows::I16(v) => v.len(),
            Rows::I32(v) => v.len(),
            Rows::I64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element widened to `f64` (exact for every element type except `i64` beyond 2^53);
    /// for checks and diagnostics, not for the conversion path.
    pub fn to_f64(self) -> Vec<f64> {
        match self {
            Rows::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
            Rows::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Rows::F64(v) => v.to_vec(),
            Rows::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Rows::U8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Rows::I16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Rows::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Rows::I64(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The elements `start..end` (clamped to the elements held).
    pub fn slice(self, start: usize, end: usize) -> Rows<'a> {
        fn part<T>(v: &[T], start: usize, end: usize) -> &[T] {
            let end = end.min(v.len());
            v.get(start.min(end)..end).unwrap_or(&[])
        }
        match self {
            Rows::F16(v) => Rows::F16(part(v, start, end)),
            Rows::F32(v) => Rows::F32(part(v, start, end)),
            Rows::F64(v) => Rows::F64(part(v, start, end)),
            Rows::I8(v) => Rows::I8(part(v, start, end)),
            Rows::U8(v) => Rows::U8(part(v, start, end)),
            Rows::I16(v) => Rows::I16(part(v, start, end)),
            Rows::I32(v) => Rows::I32(part(v, start, end)),
            Rows::I64(v) => Rows::I64(part(v, start, end)),
        }
    }

    /// The element at `index` as a number, for error messages and variable-size encoding.
    pub(super) fn number(&self, index: usize) -> Option<Number> {
        Some(match self {
            Rows::F16(v) => v.get(index)?.number(),
            Rows::F32(v) => v.get(index)?.number(),
            Rows::F64(v) => v.get(index)?.number(),
            Rows::I8(v) => v.get(index)?.number(),
            Rows::U8(v) => v.get(index)?.number(),
            Rows::I16(v) => v.get(index)?.number(),
            Rows::I32(v) => v.get(index)?.number(),
            Rows::I64(v) => v.get(index)?.number(),
        })
    }
}
