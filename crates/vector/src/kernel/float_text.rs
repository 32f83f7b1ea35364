//! The text of a number: NumPy's shortest positional form, for text elements and error messages.

use super::number::Number;
use std::fmt;

impl Number {
    /// The number as an error message quotes it: the plain form, or the exponent form when the
    /// plain one runs past 17 characters (1e300 would otherwise print 301 digits).
    pub(super) fn quoted(self) -> String {
        let plain = self.to_string();
        match self {
            Number::Single(x) if plain.len() > 17 => format!("{x:e}"),
            Number::Float(x) if plain.len() > 17 => format!("{x:e}"),
            _ => plain,
        }
    }
}

impl fmt::Display for Number {
    /// See [`push_number`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::new();
        push_number(*self, &mut text);
        f.write_str(std::str::from_utf8(&text).unwrap_or_default())
    }
}

/// Appends the shortest text that reads back as the same number of the input's type, positional (no
/// exponent, no trailing `.0`), a tie between two shortest texts going to the even last digit:
/// NumPy's `format_float_positional(x, unique=True, trim="-")`. Rust's `{}` is positional too but
/// rounds ties up (`1310867.3` where NumPy writes `1310867.2`) and is several times slower than
/// zmij, which finds the digits here. Non-finite values are written as Rust's `NaN`, `inf`, `-inf`.
pub(super) fn push_number(number: Number, text: &mut Vec<u8>) {
    let mut buffer = zmij::Buffer::new();
    let printed = match number {
        Number::Int(i) => return text.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        Number::Single(x) => buffer.format(x),
        Number::Float(x) => buffer.format(x),
    };
    // zmij writes non-finite values as Rust does.
    if number.float().is_some_and(f64::is_finite) {
        push_positional(printed, text);
    } else {
        text.extend_from_slice(printed.as_bytes());
    }
}

/// Appends a finite float printed by zmij (`-1.5`, `1e-7`, `1.2345e+20`: shortest digits, an
/// exponent for large and small magnitudes) in positional form: `-1.5`, `0.0000001`,
/// `123450000000000000000`.
pub(super) fn push_positional(printed: &str, text: &mut Vec<u8>) {
    // Between 1e-5 and 1e16 zmij already writes positional digits, with `.0` after an integer.
    if !printed.contains('e') {
        text.extend_from_slice(printed.strip_suffix(".0").unwrap_or(printed).as_bytes());
        return;
    }
    let (unsigned, negative) = match printed.strip_prefix('-') {
        Some(rest) => (rest, true),
        None => (printed, false),
    };
    let (mantissa, exponent) = match unsigned.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The significant digits without leading and trailing zeros, and where the point goes: the
    // value is 0.DIGITS × 10^point.
    let mut point = i32::try_from(whole.len())
        .unwrap_or(0)
        .saturating_add(exponent);
    let leading = whole
        .bytes()
        .chain(fraction.bytes())
        .take_while(|&d| d == b'0')
        .count();
    point = point.saturating_sub(i32::try_from(leading).unwrap_or(0));
    let significant = whole.bytes().chain(fraction.bytes()).skip(leading);
    let mut digits = [0u8; 32];
    let mut count = 0;
    for (slot, digit) in digits.iter_mut().zip(significant) {
        *slot = digit;
        count += 1;
    }
    while count > 0 && digits.get(count - 1) == Some(&b'0') {
        count -= 1;
    }
    let digits = digits.get(..count).unwrap_or_default();
    if negative {
        text.push(b'-');
    }
    let zeros = |text: &mut Vec<u8>, n: usize| text.extend(std::iter::repeat_n(b'0', n));
    match usize::try_from(point) {
        _ if digits.is_empty() => text.push(b'0'),
        Err(_) | Ok(0) => {
            text.extend_from_slice(b"0.");
            zeros(text, point.unsigned_abs() as usize);
            text.extend_from_slice(digits);
        }
        Ok(point) if point >= digits.len() => {
            text.extend_from_slice(digits);
            zeros(text, point - digits.len());
        }
        Ok(point) => {
            let (integer, fraction) = digits.split_at(point);
            text.extend_from_slice(integer);
            text.push(b'.');
            text.extend_from_slice(fraction);
        }
    }
}
