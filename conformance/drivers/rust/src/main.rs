//! The `scylla` crate's offline codec (1.9.0: `DeserializeValue` / `SerializeValue` of `CqlValue`, from
//! scylla-cql-core, which `scylla` re-exports) on the conformance corpus: reads conformance/cases.jsonl on
//! standard input and writes, per case, the raw line that conformance/drivers/judge.py takes:
//! "unsupported", or "decode_error", or "decoded" and "reencoded" / "reencode_error", and for a case with
//! a value "value_encoded" / "value_error": the driver's bytes for the `CqlValue` built from its JSON form.

use std::borrow::Cow;
use std::io::{self, BufRead, BufWriter, Write};
use std::sync::Arc;

use scylla_cql_core::deserialize::value::DeserializeValue;
use scylla_cql_core::deserialize::FrameSlice;
use scylla_cql_core::frame::response::result::{
    CollectionType, ColumnType, NativeType, UserDefinedType,
};
use scylla_cql_core::serialize::value::SerializeValue;
use scylla_cql_core::serialize::writers::CellWriter;
use scylla_cql_core::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};
use serde_json::{json, Value};

/// The driver's column type for a `type_tree`.
fn column_type(tree: &Value) -> Result<ColumnType<'static>, String> {
    if let Some(name) = tree.as_str() {
        let native = match name {
            "ascii" => NativeType::Ascii,
            "bigint" => NativeType::BigInt,
            "blob" => NativeType::Blob,
            "boolean" => NativeType::Boolean,
            "counter" => NativeType::Counter,
            "date" => NativeType::Date,
            "decimal" => NativeType::Decimal,
            "double" => NativeType::Double,
            "duration" => NativeType::Duration,
            "float" => NativeType::Float,
            "inet" => NativeType::Inet,
            "int" => NativeType::Int,
            "smallint" => NativeType::SmallInt,
            "text" | "varchar" => NativeType::Text,
            "time" => NativeType::Time,
            "timestamp" => NativeType::Timestamp,
            "timeuuid" => NativeType::Timeuuid,
            "tinyint" => NativeType::TinyInt,
            "uuid" => NativeType::Uuid,
            "varint" => NativeType::Varint,
            other => return Err(format!("unknown type {other}")),
        };
        return Ok(ColumnType::Native(native));
    }
    let parts = tree.as_array().ok_or("bad type tree")?;
    let child = |i: usize| column_type(&parts[i]).map(Box::new);
    let collection = |typ| ColumnType::Collection { frozen: true, typ };
    Ok(match parts[0].as_str().ok_or("bad type tree")? {
        "list" => collection(CollectionType::List(child(1)?)),
        "set" => collection(CollectionType::Set(child(1)?)),
        "map" => collection(CollectionType::Map(child(1)?, child(2)?)),
        "tuple" => ColumnType::Tuple(
            parts[1]
                .as_array()
                .ok_or("bad tuple")?
                .iter()
                .map(column_type)
                .collect::<Result<_, _>>()?,
        ),
        "udt" => {
            let mut field_types = Vec::new();
            for field in parts[2].as_array().ok_or("bad udt")? {
                let name = field[0].as_str().ok_or("bad field")?.to_string();
                field_types.push((Cow::Owned(name), column_type(&field[1])?));
            }
            ColumnType::UserDefinedType {
                frozen: true,
                definition: Arc::new(UserDefinedType {
                    name: Cow::Owned(parts[1].as_str().ok_or("bad udt")?.to_string()),
                    keyspace: Cow::Borrowed("conformance"),
                    field_types,
                }),
            }
        }
        "vector" => ColumnType::Vector {
            typ: child(1)?,
            dimensions: u16::try_from(parts[2].as_u64().ok_or("bad dimension")?)
                .map_err(|e| e.to_string())?,
        },
        other => return Err(format!("unknown type {other}")),
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn number<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("bad number {text}"))
}

/// "YYYY-MM-DD" as days since the epoch.
fn date_days(text: &str) -> Result<i64, String> {
    let parts: Vec<&str> = text.split('-').collect();
    match parts.as_slice() {
        [y, m, d] => Ok(days_from_civil(number(y)?, number(m)?, number(d)?)),
        _ => Err(format!("bad date {text}")),
    }
}

/// "HH:MM:SS.fraction" as nanoseconds.
fn time_nanos(text: &str) -> Result<i64, String> {
    let (clock, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let parts: Vec<i64> = clock.split(':').map(number).collect::<Result<_, _>>()?;
    let [h, m, s] = parts[..] else {
        return Err(format!("bad time {text}"));
    };
    let fraction: i64 = number(&format!("{fraction:0<9}")[..9])?;
    Ok(((h * 60 + m) * 60 + s) * 1_000_000_000 + fraction)
}

/// cqlwire's duration text (`1y2mo3d4h5m6s7ms8us9ns`, `-` before it when negative).
fn duration(text: &str) -> Result<CqlDuration, String> {
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text),
    };
    let (mut months, mut days, mut nanos) = (0i64, 0i64, 0i128);
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .ok_or("bad duration")?;
        let amount: i128 = number(&rest[..digits])?;
        let unit_end = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |i| digits + i);
        match &rest[digits..unit_end] {
            "y" => months += amount as i64 * 12,
            "mo" => months += amount as i64,
            "w" => days += amount as i64 * 7,
            "d" => days += amount as i64,
            "h" => nanos += amount * 3_600_000_000_000,
            "m" => nanos += amount * 60_000_000_000,
            "s" => nanos += amount * 1_000_000_000,
            "ms" => nanos += amount * 1_000_000,
            "us" => nanos += amount * 1000,
            "ns" => nanos += amount,
            unit => return Err(format!("bad duration unit {unit}")),
        }
        rest = &rest[unit_end..];
    }
    let narrow = |x: i128| i64::try_from(x * sign as i128).map_err(|e| e.to_string());
    Ok(CqlDuration {
        months: i32::try_from(narrow(months as i128)?).map_err(|e| e.to_string())?,
        days: i32::try_from(narrow(days as i128)?).map_err(|e| e.to_string())?,
        nanoseconds: narrow(nanos)?,
    })
}

fn float_bits(text: &str) -> Result<u64, String> {
    let hex = text
        .strip_prefix("NaN(0x")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or("bad float")?;
    u64::from_str_radix(hex, 16).map_err(|e| e.to_string())
}

/// The driver's value for a corpus JSON value (None for null).
fn cql_value(tree: &Value, value: &Value) -> Result<Option<CqlValue>, String> {
    if value.is_null() {
        return Ok(None);
    }
    if value.get("$empty").is_some() {
        return Ok(Some(CqlValue::Empty));
    }
    let text = || {
        value
            .as_str()
            .ok_or_else(|| format!("expected text, got {value}"))
    };
    let int = || {
        value
            .as_i64()
            .ok_or_else(|| format!("expected an integer, got {value}"))
    };
    if let Some(name) = tree.as_str() {
        let v = match name {
            "ascii" => CqlValue::Ascii(text()?.to_string()),
            "text" | "varchar" => CqlValue::Text(text()?.to_string()),
            "boolean" => CqlValue::Boolean(value.as_bool().ok_or("expected a boolean")?),
            "blob" => CqlValue::Blob(unhex(text()?.trim_start_matches("0x"))),
            "tinyint" => CqlValue::TinyInt(i8::try_from(int()?).map_err(|e| e.to_string())?),
            "smallint" => CqlValue::SmallInt(i16::try_from(int()?).map_err(|e| e.to_string())?),
            "int" => CqlValue::Int(i32::try_from(int()?).map_err(|e| e.to_string())?),
            "bigint" => CqlValue::BigInt(int()?),
            "counter" => CqlValue::Counter(Counter(int()?)),
            "varint" => {
                let n: num_bigint::BigInt = number(text()?)?;
                CqlValue::Varint(CqlVarint::from_signed_bytes_be(n.to_signed_bytes_be()))
            }
            "decimal" => {
                let t = text()?.to_ascii_lowercase();
                let (mantissa, exponent) = t.split_once('e').unwrap_or((&t, "0"));
                let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
                let n: num_bigint::BigInt = number(&format!("{whole}{fraction}"))?;
                let scale = fraction.len() as i64 - number::<i64>(exponent)?;
                CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
                    n.to_signed_bytes_be(),
                    i32::try_from(scale).map_err(|e| e.to_string())?,
                ))
            }
            "float" => CqlValue::Float(match value {
                Value::String(s) if s.starts_with("NaN(") => f32::from_bits(float_bits(s)? as u32),
                Value::String(s) => number(&s.replace("Infinity", "inf"))?,
                _ => value.as_f64().ok_or("expected a number")? as f32,
            }),
            "double" => CqlValue::Double(match value {
                Value::String(s) if s.starts_with("NaN(") => f64::from_bits(float_bits(s)?),
                Value::String(s) => number(&s.replace("Infinity", "inf"))?,
                _ => value.as_f64().ok_or("expected a number")?,
            }),
            "uuid" => CqlValue::Uuid(number(text()?)?),
            "timeuuid" => CqlValue::Timeuuid(CqlTimeuuid::from(number::<uuid::Uuid>(text()?)?)),
            "inet" => CqlValue::Inet(number(text()?)?),
            "timestamp" => CqlValue::Timestamp(CqlTimestamp(match value.as_i64() {
                Some(millis) => millis,
                None => {
                    let t = text()?.trim_end_matches('Z');
                    let (day, clock) = t.split_once(' ').ok_or("bad timestamp")?;
                    date_days(day)? * 86_400_000 + time_nanos(clock)? / 1_000_000
                }
            })),
            "date" => CqlValue::Date(CqlDate(match value.as_i64() {
                Some(raw) => u32::try_from(raw).map_err(|e| e.to_string())?,
                None => {
                    u32::try_from(date_days(text()?)? + (1 << 31)).map_err(|e| e.to_string())?
                }
            })),
            "time" => CqlValue::Time(CqlTime(time_nanos(text()?)?)),
            "duration" => CqlValue::Duration(duration(text()?)?),
            other => return Err(format!("unknown type {other}")),
        };
        return Ok(Some(v));
    }
    let parts = tree.as_array().ok_or("bad type tree")?;
    let items = || {
        value
            .as_array()
            .ok_or_else(|| format!("expected an array, got {value}"))
    };
    let element = |x: &Value| cql_value(&parts[1], x)?.ok_or_else(|| "a null element".to_string());
    let v = match parts[0].as_str().ok_or("bad type tree")? {
        "list" => CqlValue::List(items()?.iter().map(element).collect::<Result<_, _>>()?),
        "set" => CqlValue::Set(items()?.iter().map(element).collect::<Result<_, _>>()?),
        "vector" => CqlValue::Vector(items()?.iter().map(element).collect::<Result<_, _>>()?),
        "map" => CqlValue::Map(
            items()?
                .iter()
                .map(|pair| {
                    let key = cql_value(&parts[1], &pair[0])?.ok_or("a null key")?;
                    let value = cql_value(&parts[2], &pair[1])?.ok_or("a null value")?;
                    Ok::<_, String>((key, value))
                })
                .collect::<Result<_, _>>()?,
        ),
        "tuple" => CqlValue::Tuple(
            parts[1]
                .as_array()
                .ok_or("bad tuple")?
                .iter()
                .zip(items()?)
                .map(|(t, x)| cql_value(t, x))
                .collect::<Result<_, _>>()?,
        ),
        "udt" => {
            let mut fields = Vec::new();
            for field in parts[2].as_array().ok_or("bad udt")? {
                let name = field[0].as_str().ok_or("bad field")?;
                let v = match value.get(name) {
                    Some(x) => cql_value(&field[1], x)?,
                    None => None,
                };
                fields.push((name.to_string(), v));
            }
            CqlValue::UserDefinedType {
                keyspace: "conformance".to_string(),
                name: parts[1].as_str().ok_or("bad udt")?.to_string(),
                fields,
            }
        }
        other => return Err(format!("unknown type {other}")),
    };
    Ok(Some(v))
}

/// The bytes the driver writes for a value, without the [int length] before them.
fn encode(value: &CqlValue, typ: &ColumnType) -> Result<String, String> {
    let mut buffer = Vec::new();
    value
        .serialize(typ, CellWriter::new(&mut buffer))
        .map(|_| ())
        .map_err(|error| shorten(error.to_string()))?;
    if buffer.len() >= 4 && buffer[..4] == [0xff; 4] {
        return Err("encoded as null (no value)".to_string());
    }
    Ok(hex(&buffer[4.min(buffer.len())..]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

fn shorten(text: String) -> String {
    text.chars().take(200).collect()
}

fn run(case: &Value) -> Value {
    let id = case["id"].as_str().unwrap_or("?");
    let mut line = json!({"case": id, "driver": "scylla crate 1.9.0 (scylla-cql-core 1.9.0)"});
    let typ = match column_type(&case["type_tree"]) {
        Ok(typ) => typ,
        Err(why) => {
            line["unsupported"] = json!(why);
            return line;
        }
    };
    let data = unhex(case["hex"].as_str().unwrap_or(""));
    let decoded = match CqlValue::deserialize(&typ, Some(FrameSlice::new_borrowed(&data))) {
        Ok(value) => value,
        Err(error) => {
            line["decode_error"] = json!(shorten(error.to_string()));
            return line;
        }
    };
    line["decoded"] = json!(shorten(format!("{decoded:?}")));
    match encode(&decoded, &typ) {
        Ok(bytes) => line["reencoded"] = json!(bytes),
        Err(error) => line["reencode_error"] = json!(error),
    }
    if let Some(value) = case.get("value") {
        let encoded = cql_value(&case["type_tree"], value)
            .and_then(|v| v.ok_or_else(|| "a null value".to_string()))
            .and_then(|v| encode(&v, &typ));
        match encoded {
            Ok(bytes) => line["value_encoded"] = json!(bytes),
            Err(error) => line["value_error"] = json!(shorten(error)),
        }
    }
    line
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    for text in stdin.lock().lines() {
        let case: Value = serde_json::from_str(&text?).map_err(io::Error::other)?;
        writeln!(out, "{}", run(&case))?;
        out.flush()?; // one line per case even if the driver brings the process down later
    }
    out.flush()
}
