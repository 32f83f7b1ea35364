//! `hex` output: one line per row, `0x` then the value in lowercase hex; with `--id-column`, a CSV
//! line `id,0x…`. A null row (under `--on-null null`) is the word `null` in place of the value.

use super::{Destination, VectorWriter, WriteError, WriterOptions};
use crate::kernel::EncodedBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::Array;
use arrow_schema::DataType;
use std::fmt::Write as _;

/// Writes hex lines, optionally prefixed with an id column.
pub(super) struct HexWriter<W> {
    output: W,
    id_column: Option<String>,
    skip: bool,
    /// The lines of the current batch.
    buffer: Vec<u8>,
}

impl<W: Destination> HexWriter<W> {
    /// A hex writer; the id column (if any) must have a type [`write_id`] can print.
    pub(super) fn new(output: W, options: &WriterOptions) -> Result<Self, WriteError> {
        if let (Some(id), Some(schema)) = (&options.id_column, &options.passthrough) {
            if let Ok(field) = schema.field_with_name(id) {
                if !printable(field.data_type()) {
                    return Err(WriteError::IdColumnType {
                        id: id.clone(),
                        data_type: field.data_type().to_string(),
                    });
                }
            }
        }
        Ok(HexWriter {
            output,
            id_column: options.id_column.clone(),
            skip: options.nulls == super::NullPolicy::Skip,
            buffer: Vec::new(),
        })
    }
}

impl<W: Destination> VectorWriter<W> for HexWriter<W> {
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError> {
        let ids = match &self.id_column {
            None => None,
            Some(name) => Some(
                batch
                    .columns
                    .as_ref()
                    .and_then(|columns| columns.column_by_name(name))
                    .ok_or_else(|| {
                        WriteError::Data(format!(
                            "id column {name} is missing from the batch at row {}",
                            batch.first_row
                        ))
                    })?,
            ),
        };
        self.buffer.clear();
        let mut written = 0;
        for index in 0..batch.rows {
            let valid = batch.is_valid(index);
            if !valid && self.skip {
                continue;
            }
            if let Some(ids) = ids {
                write_id(ids.as_ref(), index, &mut self.buffer)?;
                self.buffer.push(b',');
            }
            if valid {
                let value = batch.row(index);
                self.buffer.extend_from_slice(b"0x");
                crate::hex::encode_into(value, &mut self.buffer);
                written += value.len() as u64;
            } else {
                self.buffer.extend_from_slice(b"null");
            }
            self.buffer.push(b'\n');
        }
        self.output.write_all(&self.buffer)?;
        Ok(written)
    }

    fn finish(mut self: Box<Self>) -> Result<W, WriteError> {
        self.output.flush()?;
        Ok(self.output)
    }
}

/// Whether [`write_id`] can print values of this type.
fn printable(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Boolean
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::FixedSizeBinary(_)
    )
}

/// Appends the CSV field for row `index` of `ids`: numbers and booleans as text, strings quoted when
/// they hold a comma, quote or line break, binary as `0x…`, null as nothing.
fn write_id(ids: &dyn Array, index: usize, out: &mut Vec<u8>) -> Result<(), WriteError> {
    if index >= ids.len() {
        return Err(WriteError::Data(format!(
            "the id column has {} rows, fewer than the vectors",
            ids.len()
        )));
    }
    if ids.is_null(index) {
        return Ok(());
    }
    let mut text = String::new();
    let _ = match ids.data_type() {
        DataType::Int8 => write!(text, "{}", ids.as_primitive::<Int8Type>().value(index)),
        DataType::Int16 => write!(text, "{}", ids.as_primitive::<Int16Type>().value(index)),
        DataType::Int32 => write!(text, "{}", ids.as_primitive::<Int32Type>().value(index)),
        DataType::Int64 => write!(text, "{}", ids.as_primitive::<Int64Type>().value(index)),
        DataType::UInt8 => write!(text, "{}", ids.as_primitive::<UInt8Type>().value(index)),
        DataType::UInt16 => write!(text, "{}", ids.as_primitive::<UInt16Type>().value(index)),
        DataType::UInt32 => write!(text, "{}", ids.as_primitive::<UInt32Type>().value(index)),
        DataType::UInt64 => write!(text, "{}", ids.as_primitive::<UInt64Type>().value(index)),
        DataType::Float32 => write!(text, "{}", ids.as_primitive::<Float32Type>().value(index)),
        DataType::Float64 => write!(text, "{}", ids.as_primitive::<Float64Type>().value(index)),
        DataType::Boolean => write!(text, "{}", ids.as_boolean().value(index)),
        DataType::Utf8 => write!(text, "{}", ids.as_string::<i32>().value(index)),
        DataType::LargeUtf8 => write!(text, "{}", ids.as_string::<i64>().value(index)),
        DataType::Utf8View => write!(text, "{}", ids.as_string_view().value(index)),
        DataType::Binary => return write_binary(ids.as_binary::<i32>().value(index), out),
        DataType::LargeBinary => return write_binary(ids.as_binary::<i64>().value(index), out),
        DataType::FixedSizeBinary(_) => {
            return write_binary(ids.as_fixed_size_binary().value(index), out)
        }
        other => {
            return Err(WriteError::Usage(format!(
                "cannot print id values of type {other}"
            )))
        }
    };
    if text.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        out.extend_from_slice(text.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    Ok(())
}

/// Appends a binary id as `0x…`.
fn write_binary(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), WriteError> {
    out.extend_from_slice(b"0x");
    crate::hex::encode_into(bytes, out);
    Ok(())
}
