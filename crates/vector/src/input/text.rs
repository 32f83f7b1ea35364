//! Text read as bytes and checked value by value, so that one value that is not UTF-8 damages its
//! row only (a [`DamagedRow`], its cell null) instead of refusing the whole batch: the Parquet and
//! Arrow IPC readers decode the input's text as binary wherever it sits — a top-level column, the
//! values of a dictionary, the items of a list or map, the fields of a struct ([`as_binary`],
//! [`ipc_text_tags`]) — and [`restore`] turns it back into the text types of the input's schema.

use super::DamagedRow;
use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, OffsetSizeTrait, RecordBatch, UInt64Array};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::str::Utf8Error;
use std::sync::Arc;

/// `data_type` with every text type in it (`utf8`, `large_utf8`, `utf8_view`, at any depth of
/// lists, maps, structs and dictionaries) turned into the binary type of the same layout; None when
/// it holds no text.
fn binary_of(data_type: &DataType) -> Option<DataType> {
    let child = |field: &Arc<Field>| {
        binary_of(field.data_type())
            .map(|binary| Arc::new(field.as_ref().clone().with_data_type(binary)))
    };
    match data_type {
        DataType::Utf8 => Some(DataType::Binary),
        DataType::LargeUtf8 => Some(DataType::LargeBinary),
        DataType::Utf8View => Some(DataType::BinaryView),
        DataType::List(field) => child(field).map(DataType::List),
        DataType::LargeList(field) => child(field).map(DataType::LargeList),
        DataType::FixedSizeList(field, size) => {
            child(field).map(|field| DataType::FixedSizeList(field, *size))
        }
        DataType::Map(field, sorted) => child(field).map(|field| DataType::Map(field, *sorted)),
        DataType::Struct(fields) => {
            let binary: Vec<Option<Arc<Field>>> = fields.iter().map(child).collect();
            binary.iter().any(Option::is_some).then(|| {
                let fields = fields.iter().zip(binary);
                DataType::Struct(
                    fields
                        .map(|(f, b)| b.unwrap_or_else(|| f.clone()))
                        .collect(),
                )
            })
        }
        DataType::Dictionary(key, value) => {
            binary_of(value).map(|value| DataType::Dictionary(key.clone(), Box::new(value)))
        }
        _ => None,
    }
}

/// The indices of `schema`'s top-level fields that hold text (see [`binary_of`]) other than
/// `except`.
pub(crate) fn text_fields(schema: &Schema, except: Option<usize>) -> Vec<usize> {
    (0..schema.fields().len())
        .filter(|&i| Some(i) != except)
        .filter(|&i| binary_of(schema.field(i).data_type()).is_some())
        .collect()
}

/// Where the type tags of an Arrow IPC schema's text fields sit in its flatbuffer (top-level or
/// nested in lists, maps and structs, dictionary-encoded or not), each with the tag of the binary
/// type of the same layout (validity, offsets or views, bytes). Writing those tags makes arrow-ipc
/// decode them as binary, whose values it does not check as UTF-8 (it refuses a whole record batch
/// for one bad value). The fields retagged are those whose types [`binary_of`] turns binary.
pub(crate) fn ipc_text_tags(schema: arrow_ipc::Schema<'_>) -> Vec<(usize, u8)> {
    let mut tags = Vec::new();
    for field in schema.fields().into_iter().flatten() {
        field_text_tags(field, 0, &mut tags);
    }
    tags
}

/// Deepest nesting of fields whose text tags are looked for (an Arrow schema a writer makes is far
/// shallower; a hostile one does not recurse without end).
const MAX_DEPTH: usize = 64;

/// The text tags of `field` and its children, as [`ipc_text_tags`] finds them, added to `tags`.
fn field_text_tags(field: arrow_ipc::Field<'_>, depth: usize, tags: &mut Vec<(usize, u8)>) {
    use arrow_ipc::Type;
    let binary = match field.type_type() {
        Type::Utf8 => Type::Binary,
        Type::LargeUtf8 => Type::LargeBinary,
        Type::Utf8View => Type::BinaryView,
        Type::List | Type::LargeList | Type::FixedSizeList | Type::Struct_ | Type::Map
            if depth < MAX_DEPTH =>
        {
            for child in field.children().into_iter().flatten() {
                field_text_tags(child, depth + 1, tags);
            }
            return;
        }
        _ => return,
    };
    let slot = field._tab.vtable().get(arrow_ipc::Field::VT_TYPE_TYPE);
    if slot != 0 {
        tags.push((field._tab.loc() + usize::from(slot), binary.0));
    }
}

/// `schema` with the fields `fields` (fields holding text, see [`text_fields`]) turned into their
/// binary types.
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

/// `batch` (of rows of `input` from row `first_row`) with every column read as binary turned back
/// into its type in `schema`: a row whose cell holds a value that is not UTF-8 anywhere inside it
/// becomes a null cell and a [`DamagedRow`] in `damaged`. A column whose values are all UTF-8 keeps
/// its buffers (checked once, not copied); columns already of their schema type pass unchanged.
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
        let mut bad = |index: usize, path: &str, error: Utf8Error| {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!(" at {}{path}", field.name())
            };
            damaged.push(DamagedRow {
                input: input.to_owned(),
                row: first_row + index as u64,
                column: field.name().clone(),
                reason: format!("its value{at} is not UTF-8 text ({error})"),
            });
        };
        columns.push(restore_column(array, field.data_type(), &mut bad)?);
    }
    damaged.sort_by_key(|d| d.row);
    RecordBatch::try_new(schema.clone(), columns)
}

/// `array` (read as binary) as `target`: as it is when every value is UTF-8, else a copy whose rows
/// holding a value that is not are null (each valid one reported to `bad` with the path of its
/// first bad value inside the cell and the error).
fn restore_column(
    array: &ArrayRef,
    target: &DataType,
    bad: &mut dyn FnMut(usize, &str, Utf8Error),
) -> Result<ArrayRef, ArrowError> {
    if array.data_type() == target {
        return Ok(array.clone());
    }
    if let Ok(data) = retype(array.to_data(), target, false) {
        return Ok(make_array(data));
    }
    let found = bad_values(array.as_ref(), target);
    for value in found.iter().filter(|value| array.is_valid(value.index)) {
        bad(value.index, &value.path, value.error);
    }
    let rows: Vec<usize> = found.iter().map(|value| value.index).collect();
    if rows.is_empty() {
        // No row holds one: the bad values are a dictionary's that no row uses (made null), or
        // items of a sliced list's other rows (dropped below by the copy).
        if let Ok(data) = retype(array.to_data(), target, true) {
            return Ok(make_array(data));
        }
    }
    let kept = without(array.as_ref(), &rows)?;
    Ok(make_array(retype(kept.to_data(), target, true)?))
}

/// `data` (of a type [`binary_of`] made from `target`) with `target`'s types, each turned text
/// checked as UTF-8; an error when a value is not. `lenient`: a dictionary's values that are not
/// UTF-8 become null instead (once no row refers to them).
fn retype(data: ArrayData, target: &DataType, lenient: bool) -> Result<ArrayData, ArrowError> {
    if data.data_type() == target {
        return Ok(data);
    }
    let child = |index: usize, target: &DataType| match data.child_data().get(index) {
        Some(child) => retype(child.clone(), target, lenient),
        None => Err(ArrowError::InvalidArgumentError(format!(
            "a {} array without its child {index}",
            data.data_type()
        ))),
    };
    let children = match (target, data.data_type()) {
        (DataType::Utf8, DataType::Binary)
        | (DataType::LargeUtf8, DataType::LargeBinary)
        | (DataType::Utf8View, DataType::BinaryView) => Vec::new(),
        (DataType::List(field), DataType::List(_))
        | (DataType::LargeList(field), DataType::LargeList(_))
        | (DataType::Map(field, _), DataType::Map(..)) => vec![child(0, field.data_type())?],
        (DataType::FixedSizeList(field, n), DataType::FixedSizeList(_, m)) if n == m => {
            vec![child(0, field.data_type())?]
        }
        (DataType::Struct(fields), DataType::Struct(read)) if fields.len() == read.len() => {
            let children = fields.iter().enumerate();
            children
                .map(|(i, field)| child(i, field.data_type()))
                .collect::<Result<_, _>>()?
        }
        (DataType::Dictionary(key, value), DataType::Dictionary(read, _)) if key == read => {
            match child(0, value) {
                Ok(values) => vec![values],
                Err(_) if lenient => {
                    let values = data.child_data().first().cloned().map(make_array);
                    let values = values.ok_or_else(|| {
                        ArrowError::InvalidArgumentError("a dictionary without values".into())
                    })?;
                    let found = bad_values(values.as_ref(), value);
                    let rows: Vec<usize> = found.iter().map(|v| v.index).collect();
                    vec![retype(
                        without(values.as_ref(), &rows)?.to_data(),
                        value,
                        true,
                    )?]
                }
                Err(error) => return Err(error),
            }
        }
        (target, read) => {
            return Err(ArrowError::InvalidArgumentError(format!(
                "a column read as {read} where {target} was declared"
            )))
        }
    };
    data.into_builder()
        .data_type(target.clone())
        .child_data(children)
        .build()
}

/// A value that is not UTF-8: the index of the item of the array that holds it, where it sits in
/// that item (`[2]`, `.name`, empty for the item itself) and the error.
struct BadValue {
    index: usize,
    path: String,
    error: Utf8Error,
}

/// The items of `array` (read as binary) that hold a value that is not UTF-8 where `target` has
/// text, in index order, each once (with its first bad value). Items under a null parent count
/// too: their bytes are in the array all the same.
fn bad_values(array: &dyn Array, target: &DataType) -> Vec<BadValue> {
    if array.data_type() == target {
        return Vec::new();
    }
    match target {
        DataType::Utf8 => array
            .as_binary_opt::<i32>()
            .map_or_else(Vec::new, |a| bad_items(a.len(), |i| a.value(i))),
        DataType::LargeUtf8 => array
            .as_binary_opt::<i64>()
            .map_or_else(Vec::new, |a| bad_items(a.len(), |i| a.value(i))),
        DataType::Utf8View => array
            .as_binary_view_opt()
            .map_or_else(Vec::new, |a| bad_items(a.len(), |i| a.value(i))),
        DataType::List(field) => array.as_list_opt::<i32>().map_or_else(Vec::new, |list| {
            in_lists(
                list.value_offsets(),
                bad_values(list.values().as_ref(), field.data_type()),
            )
        }),
        DataType::LargeList(field) => array.as_list_opt::<i64>().map_or_else(Vec::new, |list| {
            in_lists(
                list.value_offsets(),
                bad_values(list.values().as_ref(), field.data_type()),
            )
        }),
        DataType::Map(field, _) => array.as_map_opt().map_or_else(Vec::new, |map| {
            in_lists(
                map.value_offsets(),
                bad_values(map.entries(), field.data_type()),
            )
        }),
        DataType::FixedSizeList(field, _) => {
            array
                .as_fixed_size_list_opt()
                .map_or_else(Vec::new, |list| {
                    let size = usize::try_from(list.value_length()).unwrap_or(0).max(1);
                    let inner = bad_values(list.values().as_ref(), field.data_type());
                    let mut found: Vec<BadValue> = inner
                        .into_iter()
                        .map(|value| BadValue {
                            index: value.index / size,
                            path: format!("[{}]{}", value.index % size, value.path),
                            error: value.error,
                        })
                        .collect();
                    found.dedup_by_key(|value| value.index);
                    found
                })
        }
        DataType::Struct(fields) => array.as_struct_opt().map_or_else(Vec::new, |items| {
            let mut found: Vec<BadValue> = fields
                .iter()
                .zip(items.columns())
                .flat_map(|(field, column)| {
                    let inner = bad_values(column.as_ref(), field.data_type());
                    inner.into_iter().map(|value| BadValue {
                        path: format!(".{}{}", field.name(), value.path),
                        ..value
                    })
                })
                .collect();
            found.sort_by_key(|value| value.index);
            found.dedup_by_key(|value| value.index);
            found
        }),
        DataType::Dictionary(_, value) => {
            array
                .as_any_dictionary_opt()
                .map_or_else(Vec::new, |dictionary| {
                    let inner = bad_values(dictionary.values().as_ref(), value);
                    if inner.is_empty() {
                        return Vec::new();
                    }
                    let keys = dictionary.keys();
                    let normalized = dictionary.normalized_keys();
                    let referring = normalized.iter().enumerate();
                    referring
                        .filter(|&(i, _)| keys.is_valid(i))
                        .filter_map(|(i, key)| {
                            let at = inner.binary_search_by_key(key, |value| value.index).ok()?;
                            let value = inner.get(at)?;
                            Some(BadValue {
                                index: i,
                                path: value.path.clone(),
                                error: value.error,
                            })
                        })
                        .collect()
                })
        }
        _ => Vec::new(),
    }
}

/// The items among the first `len` (`value(i)` their bytes) that are not UTF-8.
fn bad_items<'a>(len: usize, value: impl Fn(usize) -> &'a [u8]) -> Vec<BadValue> {
    (0..len)
        .filter_map(|index| {
            let error = std::str::from_utf8(value(index)).err()?;
            Some(BadValue {
                index,
                path: String::new(),
                error,
            })
        })
        .collect()
}

/// The lists (by their `offsets` into their items) holding the bad items `items`, each with the
/// item's position in it.
fn in_lists<O: OffsetSizeTrait>(offsets: &[O], items: Vec<BadValue>) -> Vec<BadValue> {
    let (Some(first), Some(end)) = (offsets.first(), offsets.last()) else {
        return Vec::new();
    };
    let mut found: Vec<BadValue> = Vec::new();
    for value in items {
        if value.index < first.as_usize() || value.index >= end.as_usize() {
            continue;
        }
        let list = offsets
            .partition_point(|offset| offset.as_usize() <= value.index)
            .saturating_sub(1);
        if found.last().is_some_and(|last| last.index == list) {
            continue;
        }
        let start = offsets.get(list).map_or(0, |offset| offset.as_usize());
        found.push(BadValue {
            index: list,
            path: format!("[{}]{}", value.index - start, value.path),
            error: value.error,
        });
    }
    found
}

/// `array` with the items `null` (in index order) made null, everything they held dropped.
fn without(array: &dyn Array, null: &[usize]) -> Result<ArrayRef, ArrowError> {
    let mut null = null.iter().peekable();
    let indices: UInt64Array = (0..array.len())
        .map(|i| {
            let mut dropped = false;
            while let Some(&n) = null.next_if(|&&n| n <= i) {
                dropped |= n == i;
            }
            (!dropped).then_some(i as u64)
        })
        .collect();
    arrow_select::take::take(array, &indices, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int32Type;
    use arrow_array::{
        ArrayAccessor, BinaryArray, BinaryViewArray, DictionaryArray, FixedSizeListArray,
        Int32Array, Int64Array, LargeBinaryArray, LargeListArray, ListArray, MapArray, StructArray,
    };
    use arrow_buffer::{NullBuffer, OffsetBuffer};
    use arrow_schema::Fields;

    #[test]
    fn a_value_that_is_not_utf8_damages_its_row_only() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("note", DataType::LargeUtf8, true),
            Field::new("tag", DataType::Utf8View, true),
        ]));
        let binary = Arc::new(as_binary(&schema, &text_fields(&schema, Some(0))));
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

    /// The damaged rows of `column` (read as binary) restored as `target`, and the restored column.
    fn restored(column: ArrayRef, target: DataType) -> (Vec<(u64, String)>, ArrayRef) {
        let schema = Arc::new(Schema::new(vec![Field::new("c", target.clone(), true)]));
        let binary = Arc::new(as_binary(&schema, &text_fields(&schema, None)));
        assert_eq!(binary.field(0).data_type(), column.data_type());
        let batch = RecordBatch::try_new(binary, vec![column]).unwrap();
        let mut damaged = Vec::new();
        let text = restore(batch, &schema, "t", 0, &mut damaged).unwrap();
        let rows = damaged.iter().map(|d| (d.row, d.reason.clone())).collect();
        (rows, text.column(0).clone())
    }

    fn binary(values: &[&[u8]]) -> ArrayRef {
        Arc::new(BinaryArray::from_iter_values(values))
    }

    fn item(data_type: DataType) -> Arc<Field> {
        Arc::new(Field::new("item", data_type, true))
    }

    /// Each damaged row's number and the path its reason names.
    fn paths(damaged: &[(u64, String)]) -> Vec<(u64, &str)> {
        fn path(reason: &str) -> &str {
            assert!(reason.contains("is not UTF-8 text ("), "{reason}");
            let at = reason.strip_prefix("its value at ");
            at.and_then(|at| at.split(' ').next()).unwrap_or("")
        }
        damaged.iter().map(|(row, r)| (*row, path(r))).collect()
    }

    #[test]
    fn text_in_a_list_damages_its_row_only() {
        let values = binary(&[b"a", b"b", b"c", b"\xff", b"d", b"e\xc3"]);
        let offsets = OffsetBuffer::from_lengths([2, 2, 0, 1, 1]);
        let nulls = NullBuffer::from(vec![true, true, true, true, false]);
        let list = ListArray::new(item(DataType::Binary), offsets, values, Some(nulls));
        let (damaged, text) = restored(Arc::new(list), DataType::List(item(DataType::Utf8)));
        // Row 4 is null: its bad item is dropped, not reported.
        assert_eq!(paths(&damaged), [(1, "c[1]")]);
        let text = text.as_list::<i32>();
        assert!(text.is_null(1) && text.is_null(4) && text.is_valid(2));
        let row = |i: usize| -> Vec<String> {
            let value = text.value(i);
            let items = value.as_string::<i32>();
            items.iter().map(|s| s.unwrap().to_owned()).collect()
        };
        assert_eq!(row(0), ["a", "b"]);
        assert_eq!(row(3), ["d"]);
    }

    #[test]
    fn bad_text_outside_a_slice_damages_nothing() {
        let values = binary(&[b"a", b"\xff", b"c", b"d"]);
        let list = ListArray::new(
            item(DataType::Binary),
            OffsetBuffer::from_lengths([1, 1, 2]),
            values,
            None,
        );
        let sliced = Arc::new(list.slice(2, 1));
        let (damaged, text) = restored(sliced, DataType::List(item(DataType::Utf8)));
        assert!(damaged.is_empty(), "{damaged:?}");
        let row = text.as_list::<i32>().value(0);
        let items: Vec<&str> = row.as_string::<i32>().iter().flatten().collect();
        assert_eq!(items, ["c", "d"]);
    }

    #[test]
    fn text_that_is_all_utf8_keeps_its_buffers() {
        let values = binary(&[b"a", b"b", b"c"]);
        let bytes = values.to_data().buffers()[1].as_ptr();
        let list = ListArray::new(
            item(DataType::Binary),
            OffsetBuffer::from_lengths([1, 2]),
            values,
            None,
        );
        let (damaged, text) = restored(Arc::new(list), DataType::List(item(DataType::Utf8)));
        assert!(damaged.is_empty());
        let items = text.as_list::<i32>().values().to_data();
        assert_eq!(items.buffers()[1].as_ptr(), bytes);
    }

    #[test]
    fn text_in_a_struct_map_or_fixed_size_list_names_its_path() {
        let fields = |name: DataType| {
            Fields::from(vec![
                Field::new("name", name, true),
                Field::new("n", DataType::Int32, false),
            ])
        };
        let author = StructArray::new(
            fields(DataType::Binary),
            vec![
                binary(&[b"x", b"y\xff", b"z"]),
                Arc::new(Int32Array::from(vec![1, 2, 3])),
            ],
            None,
        );
        let (damaged, text) = restored(Arc::new(author), DataType::Struct(fields(DataType::Utf8)));
        assert_eq!(paths(&damaged), [(1, "c.name")]);
        let names = text.as_struct().column(0).as_string::<i32>().clone();
        assert_eq!((names.value(0), names.value(2)), ("x", "z"));
        assert!(text.is_null(1));

        let entries = |key: DataType, value: DataType| {
            Fields::from(vec![
                Field::new("key", key, false),
                Field::new("value", value, true),
            ])
        };
        let map = MapArray::new(
            Arc::new(Field::new_struct(
                "entries",
                entries(DataType::Binary, DataType::Binary),
                false,
            )),
            OffsetBuffer::from_lengths([1, 2]),
            StructArray::new(
                entries(DataType::Binary, DataType::Binary),
                vec![binary(&[b"k", b"l", b"\xfe"]), binary(&[b"v", b"w", b"x"])],
                None,
            ),
            None,
            false,
        );
        let target = DataType::Map(
            Arc::new(Field::new_struct(
                "entries",
                entries(DataType::Utf8, DataType::Utf8),
                false,
            )),
            false,
        );
        let (damaged, text) = restored(Arc::new(map), target);
        assert_eq!(paths(&damaged), [(1, "c[1].key")]);
        let keys = text.as_map().keys().as_string::<i32>().clone();
        assert_eq!(keys.value(0), "k");

        let fixed = FixedSizeListArray::new(
            item(DataType::BinaryView),
            2,
            Arc::new(BinaryViewArray::from_iter_values([
                b"a", b"b", b"c", b"\xff",
            ])),
            None,
        );
        let (damaged, _) = restored(
            Arc::new(fixed),
            DataType::FixedSizeList(item(DataType::Utf8View), 2),
        );
        assert_eq!(paths(&damaged), [(1, "c[1]")]);

        let large = LargeListArray::new(
            item(DataType::LargeBinary),
            OffsetBuffer::from_lengths([1, 1]),
            Arc::new(LargeBinaryArray::from_iter_values([b"\xc3", b"b"])),
            None,
        );
        let (damaged, text) = restored(
            Arc::new(large),
            DataType::LargeList(item(DataType::LargeUtf8)),
        );
        assert_eq!(paths(&damaged), [(0, "c[0]")]);
        assert_eq!(
            text.as_list::<i64>().value(1).as_string::<i64>().value(0),
            "b"
        );
    }

    #[test]
    fn a_dictionary_value_that_is_not_utf8_damages_the_rows_that_use_it() {
        let target = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let dictionary = |keys: Vec<Option<i32>>| -> ArrayRef {
            let values = binary(&[b"x", b"\xff", b"y"]);
            Arc::new(DictionaryArray::<Int32Type>::new(
                Int32Array::from(keys),
                values,
            ))
        };
        let (damaged, text) = restored(
            dictionary(vec![Some(0), Some(1), Some(2), Some(1), None]),
            target.clone(),
        );
        assert_eq!(paths(&damaged), [(1, ""), (3, "")]);
        let text = text.as_dictionary::<Int32Type>();
        let strings = text.downcast_dict::<arrow_array::StringArray>().unwrap();
        assert_eq!((strings.value(0), strings.value(2)), ("x", "y"));
        assert!(text.is_null(1) && text.is_null(3) && text.is_null(4));
        // A bad value no row uses damages nothing.
        let (damaged, text) = restored(dictionary(vec![Some(2), Some(0)]), target.clone());
        assert!(damaged.is_empty());
        assert_eq!(text.null_count(), 0);
        // Nor inside a list.
        let read = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Binary));
        let list = ListArray::new(
            item(read),
            OffsetBuffer::from_lengths([1, 2]),
            dictionary(vec![Some(0), Some(2), Some(1)]),
            None,
        );
        let (damaged, _) = restored(Arc::new(list), DataType::List(item(target)));
        assert_eq!(paths(&damaged), [(1, "c[1]")]);
    }
}
