//! The input's other columns (ids, labels, timestamps, …) as CQL values: each Arrow cell becomes
//! the bytes of a CQL type through the value codec, with checked casts and never through text.
//!
//! A [`ColumnEncoder`] is made once per column from the Arrow type and the CQL target, which refuses
//! a pairing that cannot work before any row is read (an Arrow `utf8` column for an `int` column, a
//! float for a `timestamp`); then [`ColumnEncoder::encode`] converts one cell at a time, refusing a
//! value the target cannot hold exactly (an int64 beyond `int`, a float with a fraction for an
//! integer type, a timestamp with a sub-millisecond part).
//!
//! ```
//! use arrow_array::{ArrayRef, Int64Array};
//! use cqlwire_codec::types::{parse_type, UdtRegistry};
//! use cqlwire_vector::columns::ColumnEncoder;
//! use std::sync::Arc;
//!
//! let ids: ArrayRef = Arc::new(Int64Array::from(vec![7, 1 << 40]));
//! let int = parse_type("int", &UdtRegistry::new()).unwrap();
//! let encoder = ColumnEncoder::new(ids.data_type(), &int).unwrap();
//! let mut out = Vec::new();
//! assert!(encoder.encode(&ids, 0, &mut out).unwrap());
//! assert_eq!(out, [0, 0, 0, 7]);
//! assert!(encoder.encode(&ids, 1, &mut out).is_err()); // 2^40 is not an int
//! ```

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float16Type, Float32Type,
    Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use cqlwire_codec::types::{CqlType, NativeType};
use cqlwire_codec::value::{self, Value};
use num_bigint::BigInt;
use std::net::IpAddr;

/// Why a column cannot be converted, or one of its cells.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ColumnError {
    /// What is wrong, e.g. `value 2147483648 is out of range for int`.
    pub message: String,
}

impl ColumnError {
    fn new(message: impl Into<String>) -> Self {
        ColumnError {
            message: message.into(),
        }
    }
}

/// Converts the cells of one Arrow column to values of one CQL type.
#[derive(Debug, Clone)]
pub struct ColumnEncoder {
    target: CqlType,
}

impl ColumnEncoder {
    /// An encoder from `source` cells to `target` values, or an error saying why no cell of that
    /// Arrow type can be a value of that CQL type.
    pub fn new(source: &DataType, target: &CqlType) -> Result<Self, ColumnError> {
        check(source, target)?;
        Ok(ColumnEncoder {
            target: target.clone(),
        })
    }

    /// The CQL type of the values.
    pub fn target(&self) -> &CqlType {
        &self.target
    }

    /// Appends the bytes of cell `row` of `array` to `out` and returns true, or returns false for a
    /// null cell (nothing appended). On error `out` is left as it was.
    pub fn encode(
        &self,
        array: &ArrayRef,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<bool, ColumnError> {
        if row >= array.len() {
            return Err(ColumnError::new(format!(
                "row {row} is past the column's {} rows",
                array.len()
            )));
        }
        match cell(array.as_ref(), row, &self.target)? {
            Value::Null => Ok(false),
            cell => value::encode_into(&self.target, &cell, out)
                .map(|()| true)
                .map_err(|e| ColumnError::new(e.to_string())),
        }
    }
}

/// The name of a CQL type as users write it, for messages.
fn named(target: &CqlType) -> String {
    target.to_string()
}

/// Refuses an Arrow type that no cell of can become a `target` value.
fn check(source: &DataType, target: &CqlType) -> Result<(), ColumnError> {
    let refuse = || {
        Err(ColumnError::new(format!(
            "an Arrow {source} column cannot be a CQL {} column",
            named(target)
        )))
    };
    use DataType as D;
    use NativeType as N;
    match (source, target) {
        (D::Null, _) => Ok(()),
        (D::Dictionary(_, values), _) => check(values, target),
        // What an `UPDATE … SET c = c + ?` adds: an integer.
        (source, CqlType::Native(N::Counter)) if source.is_integer() => Ok(()),
        (_, CqlType::Native(N::Counter)) => Err(ColumnError::new(format!(
            "an Arrow {source} column cannot be added to a counter (an integer column can)"
        ))),
        (source, CqlType::Native(native)) if source.is_integer() => match native {
            N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Varint | N::Float | N::Double => {
                Ok(())
            }
            N::Decimal => Ok(()),
            _ => refuse(),
        },
        (D::Float16 | D::Float32 | D::Float64, CqlType::Native(native)) => match native {
            N::TinyInt | N::SmallInt | N::Int | N::BigInt | N::Varint | N::Float | N::Double => {
                Ok(())
            }
            _ => refuse(),
        },
        (D::Boolean, CqlType::Native(N::Boolean)) => Ok(()),
        (D::Utf8 | D::LargeUtf8 | D::Utf8View, CqlType::Native(native)) => match native {
            N::Text | N::Ascii | N::Uuid | N::TimeUuid | N::Inet => Ok(()),
            _ => refuse(),
        },
        (D::Binary | D::LargeBinary | D::BinaryView, CqlType::Native(native)) => match native {
            N::Blob | N::Uuid | N::TimeUuid => Ok(()),
            _ => refuse(),
        },
        (D::FixedSizeBinary(size), CqlType::Native(native)) => match native {
            N::Blob => Ok(()),
            N::Uuid | N::TimeUuid if *size == 16 => Ok(()),
            _ => refuse(),
        },
        (D::Timestamp(_, _), CqlType::Native(N::Timestamp)) => Ok(()),
        (D::Date32, CqlType::Native(N::Date)) => Ok(()),
        (D::Date64, CqlType::Native(N::Date | N::Timestamp)) => Ok(()),
        (D::Time32(_) | D::Time64(_), CqlType::Native(N::Time)) => Ok(()),
        (D::Duration(_), CqlType::Native(N::Duration)) => Ok(()),
        (D::Decimal128(_, _) | D::Decimal256(_, _), CqlType::Native(N::Decimal)) => Ok(()),
        (D::Decimal128(_, scale) | D::Decimal256(_, scale), CqlType::Native(N::Varint))
            if *scale <= 0 =>
        {
            Ok(())
        }
        (
            D::List(field) | D::LargeList(field) | D::FixedSizeList(field, _),
            CqlType::List(element) | CqlType::Set(element) | CqlType::Vector(element, _),
        ) => check(field.data_type(), element),
        (D::Map(entries, _), CqlType::Map(key, value)) => match entries.data_type() {
            D::Struct(fields) if fields.len() == 2 => {
                check(fields[0].data_type(), key)?;
                check(fields[1].data_type(), value)
            }
            _ => refuse(),
        },
        (D::Struct(fields), CqlType::Tuple(components)) if fields.len() <= components.len() => {
            for (field, component) in fields.iter().zip(components) {
                check(field.data_type(), component)?;
            }
            Ok(())
        }
        (D::Struct(fields), CqlType::Udt(udt)) => {
            for field in fields {
                let Some((_, ty)) = udt.fields.iter().find(|(name, _)| name == field.name()) else {
                    return Err(ColumnError::new(format!(
                        "the Arrow struct field {} is not a field of the CQL type {}",
                        field.name(),
                        udt.name
                    )));
                };
                check(field.data_type(), ty)?;
            }
            Ok(())
        }
        _ => refuse(),
    }
}

/// Cell `row` of `array` as a value of `target` (already checked to fit by [`check`]).
fn cell(array: &dyn Array, row: usize, target: &CqlType) -> Result<Value, ColumnError> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    use DataType as D;
    let native = match target {
        CqlType::Native(native) => Some(*native),
        _ => None,
    };
    match array.data_type() {
        D::Null => Ok(Value::Null),
        D::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let key = dictionary.normalized_keys()[row];
            cell(dictionary.values().as_ref(), key, target)
        }
        D::Int8 => integer(array.as_primitive::<Int8Type>().value(row), target),
        D::Int16 => integer(array.as_primitive::<Int16Type>().value(row), target),
        D::Int32 => integer(array.as_primitive::<Int32Type>().value(row), target),
        D::Int64 => integer(array.as_primitive::<Int64Type>().value(row), target),
        D::UInt8 => integer(array.as_primitive::<UInt8Type>().value(row), target),
        D::UInt16 => integer(array.as_primitive::<UInt16Type>().value(row), target),
        D::UInt32 => integer(array.as_primitive::<UInt32Type>().value(row), target),
        D::UInt64 => integer(array.as_primitive::<UInt64Type>().value(row), target),
        D::Float16 => float(
            f64::from(array.as_primitive::<Float16Type>().value(row)),
            true,
            target,
        ),
        D::Float32 => float(
            f64::from(array.as_primitive::<Float32Type>().value(row)),
            true,
            target,
        ),
        D::Float64 => float(
            array.as_primitive::<Float64Type>().value(row),
            false,
            target,
        ),
        D::Boolean => Ok(Value::Boolean(array.as_boolean().value(row))),
        D::Utf8 => text(array.as_string::<i32>().value(row), target),
        D::LargeUtf8 => text(array.as_string::<i64>().value(row), target),
        D::Utf8View => text(array.as_string_view().value(row), target),
        D::Binary => bytes(array.as_binary::<i32>().value(row), target),
        D::LargeBinary => bytes(array.as_binary::<i64>().value(row), target),
        D::BinaryView => bytes(array.as_binary_view().value(row), target),
        D::FixedSizeBinary(_) => bytes(array.as_fixed_size_binary().value(row), target),
        D::Timestamp(unit, _) => {
            let raw = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            Ok(Value::Timestamp(in_unit(
                raw,
                *unit,
                TimeUnit::Millisecond,
                "timestamp",
            )?))
        }
        D::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(row);
            Ok(Value::Date(date_wire(i64::from(days))?))
        }
        D::Date64 => {
            let millis = array.as_primitive::<Date64Type>().value(row);
            if native == Some(NativeType::Timestamp) {
                return Ok(Value::Timestamp(millis));
            }
            const MILLIS_PER_DAY: i64 = 86_400_000;
            if millis % MILLIS_PER_DAY != 0 {
                return Err(ColumnError::new(format!(
                    "date64 value {millis} is not a whole day, so is not a date"
                )));
            }
            Ok(Value::Date(date_wire(millis / MILLIS_PER_DAY)?))
        }
        D::Time32(unit) => {
            let raw = match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().value(row),
                _ => array.as_primitive::<Time32MillisecondType>().value(row),
            };
            time_of_day(in_unit(
                i64::from(raw),
                *unit,
                TimeUnit::Nanosecond,
                "time",
            )?)
        }
        D::Time64(unit) => {
            let raw = match unit {
                TimeUnit::Microsecond => array.as_primitive::<Time64MicrosecondType>().value(row),
                _ => array.as_primitive::<Time64NanosecondType>().value(row),
            };
            time_of_day(in_unit(raw, *unit, TimeUnit::Nanosecond, "time")?)
        }
        D::Duration(unit) => {
            let raw = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(row),
            };
            Ok(Value::Duration {
                months: 0,
                days: 0,
                nanoseconds: in_unit(raw, *unit, TimeUnit::Nanosecond, "duration")?,
            })
        }
        D::Decimal128(_, scale) => decimal(
            BigInt::from(array.as_primitive::<Decimal128Type>().value(row)),
            *scale,
            target,
        ),
        D::Decimal256(_, scale) => {
            let raw = array.as_primitive::<Decimal256Type>().value(row);
            decimal(
                BigInt::from_signed_bytes_le(&raw.to_le_bytes()),
                *scale,
                target,
            )
        }
        D::List(_) => collection(array.as_list::<i32>().value(row), target),
        D::LargeList(_) => collection(array.as_list::<i64>().value(row), target),
        D::FixedSizeList(_, _) => collection(array.as_fixed_size_list().value(row), target),
        D::Map(_, _) => {
            let CqlType::Map(key_type, value_type) = target else {
                return Err(unexpected(array, target));
            };
            let entries = array.as_map().value(row);
            let keys = entries.column(0);
            let values = entries.column(1);
            (0..entries.len())
                .map(|i| {
                    if keys.is_null(i) || values.is_null(i) {
                        return Err(null_element(i, target));
                    }
                    Ok((
                        cell(keys.as_ref(), i, key_type)?,
                        cell(values.as_ref(), i, value_type)?,
                    ))
                })
                .collect::<Result<_, ColumnError>>()
                .map(Value::Map)
        }
        D::Struct(_) => {
            let fields = array.as_struct();
            match target {
                CqlType::Tuple(components) => fields
                    .columns()
                    .iter()
                    .zip(components)
                    .map(|(column, ty)| cell(column.as_ref(), row, ty))
                    .collect::<Result<_, _>>()
                    .map(Value::Tuple),
                CqlType::Udt(udt) => udt
                    .fields
                    .iter()
                    .map(|(name, ty)| {
                        let value = match fields.column_by_name(name) {
                            Some(column) => cell(column.as_ref(), row, ty)?,
                            None => Value::Null,
                        };
                        Ok((name.clone(), value))
                    })
                    .collect::<Result<_, _>>()
                    .map(Value::Udt),
                _ => Err(unexpected(array, target)),
            }
        }
        _ => Err(unexpected(array, target)),
    }
}

/// The error for a cell whose Arrow type [`check`] should have refused.
fn unexpected(array: &dyn Array, target: &CqlType) -> ColumnError {
    ColumnError::new(format!(
        "an Arrow {} value cannot be a CQL {} value",
        array.data_type(),
        named(target)
    ))
}

/// An integer as a value of an integer, float or decimal type, refusing what does not fit exactly.
fn integer<T: Into<i128> + Copy>(number: T, target: &CqlType) -> Result<Value, ColumnError> {
    let number: i128 = number.into();
    let out_of_range = || {
        ColumnError::new(format!(
            "value {number} is out of range for {}",
            named(target)
        ))
    };
    let CqlType::Native(native) = target else {
        return Err(out_of_range());
    };
    Ok(match native {
        NativeType::TinyInt => Value::TinyInt(i8::try_from(number).map_err(|_| out_of_range())?),
        NativeType::SmallInt => Value::SmallInt(i16::try_from(number).map_err(|_| out_of_range())?),
        NativeType::Int => Value::Int(i32::try_from(number).map_err(|_| out_of_range())?),
        NativeType::BigInt | NativeType::Counter => {
            Value::BigInt(i64::try_from(number).map_err(|_| out_of_range())?)
        }
        NativeType::Varint => Value::Varint(BigInt::from(number)),
        NativeType::Decimal => Value::Decimal {
            unscaled: BigInt::from(number),
            scale: 0,
        },
        NativeType::Float => {
            let x = number as f32;
            if x as i128 != number || !x.is_finite() {
                return Err(ColumnError::new(format!(
                    "value {number} cannot be held exactly by a float"
                )));
            }
            Value::Float(x)
        }
        NativeType::Double => {
            let x = number as f64;
            if x as i128 != number || !x.is_finite() {
                return Err(ColumnError::new(format!(
                    "value {number} cannot be held exactly by a double"
                )));
            }
            Value::Double(x)
        }
        _ => return Err(out_of_range()),
    })
}

/// A float as a value of a float or integer type. `single` says whether it came from a float16 or
/// float32 (so it is exactly a float). A double to float rounds to the nearest float, as the
/// driver's `struct.pack('>f')` does, but a finite double beyond the float range is an error; an
/// integer type takes only integral values in its range.
fn float(x: f64, single: bool, target: &CqlType) -> Result<Value, ColumnError> {
    let name = named(target);
    match target {
        CqlType::Native(NativeType::Double) => Ok(Value::Double(x)),
        CqlType::Native(NativeType::Float) => {
            let narrow = x as f32;
            if !single && x.is_finite() && !narrow.is_finite() {
                return Err(ColumnError::new(format!(
                    "value {x} is beyond the range of float"
                )));
            }
            Ok(Value::Float(narrow))
        }
        _ => {
            if !x.is_finite() {
                return Err(ColumnError::new(format!("value {x} is not a {name}")));
            }
            if x.fract() != 0.0 {
                return Err(ColumnError::new(format!(
                    "value {x} has a fraction, so is not a {name}"
                )));
            }
            // Every integral f64 of magnitude below 2^127 converts to i128 exactly.
            if x.abs() >= 2f64.powi(127) {
                return Err(ColumnError::new(format!(
                    "value {x} is out of range for {name}"
                )));
            }
            integer(x as i128, target)
        }
    }
}

/// Text as a text, ascii, uuid, timeuuid or inet value.
fn text(text: &str, target: &CqlType) -> Result<Value, ColumnError> {
    match target {
        CqlType::Native(NativeType::Ascii) if !text.is_ascii() => Err(ColumnError::new(
            "the text has a character outside US-ASCII, so is not an ascii value",
        )),
        CqlType::Native(NativeType::Uuid | NativeType::TimeUuid) => {
            let uuid = uuid::Uuid::try_parse(text)
                .map_err(|e| ColumnError::new(format!("not a uuid: {e}")))?;
            time_uuid_checked(uuid, target)
        }
        CqlType::Native(NativeType::Inet) => text
            .parse::<IpAddr>()
            .map(Value::Inet)
            .map_err(|_| ColumnError::new("not an IPv4 or IPv6 address")),
        _ => Ok(Value::Text(text.to_string())),
    }
}

/// Bytes as a blob, or as a uuid when there are 16 of them.
fn bytes(bytes: &[u8], target: &CqlType) -> Result<Value, ColumnError> {
    match target {
        CqlType::Native(NativeType::Uuid | NativeType::TimeUuid) => {
            let uuid = uuid::Uuid::from_slice(bytes).map_err(|_| {
                ColumnError::new(format!(
                    "{} bytes are not a uuid, which has 16",
                    bytes.len()
                ))
            })?;
            time_uuid_checked(uuid, target)
        }
        _ => Ok(Value::Blob(bytes.to_vec())),
    }
}

/// A uuid, refused for a timeuuid column unless it is a version 1 (time-based) uuid.
fn time_uuid_checked(uuid: uuid::Uuid, target: &CqlType) -> Result<Value, ColumnError> {
    if *target == CqlType::Native(NativeType::TimeUuid) && uuid.get_version_num() != 1 {
        return Err(ColumnError::new(format!(
            "uuid {uuid} is version {}, not a timeuuid (version 1)",
            uuid.get_version_num()
        )));
    }
    Ok(Value::Uuid(uuid))
}

/// A decimal (unscaled × 10^-scale) as a decimal, or as a varint when its scale is 0 or less.
fn decimal(unscaled: BigInt, scale: i8, target: &CqlType) -> Result<Value, ColumnError> {
    if *target == CqlType::Native(NativeType::Varint) {
        let factor = num_traits::pow(BigInt::from(10), usize::from(scale.unsigned_abs()));
        return Ok(Value::Varint(unscaled * factor));
    }
    Ok(Value::Decimal {
        unscaled,
        scale: i32::from(scale),
    })
}

/// The elements of a list cell as a list, set or vector value.
fn collection(elements: ArrayRef, target: &CqlType) -> Result<Value, ColumnError> {
    let element = match target {
        CqlType::List(element) | CqlType::Set(element) => element,
        CqlType::Vector(element, dimension) => {
            if elements.len() != *dimension {
                return Err(ColumnError::new(format!(
                    "the list has {} elements, not the {dimension} of {}",
                    elements.len(),
                    named(target)
                )));
            }
            element
        }
        _ => return Err(unexpected(elements.as_ref(), target)),
    };
    (0..elements.len())
        .map(|i| match elements.is_null(i) {
            true => Err(null_element(i, target)),
            false => cell(elements.as_ref(), i, element),
        })
        .collect::<Result<_, _>>()
        .map(Value::List)
}

/// A null element of a collection or vector: the CQL bytes can carry one, but Apache Cassandra
/// refuses it (with a NullPointerException for a non-frozen list), so the row is refused here.
fn null_element(index: usize, target: &CqlType) -> ColumnError {
    ColumnError::new(format!(
        "element #{} is null, which a {} cannot hold",
        index + 1,
        named(target)
    ))
}

/// `raw` counted in `from` units, in `to` units; an error when that is not a whole number of them
/// or does not fit.
fn in_unit(raw: i64, from: TimeUnit, to: TimeUnit, what: &str) -> Result<i64, ColumnError> {
    let per_second = |unit: TimeUnit| -> i64 {
        match unit {
            TimeUnit::Second => 1,
            TimeUnit::Millisecond => 1_000,
            TimeUnit::Microsecond => 1_000_000,
            TimeUnit::Nanosecond => 1_000_000_000,
        }
    };
    let (from, to) = (per_second(from), per_second(to));
    if from >= to {
        let factor = from / to;
        if raw % factor != 0 {
            return Err(ColumnError::new(format!(
                "{what} value {raw} has a part finer than a {}, which {what} cannot hold",
                unit_name(to)
            )));
        }
        Ok(raw / factor)
    } else {
        raw.checked_mul(to / from)
            .ok_or_else(|| ColumnError::new(format!("{what} value {raw} is out of range")))
    }
}

/// The unit `per_second` of which make a second.
fn unit_name(per_second: i64) -> &'static str {
    match per_second {
        1 => "second",
        1_000 => "millisecond",
        1_000_000 => "microsecond",
        _ => "nanosecond",
    }
}

/// Days since 1970-01-01 as the wire value of a date (2^31 is 1970-01-01); an error beyond the
/// 2^32 days a date can hold.
fn date_wire(days: i64) -> Result<u32, ColumnError> {
    u32::try_from(days + (1i64 << 31)).map_err(|_| {
        ColumnError::new(format!(
            "{days} days from 1970-01-01 is out of range for date"
        ))
    })
}

/// Nanoseconds since midnight as a time value, refusing what is outside one day.
fn time_of_day(nanos: i64) -> Result<Value, ColumnError> {
    value::time_of_day(nanos)
        .map(Value::Time)
        .map_err(|e| ColumnError::new(e.to_string()))
}

#[cfg(test)]
mod tests;
