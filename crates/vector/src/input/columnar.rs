//! What Parquet and Arrow inputs share: choosing the vector column, turning a list column of a
//! record batch into row-major [`Elements`] (checking ragged rows and null elements), and a
//! [`BatchReader`] over any stream of record batches, handing out large record batches in slices of
//! at most `batch_rows` rows and [`MAX_DECODED_BATCH_BYTES`].

use super::guard::fenced;
use super::{Batch, BatchReader, ElementType, Elements, InputError, MAX_DECODED_BATCH_BYTES};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, GenericListArray, OffsetSizeTrait, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use std::collections::VecDeque;

/// Column names tried, in order, when several list columns exist and none was chosen.
const DEFAULT_NAMES: [&str; 3] = ["emb", "embedding", "vector"];

/// The chosen vector column of a schema, or none for an input read for its other columns alone.
#[derive(Debug, Clone)]
pub(crate) struct VectorColumn {
    /// Index of the column in the schema; None when the input is read without vectors (see
    /// `InputOptions::vectors_optional`): every batch then holds no elements.
    pub index: Option<usize>,
    /// Its name.
    pub name: String,
    /// The element type of its lists.
    pub element_type: ElementType,
    /// The dimension when known before reading rows: the size of a `fixed_size_list`, or what a
    /// scan found (see [`scan_dimension`]).
    pub known_dimension: Option<usize>,
    /// The schema without this column: the passed-through columns.
    pub passthrough: SchemaRef,
}

/// The list's element type and, for `fixed_size_list`, its size; None when not list-typed.
fn list_of(data_type: &DataType) -> Option<(&DataType, Option<usize>)> {
    match data_type {
        DataType::List(child) | DataType::LargeList(child) => Some((child.data_type(), None)),
        DataType::FixedSizeList(child, size) => {
            Some((child.data_type(), usize::try_from(*size).ok()))
        }
        _ => None,
    }
}

/// The element type of an Arrow element data type, when it is supported.
fn element_type_of(data_type: &DataType) -> Option<ElementType> {
    Some(match data_type {
        DataType::Float16 => ElementType::F16,
        DataType::Float32 => ElementType::F32,
        DataType::Float64 => ElementType::F64,
        DataType::Int8 => ElementType::I8,
        DataType::UInt8 => ElementType::U8,
        DataType::Int16 => ElementType::I16,
        DataType::Int32 => ElementType::I32,
        DataType::Int64 => ElementType::I64,
        _ => return None,
    })
}

/// Picks the vector column: `requested`, else the only list-typed column, else the first of
/// `emb`, `embedding`, `vector` among the list-typed columns. With no list-typed column and none
/// requested, `vectors_optional` reads the input without vectors instead of refusing it.
pub(crate) fn choose_column(
    schema: &Schema,
    requested: Option<&str>,
    input: &str,
    vectors_optional: bool,
) -> Result<VectorColumn, InputError> {
    let fields = schema.fields();
    let all_names = || {
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        names.join(", ")
    };
    let candidates: Vec<usize> = (0..fields.len())
        .filter(|&i| {
            fields
                .get(i)
                .is_some_and(|f| list_of(f.data_type()).is_some())
        })
        .collect();
    let candidate_names = || {
        candidates
            .iter()
            .filter_map(|&i| fields.get(i).map(|f| f.name().clone()))
            .collect()
    };
    let index = match requested {
        Some(name) => fields
            .iter()
            .position(|f| f.name() == name)
            .ok_or_else(|| {
                InputError::Options(format!(
                    "{input}: no column '{name}' (columns: {})",
                    all_names()
                ))
            })?,
        None => match candidates[..] {
            [only] => only,
            [] if vectors_optional => {
                return Ok(VectorColumn {
                    index: None,
                    name: String::new(),
                    element_type: ElementType::F32,
                    known_dimension: Some(0),
                    passthrough: SchemaRef::new(schema.clone()),
                })
            }
            [] => {
                return Err(InputError::Unsupported(format!(
                    "{input}: no list-typed column to read vectors from (columns: {})",
                    all_names()
                )))
            }
            _ => DEFAULT_NAMES
                .iter()
                .find_map(|name| {
                    candidates
                        .iter()
                        .copied()
                        .find(|&i| fields.get(i).is_some_and(|f| f.name() == name))
                })
                .ok_or_else(|| InputError::AmbiguousColumn {
                    input: input.to_string(),
                    columns: candidate_names(),
                })?,
        },
    };
    let field = fields
        .get(index)
        .ok_or_else(|| InputError::Options(format!("{input}: no column {index}")))?;
    let unsupported = || {
        InputError::Unsupported(format!(
            "{input}: column '{}' has type {}; supported: list, large_list or fixed_size_list of \
             float16/32/64 or int8/16/32/64 (or uint8)",
            field.name(),
            field.data_type()
        ))
    };
    let (child, known_dimension) = list_of(field.data_type()).ok_or_else(unsupported)?;
    let element_type = element_type_of(child).ok_or_else(unsupported)?;
    let others: Vec<usize> = (0..fields.len()).filter(|&i| i != index).collect();
    let passthrough = schema
        .project(&others)
        .map_err(|e| InputError::Data(format!("{input}: {e}")))?;
    Ok(VectorColumn {
        index: Some(index),
        name: field.name().clone(),
        element_type,
        known_dimension,
        passthrough: SchemaRef::new(passthrough),
    })
}

/// The vector column of a record batch, as rows of `(start in values, length)` or None for a null
/// row, plus the values array.
struct Lists<'a> {
    values: &'a dyn Array,
    rows: Vec<Option<(usize, usize)>>,
}

impl<'a> Lists<'a> {
    fn of(array: &'a dyn Array) -> Option<Lists<'a>> {
        let valid = |i: usize| array.is_valid(i);
        if let Some(list) = array.as_list_opt::<i32>() {
            return Some(Self::of_offsets(list, valid));
        }
        if let Some(list) = array.as_list_opt::<i64>() {
            return Some(Self::of_offsets(list, valid));
        }
        let list = array.as_fixed_size_list_opt()?;
        let size = usize::try_from(list.value_length()).ok()?;
        let rows = (0..list.len())
            .map(|i| valid(i).then_some((i.saturating_mul(size), size)))
            .collect();
        Some(Lists {
            values: list.values().as_ref(),
            rows,
        })
    }

    /// The rows of a `list` or `large_list` array, from its offsets.
    fn of_offsets<O: OffsetSizeTrait>(
        list: &'a GenericListArray<O>,
        valid: impl Fn(usize) -> bool,
    ) -> Lists<'a> {
        let rows = list
            .value_offsets()
            .windows(2)
            .enumerate()
            .map(|(i, w)| match *w {
                [a, b] if valid(i) => {
                    // Offsets of a valid array are non-negative and ascending; anything else
                    // becomes an empty row, never a panic.
                    let start = a.to_usize().unwrap_or(0);
                    Some((start, b.to_usize().unwrap_or(0).saturating_sub(start)))
                }
                _ => None,
            })
            .collect();
        Lists {
            values: list.values().as_ref(),
            rows,
        }
    }

    /// Length of the first non-null row.
    fn first_length(&self) -> Option<usize> {
        self.rows.iter().flatten().map(|&(_, len)| len).next()
    }
}

/// The dimension of the vector column: the length of the first non-null row of `batches`
/// (0 when every row is null), reading no further than that row.
pub(crate) fn scan_dimension(
    batches: RecordBatches,
    column: &VectorColumn,
    input: &str,
) -> Result<usize, InputError> {
    let mut batches = batches;
    while let Some(batch) = fenced(input, "the first rows", || batches.next())? {
        let batch = batch.map_err(|e| InputError::Data(format!("{input}: {e}")))?;
        if let Some(dimension) = first_dimension(&batch, column) {
            return Ok(dimension);
        }
    }
    Ok(0)
}

/// The dimension of a record batch's vector column: the length of its first non-null row.
fn first_dimension(batch: &RecordBatch, column: &VectorColumn) -> Option<usize> {
    column
        .known_dimension
        .or_else(|| Lists::of(batch.column(column.index?).as_ref())?.first_length())
}

/// Converts a record batch (whose first row is row `first_row` of the input) into a [`Batch`].
fn convert(
    batch: &RecordBatch,
    column: &VectorColumn,
    dimension: usize,
    first_row: u64,
    input: &str,
) -> Result<Batch, InputError> {
    let Some(index) = column.index else {
        let (columns, damaged) = passthrough(batch, column, first_row, input)?;
        return Ok(Batch {
            first_row,
            rows: batch.num_rows(),
            elements: Elements::F32(Vec::new()),
            validity: None,
            columns: Some(columns),
            damaged,
        });
    };
    let array = batch.column(index);
    let lists = Lists::of(array.as_ref()).ok_or_else(|| {
        InputError::Unsupported(format!(
            "{input}: column '{}' is not a list column in every batch",
            column.name
        ))
    })?;
    let element_nulls = lists.values.logical_nulls().filter(|n| n.null_count() > 0);
    for (i, row) in lists.rows.iter().enumerate() {
        if let Some((start, len)) = *row {
            let row_number = first_row + i as u64;
            if len != dimension {
                return Err(InputError::Data(format!(
                    "{input}: row {row_number} has {len} elements, but the first row has \
                     {dimension} (column '{}')",
                    column.name
                )));
            }
            if start
                .checked_add(len)
                .is_none_or(|end| end > lists.values.len())
            {
                return Err(InputError::Data(format!(
                    "{input}: row {row_number} points past the column's values (column '{}')",
                    column.name
                )));
            }
            if let Some(nulls) = &element_nulls {
                if let Some(element) = (0..len).find(|&e| nulls.is_null(start + e)) {
                    return Err(InputError::Data(format!(
                        "{input}: row {row_number} element {element} is null (column '{}')",
                        column.name
                    )));
                }
            }
        }
    }
    if lists.rows.len().checked_mul(dimension).is_none() {
        return Err(InputError::Data(format!(
            "{input}: {} rows of {dimension} elements do not fit in memory",
            lists.rows.len()
        )));
    }
    let elements = match column.element_type {
        ElementType::F16 => Elements::F16(gather::<Float16Type>(&lists, dimension)),
        ElementType::F32 => Elements::F32(gather::<Float32Type>(&lists, dimension)),
        ElementType::F64 => Elements::F64(gather::<Float64Type>(&lists, dimension)),
        ElementType::I8 => Elements::I8(gather::<Int8Type>(&lists, dimension)),
        ElementType::U8 => Elements::U8(gather::<UInt8Type>(&lists, dimension)),
        ElementType::I16 => Elements::I16(gather::<Int16Type>(&lists, dimension)),
        ElementType::I32 => Elements::I32(gather::<Int32Type>(&lists, dimension)),
        ElementType::I64 => Elements::I64(gather::<Int64Type>(&lists, dimension)),
    };
    let validity =
        (array.null_count() > 0).then(|| lists.rows.iter().map(Option::is_some).collect());
    let (columns, damaged) = passthrough(batch, column, first_row, input)?;
    Ok(Batch {
        first_row,
        rows: batch.num_rows(),
        elements,
        validity,
        columns: Some(columns),
        damaged,
    })
}

/// The batch's columns but the vector column, their text restored (see `text::restore`), and the
/// rows whose text could not be.
fn passthrough(
    batch: &RecordBatch,
    column: &VectorColumn,
    first_row: u64,
    input: &str,
) -> Result<(RecordBatch, Vec<super::DamagedRow>), InputError> {
    let others: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| Some(i) != column.index)
        .collect();
    let mut damaged = Vec::new();
    let columns = batch
        .project(&others)
        .and_then(|columns| {
            super::text::restore(columns, &column.passthrough, input, first_row, &mut damaged)
        })
        .map_err(|e| InputError::Data(format!("{input}: {e}")))?;
    Ok((columns, damaged))
}

/// The rows' elements, row-major, zeros for null rows. Every valid row has `dimension` elements
/// within the values, and rows × dimension fits in a usize (both checked by the caller).
fn gather<T: ArrowPrimitiveType>(lists: &Lists, dimension: usize) -> Vec<T::Native> {
    let Some(values) = lists.values.as_primitive_opt::<T>() else {
        return vec![T::Native::default(); lists.rows.len() * dimension];
    };
    let values = values.values();
    // Fast path: every row valid and the rows back to back, one copy.
    if let Some(Some((start, _))) = lists.rows.first() {
        let contiguous = lists
            .rows
            .iter()
            .enumerate()
            .all(|(i, row)| matches!(row, Some((s, _)) if *s == start + i * dimension));
        if contiguous {
            if let Some(all) = values.get(*start..start + lists.rows.len() * dimension) {
                return all.to_vec();
            }
        }
    }
    let mut out = vec![T::Native::default(); lists.rows.len() * dimension];
    for (row, target) in lists
        .rows
        .iter()
        .zip(out.chunks_exact_mut(dimension.max(1)))
    {
        let range = row.and_then(|(start, len)| Some(start..start.checked_add(len)?));
        if let Some(source) = range.and_then(|range| values.get(range)) {
            if source.len() == target.len() {
                target.copy_from_slice(source);
            }
        }
    }
    out
}

/// The bytes of `batch`'s rows (not of the whole buffers a slice shares).
fn slice_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|column| {
            column
                .to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| column.get_array_memory_size())
        })
        .fold(0, usize::saturating_add)
}

/// How many of `batch`'s first rows to hand out: at most `most`, and fewer when they hold more than
/// [`MAX_DECODED_BATCH_BYTES`] (at least one row).
fn rows_within_budget(batch: &RecordBatch, most: usize) -> usize {
    let mut rows = most.clamp(1, batch.num_rows().max(1));
    loop {
        let bytes = slice_bytes(&batch.slice(0, rows.min(batch.num_rows())));
        if bytes <= MAX_DECODED_BATCH_BYTES || rows == 1 {
            return rows;
        }
        // In proportion, and always fewer: rows of unequal size may need a second cut.
        let fitting = (rows as u128 * MAX_DECODED_BATCH_BYTES as u128 / bytes as u128) as usize;
        rows = fitting.clamp(1, rows - 1);
    }
}

/// A stream of record batches.
pub(crate) type RecordBatches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// Batches from a stream of record batches: skips and limits rows (for inputs that cannot select
/// rows themselves), splits large record batches, and converts the vector column.
pub(crate) struct ColumnarReader {
    input: String,
    format: &'static str,
    batches: RecordBatches,
    /// Record batches read ahead (to find the dimension), already skipped and limited.
    pending: VecDeque<RecordBatch>,
    column: VectorColumn,
    dimension: usize,
    /// Input row number of the next row yielded.
    next_row: u64,
    /// Rows still to skip from the stream.
    skip: u64,
    /// Whether a row range starting past row 0 has yielded nothing yet (if the stream ends then,
    /// the range starts past the end: an error, as for files).
    awaiting_start: bool,
    /// Rows still to yield; None = all.
    limit: Option<u64>,
    /// Rows this reader yields, when known.
    rows: Option<u64>,
    batch_rows: usize,
}

/// Where a [`ColumnarReader`] starts and what it yields.
pub(crate) struct Span {
    /// Input row number of the stream's first row.
    pub first_row: u64,
    /// Rows to skip from the stream before yielding.
    pub skip: u64,
    /// Rows to yield at most; None = all.
    pub limit: Option<u64>,
    /// Rows the reader yields, when known up front.
    pub rows: Option<u64>,
}

impl ColumnarReader {
    /// Reads ahead to the first non-null row to learn the dimension (0 when every row is null).
    pub(crate) fn new(
        input: &str,
        format: &'static str,
        batches: RecordBatches,
        column: VectorColumn,
        span: Span,
        batch_rows: usize,
    ) -> Result<ColumnarReader, InputError> {
        let mut reader = ColumnarReader {
            input: input.to_string(),
            format,
            batches,
            pending: VecDeque::new(),
            dimension: column.known_dimension.unwrap_or(0),
            column,
            next_row: span.first_row + span.skip,
            skip: span.skip,
            awaiting_start: span.skip > 0,
            limit: span.limit,
            rows: span.rows,
            batch_rows: batch_rows.max(1),
        };
        if reader.column.known_dimension.is_none() {
            loop {
                let Some(batch) = reader.pull()? else {
                    // The whole input is read ahead: its row count is known.
                    let read: usize = reader.pending.iter().map(RecordBatch::num_rows).sum();
                    reader.rows = Some(read as u64);
                    break;
                };
                let found = first_dimension(&batch, &reader.column);
                reader.pending.push_back(batch);
                if let Some(dimension) = found {
                    reader.dimension = dimension;
                    break;
                }
            }
        }
        Ok(reader)
    }

    /// The next record batch from the stream after skipping and within the limit.
    fn pull(&mut self) -> Result<Option<RecordBatch>, InputError> {
        loop {
            if self.limit == Some(0) {
                return Ok(None);
            }
            let what = format!("{} rows from row {}", self.format, self.next_row);
            let batches = &mut self.batches;
            let Some(next) = fenced(&self.input, &what, || batches.next())? else {
                if self.awaiting_start {
                    return Err(InputError::Options(format!(
                        "{}: the row range starts at row {} but the input has fewer rows",
                        self.input, self.next_row
                    )));
                }
                return Ok(None);
            };
            let mut batch = next.map_err(|e| {
                InputError::Data(format!(
                    "{}: cannot read {} rows from row {}: {e}",
                    self.input, self.format, self.next_row
                ))
            })?;
            let rows = batch.num_rows() as u64;
            if self.skip >= rows {
                self.skip -= rows;
                continue;
            }
            let skip = self.skip as usize;
            self.skip = 0;
            let keep = self.limit.map_or(rows, |l| l.min(rows - skip as u64)) as usize;
            if skip > 0 || keep < batch.num_rows() {
                batch = batch.slice(skip, keep);
            }
            if let Some(limit) = &mut self.limit {
                *limit -= keep as u64;
            }
            if keep > 0 {
                self.awaiting_start = false;
                return Ok(Some(batch));
            }
        }
    }
}

impl BatchReader for ColumnarReader {
    fn element_type(&self) -> ElementType {
        self.column.element_type
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn rows(&self) -> Option<u64> {
        self.rows
    }

    fn column_name(&self) -> Option<&str> {
        self.column.index.map(|_| self.column.name.as_str())
    }

    fn has_vectors(&self) -> bool {
        self.column.index.is_some()
    }

    fn passthrough_schema(&self) -> Option<SchemaRef> {
        Some(self.column.passthrough.clone())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        let batch = match self.pending.pop_front() {
            Some(batch) => batch,
            None => match self.pull()? {
                Some(batch) => batch,
                None => return Ok(None),
            },
        };
        let rows = rows_within_budget(&batch, self.batch_rows);
        let batch = if batch.num_rows() > rows {
            let rest = batch.slice(rows, batch.num_rows() - rows);
            self.pending.push_front(rest);
            batch.slice(0, rows)
        } else {
            batch
        };
        if self.dimension == 0 {
            if let Some(dimension) = first_dimension(&batch, &self.column) {
                self.dimension = dimension;
            }
        }
        let converted = convert(
            &batch,
            &self.column,
            self.dimension,
            self.next_row,
            &self.input,
        )?;
        self.next_row += batch.num_rows() as u64;
        Ok(Some(converted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float32Array, Int64Array, ListArray};
    use arrow_buffer::{NullBuffer, OffsetBuffer};
    use arrow_schema::Field;
    use std::sync::Arc;

    fn list(name: &str, element: DataType) -> Field {
        Field::new(
            name,
            DataType::List(Arc::new(Field::new("item", element, true))),
            true,
        )
    }

    #[test]
    fn column_choice_follows_the_rules() {
        let pick = |fields: Vec<Field>, requested: Option<&str>| {
            choose_column(&Schema::new(fields), requested, "t", false).map(|c| c.name)
        };
        let id = Field::new("id", DataType::Int64, false);
        let only = vec![id.clone(), list("x", DataType::Float32)];
        assert_eq!(pick(only.clone(), None).unwrap(), "x");
        let several = vec![list("a", DataType::Float32), list("vector", DataType::Int8)];
        assert_eq!(pick(several.clone(), None).unwrap(), "vector");
        assert_eq!(pick(several, Some("a")).unwrap(), "a");
        let ambiguous = vec![list("a", DataType::Float32), list("b", DataType::Float32)];
        let error = pick(ambiguous, None).unwrap_err().to_string();
        assert!(
            error.contains("a, b") && error.contains("choose one"),
            "{error}"
        );
        assert!(pick(vec![id.clone()], None).is_err());
        assert!(pick(only.clone(), Some("id")).is_err());
        assert!(pick(only, Some("nope")).is_err());
        assert!(pick(vec![list("x", DataType::Utf8)], None).is_err());
    }

    #[test]
    fn null_rows_are_zeros_and_other_columns_pass_through() {
        let item = Arc::new(Field::new("item", DataType::Float32, true));
        let emb = ListArray::new(
            item.clone(),
            OffsetBuffer::from_lengths([2, 0, 2]),
            Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0, 4.0])),
            Some(NullBuffer::from(vec![true, false, true])),
        );
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("emb", DataType::List(item), true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![7, 8, 9])), Arc::new(emb)],
        )
        .unwrap();
        let column = choose_column(&schema, None, "t", false).unwrap();
        let converted = convert(&batch, &column, 2, 10, "t").unwrap();
        assert_eq!(converted.elements.to_f64(), [1.0, 2.0, 0.0, 0.0, 3.0, 4.0]);
        assert_eq!(converted.validity, Some(vec![true, false, true]));
        let columns = converted.columns.unwrap();
        assert_eq!(columns.schema().field(0).name(), "id");
        assert_eq!(columns.num_columns(), 1);
        let error = convert(&batch, &column, 3, 10, "t")
            .unwrap_err()
            .to_string();
        assert!(error.contains("row 10 has 2 elements"), "{error}");
    }
}
