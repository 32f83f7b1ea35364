//! `cqlwire.unload`: a live table into a pyarrow Table or a file, on the scan of `cqlwire unload`
//! ([`cqlwire_client::Unloader`]): the same token-range scan, paging, retries and Arrow types as the
//! command's Parquet and Arrow outputs. A Table gets the pages through the Arrow C data interface
//! without a copy; a file is written by the command's job ([`cqlwire_client::UnloadJob`]),
//! atomically.

use crate::load::{
    engine_error, job_failure, run_interruptible, runtime, usage, ConnectionKeywords, Keywords,
};
use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use cqlwire_client::{
    Setting, SettingNames, UnloadControl, UnloadError, UnloadFormat, UnloadJob, UnloadOptions,
    UnloadOutcome, Unloader,
};
use cqlwire_vector::input::named;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::path::PathBuf;

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

/// What an unload into a file wrote (the command's summary line).
#[pyclass(module = "cqlwire", frozen, get_all)]
pub(crate) struct UnloadReport {
    /// Rows written.
    rows: u64,
    /// Rows of a vector format left out because their vector is null.
    skipped: u64,
    /// Value bytes read.
    bytes: u64,
    /// Token ranges read.
    ranges: u64,
    /// Requests retried.
    retried: u64,
    /// Wall time of the scan, in seconds.
    elapsed: f64,
    /// The file written.
    output: PathBuf,
    /// The ids file written, if any.
    ids: Option<PathBuf>,
    /// The format written: parquet, arrow, npy, fbin, raw or hex.
    format: String,
}

#[pymethods]
impl UnloadReport {
    /// A report from its fields, in their order (what unpickling calls).
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (rows, skipped, bytes, ranges, retried, elapsed, output, ids, format))]
    fn from_fields(
        rows: u64,
        skipped: u64,
        bytes: u64,
        ranges: u64,
        retried: u64,
        elapsed: f64,
        output: PathBuf,
        ids: Option<PathBuf>,
        format: String,
    ) -> Self {
        UnloadReport {
            rows,
            skipped,
            bytes,
            ranges,
            retried,
            elapsed,
            output,
            ids,
            format,
        }
    }

    /// Pickling: the class and its fields, so a report crosses processes (a Dask task's result).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let r = slf.get();
        let fields = (
            r.rows,
            r.skipped,
            r.bytes,
            r.ranges,
            r.retried,
            r.elapsed,
            r.output.clone(),
            r.ids.clone(),
            r.format.clone(),
        );
        (slf.get_type(), fields).into_pyobject(slf.py())
    }

    /// Rows read per second of the scan (skipped ones included).
    #[getter]
    fn rows_per_second(&self) -> f64 {
        (self.rows + self.skipped) as f64 / self.elapsed.max(1e-9)
    }

    fn __repr__(&self) -> String {
        format!(
            "UnloadReport(rows={}, skipped={}, bytes={}, ranges={}, retried={}, elapsed={:.3}, \
             format={:?})",
            self.rows,
            self.skipped,
            self.bytes,
            self.ranges,
            self.retried,
            self.elapsed,
            self.format
        )
    }
}

/// The job's error as `cqlwire.LoadError` (what the command exits 2 on) or `cqlwire.LoadFailed`:
/// `kind` `stopped` for a stopped scan, `output` for the output or the ids file.
fn job_error(py: Python<'_>, error: UnloadError) -> PyErr {
    let error = match error {
        UnloadError::VectorSettings
        | UnloadError::ColumnsOfVectorFormat
        | UnloadError::SameFiles => return usage(py, error.message(&Keywords)),
        UnloadError::VectorColumn(error) => {
            error.into_load_error(&Keywords.hint(Setting::VectorColumn))
        }
        UnloadError::Unload(error) => error,
        UnloadError::Stopped => return job_failure(py, false, "stopped", error.to_string()),
        other => return job_failure(py, false, "output", other.to_string()),
    };
    engine_error(py, &error, Vec::new())
}

/// The report of an unload into `job`'s file.
fn file_report(outcome: UnloadOutcome, output: PathBuf, ids: Option<PathBuf>) -> UnloadReport {
    let report = outcome.report;
    UnloadReport {
        rows: report.rows - outcome.skipped,
        skipped: outcome.skipped,
        bytes: report.bytes,
        ranges: report.ranges,
        retried: report.retried,
        elapsed: report.elapsed.as_secs_f64(),
        output,
        ids,
        format: outcome.format.name().to_owned(),
    }
}

/// Read `table` through `hosts` on the scan of `cqlwire unload`, with the GIL released: without
/// `output`, into a `pyarrow.Table` (needs pyarrow); with `output`, into the file the command
/// writes, atomically, returning an `UnloadReport`.
///
/// Keywords are the command's flags with underscores: `columns`, `where`, `split`, `concurrency`,
/// `page_rows`, `output`, `format` (parquet, arrow, npy, fbin, raw, hex), `vector_column` (or
/// `column`), `ids` and the connection's. Raises `LoadError` for what the command exits 2 on and
/// `LoadFailed` for a failed scan or write; Ctrl-C stops the scan, leaves no file and raises
/// `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (
    *, hosts, table, columns=None, r#where=None, split=4, concurrency=8, page_rows=None,
    output=None, format=None, vector_column=None, column=None, ids=None, **connection
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
    output: Option<PathBuf>,
    format: Option<String>,
    vector_column: Option<String>,
    column: Option<String>,
    ids: Option<PathBuf>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let column = crate::load::vector_column(py, vector_column, column)?;
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
    let Some(output) = output else {
        if format.is_some() || column.is_some() || ids.is_some() {
            return Err(usage(
                py,
                "format, vector_column and ids go with output=; without it the rows come back as a \
                 pyarrow Table",
            ));
        }
        let scanned = run_interruptible(py, &runtime, stop, async move {
            let unloader = Unloader::connect(options)
                .await
                .map_err(UnloadError::from)?;
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
        return match scanned {
            Ok((schema, pages)) => to_pyarrow(py, &schema, pages),
            Err(error) => Err(job_error(py, error)),
        };
    };
    if named(Some(&output)).is_none() {
        return Err(usage(py, "output must name a file"));
    }
    let format = format
        .as_deref()
        .map(|name| {
            name.parse::<UnloadFormat>().map_err(|_| {
                usage(
                    py,
                    format!("format must be parquet, arrow, npy, fbin, raw or hex, not {name:?}"),
                )
            })
        })
        .transpose()?;
    let job = UnloadJob {
        output: Some(output.clone()),
        format,
        columns: options.columns.take(),
        column,
        ids: ids.clone(),
    };
    job.check().map_err(|e| job_error(py, e))?;
    let written = run_interruptible(py, &runtime, stop, async move {
        job.run(options, &control, &()).await
    })?;
    match written {
        Ok(outcome) => Ok(Bound::new(py, file_report(outcome, output, ids))?.into_any()),
        Err(error) => Err(job_error(py, error)),
    }
}
