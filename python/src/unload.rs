//! `cqlwire.unload`: a live table into a pyarrow Table, on the scan of `cqlwire unload`
//! ([`cqlwire_load::Unloader`]): the same token-range scan, paging, retries and Arrow types as the
//! command's Parquet and Arrow outputs, the pages handed to pyarrow through the Arrow C data
//! interface without a copy.

use crate::load::{engine_error, run_interruptible, runtime, ConnectionKeywords};
use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use cqlwire_load::{UnloadControl, UnloadOptions, Unloader};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Pages queued between the scan and the collecting task.
const QUEUED_PAGES: usize = 2;

/// An Arrow error as a `ValueError`.
fn arrow_error(error: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("cannot hand the rows to pyarrow: {error}"))
}

/// The pages as one `pyarrow.Table` of `schema`. pyarrow takes each exported array and schema
/// over (it moves their release callbacks out), so nothing is copied or released twice.
fn to_pyarrow<'py>(
    py: Python<'py>,
    schema: &SchemaRef,
    pages: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = py.import("pyarrow")?;
    let exported = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(arrow_error)?;
    let py_schema = pyarrow
        .getattr("Schema")?
        .call_method1("_import_from_c", (std::ptr::addr_of!(exported) as usize,))?;
    let batch_type = pyarrow.getattr("RecordBatch")?;
    let mut batches = Vec::with_capacity(pages.len());
    for page in pages {
        let (array, array_schema) =
            to_ffi(&StructArray::from(page).into_data()).map_err(arrow_error)?;
        batches.push(batch_type.call_method1(
            "_import_from_c",
            (
                std::ptr::addr_of!(array) as usize,
                std::ptr::addr_of!(array_schema) as usize,
            ),
        )?);
    }
    pyarrow
        .getattr("Table")?
        .call_method1("from_batches", (batches, py_schema))
}

/// Reads `table` through `hosts` into a pyarrow Table (see the stubs).
#[pyfunction]
#[pyo3(signature = (
    *, hosts, table, columns=None, r#where=None, split=4, concurrency=8, page_rows=None,
    **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn unload<'py>(
    py: Python<'py>,
    hosts: &Bound<'py, PyAny>,
    table: String,
    columns: Option<Vec<String>>,
    r#where: Option<String>,
    split: usize,
    concurrency: usize,
    page_rows: Option<usize>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut options =
        UnloadOptions::new(ConnectionKeywords::new(hosts, table, connection)?.options(py)?);
    options.columns = columns.filter(|c| !c.is_empty());
    options.condition = r#where;
    options.splits = split;
    options.concurrency = concurrency;
    options.page_rows = page_rows;
    let control = UnloadControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let scanned = run_interruptible(py, &runtime, stop, async move {
        let unloader = Unloader::connect(options).await?;
        let schema = unloader.schema();
        let (sender, mut receiver) = tokio::sync::mpsc::channel(QUEUED_PAGES);
        let collect = tokio::spawn(async move {
            let mut pages = Vec::new();
            while let Some(page) = receiver.recv().await {
                pages.push(page);
            }
            pages
        });
        let report = unloader.run(sender, &control).await;
        let pages = collect.await.unwrap_or_default();
        report.map(|_| (schema, pages))
    })?;
    match scanned {
        Ok((schema, pages)) => to_pyarrow(py, &schema, pages),
        Err(error) => Err(engine_error(py, &error, Vec::new())),
    }
}
