//! The text forms of timestamps, dates, times and durations, shared by CQL literals and JSON.

use super::{LiteralErrorKind, LiteralForm};
use crate::types::NativeType;
use crate::value::time_of_day;
use std::fmt::Write as _;

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_HOUR: i64 = 3_600_000_000_000;
const NANOS_PER_MINUTE: i64 = 60_000_000_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
/// The wire value of the date 1970-01-01.
const EPOCH_DATE: i64 = 1 << 31;

/// Converts a proleptic Gregorian date to days since 1970-01-01 (H. Hinnant's algorithm).
pub(super) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
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
pub(crate) fn timestamp_text(millis: i64) -> Option<String> {
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
pub(crate) fn date_text(days: u32) -> Option<String> {
    civil_text(i64::from(days) - EPOCH_DATE)
}

/// A time of day (nanoseconds since midnight) as `12:34:56.123456789`, or `None` outside a day.
pub(crate) fn time_text(nanos: i64) -> Option<String> {
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
pub(crate) fn duration_text(months: i32, days: i32, nanoseconds: i64) -> String {
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
pub(crate) fn timestamp_from_text(text: &str) -> Result<i64, LiteralErrorKind> {
    let text = text.trim();
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    let invalid = || invalid(LiteralForm::Timestamp, text);
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
        return Err(LiteralErrorKind::SubMillisecond {
            text: text.to_string(),
        });
    }
    days.checked_mul(MILLIS_PER_DAY)
        .and_then(|ms| ms.checked_add(nanos / 1_000_000))
        .and_then(|ms| ms.checked_sub(offset_minutes * 60_000))
        .ok_or_else(|| out_of_range(NativeType::Timestamp, text))
}

/// Reads a date: `YYYY-MM-DD`, or an unsigned integer taken as the raw wire day count.
pub(crate) fn date_from_text(text: &str) -> Result<u32, LiteralErrorKind> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u32>()
            .map_err(|_| LiteralErrorKind::RawDateOutOfRange {
                text: text.to_string(),
            });
    }
    let mut fields = Fields {
        text: text.as_bytes(),
        at: 0,
    };
    let days = fields
        .date()
        .filter(|_| fields.done())
        .ok_or_else(|| invalid(LiteralForm::Date, text))?;
    u32::try_from(days + EPOCH_DATE).map_err(|_| out_of_range(NativeType::Date, text))
}

/// Reads a time of day: `HH:MM[:SS[.fffffffff]]`, or an integer count of nanoseconds since midnight.
pub(crate) fn time_from_text(text: &str) -> Result<i64, LiteralErrorKind> {
    let text = text.trim();
    if let Ok(nanos) = text.parse::<i64>() {
        return Ok(time_of_day(nanos)?);
    }
    let mut fields = Fields {
        text: text.as_bytes(),
        at: 0,
    };
    fields
        .time_of_day()
        .filter(|_| fields.done())
        .ok_or_else(|| invalid(LiteralForm::Time, text))
}

/// Reads a duration: Cassandra units (`1y2mo3w4d5h6m7s8ms9us10ns`, `-` prefix, case-insensitive, `µs`
/// too), per-component signs (`+13mo-1d`), or ISO 8601 (`P1Y2M3DT4H5M6S`, `P2W`, `-P1D`). Returns
/// (months, days, nanoseconds).
pub(crate) fn duration_from_text(text: &str) -> Result<(i32, i32, i64), LiteralErrorKind> {
    let text = text.trim();
    let invalid = || invalid(LiteralForm::Duration, text);
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
    let out_of_range = || out_of_range(NativeType::Duration, text);
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

/// Text that is not a literal of `form`.
pub(crate) fn invalid(form: LiteralForm, text: &str) -> LiteralErrorKind {
    LiteralErrorKind::Invalid {
        form,
        text: text.to_string(),
    }
}

/// A well-formed literal outside the range of `native`.
fn out_of_range(native: NativeType, text: &str) -> LiteralErrorKind {
    LiteralErrorKind::OutOfRange {
        native,
        text: text.to_string(),
    }
}
