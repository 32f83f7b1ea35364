//! cqlsh-style literals: [`format_cql`] prints a value as valid CQL, [`parse_cql`] reads it back (and the
//! common forms people type into cqlsh), guided by the type.
//!
//! Decisions (docs/decode-encode.md documents them for users):
//! - timestamps, dates, times and inet addresses print **quoted** (`'2024-01-01 12:00:00.000Z'`,
//!   `'2024-01-01'`, `'12:34:56.123456789'`, `'10.0.0.1'`) so the output is valid CQL; quotes are
//!   optional when parsing;
//! - a timestamp outside years 1–9999 prints as its raw millisecond count, a date outside that range as
//!   its raw unsigned wire day count (2^31 = 1970-01-01), a time outside a day as its nanosecond count —
//!   all forms Cassandra accepts as literals; timestamps without a zone are read as UTC;
//! - floats print in the shortest form that reads back to the same bits (`0.1`, `1e300`, `-0.0`), and
//!   `NaN`, `Infinity`, `-Infinity`;
//! - decimals print like Java's `BigDecimal.toString` (`1.50`, `1E+3`, `1.2E-8`), which keeps the scale;
//! - durations print in Cassandra's units (`1y2mo3d4h5m6s7ms8us9ns`, `-` prefix, `0s` for zero); a
//!   duration whose components have mixed signs (legal bytes, no CQL form) prints each component with its
//!   own sign (`+13mo-1d`), which this parser reads back;
//! - the empty value prints as `<empty>`; a UDT or tuple that ended early prints only its present
//!   fields/components, and reads back the same way.

use crate::types::{CqlType, NativeType};
use crate::value::{time_of_day, Value};
use num_bigint::{BigInt, Sign};
use num_traits::Zero;
use std::fmt::Write as _;
use std::net::IpAddr;

/// Deepest nesting of collections, tuples and UDTs that [`parse_cql`] and the JSON reader accept.
pub const MAX_LITERAL_DEPTH: usize = 128;

/// Largest power of ten applied to an integer or decimal literal's digits (`1e10000` is refused).
const MAX_EXPONENT: i64 = 10_000;

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_HOUR: i64 = 3_600_000_000_000;
const NANOS_PER_MINUTE: i64 = 60_000_000_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
/// The wire value of the date 1970-01-01.
const EPOCH_DATE: i64 = 1 << 31;

/// Why a literal (CQL text or JSON) does not describe a value of the type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}{}", position.map(|p| format!(" at character {p}")).unwrap_or_default(), if path.is_empty() { String::new() } else { format!(" ({path})") })]
pub struct LiteralError {
    /// What is wrong.
    pub message: String,
    /// Index in characters (from 0) in the CQL text, when the input is text.
    pub position: Option<usize>,
    /// Where in the value, e.g. `element 1 / field zip`; empty at the top level.
    pub path: String,
}

// ---------------------------------------------------------------------------------------------------
// Scalar text forms shared with the JSON format.
// ---------------------------------------------------------------------------------------------------

/// Converts a proleptic Gregorian date to days since 1970-01-01 (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days in a month of a proleptic Gregorian year.
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// `YYYY-MM-DD` for days since the epoch, when the year is 1–9999.
fn civil_text(days: i64) -> Option<String> {
    let (year, month, day) = civil_from_days(days);
    (1..=9999)
        .contains(&year)
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

/// A timestamp as `2024-01-01 12:00:00.000Z`, or `None` outside years 1–9999.
pub fn timestamp_text(millis: i64) -> Option<String> {
    let date = civil_text(millis.div_euclid(MILLIS_PER_DAY))?;
    let ms = millis.rem_euclid(MILLIS_PER_DAY);
    Some(format!(
        "{date} {:02}:{:02}:{:02}.{:03}Z",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    ))
}

/// A date (wire day count, 2^31 = 1970-01-01) as `2024-01-01`, or `None` outside years 1–9999.
pub fn date_text(days: u32) -> Option<String> {
    civil_text(i64::from(days) - EPOCH_DATE)
}

/// A time of day (nanoseconds since midnight) as `12:34:56.123456789`, or `None` outside a day.
pub fn time_text(nanos: i64) -> Option<String> {
    time_of_day(nanos).ok().map(|nanos| {
        format!(
            "{:02}:{:02}:{:02}.{:09}",
            nanos / NANOS_PER_HOUR,
            nanos / NANOS_PER_MINUTE % 60,
            nanos / NANOS_PER_SECOND % 60,
            nanos % NANOS_PER_SECOND
        )
    })
}

/// A duration in Cassandra's units: `1y2mo3d4h5m6s7ms8us9ns`, `-` prefix when negative, `0s` for zero;
/// components of mixed signs print each with its own sign and a single unit (`+13mo-1d+5ns`).
pub fn duration_text(months: i32, days: i32, nanoseconds: i64) -> String {
    let negative = months < 0 || days < 0 || nanoseconds < 0;
    let positive = months > 0 || days > 0 || nanoseconds > 0;
    let mut text = String::new();
    if negative && positive {
        for (amount, unit) in [
            (i128::from(months), "mo"),
            (i128::from(days), "d"),
            (i128::from(nanoseconds), "ns"),
        ] {
            if amount != 0 {
                let _ = write!(text, "{amount:+}{unit}");
            }
        }
        return text;
    }
    if !positive && !negative {
        return "0s".to_string();
    }
    if negative {
        text.push('-');
    }
    let months = u64::from(months.unsigned_abs());
    let nanos = nanoseconds.unsigned_abs();
    let parts = [
        (months / 12, "y"),
        (months % 12, "mo"),
        (u64::from(days.unsigned_abs()), "d"),
        (nanos / NANOS_PER_HOUR as u64, "h"),
        (nanos / NANOS_PER_MINUTE as u64 % 60, "m"),
        (nanos / NANOS_PER_SECOND as u64 % 60, "s"),
        (nanos / 1_000_000 % 1000, "ms"),
        (nanos / 1000 % 1000, "us"),
        (nanos % 1000, "ns"),
    ];
    for (amount, unit) in parts {
        if amount != 0 {
            let _ = write!(text, "{amount}{unit}");
        }
    }
    text
}

/// A decimal as Java's `BigDecimal.toString` (and Python's `str(Decimal)`) prints it: plain notation
/// when the scale is non-negative and the adjusted exponent is at least -6, else `d.dddE±n`.
pub fn decimal_text(unscaled: &BigInt, scale: i32) -> String {
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
pub fn double_text(x: f64) -> String {
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
pub fn float_text(x: f32) -> String {
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
pub fn integer_from_text(text: &str) -> Result<BigInt, String> {
    let (unscaled, scale) =
        number_parts(text).ok_or_else(|| format!("invalid integer {text:?}"))?;
    if unscaled.is_zero() {
        return Ok(unscaled);
    }
    if scale <= 0 {
        let factor =
            power_of_ten(-scale).ok_or_else(|| format!("exponent too large in {text:?}"))?;
        return Ok(unscaled * factor);
    }
    let not_integral = || format!("{text:?} is not an integer");
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
pub fn decimal_from_text(text: &str) -> Result<(BigInt, i32), String> {
    let (unscaled, scale) =
        number_parts(text).ok_or_else(|| format!("invalid decimal {text:?}"))?;
    let scale =
        i32::try_from(scale).map_err(|_| format!("decimal scale out of range in {text:?}"))?;
    Ok((unscaled, scale))
}

/// Reads a double: a number literal, `NaN`, `Infinity`, `-Infinity` (any case), `NaN(0x…)`.
pub fn double_from_text(text: &str) -> Result<f64, String> {
    if let Some(bits) = nan_bits(text) {
        return Some(f64::from_bits(bits))
            .filter(|x| x.is_nan())
            .ok_or_else(|| format!("{text:?} is not the bit pattern of a double NaN"));
    }
    special_float(text)
        .or_else(|| {
            number_parts(text)?;
            text.parse::<f64>().ok().filter(|x| x.is_finite())
        })
        .ok_or_else(|| format!("invalid double {text:?}"))
}

/// Reads a float: a number literal in float range, `NaN`, `Infinity`, `-Infinity` (any case),
/// `NaN(0x…)`.
pub fn float_from_text(text: &str) -> Result<f32, String> {
    if let Some(bits) = nan_bits(text) {
        return u32::try_from(bits)
            .ok()
            .map(f32::from_bits)
            .filter(|x| x.is_nan())
            .ok_or_else(|| format!("{text:?} is not the bit pattern of a float NaN"));
    }
    if let Some(x) = special_float(text) {
        return Ok(x as f32);
    }
    number_parts(text)
        .and_then(|_| text.parse::<f32>().ok())
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("invalid float {text:?} (or out of range)"))
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

/// Converts an exact integer to a bounded integer type, naming the type in the error.
fn bounded<T: TryFrom<BigInt>>(value: BigInt, type_name: &str) -> Result<T, String> {
    let shown = value.to_string();
    T::try_from(value).map_err(|_| format!("{shown} is out of range for {type_name}"))
}

/// Reads a boolean: `true` or `false` in any case.
pub fn boolean_from_text(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("invalid boolean {text:?} (expected true or false)")),
    }
}

/// A cursor over the ASCII structure of a date/time text.
struct Fields<'a> {
    text: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.at;
        while self.at < self.text.len()
            && self.at - start < max
            && self.text[self.at].is_ascii_digit()
        {
            self.at += 1;
        }
        let run = self.text.get(start..self.at)?;
        if run.len() < min {
            return None;
        }
        std::str::from_utf8(run).ok()?.parse().ok()
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.text.get(self.at) == Some(&c);
        if found {
            self.at += 1;
        }
        found
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn done(&self) -> bool {
        self.at >= self.text.len()
    }

    /// `[+-]YYYY-MM-DD` (4 or more year digits) as days since the epoch.
    fn date(&mut self) -> Option<i64> {
        let negative = self.eat(b'-');
        if !negative {
            self.eat(b'+');
        }
        let year = self.digits(4, 9)?;
        let year = if negative { -year } else { year };
        if !self.eat(b'-') {
            return None;
        }
        let month = self.digits(1, 2)?;
        if !self.eat(b'-') {
            return None;
        }
        let day = self.digits(1, 2)?;
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        Some(days_from_civil(year, month, day))
    }

    /// `HH:MM[:SS[.fffffffff]]` as nanoseconds since midnight.
    fn time_of_day(&mut self) -> Option<i64> {
        let hours = self.digits(1, 2)?;
        if !self.eat(b':') {
            return None;
        }
        let minutes = self.digits(2, 2)?;
        let mut seconds = 0;
        let mut fraction = 0;
        if self.eat(b':') {
            seconds = self.digits(2, 2)?;
            if self.eat(b'.') {
                let start = self.at;
                let value = self.digits(1, 9)?;
                let width = self.at - start;
                fraction = value * 10i64.pow(9 - width as u32);
            }
        }
        if hours > 23 || minutes > 59 || seconds > 59 {
            return None;
        }
        Some(
            hours * NANOS_PER_HOUR
                + minutes * NANOS_PER_MINUTE
                + seconds * NANOS_PER_SECOND
                + fraction,
        )
    }

    /// A zone: `Z`, `UTC`, `+HH`, `+HHMM`, `+HH:MM` (or `-`), as an offset in minutes; 0 when absent.
    fn zone(&mut self) -> Option<i64> {
        while self.eat(b' ') {}
        if self.done() {
            return Some(0);
        }
        if self.eat(b'Z') || self.eat(b'z') {
            return self.done().then_some(0);
        }
        let rest = self.text.get(self.at..)?;
        if rest.eq_ignore_ascii_case(b"UTC") || rest.eq_ignore_ascii_case(b"GMT") {
            self.at = self.text.len();
            return Some(0);
        }
        let sign = match self.peek()? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        self.at += 1;
        let hours = self.digits(2, 2)?;
        self.eat(b':');
        let minutes = if self.done() { 0 } else { self.digits(2, 2)? };
        (self.done() && hours < 24 && minutes < 60).then_some(sign * (hours * 60 + minutes))
    }
}

/// Reads a timestamp: milliseconds since the epoch (`1700000000000`), or `YYYY-MM-DD`, optionally
/// followed by ` ` or `T` and `HH:MM[:SS[.fff]]`, optionally followed by a zone (`Z`, `+HH:MM`, `+HHMM`,
/// `UTC`); no zone means UTC.
pub fn timestamp_from_text(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    let invalid = || format!("invalid timestamp {text:?} (expected e.g. 2024-01-01 12:00:00.000Z)");
    let mut fields = Fields {
        text: text.as_bytes(),
        at: 0,
    };
    let days = fields.date().ok_or_else(invalid)?;
    let mut nanos = 0;
    if fields.eat(b' ') || fields.eat(b'T') || fields.eat(b't') {
        while fields.eat(b' ') {}
        nanos = fields.time_of_day().ok_or_else(invalid)?;
    }
    let offset_minutes = fields.zone().ok_or_else(invalid)?;
    if nanos % 1_000_000 != 0 {
        return Err(format!(
            "timestamp {text:?} is more precise than milliseconds"
        ));
    }
    days.checked_mul(MILLIS_PER_DAY)
        .and_then(|ms| ms.checked_add(nanos / 1_000_000))
        .and_then(|ms| ms.checked_sub(offset_minutes * 60_000))
        .ok_or_else(|| format!("timestamp {text:?} is out of range"))
}

/// Reads a date: `YYYY-MM-DD`, or an unsigned integer taken as the raw wire day count.
pub fn date_from_text(text: &str) -> Result<u32, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u32>()
            .map_err(|_| format!("raw date {text} is out of range (0 to 4294967295)"));
    }
    let mut fields = Fields {
        text: text.as_bytes(),
        at: 0,
    };
    let days = fields
        .date()
        .filter(|_| fields.done())
        .ok_or_else(|| format!("invalid date {text:?} (expected e.g. 2024-01-01)"))?;
    u32::try_from(days + EPOCH_DATE).map_err(|_| format!("date {text:?} is out of range"))
}

/// Reads a time of day: `HH:MM[:SS[.fffffffff]]`, or an integer count of nanoseconds since midnight.
pub fn time_from_text(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(nanos) = text.parse::<i64>() {
        return time_of_day(nanos);
    }
    let mut fields = Fields {
        text: text.as_bytes(),
        at: 0,
    };
    fields
        .time_of_day()
        .filter(|_| fields.done())
        .ok_or_else(|| format!("invalid time {text:?} (expected e.g. 12:34:56.123456789)"))
}

/// Reads a duration: Cassandra units (`1y2mo3w4d5h6m7s8ms9us10ns`, `-` prefix, case-insensitive, `µs`
/// too), per-component signs (`+13mo-1d`), or ISO 8601 (`P1Y2M3DT4H5M6S`, `P2W`, `-P1D`). Returns
/// (months, days, nanoseconds).
pub fn duration_from_text(text: &str) -> Result<(i32, i32, i64), String> {
    let text = text.trim();
    let invalid = || format!("invalid duration {text:?} (expected e.g. 1h30m or P1DT2H)");
    let (leading_negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let groups = if body.starts_with(['P', 'p']) {
        iso_duration_groups(&body[1..]).ok_or_else(invalid)?
    } else {
        unit_duration_groups(body).ok_or_else(invalid)?
    };
    let per_group_signs = groups.iter().skip(1).any(|g| g.0.is_some());
    // Months, days and nanoseconds, summed wide so no group can overflow before the range check.
    let mut totals = [0i128; 3];
    for (i, (sign, amount, unit)) in groups.iter().enumerate() {
        let negative = if per_group_signs {
            *sign == Some(true) || (i == 0 && leading_negative)
        } else {
            leading_negative
        };
        let (component, factor): (usize, i128) = match unit.as_str() {
            "y" => (0, 12),
            "mo" => (0, 1),
            "w" => (1, 7),
            "d" => (1, 1),
            "h" => (2, NANOS_PER_HOUR.into()),
            "m" => (2, NANOS_PER_MINUTE.into()),
            "s" => (2, NANOS_PER_SECOND.into()),
            "ms" => (2, 1_000_000),
            "us" | "µs" => (2, 1000),
            "ns" => (2, 1),
            _ => return Err(invalid()),
        };
        let magnitude = i128::from(*amount) * factor;
        let signed = if negative { -magnitude } else { magnitude };
        totals[component] = totals[component].checked_add(signed).ok_or_else(invalid)?;
    }
    let out_of_range = || format!("duration {text:?} is out of range");
    let [months, days, nanos] = totals;
    Ok((
        i32::try_from(months).map_err(|_| out_of_range())?,
        i32::try_from(days).map_err(|_| out_of_range())?,
        i64::try_from(nanos).map_err(|_| out_of_range())?,
    ))
}

/// One `[sign]amount unit` group of a duration: (explicit sign: `Some(true)` for `-`, amount, unit in
/// lowercase).
type DurationGroup = (Option<bool>, u64, String);

/// Splits `1h30m` / `+13mo-1d` into groups.
fn unit_duration_groups(body: &str) -> Option<Vec<DurationGroup>> {
    let mut groups = Vec::new();
    let mut chars = body.chars().peekable();
    while chars.peek().is_some() {
        let sign = match chars.peek() {
            Some('-') => Some(true),
            Some('+') => Some(false),
            _ => None,
        };
        if sign.is_some() && !groups.is_empty() {
            chars.next();
        } else if sign.is_some() {
            return None;
        }
        let mut amount = String::new();
        while let Some(c) = chars.peek().filter(|c| c.is_ascii_digit()) {
            amount.push(*c);
            chars.next();
        }
        let mut unit = String::new();
        while let Some(c) = chars.peek().filter(|c| c.is_alphabetic()) {
            unit.extend(c.to_lowercase());
            chars.next();
        }
        if amount.is_empty() || unit.is_empty() {
            return None;
        }
        groups.push((sign, amount.parse().ok()?, unit));
    }
    (!groups.is_empty()).then_some(groups)
}

/// Splits the part after `P` of an ISO 8601 duration (`1Y2M3DT4H5M6S`, `2W`) into groups.
fn iso_duration_groups(body: &str) -> Option<Vec<DurationGroup>> {
    let mut groups = Vec::new();
    let mut in_time = false;
    let mut amount = String::new();
    for c in body.chars() {
        match c.to_ascii_uppercase() {
            'T' if !in_time && amount.is_empty() => in_time = true,
            d if d.is_ascii_digit() => amount.push(d),
            designator => {
                let unit = match (designator, in_time) {
                    ('Y', false) => "y",
                    ('M', false) => "mo",
                    ('W', false) => "w",
                    ('D', false) => "d",
                    ('H', true) => "h",
                    ('M', true) => "m",
                    ('S', true) => "s",
                    _ => return None,
                };
                if amount.is_empty() {
                    return None;
                }
                groups.push((None, amount.parse().ok()?, unit.to_string()));
                amount.clear();
            }
        }
    }
    (amount.is_empty() && !groups.is_empty()).then_some(groups)
}

/// Reads a blob written as `0x` followed by an even number of hex digits.
pub fn blob_from_text(text: &str) -> Result<Vec<u8>, String> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .filter(|d| d.len() % 2 == 0 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| {
            format!("invalid blob {text:?} (expected 0x followed by hex digit pairs)")
        })?;
    crate::hex::parse(digits).map_err(|e| e.to_string())
}

/// Whether `<empty>` (JSON `{"$empty": true}`) is a value of `ty`: natives other than text, ascii
/// and blob, whose zero-length value is `''` or `0x` instead (as protocol v4 reads them).
pub(crate) fn has_empty_value(ty: &CqlType) -> bool {
    use NativeType as N;
    matches!(ty, CqlType::Native(n) if !matches!(n, N::Text | N::Ascii | N::Blob))
}

/// Reads a native value from its unquoted text (the content of a quoted literal, or a bare token):
/// everything except text/ascii/blob, which need their own lexical forms.
pub fn native_from_text(native: NativeType, text: &str) -> Result<Value, String> {
    use NativeType as N;
    let integer = || integer_from_text(text);
    Ok(match native {
        N::Ascii if !text.is_ascii() => {
            let c = text.chars().find(|c| !c.is_ascii()).unwrap_or_default();
            return Err(format!("non-ASCII character {c:?} in ascii value"));
        }
        N::Ascii | N::Text => Value::Text(text.to_string()),
        N::Blob => Value::Blob(blob_from_text(text)?),
        N::Boolean => Value::Boolean(boolean_from_text(text)?),
        N::TinyInt => Value::TinyInt(bounded(integer()?, "tinyint")?),
        N::SmallInt => Value::SmallInt(bounded(integer()?, "smallint")?),
        N::Int => Value::Int(bounded(integer()?, "int")?),
        N::BigInt => Value::BigInt(bounded(integer()?, "bigint")?),
        N::Counter => Value::BigInt(bounded(integer()?, "counter")?),
        N::Varint => Value::Varint(integer()?),
        N::Float => Value::Float(float_from_text(text)?),
        N::Double => Value::Double(double_from_text(text)?),
        N::Decimal => {
            let (unscaled, scale) = decimal_from_text(text)?;
            Value::Decimal { unscaled, scale }
        }
        N::Uuid | N::TimeUuid => {
            Value::Uuid(uuid::Uuid::parse_str(text).map_err(|_| format!("invalid uuid {text:?}"))?)
        }
        N::Inet => Value::Inet(
            text.parse::<IpAddr>()
                .map_err(|_| format!("invalid inet address {text:?}"))?,
        ),
        N::Timestamp => Value::Timestamp(timestamp_from_text(text)?),
        N::Date => Value::Date(date_from_text(text)?),
        N::Time => Value::Time(time_from_text(text)?),
        N::Duration => {
            let (months, days, nanoseconds) = duration_from_text(text)?;
            Value::Duration {
                months,
                days,
                nanoseconds,
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------------
// Types as seen from a value: what the elements of a composite are.
// ---------------------------------------------------------------------------------------------------

/// The element type of a list, set or vector.
pub(crate) fn element_type(ty: Option<&CqlType>) -> Option<&CqlType> {
    match ty {
        Some(CqlType::List(t) | CqlType::Set(t) | CqlType::Vector(t, _)) => Some(t),
        _ => None,
    }
}

/// The key and value types of a map.
pub(crate) fn entry_types(ty: Option<&CqlType>) -> (Option<&CqlType>, Option<&CqlType>) {
    match ty {
        Some(CqlType::Map(k, v)) => (Some(k), Some(v)),
        _ => (None, None),
    }
}

/// The type of component `index` of a tuple.
pub(crate) fn component_type(ty: Option<&CqlType>, index: usize) -> Option<&CqlType> {
    match ty {
        Some(CqlType::Tuple(components)) => components.get(index),
        _ => None,
    }
}

/// The type of the field `name` of a UDT.
pub(crate) fn field_type<'t>(ty: Option<&'t CqlType>, name: &str) -> Option<&'t CqlType> {
    match ty {
        Some(CqlType::Udt(udt)) => udt.fields.iter().find(|(n, _)| n == name).map(|(_, t)| t),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------------
// Formatting.
// ---------------------------------------------------------------------------------------------------

/// Prints a value as a cqlsh-style CQL literal (see the module documentation for the forms).
///
/// The type decides between list (`[…]`) and set (`{…}`) brackets; everything else follows the value,
/// so a value that does not match its type still prints.
pub fn format_cql(ty: &CqlType, value: &Value) -> String {
    let mut out = String::new();
    write_cql(&mut out, Some(ty), value);
    out
}

/// Quotes text for CQL: `'it''s'`.
fn write_quoted(out: &mut String, text: &str) {
    out.push('\'');
    out.push_str(&text.replace('\'', "''"));
    out.push('\'');
}

/// Writes a quoted form when there is one, else the raw number.
fn write_quoted_or_raw(out: &mut String, text: Option<String>, raw: impl std::fmt::Display) {
    match text {
        Some(t) => write_quoted(out, &t),
        None => {
            let _ = write!(out, "{raw}");
        }
    }
}

/// Writes a UDT field name bare when it is a lowercase identifier, else `"quoted"`.
pub(crate) fn write_field_name(out: &mut String, name: &str) {
    let bare = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if bare {
        out.push_str(name);
    } else {
        out.push('"');
        out.push_str(&name.replace('"', "\"\""));
        out.push('"');
    }
}

/// Writes `items` separated by `, ` between `open` and `close`.
fn write_sequence<T>(
    out: &mut String,
    open: char,
    close: char,
    items: &[T],
    mut write_item: impl FnMut(&mut String, usize, &T),
) {
    out.push(open);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_item(out, i, item);
    }
    out.push(close);
}

fn write_cql(out: &mut String, ty: Option<&CqlType>, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Empty => out.push_str("<empty>"),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::TinyInt(n) => {
            let _ = write!(out, "{n}");
        }
        Value::SmallInt(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::BigInt(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Varint(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(x) => out.push_str(&float_text(*x)),
        Value::Double(x) => out.push_str(&double_text(*x)),
        Value::Decimal { unscaled, scale } => out.push_str(&decimal_text(unscaled, *scale)),
        Value::Text(s) => write_quoted(out, s),
        Value::Blob(b) => {
            out.push_str("0x");
            out.push_str(&crate::hex::encode(b));
        }
        Value::Uuid(u) => {
            let _ = write!(out, "{}", u.hyphenated());
        }
        Value::Inet(ip) => write_quoted(out, &ip.to_string()),
        Value::Timestamp(ms) => write_quoted_or_raw(out, timestamp_text(*ms), ms),
        Value::Date(d) => write_quoted_or_raw(out, date_text(*d), d),
        Value::Time(n) => write_quoted_or_raw(out, time_text(*n), n),
        Value::Duration {
            months,
            days,
            nanoseconds,
        } => out.push_str(&duration_text(*months, *days, *nanoseconds)),
        Value::List(items) => {
            let (open, close) = match ty {
                Some(CqlType::Set(_)) => ('{', '}'),
                _ => ('[', ']'),
            };
            let element = element_type(ty);
            write_sequence(out, open, close, items, |out, _, v| {
                write_cql(out, element, v)
            });
        }
        Value::Map(entries) => {
            let (key_type, value_type) = entry_types(ty);
            write_sequence(out, '{', '}', entries, |out, _, (k, v)| {
                write_cql(out, key_type, k);
                out.push_str(": ");
                write_cql(out, value_type, v);
            });
        }
        Value::Tuple(components) => {
            write_sequence(out, '(', ')', components, |out, i, v| {
                write_cql(out, component_type(ty, i), v)
            });
        }
        Value::Udt(fields) => {
            write_sequence(out, '{', '}', fields, |out, _, (name, v)| {
                write_field_name(out, name);
                out.push_str(": ");
                write_cql(out, field_type(ty, name), v);
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Parsing.
// ---------------------------------------------------------------------------------------------------

/// Reads a CQL literal of the given type: what [`format_cql`] prints, plus common cqlsh input forms
/// (unquoted timestamps, dates and times, ISO 8601 `T` timestamps and `P…` durations, `TRUE`, `+1`,
/// `1e10`, `$$text$$`, sets in `[…]`). A value the binary codec cannot encode (a top-level null, a
/// duration with mixed signs, a null vector element) is refused with the codec's message. Errors name
/// the character position and the path in the value.
pub fn parse_cql(ty: &CqlType, text: &str) -> Result<Value, LiteralError> {
    // A blob literal may be hundreds of megabytes: read it straight, without the parser's copy of
    // the text (four bytes per character); a malformed one goes to the parser for its error.
    if *ty == CqlType::Native(NativeType::Blob) {
        let literal = text.trim();
        if literal.starts_with("0x") || literal.starts_with("0X") {
            if let Ok(bytes) = blob_from_text(literal) {
                return Ok(Value::Blob(bytes));
            }
        }
    }
    let mut parser = Parser {
        chars: text.chars().collect(),
        at: 0,
        path: Vec::new(),
    };
    let value = parser.value(ty, false, 0)?;
    parser.skip_whitespace();
    if parser.at < parser.chars.len() {
        return Err(parser.error_at(parser.at, "unexpected text after the value"));
    }
    encodable(ty, value)
}

/// `value` when the binary codec can encode it as `ty`, else its refusal (a top-level null, a
/// duration with mixed signs, a null or empty vector element, ...): the text forms leave those rules
/// to the one place that owns them, with the same message. A map key or set element given twice is
/// refused too (the rule of both text forms, see `unique.rs`).
pub(crate) fn encodable(ty: &CqlType, value: Value) -> Result<Value, LiteralError> {
    match super::encode(ty, &value) {
        Ok(_) => super::unique::check_no_repeats(ty, &value).map(|()| value),
        Err(e) => Err(LiteralError {
            message: e.message,
            position: None,
            path: e.path,
        }),
    }
}

/// Recursive-descent state: the text, the cursor and the path to the value being read.
struct Parser {
    chars: Vec<char>,
    at: usize,
    path: Vec<String>,
}

impl Parser {
    fn error_at(&self, position: usize, message: impl Into<String>) -> LiteralError {
        LiteralError {
            message: message.into(),
            position: Some(position),
            path: self.path.join(" / "),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) -> usize {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
        self.at
    }

    /// Consumes `c` after optional whitespace, or fails naming `what` was expected.
    fn expect(&mut self, c: char, what: &str) -> Result<(), LiteralError> {
        let at = self.skip_whitespace();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error_at(at, format!("expected {what}")))
        }
    }

    /// True when the text at the cursor is `word` (any case) not followed by an identifier character.
    fn at_word(&self, word: &str) -> bool {
        let len = word.chars().count();
        let matches = self
            .chars
            .get(self.at..self.at + len)
            .is_some_and(|s| s.iter().collect::<String>().eq_ignore_ascii_case(word));
        matches
            && !self
                .chars
                .get(self.at + len)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    }

    /// After an element: `true` for `,` (more follow), `false` for the closing bracket.
    fn comma_or_close(&mut self, close: char) -> Result<bool, LiteralError> {
        let at = self.skip_whitespace();
        match self.peek() {
            Some(',') => {
                self.at += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(self.error_at(at, format!("expected ',' or '{close}'"))),
        }
    }

    /// Reads `open item, item, … close`, calling `item` for each with its index.
    fn sequence(
        &mut self,
        open: &[char],
        close: char,
        what: &str,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), LiteralError>,
    ) -> Result<(), LiteralError> {
        let at = self.skip_whitespace();
        let close = match self.peek() {
            Some('[') if open.contains(&'[') => ']',
            Some(c) if open.contains(&c) => close,
            _ => return Err(self.error_at(at, format!("expected {what}"))),
        };
        self.at += 1;
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            item(self, index)?;
            index += 1;
            if !self.comma_or_close(close)? {
                return Ok(());
            }
        }
    }

    /// Reads one value of type `ty`; `in_map_key` makes a bare token stop at `:`.
    fn value(
        &mut self,
        ty: &CqlType,
        in_map_key: bool,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let start = self.skip_whitespace();
        if depth > MAX_LITERAL_DEPTH {
            return Err(self.error_at(
                start,
                format!("nested deeper than {MAX_LITERAL_DEPTH} levels"),
            ));
        }
        if self.at_word("null") {
            self.at += 4;
            return Ok(Value::Null);
        }
        if self.chars.get(self.at..self.at + 7) == Some(&['<', 'e', 'm', 'p', 't', 'y', '>']) {
            if !has_empty_value(ty) {
                return Err(self.error_at(start, format!("a {ty} value cannot be empty")));
            }
            self.at += 7;
            return Ok(Value::Empty);
        }
        match ty {
            CqlType::Native(native) => self.native(*native, in_map_key),
            CqlType::List(element) => {
                self.elements(element, &['['], ']', "'[' to start a list", depth)
            }
            CqlType::Set(element) => {
                self.elements(element, &['{', '['], '}', "'{' to start a set", depth)
            }
            CqlType::Vector(element, dimension) => {
                let value = self.elements(element, &['['], ']', "'[' to start a vector", depth)?;
                match &value {
                    Value::List(items) if items.len() != *dimension => Err(self.error_at(
                        start,
                        format!("{ty} needs {dimension} elements, found {}", items.len()),
                    )),
                    _ => Ok(value),
                }
            }
            CqlType::Map(key_type, value_type) => {
                let mut entries = Vec::new();
                self.sequence(&['{'], '}', "'{' to start a map", |p, i| {
                    p.path.push(format!("map key #{i}"));
                    let key = p.value(key_type, true, depth + 1)?;
                    p.path.pop();
                    p.expect(':', "':' after a map key")?;
                    p.path.push(format!("map value #{i}"));
                    let value = p.value(value_type, false, depth + 1)?;
                    p.path.pop();
                    entries.push((key, value));
                    Ok(())
                })?;
                Ok(Value::Map(entries))
            }
            CqlType::Tuple(component_types) => {
                let mut components = Vec::new();
                self.sequence(&['('], ')', "'(' to start a tuple", |p, i| {
                    let at = p.skip_whitespace();
                    let component_type = component_types.get(i).ok_or_else(|| {
                        p.error_at(
                            at,
                            format!("{ty} has only {} components", component_types.len()),
                        )
                    })?;
                    p.path.push(format!("component {i}"));
                    components.push(p.value(component_type, false, depth + 1)?);
                    p.path.pop();
                    Ok(())
                })?;
                Ok(Value::Tuple(components))
            }
            CqlType::Udt(udt) => {
                let mut given: Vec<Option<Value>> = vec![None; udt.fields.len()];
                self.sequence(
                    &['{'],
                    '}',
                    "'{' to start a user-defined type value",
                    |p, _| {
                        let at = p.skip_whitespace();
                        let name = p.identifier()?;
                        let index =
                            udt.fields
                                .iter()
                                .position(|(n, _)| *n == name)
                                .ok_or_else(|| {
                                    p.error_at(at, format!("{} has no field {name:?}", udt.name))
                                })?;
                        p.expect(':', "':' after a field name")?;
                        p.path.push(format!("field {name}"));
                        let value = p.value(&udt.fields[index].1, false, depth + 1)?;
                        p.path.pop();
                        match given.get_mut(index) {
                            Some(slot @ None) => *slot = Some(value),
                            _ => return Err(p.error_at(at, format!("field {name:?} given twice"))),
                        }
                        Ok(())
                    },
                )?;
                let present = given.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
                Ok(Value::Udt(
                    udt.fields
                        .iter()
                        .zip(given)
                        .take(present)
                        .map(|((name, _), v)| (name.clone(), v.unwrap_or(Value::Null)))
                        .collect(),
                ))
            }
        }
    }

    /// Reads the elements of a list, set or vector.
    fn elements(
        &mut self,
        element: &CqlType,
        open: &[char],
        close: char,
        what: &str,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let mut items = Vec::new();
        self.sequence(open, close, what, |p, i| {
            p.path.push(format!("element {i}"));
            items.push(p.value(element, false, depth + 1)?);
            p.path.pop();
            Ok(())
        })?;
        Ok(Value::List(items))
    }

    /// A UDT field name: a bare identifier (lowercased) or a `"quoted"` one (kept as is).
    fn identifier(&mut self) -> Result<String, LiteralError> {
        let start = self.skip_whitespace();
        if self.peek() == Some('"') {
            return self.quoted('"');
        }
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
            name.extend(c.to_lowercase());
            self.at += 1;
        }
        if name.is_empty() {
            return Err(self.error_at(start, "expected a field name"));
        }
        Ok(name)
    }

    /// Reads a string quoted with `quote`, where a doubled quote stands for one.
    fn quoted(&mut self, quote: char) -> Result<String, LiteralError> {
        let start = self.at;
        self.at += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error_at(start, "unterminated quoted string")),
                Some(c) if c == quote => {
                    self.at += 1;
                    if self.peek() == Some(quote) {
                        text.push(quote);
                        self.at += 1;
                    } else {
                        return Ok(text);
                    }
                }
                Some(c) => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// Reads `$$…$$`.
    fn dollar_quoted(&mut self) -> Result<String, LiteralError> {
        let start = self.at;
        self.at += 2;
        let mut text = String::new();
        loop {
            match (self.peek(), self.chars.get(self.at + 1)) {
                (Some('$'), Some('$')) => {
                    self.at += 2;
                    return Ok(text);
                }
                (Some(c), _) => {
                    text.push(c);
                    self.at += 1;
                }
                (None, _) => return Err(self.error_at(start, "unterminated $$ string")),
            }
        }
    }

    /// Reads a bare token: up to `,` or a closing bracket (or `:` in a map key, where a timestamp,
    /// time or inet key stops only at `:` followed by whitespace), trimmed.
    fn bare_token(&mut self, native: NativeType, in_map_key: bool) -> String {
        let colons_inside = matches!(
            native,
            NativeType::Timestamp | NativeType::Time | NativeType::Inet
        );
        let mut token = String::new();
        while let Some(c) = self.peek() {
            let ends_key = in_map_key
                && c == ':'
                && (!colons_inside
                    || self
                        .chars
                        .get(self.at + 1)
                        .is_none_or(|n| n.is_whitespace()));
            let nan_payload = c == '(' && token.eq_ignore_ascii_case("nan");
            if nan_payload {
                while let Some(c) = self.peek() {
                    token.push(c);
                    self.at += 1;
                    if c == ')' {
                        break;
                    }
                }
                continue;
            }
            if matches!(c, ',' | ']' | '}' | ')' | '[' | '{' | '(') || ends_key {
                break;
            }
            token.push(c);
            self.at += 1;
        }
        token.trim_end().to_string()
    }

    /// Reads a native value: a quoted string, `$$…$$` or a bare token, interpreted by type.
    fn native(&mut self, native: NativeType, in_map_key: bool) -> Result<Value, LiteralError> {
        let start = self.at;
        let (text, quoted) = match (self.peek(), self.chars.get(self.at + 1)) {
            (Some('\''), _) => (self.quoted('\'')?, true),
            (Some('$'), Some('$')) => (self.dollar_quoted()?, true),
            _ => (self.bare_token(native, in_map_key), false),
        };
        let textual = matches!(native, NativeType::Text | NativeType::Ascii);
        if textual && !quoted {
            return Err(self.error_at(start, format!("expected a quoted string for {native}")));
        }
        if native == NativeType::Blob && quoted {
            return Err(self.error_at(start, "expected a blob as 0x… (not quoted)"));
        }
        if text.is_empty() && !quoted {
            return Err(self.error_at(start, format!("expected a {native} value")));
        }
        native_from_text(native, &text).map_err(|message| self.error_at(start, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(n: NativeType) -> CqlType {
        CqlType::Native(n)
    }

    fn round_trip(ty: &CqlType, value: Value) {
        let text = format_cql(ty, &value);
        assert_eq!(parse_cql(ty, &text), Ok(value), "{text}");
    }

    #[test]
    fn civil_conversions_agree_at_known_points() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        for days in [-719_162, -1, 0, 59, 60, 365, 11_016, 19_723, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn timestamps_print_quoted_and_read_back_in_common_forms() {
        let ty = native(NativeType::Timestamp);
        let value = Value::Timestamp(1_704_110_400_123);
        assert_eq!(format_cql(&ty, &value), "'2024-01-01 12:00:00.123Z'");
        for input in [
            "'2024-01-01 12:00:00.123Z'",
            "2024-01-01 12:00:00.123Z",
            "'2024-01-01T12:00:00.123Z'",
            "'2024-01-01 14:00:00.123+02:00'",
            "'2024-01-01 14:00:00.123+0200'",
            "1704110400123",
        ] {
            assert_eq!(parse_cql(&ty, input), Ok(value.clone()), "{input}");
        }
        assert_eq!(
            parse_cql(&ty, "'2024-01-01'"),
            Ok(Value::Timestamp(1_704_067_200_000))
        );
        assert_eq!(
            format_cql(&ty, &Value::Timestamp(i64::MIN)),
            i64::MIN.to_string()
        );
        round_trip(&ty, Value::Timestamp(i64::MAX));
        round_trip(&ty, Value::Timestamp(-62_135_596_800_000));
        round_trip(&ty, Value::Timestamp(-1));
    }

    #[test]
    fn dates_times_and_durations() {
        let date = native(NativeType::Date);
        assert_eq!(format_cql(&date, &Value::Date(1 << 31)), "'1970-01-01'");
        assert_eq!(format_cql(&date, &Value::Date(0)), "0");
        round_trip(&date, Value::Date(0));
        round_trip(&date, Value::Date(u32::MAX));
        assert_eq!(
            parse_cql(&date, "1970-01-02"),
            Ok(Value::Date((1 << 31) + 1))
        );
        let time = native(NativeType::Time);
        assert_eq!(
            format_cql(&time, &Value::Time(45_296_123_456_789)),
            "'12:34:56.123456789'"
        );
        assert_eq!(
            parse_cql(&time, "12:34:56.5"),
            Ok(Value::Time(45_296_500_000_000))
        );
        let duration = native(NativeType::Duration);
        let d = |months, days, nanoseconds| Value::Duration {
            months,
            days,
            nanoseconds,
        };
        assert_eq!(format_cql(&duration, &d(0, 0, 5_400_000_000_000)), "1h30m");
        assert_eq!(format_cql(&duration, &d(-14, -3, -1)), "-1y2mo3d1ns");
        assert_eq!(format_cql(&duration, &d(13, -1, 0)), "+13mo-1d");
        assert_eq!(
            parse_cql(&duration, "P1DT2H"),
            Ok(d(0, 1, 7_200_000_000_000))
        );
        assert_eq!(parse_cql(&duration, "2w"), Ok(d(0, 14, 0)));
        for v in [
            d(0, 0, 0),
            d(i32::MAX, i32::MAX, i64::MAX),
            d(i32::MIN, i32::MIN, i64::MIN),
            d(0, 0, 1),
        ] {
            round_trip(&duration, v);
        }
        // Printable, but refused with the codec's message, as `encode` refuses it.
        let message = parse_cql(&duration, "-1mo+1d-1ns").unwrap_err().to_string();
        assert_eq!(
            message,
            crate::value::encode(&duration, &d(-1, 1, -1))
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn numbers() {
        let int = native(NativeType::Int);
        assert_eq!(parse_cql(&int, "+12"), Ok(Value::Int(12)));
        assert_eq!(parse_cql(&int, "1e3"), Ok(Value::Int(1000)));
        assert!(parse_cql(&int, "1.5").is_err());
        assert!(parse_cql(&int, "2147483648").is_err());
        assert!(parse_cql(&int, "1e999999999999").is_err());
        let double = native(NativeType::Double);
        let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
        assert_eq!(
            format_cql(&double, &Value::Double(negative_nan)),
            "NaN(0xfff8000000000000)"
        );
        for x in [
            negative_nan,
            0.1,
            -0.0,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            round_trip(&double, Value::Double(x));
        }
        let float = native(NativeType::Float);
        assert_eq!(format_cql(&float, &Value::Float(0.1)), "0.1");
        assert!(parse_cql(&float, "1e39").is_err());
        assert!(parse_cql(&float, "NaN(0x3f800000)").is_err());
        round_trip(&float, Value::Float(f32::from_bits(0x7f80_0001)));
        let decimal = native(NativeType::Decimal);
        for (unscaled, scale, text) in [
            (150, 2, "1.50"),
            (1, -3, "1E+3"),
            (-12, 9, "-1.2E-8"),
            (0, 0, "0"),
            (0, 10, "0E-10"),
            (123, 8, "0.00000123"),
        ] {
            let value = Value::Decimal {
                unscaled: BigInt::from(unscaled),
                scale,
            };
            assert_eq!(format_cql(&decimal, &value), text);
            round_trip(&decimal, value);
        }
    }

    #[test]
    fn composites() {
        let registry_free_udt = CqlType::Udt(crate::types::UdtType {
            keyspace: None,
            name: "addr".into(),
            fields: vec![
                ("street".into(), native(NativeType::Text)),
                ("Zip".into(), native(NativeType::Int)),
            ],
        });
        let value = Value::Udt(vec![
            ("street".into(), Value::Text("it's".into())),
            ("Zip".into(), Value::Null),
        ]);
        assert_eq!(
            format_cql(&registry_free_udt, &value),
            "{street: 'it''s', \"Zip\": null}"
        );
        round_trip(&registry_free_udt, value);
        round_trip(
            &registry_free_udt,
            Value::Udt(vec![("street".into(), Value::Null)]),
        );
        let map = CqlType::Map(
            Box::new(native(NativeType::Text)),
            Box::new(CqlType::Set(Box::new(native(NativeType::Int)))),
        );
        let value = Value::Map(vec![(
            Value::Text("a".into()),
            Value::List(vec![Value::Int(1), Value::Null]),
        )]);
        assert_eq!(format_cql(&map, &value), "{'a': {1, null}}");
        round_trip(&map, value);
        let tuple = CqlType::Tuple(vec![native(NativeType::Int), native(NativeType::Blob)]);
        round_trip(
            &tuple,
            Value::Tuple(vec![Value::Int(1), Value::Blob(vec![0xca, 0xfe])]),
        );
        round_trip(&tuple, Value::Tuple(vec![Value::Int(1)]));
        let int_keys = CqlType::Map(
            Box::new(native(NativeType::Int)),
            Box::new(native(NativeType::Timestamp)),
        );
        assert_eq!(
            parse_cql(&int_keys, "{1:2024-01-01 00:00:00}"),
            Ok(Value::Map(vec![(
                Value::Int(1),
                Value::Timestamp(1_704_067_200_000)
            )]))
        );
    }

    #[test]
    fn errors_name_position_and_path() {
        let ty = CqlType::List(Box::new(CqlType::Map(
            Box::new(native(NativeType::Int)),
            Box::new(native(NativeType::Int)),
        )));
        let error = parse_cql(&ty, "[{1: 2}, {3: x}]").unwrap_err();
        assert_eq!(error.position, Some(13));
        assert_eq!(error.path, "element 1 / map value #0");
        assert!(error.to_string().contains("at character 13"), "{error}");
        let vector = CqlType::Vector(Box::new(native(NativeType::Float)), 2);
        assert!(parse_cql(&vector, "[1.0]").is_err());
        for bad in ["", "[", "[1,", "'", "[1 2]", "[1]]", "$$", "<empty>"] {
            assert!(parse_cql(&ty, bad).is_err(), "{bad}");
        }
    }
}
