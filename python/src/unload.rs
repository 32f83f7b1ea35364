//! `cqlwire.unload`: a live table into a pyarrow Table or a file, on the scan of `cqlwire unload`
//! ([`cqlwire_client::Unloader`]): the same token-range scan, paging, retries and Arrow types as the
//! command's Parquet and Arrow outputs. A Table gets the pages through the Arrow C data interface
//! without a copy; a file is written by the command's writers, atomically.

use crate::load::{engine_error, run_interruptible, runtime, usage, ConnectionKeywords};
use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use cqlwire_client::{
    IdsFormat, LoadError as EngineError, LoadErrorKind, UnloadControl, UnloadFormat, UnloadOptions,
    UnloadWriter, Unloader,
};
use cqlwire_vector::input::named;
use cqlwire_vector::output::{refuse_same_file, same_destination, Output};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
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
    format: &'static str,
}

#[pymethods]
impl UnloadReport {
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

/// The file keywords of an unload: where, in which format, and the vector column and ids of a
/// vector format.
struct FileKeywords {
    output: PathBuf,
    format: UnloadFormat,
    column: Option<String>,
    ids: Option<PathBuf>,
}

impl FileKeywords {
    /// Checks the keywords as the command checks its flags.
    fn new(
        py: Python<'_>,
        output: PathBuf,
        format: Option<&str>,
        columns: bool,
        column: Option<String>,
        ids: Option<PathBuf>,
    ) -> PyResult<FileKeywords> {
        if named(Some(&output)).is_none() {
            return Err(usage(py, "output must name a file"));
        }
        let format = match format {
            Some(name) => name.parse().map_err(|_| {
                usage(
                    py,
                    format!("format must be parquet, arrow, npy, fbin, raw or hex, not {name:?}"),
                )
            })?,
            None => UnloadFormat::for_output(Some(&output)),
        };
        if format.holds_columns() {
            if column.is_some() || ids.is_some() {
                return Err(usage(
                    py,
                    "column and ids go with the npy, fbin, raw and hex formats; a parquet or \
                     arrow output takes columns",
                ));
            }
        } else if columns {
            return Err(usage(
                py,
                "columns goes with the parquet and arrow formats; the npy, fbin, raw and hex \
                 formats take one vector column (column=)",
            ));
        }
        if let Some(ids) = &ids {
            if same_destination(Some(ids), Some(&output))
                || refuse_same_file(Some(ids), Some(&output)).is_err()
            {
                return Err(usage(
                    py,
                    "the output and the ids file are the same file; name two files",
                ));
            }
        }
        Ok(FileKeywords {
            output,
            format,
            column,
            ids,
        })
    }

    /// Connects, opens the files and runs the scan into them; they appear only if it all
    /// succeeds.
    async fn unload(
        self,
        options: UnloadOptions,
        control: UnloadControl,
    ) -> Result<UnloadReport, EngineError> {
        let output_error =
            |e: &dyn std::fmt::Display| EngineError::new(LoadErrorKind::Output, e.to_string());
        let FileKeywords {
            output: path,
            format,
            column,
            ids: ids_path,
        } = self;
        let unloader = Unloader::connect_with(options, |table, options| {
            if !format.holds_columns() {
                options
                    .read_vector(table, format, column.as_deref(), ids_path.is_some())
                    .map_err(|error| error.into_load_error("column="))?;
            }
            Ok(())
        })
        .await?;
        let output = Output::open(Some(&path), format.is_binary())
            .map_err(|e| output_error(&e))?
            .without_sync();
        let ids = match &ids_path {
            Some(ids) => Some((
                Output::open(Some(ids), true)
                    .map_err(|e| output_error(&e))?
                    .without_sync(),
                IdsFormat::from_extension(ids),
            )),
            None => None,
        };
        let writer = UnloadWriter::new(format, &unloader.schema(), output, ids)
            .map_err(EngineError::from)?;
        let (scanned, written) = unloader.run_into(writer, &control).await;
        // A write error stopped the scan: it is the cause to report.
        let writer = written.map_err(|e| output_error(&e))?;
        let report = scanned?;
        let skipped = writer.skipped();
        let (output, ids) = writer.finish().map_err(|e| output_error(&e))?;
        if let Some(ids) = ids {
            ids.commit().map_err(|e| output_error(&e))?;
        }
        output.commit().map_err(|e| output_error(&e))?;
        Ok(UnloadReport {
            rows: report.rows - skipped,
            skipped,
            bytes: report.bytes,
            ranges: report.ranges,
            retried: report.retried,
            elapsed: report.elapsed.as_secs_f64(),
            output: path,
            ids: ids_path,
            format: format.name(),
        })
    }
}

/// Read `table` through `hosts` on the scan of `cqlwire unload`, with the GIL released: without
/// `output`, into a `pyarrow.Table` (needs pyarrow); with `output`, into the file the command
/// writes, atomically, returning an `UnloadReport`.
///
/// Keywords are the command's flags with underscores: `columns`, `where`, `split`, `concurrency`,
/// `page_rows`, `output`, `format` (parquet, arrow, npy, fbin, raw, hex), `column`, `ids` and the
/// connection's. Raises `LoadError` for what the command exits 2 on and `LoadFailed` for a failed
/// scan or write; Ctrl-C stops the scan, leaves no file and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (
    *, hosts, table, columns=None, r#where=None, split=4, concurrency=8, page_rows=None,
    output=None, format=None, column=None, ids=None, **connection
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
    column: Option<String>,
    ids: Option<PathBuf>,
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
    let Some(output) = output else {
        if format.is_some() || column.is_some() || ids.is_some() {
            return Err(usage(
                py,
                "format, column and ids go with output=; without it the rows come back as a \
                 pyarrow Table",
            ));
        }
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
        return match scanned {
            Ok((schema, pages)) => to_pyarrow(py, &schema, pages),
            Err(error) => Err(engine_error(py, &error, Vec::new())),
        };
    };
    let files = FileKeywords::new(
        py,
        output,
        format.as_deref(),
        options.columns.is_some(),
        column,
        ids,
    )?;
    let written = run_interruptible(py, &runtime, stop, files.unload(options, control))?;
    match written {
        Ok(report) => Ok(Bound::new(py, report)?.into_any()),
        Err(error) => Err(engine_error(py, &error, Vec::new())),
    }
}
