//! The general path of the variable-size element types: one element at a time, any value, and
//! the message of an element that does not convert.

use super::super::error::float_integer_problem;
use super::super::float_text::push_number;
use super::super::number::{Number, TWO_POW_63};
use crate::types::NativeType;

/// Appends `number` as one vint-prefixed element of the variable-size `native` type (text, ascii,
/// varint, decimal) to `out`, formatting in `text` (a reused buffer); on error `out` is unchanged.
/// Values that fit in an i64 take no allocation; larger integral floats go through a `BigInt`.
pub(in crate::kernel) fn write_variable(
    number: Number,
    native: NativeType,
    text: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match native {
        NativeType::Text | NativeType::Ascii => {
            // Written in place after a one-byte length, moved up in the rare case (a float
            // of over 127 digits, such as 1e-300) whose length needs a longer vint.
            let start = out.len();
            out.push(0);
            push_number(number, out);
            let length = out.len() - start - 1;
            match u8::try_from(length) {
                Ok(short) if short < 0x80 => {
                    if let Some(prefix) = out.get_mut(start) {
                        *prefix = short;
                    }
                }
                _ => {
                    let (prefix, width) = crate::vint::encode_unsigned_array(length as u64);
                    out.splice(start..start + 1, prefix.into_iter().take(width));
                }
            }
        }
        NativeType::Varint => match varint_of(number)? {
            Ok(small) => {
                let (bytes, start) = varint_bytes(small);
                push_prefixed(&[bytes.get(start..).unwrap_or_default()], out);
            }
            Err(big) => push_prefixed(&[&big.to_signed_bytes_be()], out),
        },
        NativeType::Decimal => {
            let (unscaled, scale) = decimal_of(number, text)?;
            let scale = scale.to_be_bytes();
            match unscaled {
                Ok(small) => {
                    let (bytes, start) = varint_bytes(small);
                    push_prefixed(&[&scale, bytes.get(start..).unwrap_or_default()], out);
                }
                Err(big) => push_prefixed(&[&scale, &big.to_signed_bytes_be()], out),
            }
        }
        _ => return Err(format!("cannot be converted to {}", native.cql_name())),
    }
    Ok(())
}

/// Appends the unsigned vint of the total length of `parts`, then the parts.
pub(in crate::kernel) fn push_prefixed(parts: &[&[u8]], out: &mut Vec<u8>) {
    let length: usize = parts.iter().map(|part| part.len()).sum();
    match u8::try_from(length) {
        // One byte for lengths below 0x80, the usual case.
        Ok(short) if short < 0x80 => out.push(short),
        _ => {
            let (prefix, width) = crate::vint::encode_unsigned_array(length as u64);
            out.extend_from_slice(prefix.get(..width).unwrap_or_default());
        }
    }
    for part in parts {
        out.extend_from_slice(part);
    }
}

/// The two's-complement big-endian bytes of `value` in a fixed buffer, and where its shortest form
/// (the `varint` encoding: no redundant sign bytes, at least one byte) starts.
pub(in crate::kernel) fn varint_bytes(value: i64) -> ([u8; 8], usize) {
    let sign_bits = if value < 0 {
        value.leading_ones()
    } else {
        value.leading_zeros()
    };
    // One sign bit is kept: 64 - sign_bits + 1 bits, rounded up to whole bytes.
    let length = (72 - sign_bits as usize) / 8;
    (value.to_be_bytes(), 8 - length)
}

/// The varint value of `number`: an i64 when it fits, else a `BigInt` (integral floats beyond
/// ±2^63); an error for a float that is not an integer.
pub(in crate::kernel) fn varint_of(
    number: Number,
) -> Result<Result<i64, num_bigint::BigInt>, String> {
    let x = match number {
        Number::Int(i) => return Ok(Ok(i)),
        Number::Single(_) | Number::Float(_) => number.float().unwrap_or(f64::NAN),
    };
    if !(x.is_finite() && x.fract() == 0.0) {
        return Err(float_integer_problem(x, "varint"));
    }
    // -2^63 ≤ x < 2^63 is exactly i64's range; `as` is exact for integral x there.
    if (-TWO_POW_63..TWO_POW_63).contains(&x) {
        return Ok(Ok(x as i64));
    }
    <num_bigint::BigInt as num_traits::FromPrimitive>::from_f64(x)
        .map(Err)
        .ok_or_else(|| "is not an integer".into())
}

/// The decimal (unscaled value, scale) of `number`: an integer with scale 0, or for a float the
/// digits of its shortest decimal representation that round-trips (as an f32 for f16/f32 inputs)
/// with the scale its count of fractional digits. Formats in `text`; the unscaled value is an i64
/// when it fits, else a `BigInt`.
pub(in crate::kernel) fn decimal_of(
    number: Number,
    text: &mut Vec<u8>,
) -> Result<(Result<i64, num_bigint::BigInt>, i32), String> {
    if let Number::Int(i) = number {
        return Ok((Ok(i), 0));
    }
    if !number.float().is_some_and(f64::is_finite) {
        return Err("is not finite, so not a decimal".into());
    }
    text.clear();
    push_number(number, text);
    // ASCII digits, a point and a sign.
    let text = std::str::from_utf8(text).unwrap_or_default();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let scale = i32::try_from(fraction.len()).map_err(|_| "has too many digits for a decimal")?;
    let (negative, whole) = match whole.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, whole),
    };
    // Accumulate towards the sign so that i64::MIN's digits fit too.
    let small = whole
        .bytes()
        .chain(fraction.bytes())
        .try_fold(0i64, |acc, digit| {
            let digit = i64::from(digit.wrapping_sub(b'0'));
            let acc = acc.checked_mul(10)?;
            if negative {
                acc.checked_sub(digit)
            } else {
                acc.checked_add(digit)
            }
        });
    if let Some(small) = small {
        return Ok((Ok(small), scale));
    }
    let digits = format!("{}{whole}{fraction}", if negative { "-" } else { "" });
    let big = digits
        .parse()
        .map_err(|_| format!("cannot be written as a decimal ({text})"))?;
    Ok((Err(big), scale))
}
