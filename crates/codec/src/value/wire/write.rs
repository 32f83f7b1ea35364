//! Values written as wire bytes.

use super::error::{EncodeError, EncodeErrorKind};
use super::{mixed_signs, same_sign, time_of_day, Step};
use crate::types::{CqlType, NativeType, UdtType};
use crate::value::{has_empty_value, Value};
use crate::vint;
use std::net::IpAddr;

/// The name of a value's kind for mismatch messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Empty => "the empty value",
        Value::Boolean(_) => "a boolean",
        Value::TinyInt(_) => "a tinyint",
        Value::SmallInt(_) => "a smallint",
        Value::Int(_) => "an int",
        Value::BigInt(_) => "a bigint",
        Value::Varint(_) => "a varint",
        Value::Float(_) => "a float",
        Value::Double(_) => "a double",
        Value::Decimal { .. } => "a decimal",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
        Value::Uuid(_) => "a uuid",
        Value::Inet(_) => "an inet",
        Value::Timestamp(_) => "a timestamp",
        Value::Date(_) => "a date",
        Value::Time(_) => "a time",
        Value::Duration { .. } => "a duration",
        Value::List(_) => "a list",
        Value::Map(_) => "a map",
        Value::Tuple(_) => "a tuple",
        Value::Udt(_) => "a udt",
    }
}

/// The error for a value that does not fit the type.
fn mismatch(ty: &CqlType, value: &Value) -> EncodeError {
    EncodeErrorKind::Mismatch {
        ty: Box::new(ty.clone()),
        found: kind(value),
    }
    .into()
}

/// Appends a non-null value's bytes.
pub(super) fn write_value(
    ty: &CqlType,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match (ty, value) {
        (CqlType::Native(native), _) => write_native(*native, value, out),
        (_, Value::Empty) => Err(EncodeErrorKind::CannotBeEmpty {
            ty: Box::new(ty.clone()),
        }
        .into()),
        (CqlType::List(element) | CqlType::Set(element), Value::List(items)) => {
            write_count(items.len(), out)?;
            for (i, item) in items.iter().enumerate() {
                write_item(element, item, out).map_err(|e| e.within(Step::Element(i)))?;
            }
            Ok(())
        }
        (CqlType::Map(key_type, value_type), Value::Map(entries)) => {
            write_count(entries.len(), out)?;
            for (i, (key, value)) in entries.iter().enumerate() {
                write_item(key_type, key, out).map_err(|e| e.within(Step::MapKey(i)))?;
                write_item(value_type, value, out).map_err(|e| e.within(Step::MapValue(i)))?;
            }
            Ok(())
        }
        (CqlType::Tuple(components), Value::Tuple(values)) => {
            if values.len() > components.len() {
                return Err(EncodeErrorKind::TooManyComponents {
                    ty: Box::new(ty.clone()),
                    count: components.len(),
                    found: values.len(),
                }
                .into());
            }
            for (i, (component, value)) in components.iter().zip(values).enumerate() {
                write_item(component, value, out).map_err(|e| e.within(Step::Component(i)))?;
            }
            Ok(())
        }
        (CqlType::Udt(udt), Value::Udt(fields)) => write_udt(udt, fields, out),
        (CqlType::Vector(element, dimension), Value::List(items)) => {
            if items.len() != *dimension {
                return Err(EncodeErrorKind::WrongDimension {
                    ty: Box::new(ty.clone()),
                    dimension: *dimension,
                    found: items.len(),
                }
                .into());
            }
            for (i, item) in items.iter().enumerate() {
                write_vector_element(element, item, out).map_err(|e| e.within(Step::Element(i)))?;
            }
            Ok(())
        }
        _ => Err(mismatch(ty, value)),
    }
}

/// Appends UDT fields in declaration order, matched by name; fields after the last given one are
/// omitted, missing ones before it are written as null.
fn write_udt(
    udt: &UdtType,
    fields: &[(String, Value)],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let mut last_given = None;
    for (i, (name, _)) in fields.iter().enumerate() {
        if fields.iter().take(i).any(|(earlier, _)| earlier == name) {
            let field = name.clone();
            return Err(EncodeErrorKind::FieldGivenTwice { field }.into());
        }
        match udt.fields.iter().position(|(declared, _)| declared == name) {
            Some(index) => last_given = last_given.max(Some(index)),
            None => {
                let kind = EncodeErrorKind::NoSuchField {
                    udt: udt.name.clone(),
                    field: name.clone(),
                };
                return Err(kind.into());
            }
        }
    }
    // No field given is the zero-byte value, which has no field present.
    let present = last_given.map_or(0, |last| last + 1);
    for (name, field_type) in udt.fields.iter().take(present) {
        let value = fields
            .iter()
            .find(|(given, _)| given == name)
            .map_or(&Value::Null, |(_, value)| value);
        write_item(field_type, value, out).map_err(|e| e.within(Step::Field(name)))?;
    }
    Ok(())
}

/// Appends a collection count.
fn write_count(count: usize, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let count = i32::try_from(count).map_err(|_| EncodeErrorKind::TooManyElements { count })?;
    out.extend_from_slice(&count.to_be_bytes());
    Ok(())
}

/// Appends an `[int length][bytes]` item; null is length -1.
fn write_item(ty: &CqlType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if matches!(value, Value::Null) {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return Ok(());
    }
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write_value(ty, value, out)?;
    let length = out.len() - at - 4;
    let length = i32::try_from(length).map_err(|_| EncodeErrorKind::TooLong { len: length })?;
    if let Some(prefix) = out.get_mut(at..at + 4) {
        prefix.copy_from_slice(&length.to_be_bytes());
    }
    Ok(())
}

/// Appends a vector element: bare for fixed-size subtypes, else after an unsigned vint length.
pub(super) fn write_vector_element(
    element: &CqlType,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match value {
        Value::Null => return Err(EncodeErrorKind::NullVectorElement.into()),
        Value::Empty => return Err(EncodeErrorKind::EmptyVectorElement.into()),
        _ => {}
    }
    if element.vector_element_size().is_some() {
        return write_value(element, value, out);
    }
    let at = out.len();
    write_value(element, value, out)?;
    let length = out.len() - at;
    let (prefix, width) = vint::encode_unsigned_array(length as u64);
    out.extend_from_slice(prefix.get(..width).unwrap_or_default());
    // Move the prefix in front of the element's bytes.
    if let Some(written) = out.get_mut(at..) {
        written.rotate_right(width);
    }
    Ok(())
}

/// Appends a native value's bytes.
fn write_native(native: NativeType, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    use NativeType as N;
    match (native, value) {
        (_, Value::Empty) if has_empty_value(native) => {}
        (N::Boolean, Value::Boolean(b)) => out.push(u8::from(*b)),
        (N::TinyInt, Value::TinyInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::SmallInt, Value::SmallInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::Int, Value::Int(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::BigInt | N::Counter, Value::BigInt(n)) => out.extend_from_slice(&n.to_be_bytes()),
        (N::Float, Value::Float(x)) => out.extend_from_slice(&x.to_be_bytes()),
        (N::Double, Value::Double(x)) => out.extend_from_slice(&x.to_be_bytes()),
        (N::Timestamp, Value::Timestamp(ms)) => out.extend_from_slice(&ms.to_be_bytes()),
        (N::Date, Value::Date(days)) => out.extend_from_slice(&days.to_be_bytes()),
        (N::Time, Value::Time(nanos)) => {
            let nanos = time_of_day(*nanos).map_err(EncodeErrorKind::from)?;
            out.extend_from_slice(&nanos.to_be_bytes());
        }
        (N::Uuid, Value::Uuid(id)) => out.extend_from_slice(id.as_bytes()),
        (N::TimeUuid, Value::Uuid(id)) => {
            if id.get_version_num() != 1 {
                let version = id.get_version_num();
                return Err(EncodeErrorKind::NotTimeUuid { version }.into());
            }
            out.extend_from_slice(id.as_bytes());
        }
        (N::Text, Value::Text(text)) => out.extend_from_slice(text.as_bytes()),
        (N::Ascii, Value::Text(text)) => {
            if !text.is_ascii() {
                let text = text.clone();
                return Err(EncodeErrorKind::NonAscii { text }.into());
            }
            out.extend_from_slice(text.as_bytes());
        }
        (N::Blob, Value::Blob(bytes)) => out.extend_from_slice(bytes),
        (N::Varint, Value::Varint(n)) => out.extend_from_slice(&n.to_signed_bytes_be()),
        (N::Decimal, Value::Decimal { unscaled, scale }) => {
            out.extend_from_slice(&scale.to_be_bytes());
            out.extend_from_slice(&unscaled.to_signed_bytes_be());
        }
        (N::Inet, Value::Inet(IpAddr::V4(ip))) => out.extend_from_slice(&ip.octets()),
        (N::Inet, Value::Inet(IpAddr::V6(ip))) => out.extend_from_slice(&ip.octets()),
        (
            N::Duration,
            Value::Duration {
                months,
                days,
                nanoseconds,
            },
        ) => {
            if !same_sign((*months).into(), (*days).into(), *nanoseconds) {
                return Err(mixed_signs((*months).into(), (*days).into(), *nanoseconds).into());
            }
            vint::encode_signed((*months).into(), out);
            vint::encode_signed((*days).into(), out);
            vint::encode_signed(*nanoseconds, out);
        }
        _ => return Err(mismatch(&CqlType::Native(native), value)),
    }
    Ok(())
}
