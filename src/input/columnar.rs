//! What Parquet and Arrow inputs share: choosing the vector column, turning a list column of a
//! record batch into row-major [`Elements`] (checking ragged rows and null elements), and a
//! [`BatchReader`] over any stream of record batches.

use super::{Batch, BatchReader, ElementType, Elements, InputError};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use std::collections::VecDeque;

/// Column names tried, in order, when several list columns exist and none was chosen.
const DEFAULT_NAMES: [&str; 3] = ["emb", "embedding", "vector"];

/// The chosen vector column of a schema.
#[derive(Debug, Clone)]
pub(crate) struct VectorColumn {
    /// Index of the column in the schema.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// The element type of its lists.
    pub element_type: ElementType,
    /// The list size of a `fixed_size_list` column.
    pub fixed_dimension: Option<usize>,
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
/// `emb`, `embedding`, `vector` among the list-typed columns.
pub(crate) fn choose_column(
    schema: &Schema,
    requested: Option<&str>,
    input: &str,
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
        let names: Vec<&str> = candidates
            .iter()
            .filter_map(|&i| fields.get(i).map(|f| f.name().as_str()))
            .collect();
        names.join(", ")
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
                .ok_or_else(|| {
                    InputError::Options(format!(
                        "{input}: several list columns ({}); choose one with --column",
                        candidate_names()
                    ))
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
    let (child, fixed_dimension) = list_of(field.data_type()).ok_or_else(unsupported)?;
    let element_type = element_type_of(child).ok_or_else(unsupported)?;
    let others: Vec<usize> = (0..fields.len()).filter(|&i| i != index).collect();
    let passthrough = schema
        .project(&others)
        .map_err(|e| InputError::Data(format!("{input}: {e}")))?;
    Ok(VectorColumn {
        index,
        name: field.name().clone(),
        element_type,
        fixed_dimension,
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
            let rows = list
                .value_offsets()
                .windows(2)
                .enumerate()
                .map(|(i, w)| match *w {
                    [a, b] if valid(i) => Some((a.max(0) as usize, (b - a).max(0) as usize)),
                    _ => None,
                })
                .collect();
            return Some(Lists {
                values: list.values().as_ref(),
                rows,
            });
        }
        if let Some(list) = array.as_list_opt::<i64>() {
            let rows = list
                .value_offsets()
                .windows(2)
                .enumerate()
                .map(|(i, w)| match *w {
                    [a, b] if valid(i) => Some((a.max(0) as usize, (b - a).max(0) as usize)),
                    _ => None,
                })
                .collect();
            return Some(Lists {
                values: list.values().as_ref(),
                rows,
            });
        }
        let list = array.as_fixed_size_list_opt()?;
        let size = usize::try_from(list.value_length()).ok()?;
        let rows = (0..list.len())
            .map(|i| valid(i).then_some((i * size, size)))
            .collect();
        Some(Lists {
            values: list.values().as_ref(),
            rows,
        })
    }

    /// Length of the first non-null row.
    fn first_length(&self) -> Option<usize> {
        self.rows.iter().flatten().map(|&(_, len)| len).next()
    }
}

/// The dimension of a record batch's vector column: the length of its first non-null row.
fn first_dimension(batch: &RecordBatch, column: &VectorColumn) -> Option<usize> {
    column
        .fixed_dimension
        .or_else(|| Lists::of(batch.column(column.index).as_ref())?.first_length())
}

/// Converts a record batch (whose first row is row `first_row` of the input) into a [`Batch`].
fn convert(
    batch: &RecordBatch,
    column: &VectorColumn,
    dimension: usize,
    first_row: u64,
    input: &str,
) -> Result<Batch, InputError> {
    let array = batch.column(column.index);
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
    let others: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| i != column.index)
        .collect();
    let columns = batch
        .project(&others)
        .map_err(|e| InputError::Data(format!("{input}: {e}")))?;
    Ok(Batch {
        first_row,
        rows: batch.num_rows(),
        elements,
        validity,
        columns: Some(columns),
    })
}

/// The rows' elements, row-major, zeros for null rows. Every valid row has `dimension` elements
/// (checked by the caller); values out of the array's bounds read as zeros.
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
        if let Some(source) = row.and_then(|(start, len)| values.get(start..start + len)) {
            if source.len() == target.len() {
                target.copy_from_slice(source);
            }
        }
    }
    out
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
            dimension: column.fixed_dimension.unwrap_or(0),
            column,
            next_row: span.first_row + span.skip,
            skip: span.skip,
            limit: span.limit,
            rows: span.rows,
            batch_rows: batch_rows.max(1),
        };
        if reader.column.fixed_dimension.is_none() {
            while let Some(batch) = reader.pull()? {
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
            let Some(next) = self.batches.next() else {
                if self.skip > 0 {
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
        Some(&self.column.name)
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
        let batch = if batch.num_rows() > self.batch_rows {
            let rest = batch.slice(self.batch_rows, batch.num_rows() - self.batch_rows);
            self.pending.push_front(rest);
            batch.slice(0, self.batch_rows)
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
