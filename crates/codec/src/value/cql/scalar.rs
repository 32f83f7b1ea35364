//! The text forms of numbers, booleans, blobs, uuids and inet addresses, and the reading of any
//! native value from its text, shared by CQL literals and JSON.

use super::calendar::{
    date_from_text, duration_from_text, invalid, time_from_text, timestamp_from_text,
};
use super::{LiteralErrorKind, LiteralForm};
use crate::types::NativeType;
use crate::value::Value;
use num_bigint::{BigInt, Sign};
use num_traits::Zero;
use std::borrow::Cow;
use std::net::IpAddr;

/// Largest power of ten applied to an integer or decimal literal's digits (`1e10000` is refused).
const MAX_EXPONENT: i64 = 10_000;

/// A decimal as Java's `BigDecimal.toString` (and Python's `str(Decimal)`) prints it: plain notation
/// when the scale is non-negative and the adjusted exponent is at least -6, else `d.dddE±n`.
pub(crate) fn decimal_text(unscaled: &BigInt, scale: i32) -> String {
    let digits = unscaled.magnitude().to_string();
    let sign = if unscaled.sign() == Sign::Minus {
        "-"
    } else {
        ""
    };
    let scale = i64::from(scale);
    let adjusted = digits.len() as i64 - 1 - scale;
    if scale >= 0 && adjusted >= -6 {
        let scale = scale as usize;
        if scale == 0 {
            format!("{sign}{digits}")
        } else if digits.len() > scale {
            let (whole, fraction) = digits.split_at(digits.len() - scale);
            format!("{sign}{whole}.{fraction}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let point = if rest.is_empty() { "" } else { "." };
        format!("{sign}{first}{point}{rest}E{adjusted:+}")
    }
}

/// A double in the shortest form that reads back to the same bits, `Infinity`/`-Infinity`, `NaN` for
/// the canonical quiet NaN and `NaN(0x…)` with the bit pattern for any other NaN (e.g. `NaN(0xfff8…)`,
/// the negative NaN that x86 arithmetic produces), so that no payload changes on a round trip.
pub(crate) fn double_text(x: f64) -> String {
    if x.is_nan() {
        if x.to_bits() == f64::NAN.to_bits() {
            "NaN".to_string()
        } else {
            format!("NaN(0x{:016x})", x.to_bits())
        }
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{x:?}")
    }
}

/// A float in the forms of [`double_text`] (`NaN(0x…)` with 8 hex digits).
pub(crate) fn float_text(x: f32) -> String {
    if x.is_nan() {
        if x.to_bits() == f32::NAN.to_bits() {
            "NaN".to_string()
        } else {
            format!("NaN(0x{:08x})", x.to_bits())
        }
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{x:?}")
    }
}

/// The bits of a `NaN(0x…)` text, when it is one.
fn nan_bits(text: &str) -> Option<u64> {
    let hex = text
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("nan("))
        .and_then(|_| text.get(4..))?
        .strip_suffix(')')?;
    let digits = hex.strip_prefix("0x").or_else(|| hex.strip_prefix("0X"))?;
    u64::from_str_radix(digits, 16).ok()
}

/// Splits a number literal `[+-]digits[.digits][e[+-]digits]` into its digits and the power of ten
/// to divide them by (the decimal scale). `None` when the text is not such a number.
fn number_parts(text: &str) -> Option<(BigInt, i64)> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (whole, fraction) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !all_digits(digits) || digits.len() > 18 {
                return None;
            }
            e.parse().ok()?
        }
    };
    let magnitude = BigInt::parse_bytes(format!("{whole}{fraction}").as_bytes(), 10)?;
    let unscaled = if negative { -magnitude } else { magnitude };
    let scale = (fraction.len() as i64).checked_sub(exponent)?;
    Some((unscaled, scale))
}

/// `10^n` for `0 ≤ n ≤ MAX_EXPONENT`.
fn power_of_ten(n: i64) -> Option<BigInt> {
    let n = u32::try_from(n)
        .ok()
        .filter(|n| i64::from(*n) <= MAX_EXPONENT)?;
    Some(num_traits::pow(BigInt::from(10), n as usize))
}

/// Reads an integer literal (`-12`, `+7`, `1e10`, `1.0`) exactly; fractions are refused.
pub(crate) fn integer_from_text(text: &str) -> Result<BigInt, LiteralErrorKind> {
    let (unscaled, scale) =
        number_parts(text).ok_or_else(|| invalid(LiteralForm::Integer, text))?;
    if unscaled.is_zero() {
        return Ok(unscaled);
    }
    if scale <= 0 {
        let factor = power_of_ten(-scale).ok_or_else(|| LiteralErrorKind::ExponentTooLarge {
            text: text.to_string(),
        })?;
        return Ok(unscaled * factor);
    }
    let not_integral = || LiteralErrorKind::NotAnInteger {
        text: text.to_string(),
    };
    let divisor = power_of_ten(scale)
        .filter(|_| scale <= unscaled.magnitude().to_string().len() as i64)
        .ok_or_else(not_integral)?;
    if (&unscaled % &divisor).is_zero() {
        Ok(unscaled / divisor)
    } else {
        Err(not_integral())
    }
}

/// Reads a decimal literal (`1.50`, `-3`, `1E+3`, `.5`), keeping its scale.
pub(crate) fn decimal_from_text(text: &str) -> Result<(BigInt, i32), LiteralErrorKind> {
    let (unscaled, scale) =
        number_parts(text).ok_or_else(|| invalid(LiteralForm::Decimal, text))?;
    let scale = i32::try_from(scale).map_err(|_| LiteralErrorKind::ScaleOutOfRange {
        text: text.to_string(),
    })?;
    Ok((unscaled, scale))
}

/// Reads a double: a number literal, `NaN`, `Infinity`, `-Infinity` (any case), `NaN(0x…)`.
pub(crate) fn double_from_text(text: &str) -> Result<f64, LiteralErrorKind> {
    if let Some(bits) = nan_bits(text) {
        return Some(f64::from_bits(bits))
            .filter(|x| x.is_nan())
            .ok_or_else(|| not_nan(NativeType::Double, text));
    }
    special_float(text)
        .or_else(|| {
            number_parts(text)?;
            text.parse::<f64>().ok().filter(|x| x.is_finite())
        })
        .ok_or_else(|| invalid(LiteralForm::Double, text))
}

/// Reads a float: a number literal in float range, `NaN`, `Infinity`, `-Infinity` (any case),
/// `NaN(0x…)`.
pub(crate) fn float_from_text(text: &str) -> Result<f32, LiteralErrorKind> {
    if let Some(bits) = nan_bits(text) {
        return u32::try_from(bits)
            .ok()
            .map(f32::from_bits)
            .filter(|x| x.is_nan())
            .ok_or_else(|| not_nan(NativeType::Float, text));
    }
    if let Some(x) = special_float(text) {
        return Ok(x as f32);
    }
    number_parts(text)
        .and_then(|_| text.parse::<f32>().ok())
        .filter(|x| x.is_finite())
        .ok_or_else(|| invalid(LiteralForm::Float, text))
}

/// `NaN`, `Infinity`, `+Infinity`, `-Infinity` in any case.
fn special_float(text: &str) -> Option<f64> {
    match text.to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "+infinity" => Some(f64::INFINITY),
        "-infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// `NaN(0x…)` text whose bits are not a NaN of `native`.
fn not_nan(native: NativeType, text: &str) -> LiteralErrorKind {
    LiteralErrorKind::NotNan {
        native,
        text: text.to_string(),
    }
}

/// Converts an exact integer to the bounded integer type of `native`, naming it in the error.
fn bounded<T: TryFrom<BigInt>>(value: BigInt, native: NativeType) -> Result<T, LiteralErrorKind> {
    T::try_from(value.clone()).map_err(|_| LiteralErrorKind::IntegerOutOfRange { native, value })
}

/// Reads a boolean: `true` or `false` in any case.
pub(crate) fn boolean_from_text(text: &str) -> Result<bool, LiteralErrorKind> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(LiteralForm::Boolean, text)),
    }
}

/// Reads a blob written as `0x` followed by an even number of hex digits.
pub(crate) fn blob_from_text(text: &str) -> Result<Vec<u8>, LiteralErrorKind> {
    text.strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        // The decoder would skip one more `0x` itself.
        .filter(|digits| !digits.starts_with("0x") && !digits.starts_with("0X"))
        .and_then(|digits| {
            let mut bytes = vec![0; digits.len() / 2];
            const_hex::decode_to_slice(digits, &mut bytes).ok()?;
            Some(bytes)
        })
        .ok_or_else(|| invalid(LiteralForm::Blob, text))
}

/// Reads a native value from its unquoted text (the content of a quoted literal, or a bare token):
/// for text and ascii, the text itself (the caller reads their own lexical forms).
pub(crate) fn native_from_text(
    native: NativeType,
    text: Cow<'_, str>,
) -> Result<Value, LiteralErrorKind> {
    use NativeType as N;
    let integer = || integer_from_text(&text);
    Ok(match native {
        N::Ascii if !text.is_ascii() => {
            let character = text.chars().find(|c| !c.is_ascii()).unwrap_or_default();
            return Err(LiteralErrorKind::NonAscii { character });
        }
        N::Ascii | N::Text => Value::Text(text.into_owned()),
        N::Blob => Value::Blob(blob_from_text(&text)?),
        N::Boolean => Value::Boolean(boolean_from_text(&text)?),
        N::TinyInt => Value::TinyInt(bounded(integer()?, native)?),
        N::SmallInt => Value::SmallInt(bounded(integer()?, native)?),
        N::Int => Value::Int(bounded(integer()?, native)?),
        N::BigInt | N::Counter => Value::BigInt(bounded(integer()?, native)?),
        N::Varint => Value::Varint(integer()?),
        N::Float => Value::Float(float_from_text(&text)?),
        N::Double => Value::Double(double_from_text(&text)?),
        N::Decimal => {
            let (unscaled, scale) = decimal_from_text(&text)?;
            Value::Decimal { unscaled, scale }
        }
        N::Uuid | N::TimeUuid => Value::Uuid(
            uuid::Uuid::parse_str(&text).map_err(|_| invalid(LiteralForm::Uuid, &text))?,
        ),
        N::Inet => Value::Inet(
            text.parse::<IpAddr>()
                .map_err(|_| invalid(LiteralForm::Inet, &text))?,
        ),
        N::Timestamp => Value::Timestamp(timestamp_from_text(&text)?),
        N::Date => Value::Date(date_from_text(&text)?),
        N::Time => Value::Time(time_from_text(&text)?),
        N::Duration => {
            let (months, days, nanoseconds) = duration_from_text(&text)?;
            Value::Duration {
                months,
                days,
                nanoseconds,
            }
        }
    })
}
