//! The files of a dataset folder that the benchmark reads whole: the ground truth
//! ([`GroundTruth`], `neighbors*.parquet`), the queries ([`Queries`], `test.parquet`) and the
//! rows' labels ([`ScalarLabels`], `scalar_labels.parquet`). Lists and vectors go through the
//! vector crate's Parquet input (its checks of ragged rows, element types and damaged files);
//! the labels, a text column, through the Arrow reader of the parquet crate. Memory follows what
//! the files really hold, batch by batch, never what a footer claims.

use crate::DatasetError;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use cqlwire_vector::input::{
    self, Elements, InputFormat, InputOptions, Neighbors, NeighborsFormat, RowSelection,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use std::collections::HashMap;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Rows per record batch read from a Parquet file.
const BATCH_ROWS: usize = 4096;

/// The id column of every VectorDBBench file.
pub const ID_COLUMN: &str = "id";
/// The vector column of the training and test files.
pub const VECTOR_COLUMN: &str = "emb";
/// The label column of `scalar_labels.parquet`.
pub const LABELS_COLUMN: &str = "labels";

/// The ground truth of a query set: per query (in the file's row order, which is the test
/// file's), the ids of its nearest training rows, best first; every list of the same length, no
/// id negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroundTruth {
    file: String,
    lists: Neighbors,
}

impl GroundTruth {
    /// Reads a VectorDBBench ground truth (`neighbors_id`, list of integers).
    pub fn read(path: &Path) -> Result<GroundTruth, DatasetError> {
        GroundTruth::read_as(path, Some(NeighborsFormat::Parquet))
    }

    /// Reads a ground truth in `format`, or the one its name implies (as `search --ground-truth`).
    pub fn read_as(
        path: &Path,
        format: Option<NeighborsFormat>,
    ) -> Result<GroundTruth, DatasetError> {
        GroundTruth::read_to(path, format, usize::MAX)
    }

    /// Reads a ground truth in `format`, or the one its name implies, keeping the first `k` ids
    /// of each list (`usize::MAX`: all of them): memory follows queries × k whatever width the
    /// file claims. Lists shorter than k are kept whole ([`GroundTruth::k`] says how long).
    pub fn read_to(
        path: &Path,
        format: Option<NeighborsFormat>,
        k: usize,
    ) -> Result<GroundTruth, DatasetError> {
        let lists = input::read_neighbors_to(path, format, k)?;
        let truth = GroundTruth {
            file: path.display().to_string(),
            lists,
        };
        truth.check_not_negative()?;
        if truth.lists.k() == 0 && truth.queries() > 0 {
            return Err(DatasetError::EmptyLists { file: truth.file });
        }
        Ok(truth)
    }

    /// The number of queries (rows).
    pub fn queries(&self) -> usize {
        self.lists.rows()
    }

    /// Ids per list.
    pub fn k(&self) -> usize {
        self.lists.k()
    }

    /// The list of query `query`, best first (empty past the end).
    pub fn list(&self, query: usize) -> &[i64] {
        self.lists.row(query)
    }

    /// Refuses lists for another number of queries than `queries`.
    pub fn check_queries(&self, queries: usize) -> Result<(), DatasetError> {
        if self.queries() == queries {
            return Ok(());
        }
        Err(DatasetError::QueryCount {
            file: self.file.clone(),
            lists: self.queries(),
            queries,
        })
    }

    /// Refuses a negative id (before the training set is known), naming the first.
    fn check_not_negative(&self) -> Result<(), DatasetError> {
        for query in 0..self.queries() {
            if let Some(&id) = self.list(query).iter().find(|&&id| id < 0) {
                return Err(DatasetError::NegativeId {
                    file: self.file.clone(),
                    row: query as u64,
                    id,
                });
            }
        }
        Ok(())
    }

    /// Refuses an id outside `ids` (the training set's ids), naming the first.
    pub fn check_ids(&self, ids: Range<i64>) -> Result<(), DatasetError> {
        for query in 0..self.queries() {
            if let Some(&id) = self.list(query).iter().find(|id| !ids.contains(id)) {
                return Err(DatasetError::IdOutOfRange {
                    file: self.file.clone(),
                    row: query as u64,
                    id,
                    range: format!("{}..{}", ids.start, ids.end),
                });
            }
        }
        Ok(())
    }
}

/// The queries of `test.parquet`: ids and float32 vectors, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Queries {
    ids: Vec<i64>,
    dimension: usize,
    vectors: Vec<f32>,
}

impl Queries {
    /// Reads `id` and `emb` (a list of float32; float16 and float64 elements are converted to
    /// float32 as a CQL `vector<float, D>` needs).
    pub fn read(path: &Path) -> Result<Queries, DatasetError> {
        let file = path.display().to_string();
        let options = InputOptions {
            format: Some(InputFormat::Parquet),
            column: Some(VECTOR_COLUMN.to_owned()),
            dataset: String::new(),
            selection: RowSelection::All,
            batch_rows: BATCH_ROWS,
            vectors_optional: false,
        };
        let mut reader = input::open(Some(path), &options)?;
        let dimension = reader.dimension();
        let (mut ids, mut vectors) = (Vec::new(), Vec::new());
        while let Some(batch) = reader.next_batch()? {
            if let Some(row) = batch.validity.iter().flatten().position(|valid| !valid) {
                return Err(DatasetError::NullValue {
                    file,
                    row: batch.first_row + row as u64,
                    column: VECTOR_COLUMN.to_owned(),
                });
            }
            let columns = batch.columns.as_ref();
            let column = columns.and_then(|c| c.column_by_name(ID_COLUMN));
            let Some(column) = column else {
                let names = columns.map(column_names).unwrap_or_default();
                return Err(missing_column(&file, ID_COLUMN, names));
            };
            ids.extend(int64_values(&file, column.as_ref(), batch.first_row)?);
            match &batch.elements {
                Elements::F32(values) => vectors.extend_from_slice(values),
                other => vectors.extend(other.to_f64().into_iter().map(|x| x as f32)),
            }
        }
        Ok(Queries {
            ids,
            dimension,
            vectors,
        })
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there is no query.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Elements per vector.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// The queries' ids, in row order.
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }

    /// The vector of query `query` (empty past the end).
    pub fn vector(&self, query: usize) -> &[f32] {
        let start = query.saturating_mul(self.dimension);
        self.vectors
            .get(start..start.saturating_add(self.dimension))
            .unwrap_or(&[])
    }
}

/// The labels of the training rows (`scalar_labels.parquet`: `id`, `labels` one text a row),
/// each distinct label kept once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalarLabels {
    ids: Vec<i64>,
    /// Per row, its label's index in `names` (None: a null label).
    codes: Vec<Option<u32>>,
    names: Vec<String>,
    /// Row of each id when the ids are not the row numbers.
    rows: Option<HashMap<i64, usize>>,
}

impl ScalarLabels {
    /// Reads the file: `id` int64 without nulls or repeats, `labels` text.
    pub fn read(path: &Path) -> Result<ScalarLabels, DatasetError> {
        let file = path.display().to_string();
        fenced(&file, || read_labels(path, &file))?
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the file has no row.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The distinct labels, in order of first appearance.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The label of the row with id `id` (None: no such row, or a null label).
    pub fn label(&self, id: i64) -> Option<&str> {
        let row = match &self.rows {
            None => usize::try_from(id).ok()?,
            Some(rows) => *rows.get(&id)?,
        };
        let code = (*self.codes.get(row)?)?;
        self.names.get(code as usize).map(String::as_str)
    }

    /// How many rows carry `label`.
    pub fn count(&self, label: &str) -> usize {
        let Some(code) = self.names.iter().position(|name| name == label) else {
            return 0;
        };
        let code = u32::try_from(code).ok();
        self.codes
            .iter()
            .filter(|&&c| c.is_some() && c == code)
            .count()
    }
}

fn read_labels(path: &Path, file: &str) -> Result<ScalarLabels, DatasetError> {
    let opened = std::fs::File::open(path).map_err(|source| DatasetError::Io {
        path: file.to_owned(),
        source,
    })?;
    let parquet_error = |e: &dyn std::fmt::Display| DatasetError::Parquet {
        file: file.to_owned(),
        message: e.to_string(),
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(opened).map_err(|e| parquet_error(&e))?;
    let schema = builder.schema().clone();
    let names = column_names_of(&schema);
    let index = |name: &str| {
        schema
            .index_of(name)
            .map_err(|_| missing_column(file, name, names.clone()))
    };
    let (id_index, labels_index) = (index(ID_COLUMN)?, index(LABELS_COLUMN)?);
    for (position, expected) in [(id_index, "int64"), (labels_index, "text")] {
        let field = schema.field(position);
        let fits = match expected {
            "int64" => field.data_type() == &DataType::Int64,
            _ => matches!(
                field.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ),
        };
        if !fits {
            return Err(DatasetError::ColumnType {
                file: file.to_owned(),
                column: field.name().clone(),
                found: field.data_type().to_string(),
                expected,
            });
        }
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), [id_index, labels_index]);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| parquet_error(&e))?;
    let mut labels = ScalarLabels {
        ids: Vec::new(),
        codes: Vec::new(),
        names: Vec::new(),
        rows: None,
    };
    let mut codes: HashMap<String, u32> = HashMap::new();
    for batch in reader {
        let batch = batch.map_err(|e| parquet_error(&e))?;
        add_label_batch(&mut labels, &mut codes, &batch, file)?;
    }
    let contiguous = labels
        .ids
        .iter()
        .enumerate()
        .all(|(row, &id)| usize::try_from(id).is_ok_and(|id| id == row));
    if !contiguous {
        let mut rows = HashMap::with_capacity(labels.ids.len());
        for (row, &id) in labels.ids.iter().enumerate() {
            if rows.insert(id, row).is_some() {
                return Err(DatasetError::DuplicateId {
                    file: file.to_owned(),
                    row: row as u64,
                    id,
                });
            }
        }
        labels.rows = Some(rows);
    }
    Ok(labels)
}

/// Appends a record batch of the projected `id`, `labels` columns.
fn add_label_batch(
    labels: &mut ScalarLabels,
    codes: &mut HashMap<String, u32>,
    batch: &RecordBatch,
    file: &str,
) -> Result<(), DatasetError> {
    let first_row = labels.ids.len() as u64;
    let (Some(ids), Some(texts)) = (
        batch.column_by_name(ID_COLUMN),
        batch.column_by_name(LABELS_COLUMN),
    ) else {
        return Err(missing_column(file, LABELS_COLUMN, column_names(batch)));
    };
    labels
        .ids
        .extend(int64_values(file, ids.as_ref(), first_row)?);
    let texts: Box<dyn Iterator<Item = Option<&str>>> = match texts.data_type() {
        DataType::Utf8 => Box::new(texts.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(texts.as_string::<i64>().iter()),
        _ => Box::new(texts.as_string_view().iter()),
    };
    for text in texts {
        let code = match text {
            None => None,
            Some(text) => Some(match codes.get(text) {
                Some(&code) => code,
                None => {
                    let code = u32::try_from(labels.names.len()).unwrap_or(u32::MAX);
                    codes.insert(text.to_owned(), code);
                    labels.names.push(text.to_owned());
                    code
                }
            }),
        };
        labels.codes.push(code);
    }
    Ok(())
}

/// The values of an int64 column without nulls (`first_row`: the row number of its first value).
/// Calls `each(row, id)` for every row of the Parquet file's `id` column (int64, no null), read
/// alone, batch by batch; a file without the column calls nothing.
pub(crate) fn read_ids(path: &Path, mut each: impl FnMut(u64, i64)) -> Result<(), DatasetError> {
    let file = path.display().to_string();
    fenced(&file, || {
        let opened = std::fs::File::open(path).map_err(|source| DatasetError::Io {
            path: file.clone(),
            source,
        })?;
        let parquet_error = |e: &dyn std::fmt::Display| DatasetError::Parquet {
            file: file.clone(),
            message: e.to_string(),
        };
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(opened).map_err(|e| parquet_error(&e))?;
        let Ok(index) = builder.schema().index_of(ID_COLUMN) else {
            return Ok(());
        };
        let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| parquet_error(&e))?;
        let mut row = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| parquet_error(&e))?;
            for id in int64_values(&file, batch.column(0).as_ref(), row)? {
                each(row, id);
                row += 1;
            }
        }
        Ok(())
    })?
}

fn int64_values(file: &str, column: &dyn Array, first_row: u64) -> Result<Vec<i64>, DatasetError> {
    let Some(values) = column.as_primitive_opt::<Int64Type>() else {
        return Err(DatasetError::ColumnType {
            file: file.to_owned(),
            column: ID_COLUMN.to_owned(),
            found: column.data_type().to_string(),
            expected: "int64",
        });
    };
    if let Some(row) = (0..values.len()).find(|&i| values.is_null(i)) {
        return Err(DatasetError::NullValue {
            file: file.to_owned(),
            row: first_row + row as u64,
            column: ID_COLUMN.to_owned(),
        });
    }
    Ok(values.values().to_vec())
}

fn column_names(batch: &RecordBatch) -> String {
    column_names_of(&batch.schema())
}

fn column_names_of(schema: &arrow_schema::Schema) -> String {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    names.join(", ")
}

fn missing_column(file: &str, column: &str, columns: String) -> DatasetError {
    DatasetError::MissingColumn {
        file: file.to_owned(),
        column: column.to_owned(),
        columns,
    }
}

/// Runs `read`, turning a panic inside the parquet crate (a damaged file) into an error.
fn fenced<T>(file: &str, read: impl FnOnce() -> T) -> Result<T, DatasetError> {
    catch_unwind(AssertUnwindSafe(read)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("the Parquet reader failed");
        DatasetError::Parquet {
            file: file.to_owned(),
            message: message.to_owned(),
        }
    })
}
