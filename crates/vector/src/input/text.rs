//! Text columns read as bytes and checked row by row, so that one value that is not UTF-8 damages
//! its row only (a [`DamagedRow`], its cell null) instead of refusing the whole batch: the Parquet
//! and Arrow IPC readers decode the input's top-level text columns as binary ([`as_binary`],
//! [`ipc_text_tags`]), and [`restore`] turns them back into the text columns of the input's schema.

use super::DamagedRow;
use arrow_array::builder::{GenericStringBuilder, StringViewBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryViewArray, GenericBinaryArray, GenericStringArray, OffsetSizeTrait,
    RecordBatch, StringViewArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The binary type a text type is read as, when it is one.
fn binary_of(data_type: &DataType) -> Option<DataType> {
    match data_type {
        DataType::Utf8 => Some(DataType::Binary),
        DataType::LargeUtf8 => Some(DataType::LargeBinary),
        DataType::Utf8View => Some(DataType::BinaryView),
        _ => None,
    }
}

/// The indices of `schema`'s top-level text fields (`utf8`, `large_utf8`, `utf8_view`) other than
/// `except`.
pub(crate) fn text_fields(schema: &Schema, except: usize) -> Vec<usize> {
    (0..schema.fields().len())
        .filter(|&i| i != except)
        .filter(|&i| binary_of(schema.field(i).data_type()).is_some())
        .collect()
}

/// Where the type tags of an Arrow IPC schema's top-level text fields (those not dictionary-encoded)
/// sit in its flatbuffer, each with the tag of the binary type of the same layout (validity,
/// offsets or views, bytes). Writing those tags makes arrow-ipc decode the columns as binary, whose
/// values it does not check as UTF-8 (it refuses a whole record batch for one bad value).
pub(crate) fn ipc_text_tags(schema: arrow_ipc::Schema<'_>) -> Vec<(usize, u8)> {
    let mut tags = Vec::new();
    for field in schema.fields().into_iter().flatten() {
        let binary = match field.type_type() {
            arrow_ipc::Type::Utf8 => arrow_ipc::Type::Binary,
            arrow_ipc::Type::LargeUtf8 => arrow_ipc::Type::LargeBinary,
            arrow_ipc::Type::Utf8View => arrow_ipc::Type::BinaryView,
            _ => continue,
        };
        let slot = field._tab.vtable().get(arrow_ipc::Field::VT_TYPE_TYPE);
        if field.dictionary().is_none() && slot != 0 {
            tags.push((field._tab.loc() + usize::from(slot), binary.0));
        }
    }
    tags
}

/// `schema` with the fields `fields` (text fields, see [`text_fields`]) turned into their binary
/// types.
pub(crate) fn as_binary(schema: &Schema, fields: &[usize]) -> Schema {
    let fields: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, field)| match binary_of(field.data_type()) {
            Some(binary) if fields.contains(&i) => {
                Arc::new(field.as_ref().clone().with_data_type(binary))
            }
            _ => field.clone(),
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// `batch` (of rows of `input` from row `first_row`) with every binary column whose field in `schema`
/// is text turned into that text type: a value that is not UTF-8 becomes a null cell and a
/// [`DamagedRow`] in `damaged`. Columns already of their schema type pass unchanged.
pub(crate) fn restore(
    batch: RecordBatch,
    schema: &SchemaRef,
    input: &str,
    first_row: u64,
    damaged: &mut Vec<DamagedRow>,
) -> Result<RecordBatch, ArrowError> {
    if batch.schema().fields() == schema.fields() {
        return Ok(batch);
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        let mut bad = |index: usize, error: std::str::Utf8Error| {
            damaged.push(DamagedRow {
                input: input.to_owned(),
                row: first_row + index as u64,
                column: field.name().clone(),
                reason: format!("its value is not UTF-8 text ({error})"),
            });
        };
        let restored: ArrayRef = match (field.data_type(), array.data_type()) {
            (DataType::Utf8, DataType::Binary) => {
                Arc::new(text_of::<i32>(array.as_binary::<i32>(), &mut bad))
            }
            (DataType::LargeUtf8, DataType::LargeBinary) => {
                Arc::new(text_of::<i64>(array.as_binary::<i64>(), &mut bad))
            }
            (DataType::Utf8View, DataType::BinaryView) => {
                Arc::new(view_text_of(array.as_binary_view(), &mut bad))
            }
            _ => array.clone(),
        };
        columns.push(restored);
    }
    damaged.sort_by_key(|d| d.row);
    RecordBatch::try_new(schema.clone(), columns)
}

/// Hands each of `values` to `push` as text, or None (null, or not UTF-8: then reported to `bad`).
fn checked<'a>(
    values: impl Iterator<Item = Option<&'a [u8]>>,
    bad: &mut dyn FnMut(usize, std::str::Utf8Error),
    mut push: impl FnMut(Option<&str>),
) {
    for (i, value) in values.enumerate() {
        match value.map(std::str::from_utf8) {
            None => push(None),
            Some(Ok(text)) => push(Some(text)),
            Some(Err(error)) => {
                bad(i, error);
                push(None);
            }
        }
    }
}

/// A binary array as text: its buffers as they are when they are all UTF-8 (checked once), else a
/// copy with the values that are not made null (each reported to `bad`).
fn text_of<O: OffsetSizeTrait>(
    array: &GenericBinaryArray<O>,
    bad: &mut dyn FnMut(usize, std::str::Utf8Error),
) -> GenericStringArray<O> {
    let (offsets, values, nulls) = array.clone().into_parts();
    if let Ok(text) = GenericStringArray::try_new(offsets, values, nulls) {
        return text;
    }
    let mut builder = GenericStringBuilder::<O>::with_capacity(array.len(), 0);
    checked(array.iter(), bad, |text| builder.append_option(text));
    builder.finish()
}

/// A binary view array as text, as [`text_of`] does.
fn view_text_of(
    array: &BinaryViewArray,
    bad: &mut dyn FnMut(usize, std::str::Utf8Error),
) -> StringViewArray {
    let (views, buffers, nulls) = array.clone().into_parts();
    if let Ok(text) = StringViewArray::try_new(views, buffers, nulls) {
        return text;
    }
    let mut builder = StringViewBuilder::with_capacity(array.len());
    checked(array.iter(), bad, |text| builder.append_option(text));
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, Int64Array, LargeBinaryArray};

    #[test]
    fn a_value_that_is_not_utf8_damages_its_row_only() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("note", DataType::LargeUtf8, true),
            Field::new("tag", DataType::Utf8View, true),
        ]));
        let binary = Arc::new(as_binary(&schema, &text_fields(&schema, 0)));
        assert_eq!(binary.field(1).data_type(), &DataType::Binary);
        assert_eq!(binary.field(0).data_type(), &DataType::Int64);
        let names: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b\xff"), None];
        let notes: Vec<Option<&[u8]>> = vec![Some(b"x"), Some(b"y"), Some(b"\xc3")];
        let tags: Vec<Option<&[u8]>> = vec![Some(b"t"), Some(b"u"), Some(b"v")];
        let batch = RecordBatch::try_new(
            binary,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(BinaryArray::from(names)),
                Arc::new(LargeBinaryArray::from(notes)),
                Arc::new(BinaryViewArray::from(tags)),
            ],
        )
        .unwrap();
        let mut damaged = Vec::new();
        let text = restore(batch, &schema, "t", 10, &mut damaged).unwrap();
        assert_eq!(text.schema(), schema);
        let rows: Vec<(u64, &str)> = damaged.iter().map(|d| (d.row, d.column.as_str())).collect();
        assert_eq!(rows, [(11, "name"), (12, "note")]);
        assert!(damaged[0].reason.contains("not UTF-8"), "{damaged:?}");
        let names = text.column(1).as_string::<i32>();
        assert_eq!(names.value(0), "a");
        assert!(names.is_null(1) && names.is_null(2));
        assert_eq!(text.column(3).as_string_view().value(2), "v");
    }
}
