//! What the jobs read from Python: NumPy arrays and pyarrow tables as readers of the command
//! line's inputs, `load`'s source keywords, and a ground truth given as an array.

use crate::arrow;
use crate::conversion::{path_argument, rows_argument, Shard};
use crate::errors::{input_error, usage};
use crate::vectors::Borrowed;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, FixedSizeListArray, Float64Array, Int64Array,
    PrimitiveArray, RecordBatch, UInt64Array,
};
use arrow_schema::{Field, Schema};
use cqlwire_client::{DatasetOptions, GroundTruth, LoadSource};
use cqlwire_vector::input::{
    self, Batch, BatchReader, ElementType, InputError, InputFormat, Neighbors,
};
use cqlwire_vector::kernel::Rows;
use numpy::PyUntypedArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name standing for an in-memory source in messages.
const IN_MEMORY: &str = "the array";

/// A reader whose vector column has no name (as a `.npy` file's): the table's only vector column
/// takes it; the ids, if any, pass through.
struct Unnamed(Box<dyn BatchReader>);

impl BatchReader for Unnamed {
    fn element_type(&self) -> ElementType {
        self.0.element_type()
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    fn rows(&self) -> Option<u64> {
        self.0.rows()
    }
    fn passthrough_schema(&self) -> Option<arrow_schema::SchemaRef> {
        self.0
            .passthrough_schema()
            .filter(|schema| !schema.fields().is_empty())
    }
    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        let batch = self.0.next_batch()?;
        Ok(batch.map(|mut batch| {
            if batch.columns.as_ref().is_some_and(|c| c.num_columns() == 0) {
                batch.columns = None;
            }
            batch
        }))
    }
}

/// The rows of a 2-D NumPy array as an Arrow `fixed_size_list` column named `vector` (a copy the
/// run's reader thread owns), with the ids as an `id` column (see [`ids_array`]).
fn numpy_batch(array: &Bound<'_, PyUntypedArray>, ids: Option<ArrayRef>) -> PyResult<RecordBatch> {
    let source = Borrowed::new(array, 2)?;
    let (rows, dimension) = source.shape;
    fn values<T: ArrowPrimitiveType>(slice: &[T::Native]) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::from_iter_values(slice.iter().copied()))
    }
    let elements = match source.rows() {
        Rows::F16(s) => values::<Float16Type>(s),
        Rows::F32(s) => values::<Float32Type>(s),
        Rows::F64(s) => values::<Float64Type>(s),
        Rows::I8(s) => values::<Int8Type>(s),
        Rows::U8(s) => values::<UInt8Type>(s),
        Rows::I16(s) => values::<Int16Type>(s),
        Rows::I32(s) => values::<Int32Type>(s),
        Rows::I64(s) => values::<Int64Type>(s),
    };
    let size = i32::try_from(dimension)
        .map_err(|_| PyValueError::new_err(format!("{dimension} elements per row is too many")))?;
    let item = Arc::new(Field::new("item", elements.data_type().clone(), false));
    let vectors = FixedSizeListArray::try_new(item, size, elements, None)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut fields = vec![Field::new("vector", vectors.data_type().clone(), false)];
    let mut columns: Vec<ArrayRef> = vec![Arc::new(vectors)];
    if let Some(ids) = ids {
        if ids.len() != rows {
            return Err(PyValueError::new_err(format!(
                "{} ids for {rows} rows: give one id per row",
                ids.len()
            )));
        }
        fields.push(Field::new("id", ids.data_type().clone(), false));
        columns.push(ids);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The ids of a NumPy source as an Arrow column of their own kind (int64, uint64 or float64), so
/// that the engine's checked casts judge each as the command line judges a file's id column: a
/// fraction, NaN, or a value the key column cannot hold is that row's error, never rounded or
/// wrapped. Any other kind of id is a `TypeError`.
fn ids_array(py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let array = py.import("numpy")?.call_method1("asarray", (ids,))?;
    let dimensions: usize = array.getattr("ndim")?.extract()?;
    if dimensions != 1 {
        return Err(PyValueError::new_err(format!(
            "ids must be one-dimensional, not {dimensions}-dimensional"
        )));
    }
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let values = |wide: &str| {
        array
            .call_method1("astype", (wide,))?
            .call_method0("tolist")
    };
    Ok(match kind.as_str() {
        "i" => Arc::new(Int64Array::from(values("int64")?.extract::<Vec<i64>>()?)),
        "u" => Arc::new(UInt64Array::from(values("uint64")?.extract::<Vec<u64>>()?)),
        "f" => Arc::new(Float64Array::from(
            values("float64")?.extract::<Vec<f64>>()?,
        )),
        _ => {
            return Err(crate::type_error(format!(
                "ids must be integers or whole floats, not dtype {}",
                dtype.str()?
            )))
        }
    })
}

/// Refuses a `first_row` whose last row's number would pass 2**64 - 1 (it would wrap to 0).
fn check_row_numbers(first_row: u64, rows: usize) -> PyResult<()> {
    if first_row.checked_add(rows as u64).is_none() {
        return Err(PyValueError::new_err(format!(
            "first_row {first_row} + {rows} rows is past 2**64 - 1"
        )));
    }
    Ok(())
}

/// Whether `source` is an array or table in memory (else it should be a path).
pub(crate) fn in_memory(source: &Bound<'_, PyAny>) -> bool {
    source.cast::<PyUntypedArray>().is_ok() || arrow::is_arrow(source)
}

/// A reader over a NumPy array (its vector column unnamed, `ids` an `id` column) or a pyarrow
/// Table/RecordBatch (`column` its vector column), its first row numbered `first_row`.
pub(crate) fn memory_reader(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    column: Option<&str>,
    ids: Option<&Bound<'_, PyAny>>,
    first_row: u64,
) -> PyResult<Box<dyn BatchReader>> {
    let opened = if let Ok(array) = source.cast::<PyUntypedArray>() {
        let ids = ids.map(|ids| ids_array(py, ids)).transpose()?;
        let batch = numpy_batch(array, ids)?;
        check_row_numbers(first_row, batch.num_rows())?;
        let schema = batch.schema();
        input::open_record_batches(
            IN_MEMORY,
            &schema,
            std::iter::once(Ok(batch)),
            Some("vector"),
            first_row,
            DatasetOptions::BATCH_ROWS,
            false,
        )
        .map(|reader| Box::new(Unnamed(reader)) as Box<dyn BatchReader>)
    } else {
        if ids.is_some() {
            return Err(usage(
                py,
                "ids goes with a NumPy array; a table carries its own columns",
            ));
        }
        // A table of no rows loads no row, as an empty array does.
        let (schema, batches) = match arrow::record_batches(source)? {
            Some(found) => found,
            None => match arrow::empty_schema(source)? {
                Some(schema) => {
                    let empty = RecordBatch::new_empty(Arc::new(schema.clone()));
                    (schema, vec![empty])
                }
                None => return Err(usage(py, "the table has no rows and no schema")),
            },
        };
        check_row_numbers(first_row, batches.iter().map(RecordBatch::num_rows).sum())?;
        input::open_record_batches(
            "the table",
            &schema,
            batches.into_iter().map(Ok),
            column,
            first_row,
            DatasetOptions::BATCH_ROWS,
            true,
        )
    };
    opened.map_err(|e| input_error(py, e))
}

/// What `load` reads: a path (with the keywords that select its rows), an array or a table.
pub(crate) struct SourceKeywords<'py> {
    pub(crate) source: Bound<'py, PyAny>,
    pub(crate) column: Option<String>,
    pub(crate) input_format: Option<String>,
    pub(crate) dataset: String,
    pub(crate) rows: Option<Bound<'py, PyAny>>,
    pub(crate) shard: Option<Shard>,
    pub(crate) ids: Option<Bound<'py, PyAny>>,
    pub(crate) first_row: u64,
}

impl SourceKeywords<'_> {
    /// The job's source; keywords that go with another kind of source are usage errors.
    pub(crate) fn source(self, py: Python<'_>) -> PyResult<LoadSource> {
        if !in_memory(&self.source) {
            return self.file(py);
        }
        for (given, name) in [
            (self.rows.is_some(), "rows"),
            (self.shard.is_some(), "shard"),
            (self.input_format.is_some(), "input_format"),
        ] {
            if given {
                return Err(usage(
                    py,
                    format!("{name} goes with a file source; slice the array or table instead"),
                ));
            }
        }
        let reader = memory_reader(
            py,
            &self.source,
            self.column.as_deref(),
            self.ids.as_ref(),
            self.first_row,
        )?;
        Ok(LoadSource::Reader(reader))
    }

    fn file(self, py: Python<'_>) -> PyResult<LoadSource> {
        let path: PathBuf =
            self.source.extract().map_err(|_| {
                crate::type_error(format!(
                "source must be a path, a NumPy array or a pyarrow Table or RecordBatch, not {}",
                self.source.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
            })?;
        if self.ids.is_some() || self.first_row != 0 {
            return Err(usage(
                py,
                "ids and first_row go with an array or table source; a file's rows keep their \
                 numbers (select them with rows=)",
            ));
        }
        Ok(LoadSource::File {
            path: Some(path),
            format: parse_format(py, self.input_format.as_deref())?,
            column: self.column,
            dataset: self.dataset,
            rows: self
                .rows
                .as_ref()
                .map(|rows| rows_argument(rows, "rows"))
                .transpose()?,
            shard: self.shard.map(|Shard(shard)| shard),
        })
    }
}

/// `input_format=`, by name.
pub(crate) fn parse_format(py: Python<'_>, name: Option<&str>) -> PyResult<Option<InputFormat>> {
    name.map(str::parse)
        .transpose()
        .map_err(|e: input::UnknownInputFormat| usage(py, e.to_string()))
}

/// A ground truth array: a 2-D integer array, one row of ids per query.
fn array_truth(py: Python<'_>, truth: &Bound<'_, PyAny>) -> PyResult<Neighbors> {
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("asarray", (truth,))?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let fits = match kind.as_str() {
        "i" => true,
        "u" => {
            array.getattr("size")?.extract::<usize>()? == 0 || {
                let largest: u64 = array.call_method0("max")?.extract()?;
                i64::try_from(largest).is_ok()
            }
        }
        _ => {
            return Err(usage(
                py,
                format!(
                    "ground_truth must hold integer ids (row numbers), not dtype {}",
                    dtype.str()?
                ),
            ))
        }
    };
    if !fits {
        return Err(usage(py, "ground_truth holds ids above 2**63 - 1"));
    }
    let array = array.call_method1("astype", ("int64",))?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let [rows, k] = shape[..] else {
        return Err(usage(
            py,
            "ground_truth must be a 2-D array: one row of ids per query",
        ));
    };
    let ids: Vec<i64> = array
        .call_method0("ravel")?
        .call_method0("tolist")?
        .extract()?;
    Neighbors::new(rows, k, ids).ok_or_else(|| usage(py, "ground_truth does not hold whole rows"))
}

/// The ground truth keywords: lists given as an array, or where the engine finds them.
pub(crate) fn ground_truth(
    py: Python<'_>,
    truth: Option<&Bound<'_, PyAny>>,
    exact: Option<&Bound<'_, PyAny>>,
    queries: Option<&Path>,
    format: Option<InputFormat>,
) -> PyResult<GroundTruth> {
    if truth.is_some() && exact.is_some() {
        return Err(usage(
            py,
            "ground_truth and exact both give the ground truth: give one",
        ));
    }
    if let Some(truth) = truth.filter(|t| t.cast::<PyUntypedArray>().is_ok()) {
        return Ok(GroundTruth::Lists(array_truth(py, truth)?));
    }
    let file = truth
        .map(|t| path_argument(t, "ground_truth (or a 2-D integer NumPy array)"))
        .transpose()?;
    let exact = exact
        .map(|e| path_argument(e, "exact (the training vectors)"))
        .transpose()?;
    Ok(GroundTruth::choose(file, exact, queries, format))
}
