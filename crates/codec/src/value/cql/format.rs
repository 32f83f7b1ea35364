//! CQL literals printed from values.

use super::calendar::{date_text, duration_text, time_text, timestamp_text};
use super::scalar::{decimal_text, double_text, float_text};
use super::{component_type, element_type, entry_types, field_type};
use crate::types::{CqlType, Identifier};
use crate::value::Value;
use std::fmt::Write as _;

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

/// Writes `value` (of `ty`, when known) as a CQL literal.
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
                let _ = write!(out, "{}: ", Identifier(name));
                write_cql(out, field_type(ty, name), v);
            });
        }
    }
}
