//! Fixed-size conversion: each pair of input element type and fixed-size target, checked where the
//! cast can lose information, block by block so that a block is still in cache when written.

use super::byte_order::{convert_all, destination_runs, reverse_all, write_records, StoreMode};
use super::number::TWO_POW_63;
use super::rows::Rows;
use super::target::FixedTarget;
use cqlwire_codec::value::NANOS_PER_DAY;
use half::f16;

/// Elements converted per check-then-convert block (fits in L1 with its output).
pub(super) const BLOCK_ELEMENTS: usize = 4096;

/// Converts `rows` to the fixed-size `target` in the destinations `dst`, filled in order with the
/// records of consecutive elements (one slice for them all, or e.g. one per row: the conversion is
/// chosen once, not per destination); on a value that does not convert exactly, returns its index
/// (nothing else is promised about `dst` then). `#[inline]` keeps it in its caller's codegen unit (see
/// [`super::x86`]).
#[inline]
pub(super) fn convert_fixed(
    rows: Rows<'_>,
    target: FixedTarget,
    dst: &mut [&mut [u8]],
    stores: StoreMode,
) -> Result<(), usize> {
    // Exact float bounds of the integer types: -2^31, 2^31 - 1, -2^63 and 2^63 (exclusive).
    pub(super) const INT_MIN: f64 = -2_147_483_648.0;
    pub(super) const INT_MAX: f64 = 2_147_483_647.0;
    pub(super) const LONG_MIN: f64 = -TWO_POW_63;
    pub(super) const LONG_END: f64 = TWO_POW_63;
    let fits_int = |x: f64| x.fract() == 0.0 && (INT_MIN..=INT_MAX).contains(&x);
    let fits_long = |x: f64| x.fract() == 0.0 && (LONG_MIN..LONG_END).contains(&x);
    // Round to nearest like NumPy's astype('>f4') and struct.pack('>f'): only overflow to infinity
    // is refused (a double just above f32::MAX rounds down to it).
    let fits_float = |x: f64| !x.is_finite() || (x as f32).is_finite();
    // An i64 is exactly a float/double when converting back gives it again (2^63 is out of range).
    let long_exact_f32 = |i: i64| {
        let f = i as f32;
        f64::from(f) < LONG_END && f as i64 == i
    };
    let long_exact_f64 = |i: i64| {
        let f = i as f64;
        f < LONG_END && f as i64 == i
    };
    let boolean = |x: f64| x == 0.0 || x == 1.0;
    use FixedTarget as T;
    match (rows, target) {
        // The hot paths: same width, a pure byte-order conversion.
        (Rows::F32(s), T::Float) => reverse_all(s, dst, stores, |x: f32| x.to_bits().to_be_bytes()),
        (Rows::F64(s), T::Double) => {
            reverse_all(s, dst, stores, |x: f64| x.to_bits().to_be_bytes())
        }
        (Rows::I32(s), T::Int) => reverse_all(s, dst, stores, |x: i32| x.to_be_bytes()),
        (Rows::I64(s), T::BigInt) => reverse_all(s, dst, stores, |x: i64| x.to_be_bytes()),
        // Widening casts, always exact.
        (Rows::F16(s), T::Float) => convert_all(s, dst, |x: f16| f32::from(x).to_be_bytes()),
        (Rows::F16(s), T::Double) => convert_all(s, dst, |x: f16| f64::from(x).to_be_bytes()),
        (Rows::F32(s), T::Double) => convert_all(s, dst, |x: f32| f64::from(x).to_be_bytes()),
        (Rows::I8(s), T::Float) => convert_all(s, dst, |x: i8| f32::from(x).to_be_bytes()),
        (Rows::U8(s), T::Float) => convert_all(s, dst, |x: u8| f32::from(x).to_be_bytes()),
        (Rows::I16(s), T::Float) => convert_all(s, dst, |x: i16| f32::from(x).to_be_bytes()),
        (Rows::I8(s), T::Double) => convert_all(s, dst, |x: i8| f64::from(x).to_be_bytes()),
        (Rows::U8(s), T::Double) => convert_all(s, dst, |x: u8| f64::from(x).to_be_bytes()),
        (Rows::I16(s), T::Double) => convert_all(s, dst, |x: i16| f64::from(x).to_be_bytes()),
        (Rows::I32(s), T::Double) => convert_all(s, dst, |x: i32| f64::from(x).to_be_bytes()),
        (Rows::I8(s), T::Int) => convert_all(s, dst, |x: i8| i32::from(x).to_be_bytes()),
        (Rows::U8(s), T::Int) => convert_all(s, dst, |x: u8| i32::from(x).to_be_bytes()),
        (Rows::I16(s), T::Int) => convert_all(s, dst, |x: i16| i32::from(x).to_be_bytes()),
        (Rows::I8(s), T::BigInt) => convert_all(s, dst, |x: i8| i64::from(x).to_be_bytes()),
        (Rows::U8(s), T::BigInt) => convert_all(s, dst, |x: u8| i64::from(x).to_be_bytes()),
        (Rows::I16(s), T::BigInt) => convert_all(s, dst, |x: i16| i64::from(x).to_be_bytes()),
        (Rows::I32(s), T::BigInt) => convert_all(s, dst, |x: i32| i64::from(x).to_be_bytes()),
        // Narrowing casts, checked.
        (Rows::F64(s), T::Float) => {
            return convert_checked(s, dst, fits_float, |x: f64| (x as f32).to_be_bytes())
        }
        (Rows::I32(s), T::Float) => {
            return convert_checked(
                s,
                dst,
                |i| long_exact_f32(i64::from(i)),
                |x: i32| (x as f32).to_be_bytes(),
            )
        }
        (Rows::I64(s), T::Float) => {
            return convert_checked(s, dst, long_exact_f32, |x: i64| (x as f32).to_be_bytes())
        }
        (Rows::I64(s), T::Double) => {
            return convert_checked(s, dst, long_exact_f64, |x: i64| (x as f64).to_be_bytes())
        }
        (Rows::I64(s), T::Int) => {
            return convert_checked(
                s,
                dst,
                |i| i32::try_from(i).is_ok(),
                |x: i64| (x as i32).to_be_bytes(),
            )
        }
        (Rows::F16(s), T::Int) => {
            return convert_checked(
                s,
                dst,
                |x| fits_int(f64::from(x)),
                |x: f16| (f32::from(x) as i32).to_be_bytes(),
            )
        }
        (Rows::F32(s), T::Int) => {
            return convert_checked(
                s,
                dst,
                |x| fits_int(f64::from(x)),
                |x: f32| (x as i32).to_be_bytes(),
            )
        }
        (Rows::F64(s), T::Int) => {
            return convert_checked(s, dst, fits_int, |x: f64| (x as i32).to_be_bytes())
        }
        (Rows::F16(s), T::BigInt) => {
            return convert_checked(
                s,
                dst,
                |x| fits_long(f64::from(x)),
                |x: f16| (f32::from(x) as i64).to_be_bytes(),
            )
        }
        (Rows::F32(s), T::BigInt) => {
            return convert_checked(
                s,
                dst,
                |x| fits_long(f64::from(x)),
                |x: f32| (x as i64).to_be_bytes(),
            )
        }
        (Rows::F64(s), T::BigInt) => {
            return convert_checked(s, dst, fits_long, |x: f64| (x as i64).to_be_bytes())
        }
        // Booleans from 0 and 1.
        (Rows::F16(s), T::Boolean) => {
            return convert_checked(
                s,
                dst,
                |x| boolean(f64::from(x)),
                |x: f16| [u8::from(f32::from(x) != 0.0)],
            )
        }
        (Rows::F32(s), T::Boolean) => {
            return convert_checked(
                s,
                dst,
                |x| boolean(f64::from(x)),
                |x: f32| [u8::from(x != 0.0)],
            )
        }
        (Rows::F64(s), T::Boolean) => {
            return convert_checked(s, dst, boolean, |x: f64| [u8::from(x != 0.0)])
        }
        (Rows::I8(s), T::Boolean) => {
            return convert_checked(s, dst, |x| x == 0 || x == 1, |x: i8| [x as u8])
        }
        (Rows::U8(s), T::Boolean) => return convert_checked(s, dst, |x| x <= 1, |x: u8| [x]),
        (Rows::I16(s), T::Boolean) => {
            return convert_checked(s, dst, |x| x == 0 || x == 1, |x: i16| [x as u8])
        }
        (Rows::I32(s), T::Boolean) => {
            return convert_checked(s, dst, |x| x == 0 || x == 1, |x: i32| [x as u8])
        }
        (Rows::I64(s), T::Boolean) => {
            return convert_checked(s, dst, |x| x == 0 || x == 1, |x: i64| [x as u8])
        }
        // vint-prefixed integers: a constant length byte, then the value's bytes.
        (rows, T::TinyInt) => {
            return convert_prefixed(rows, dst, i8::MIN.into(), i8::MAX.into(), |v| [1, v as u8])
        }
        (rows, T::SmallInt) => {
            return convert_prefixed(rows, dst, i16::MIN.into(), i16::MAX.into(), |v| {
                let [hi, lo] = (v as i16).to_be_bytes();
                [2, hi, lo]
            })
        }
        (rows, T::Date) => {
            return convert_prefixed(rows, dst, 0, u32::MAX.into(), |v| {
                let [a, b, c, d] = (v as u32).to_be_bytes();
                [4, a, b, c, d]
            })
        }
        (rows, T::Time) => {
            return convert_prefixed(rows, dst, 0, NANOS_PER_DAY - 1, |v| {
                let [a, b, c, d, e, f, g, h] = v.to_be_bytes();
                [8, a, b, c, d, e, f, g, h]
            })
        }
    }
    Ok(())
}

/// Converts `rows` to an integer target whose values are `min..=max` (all exactly representable as
/// f64), each written by `encode`: integers are range-checked, floats must also be integral.
#[inline(always)]
pub(super) fn convert_prefixed<const N: usize>(
    rows: Rows<'_>,
    dst: &mut [&mut [u8]],
    min: i64,
    max: i64,
    encode: impl Fn(i64) -> [u8; N] + Copy,
) -> Result<(), usize> {
    let fits = move |x: i64| min <= x && x <= max;
    let (low, high) = (min as f64, max as f64);
    let fits_float = move |x: f64| x.fract() == 0.0 && low <= x && x <= high;
    // Integers go through the record kernel, whose zero fill is exact for non-negative values.
    let zero_fill = min >= 0;
    match rows {
        Rows::I8(s) => convert_integers(s, dst, fits, zero_fill, encode),
        Rows::U8(s) => convert_integers(s, dst, fits, true, encode),
        Rows::I16(s) => convert_integers(s, dst, fits, zero_fill, encode),
        Rows::I32(s) => convert_integers(s, dst, fits, zero_fill, encode),
        Rows::I64(s) => convert_integers(s, dst, fits, zero_fill, encode),
        Rows::F16(s) => convert_checked(
            s,
            dst,
            |x| fits_float(x.into()),
            |x: f16| encode(f32::from(x) as i64),
        ),
        Rows::F32(s) => {
            convert_checked(s, dst, |x| fits_float(x.into()), |x: f32| encode(x as i64))
        }
        Rows::F64(s) => convert_checked(s, dst, fits_float, |x: f64| encode(x as i64)),
    }
}

/// The integers of `src`, each checked with `fits` and written as an `N`-byte record by `encode`
/// through [`write_records`] (whose shuffles' zero fill `zero_fill` allows); returns the index of the
/// first element that fails.
#[inline(always)]
pub(super) fn convert_integers<S: Copy + Into<i64>, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(i64) -> bool + Copy,
    zero_fill: bool,
    encode: impl Fn(i64) -> [u8; N] + Copy,
) -> Result<(), usize> {
    convert_checked_blocks::<S, N>(
        src,
        dst,
        |x| fits(x.into()),
        |s, d| write_records(s, d, zero_fill, |x: S| encode(x.into())),
    )
}

/// Checks every element of `src` with `fits` (block by block, so each block is still in cache when
/// converted), then converts it with `convert`; returns the index of the first element that fails.
#[inline(always)]
pub(super) fn convert_checked<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(S) -> bool + Copy,
    convert: impl Fn(S) -> [u8; N] + Copy,
) -> Result<(), usize> {
    convert_checked_blocks::<S, N>(src, dst, fits, |s, d| {
        convert_all(s, &mut [d], convert);
    })
}

/// [`convert_checked`] with a block converter: checks each block of `src` (at most [`BLOCK_ELEMENTS`], and
/// never across two destinations) with `fits`, then writes its `N`-byte records with
/// `convert_block`; returns the index of the first element that fails.
#[inline(always)]
pub(super) fn convert_checked_blocks<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(S) -> bool + Copy,
    convert_block: impl Fn(&[S], &mut [u8]),
) -> Result<(), usize> {
    for (first, src, dst) in destination_runs::<S, N>(src, dst) {
        for (block, (src, dst)) in src
            .chunks(BLOCK_ELEMENTS)
            .zip(dst.chunks_mut(BLOCK_ELEMENTS * N))
            .enumerate()
        {
            // A branch-free fold vectorises; the slow search only runs on failure.
            if !src.iter().fold(true, |ok, &x| ok & fits(x)) {
                let position = src.iter().position(|&x| !fits(x)).unwrap_or(0);
                return Err(first + block * BLOCK_ELEMENTS + position);
            }
            convert_block(src, dst);
        }
    }
    Ok(())
}
