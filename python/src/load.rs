//! `cqlwire.load`: a dataset (a file, a NumPy array, a pyarrow table or record batch) into a live
//! Cassandra/ScyllaDB table, on the engine of the command line (`cqlwire_client`): the keywords become
//! the library's options as the command's flags do, and the run goes with the GIL released.

use crate::arrow;
use crate::vectors::Borrowed;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, FixedSizeListArray, Float64Array, Int64Array,
    PrimitiveArray, RecordBatch, UInt64Array,
};
use arrow_schema::{Field, Schema};
use cqlwire_client::{
    parse_rename, Concurrency, ConnectionSettings, CsvRejects, Dataset, DatasetOptions,
    LoadError as EngineError, LoadErrorKind, LoadOptions, LoadReport as EngineReport, Loader, Mode,
    Password, RejectSink, RunControl, SessionOptions, Setting, SettingNames,
};
use cqlwire_vector::input::{
    self, parse_rows, parse_shard, Batch, BatchReader, ElementType, InputError, InputOptions,
    RowSelection,
};
use cqlwire_vector::kernel::Rows;
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyRangeMethods, PyString, PyTuple};
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pyo3::create_exception!(
    cqlwire,
    LoadError,
    PyValueError,
    "What the command line refuses with exit code 2: an invalid option, a table, column or \
     statement the server does not have or refuses, an input that cannot fill the statement. \
     Nothing was written. `kind` names the reason."
);
pyo3::create_exception!(
    cqlwire,
    LoadFailed,
    PyRuntimeError,
    "A run that could not start or finish: no connection, a refused login, a damaged input, the \
     cluster gone mid-load. `kind` names the reason; `report` (a LoadReport, or None when nothing \
     started) has the rows confirmed and `resume_from`, the row to start again from."
);

/// Rows per input batch handed to the run (as the command line).
const BATCH_ROWS: usize = DatasetOptions::BATCH_ROWS;

/// Rejected rows kept in [`LoadReport::rejects`] (all are counted, and all go to `rejects=`).
const KEPT_REJECTS: usize = 10_000;

/// How often a waiting call looks for a signal (Ctrl-C) to handle.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// The name standing for an in-memory source in messages.
const IN_MEMORY: &str = "the array";

/// What a load did.
#[pyclass(module = "cqlwire", frozen, get_all)]
pub(crate) struct LoadReport {
    /// Rows acknowledged by the server (in a dry run: rows that bound).
    written: u64,
    /// Rows rejected (by the conversion or the server).
    rejected: u64,
    /// Requests retried.
    retried: u64,
    /// Value bytes of the written rows.
    bytes: u64,
    /// Wall time, in seconds.
    elapsed: f64,
    /// None when every row was written or rejected, else the first row to load again.
    resume_from: Option<u64>,
    /// The first 10,000 rejected rows as (row, key, reason).
    rejects: Vec<(u64, String, String)>,
}

#[pymethods]
impl LoadReport {
    /// A report from its fields, in their order (what unpickling calls).
    #[new]
    #[pyo3(signature = (written, rejected, retried, bytes, elapsed, resume_from, rejects))]
    fn from_fields(
        written: u64,
        rejected: u64,
        retried: u64,
        bytes: u64,
        elapsed: f64,
        resume_from: Option<u64>,
        rejects: Vec<(u64, String, String)>,
    ) -> Self {
        LoadReport {
            written,
            rejected,
            retried,
            bytes,
            elapsed,
            resume_from,
            rejects,
        }
    }

    /// Pickling: the class and its fields, so a report crosses processes (a Dask task's result).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let r = slf.get();
        let fields = (
            r.written,
            r.rejected,
            r.retried,
            r.bytes,
            r.elapsed,
            r.resume_from,
            r.rejects.clone(),
        );
        (slf.get_type(), fields).into_pyobject(slf.py())
    }

    /// Acknowledged rows per second of wall time.
    #[getter]
    fn rows_per_second(&self) -> f64 {
        if self.elapsed > 0.0 {
            self.written as f64 / self.elapsed
        } else {
            0.0
        }
    }

    fn __repr__(&self) -> String {
        let resume = self
            .resume_from
            .map_or("None".to_owned(), |row| row.to_string());
        format!(
            "LoadReport(written={}, rejected={}, retried={}, bytes={}, elapsed={:.3}, resume_from={resume})",
            self.written, self.rejected, self.retried, self.bytes, self.elapsed
        )
    }
}

impl LoadReport {
    fn new(report: &EngineReport, rejects: Vec<(u64, String, String)>) -> Self {
        LoadReport {
            written: report.written,
            rejected: report.rejected,
            retried: report.retried,
            bytes: report.bytes,
            elapsed: report.elapsed.as_secs_f64(),
            resume_from: report.resume_from,
            rejects,
        }
    }
}

/// The library's settings as the keywords (`vector_column`), and `vector_column=` as the way out.
pub(crate) struct Keywords;

impl SettingNames for Keywords {
    fn name(&self, setting: Setting) -> String {
        setting.name().to_owned()
    }

    fn hint(&self, setting: Setting) -> String {
        format!("{}=", self.name(setting))
    }
}

/// An engine error as `cqlwire.LoadError` (usage) or `cqlwire.LoadFailed` (with `report`).
pub(crate) fn engine_error(
    py: Python<'_>,
    error: &EngineError,
    rejects: Vec<(u64, String, String)>,
) -> PyErr {
    let message = match error.setting() {
        Some(Setting::Username) => {
            format!("{} (log in with username= and password=)", error.message())
        }
        Some(setting) => format!("{} ({})", error.message(), Keywords.hint(setting)),
        None => error.message().to_owned(),
    };
    let report = error
        .report()
        .map(|report| LoadReport::new(report, rejects));
    raise(
        py,
        error.kind().is_usage(),
        error.kind().name(),
        message,
        report,
    )
}

/// A job's error as `cqlwire.LoadError` (`usage`) or `cqlwire.LoadFailed`, its `kind` the name
/// given (`no_index`, `stopped`, `output` for the errors of a job that are not the engine's).
pub(crate) fn job_failure(py: Python<'_>, usage: bool, kind: &str, message: String) -> PyErr {
    raise(py, usage, kind, message, None)
}

/// The exception of [`engine_error`] and [`job_failure`], with its `kind` and its `report`.
fn raise(
    py: Python<'_>,
    usage: bool,
    kind: &str,
    message: String,
    report: Option<LoadReport>,
) -> PyErr {
    let err = if usage {
        LoadError::new_err(message)
    } else {
        LoadFailed::new_err(message)
    };
    let value = err.value(py);
    let set = value.setattr("kind", kind).and_then(|()| match report {
        Some(report) => value.setattr("report", Py::new(py, report)?),
        None => value.setattr("report", py.None()),
    });
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The table's vector column of `search` and `unload`: `vector_column=`, or `column=`, its older
/// spelling; both given is a usage error.
pub(crate) fn vector_column(
    py: Python<'_>,
    vector_column: Option<String>,
    column: Option<String>,
) -> PyResult<Option<String>> {
    match (vector_column, column) {
        (Some(_), Some(_)) => Err(usage(
            py,
            "vector_column and column (its older name) are the same keyword: give one",
        )),
        (named, older) => Ok(named.or(older)),
    }
}

/// A usage error raised before the engine is reached.
pub(crate) fn usage(py: Python<'_>, message: impl Into<String>) -> PyErr {
    engine_error(
        py,
        &EngineError::new(LoadErrorKind::InvalidOption, message),
        Vec::new(),
    )
}

/// Rejected rows: kept (the first [`KEPT_REJECTS`]) for the report, and written to the `rejects=`
/// file when one is given.
struct Collected {
    kept: Vec<(u64, String, String)>,
    file: Option<CsvRejects<std::fs::File>>,
}

impl RejectSink for Collected {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        if self.kept.len() < KEPT_REJECTS {
            self.kept.push((row, key.to_owned(), error.to_owned()));
        }
        match &mut self.file {
            Some(file) => file.reject(row, key, error),
            None => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

/// `hosts` as a list of strings or one comma-separated string.
fn hosts_text(hosts: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = hosts.cast::<PyString>() {
        return text.extract::<String>();
    }
    let hosts: Vec<String> = hosts.extract().map_err(|_| {
        crate::type_error("hosts must be a string (HOST[:PORT],...) or a list of strings")
    })?;
    Ok(hosts.join(","))
}

/// The connection keywords shared by `load`, `unload` and `search`, as the engine's settings.
pub(crate) struct ConnectionKeywords(ConnectionSettings);

impl ConnectionKeywords {
    /// `hosts`, `table` and the connection keywords among `rest` (consistency, timeout, username,
    /// password, tls, tls_ca, tls_cert, tls_key); another keyword is a `TypeError`.
    pub(crate) fn new(
        hosts: &Bound<'_, PyAny>,
        table: String,
        rest: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut settings = ConnectionSettings::new(hosts_text(hosts)?, table);
        for (name, value) in rest.into_iter().flat_map(|rest| rest.iter()) {
            let name: String = name.extract()?;
            match name.as_str() {
                "consistency" => settings.consistency = value.extract()?,
                "timeout" => settings.timeout = Duration::from_secs(value.extract()?),
                "username" => settings.username = value.extract()?,
                "password" => {
                    settings.password = value.extract::<Option<String>>()?.map(Password::new)
                }
                "tls" => settings.tls = value.extract()?,
                "tls_ca" => settings.tls_ca = value.extract()?,
                "tls_cert" => settings.tls_cert = value.extract()?,
                "tls_key" => settings.tls_key = value.extract()?,
                other => {
                    return Err(crate::type_error(format!(
                        "unexpected keyword argument '{other}'"
                    )))
                }
            }
        }
        Ok(ConnectionKeywords(settings))
    }

    /// The engine's options for this connection.
    pub(crate) fn options(self, py: Python<'_>) -> PyResult<SessionOptions> {
        self.settings(py)?
            .options()
            .map_err(|e| engine_error(py, &e, Vec::new()))
    }

    /// The engine's settings: the password from `password=`, else `CQLWIRE_PASSWORD`.
    pub(crate) fn settings(self, py: Python<'_>) -> PyResult<ConnectionSettings> {
        let ConnectionKeywords(mut settings) = self;
        if let Some(user) = settings
            .user_without_password()
            .map_err(|e| engine_error(py, &e, Vec::new()))?
        {
            return Err(usage(
                py,
                format!(
                    "username {user} needs a password: pass password= or set {}",
                    cqlwire_client::PASSWORD_VARIABLE
                ),
            ));
        }
        Ok(settings)
    }
}

/// Runs `work` on `runtime` with the GIL released, looking for signals every 100 ms: a pending
/// KeyboardInterrupt sets `stop` (the run drains: it stops reading and waits for the rows in
/// flight) and is raised once the run has ended.
pub(crate) fn run_interruptible<T: Send + 'static>(
    py: Python<'_>,
    runtime: &tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    match run_until_interrupted(py, runtime, stop, work)? {
        (_, Some(interrupt)) => Err(interrupt),
        (value, None) => Ok(value),
    }
}

/// [`run_interruptible`] that hands back what the drained run returned beside the pending
/// KeyboardInterrupt, so the caller can attach the run's report to it.
pub(crate) fn run_until_interrupted<T: Send + 'static>(
    py: Python<'_>,
    runtime: &tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<(T, Option<PyErr>)> {
    let mut handle = runtime.spawn(work);
    let mut interrupted: Option<PyErr> = None;
    loop {
        let waited = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut handle).await })
        });
        match waited {
            Ok(Ok(value)) => return Ok((value, interrupted)),
            Ok(Err(join)) => {
                return Err(PyRuntimeError::new_err(format!("the run failed: {join}")))
            }
            Err(_) => {
                if interrupted.is_none() {
                    if let Err(error) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        interrupted = Some(error);
                    }
                }
            }
        }
    }
}

/// The I/O threads of one call.
pub(crate) fn runtime() -> PyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the I/O threads: {e}")))
}

/// A row range, the keyword `name`: `"START..END"` (either bound may be left out),
/// `range(START, END)` or `(START, END)` with END None for the end.
pub(crate) fn rows_argument(rows: &Bound<'_, PyAny>, name: &str) -> PyResult<std::ops::Range<u64>> {
    if let Ok(text) = rows.cast::<PyString>() {
        return parse_rows(&text.extract::<String>()?).map_err(PyValueError::new_err);
    }
    if let Ok(range) = rows.cast::<pyo3::types::PyRange>() {
        if range.step()? != 1 {
            return Err(PyValueError::new_err(format!(
                "{name} must be a range with step 1"
            )));
        }
        let bound = |value: isize| {
            u64::try_from(value).map_err(|_| {
                PyValueError::new_err(format!(
                    "{name} must not be negative (row numbers start at 0), not {value}"
                ))
            })
        };
        let (start, end) = (bound(range.start()?)?, bound(range.stop()?)?);
        if start > end {
            return Err(PyValueError::new_err(format!(
                "the range {start}..{end} ends before it starts"
            )));
        }
        return Ok(start..end);
    }
    let (start, end): (u64, Option<u64>) = rows.extract().map_err(|_| {
        crate::type_error(format!(
            "{name} must be \"START..END\", range(START, END) or (START, END)"
        ))
    })?;
    let end = end.unwrap_or(u64::MAX);
    if start > end {
        return Err(PyValueError::new_err(format!(
            "the range {start}..{end} ends before it starts"
        )));
    }
    Ok(start..end)
}

/// A part of the input: `"K/N"` or `(K, N)`.
fn shard_argument(shard: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    if let Ok(text) = shard.cast::<PyString>() {
        return parse_shard(&text.extract::<String>()?).map_err(PyValueError::new_err);
    }
    let (k, n): (u64, u64) = shard
        .extract()
        .map_err(|_| crate::type_error("shard must be \"K/N\" or (K, N)"))?;
    parse_shard(&format!("{k}/{n}")).map_err(PyValueError::new_err)
}

/// `map` as (input column, table column) pairs: a dict, pairs, or `"IN=COL,..."`.
fn map_argument(map: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let pairs: Vec<(String, String)> = if let Ok(text) = map.cast::<PyString>() {
        text.extract::<String>()?
            .split(',')
            .map(|pair| parse_rename(pair).map_err(PyValueError::new_err))
            .collect::<PyResult<_>>()?
    } else if let Ok(dict) = map.cast::<PyDict>() {
        dict.iter()
            .map(|(k, v)| {
                Ok((
                    k.extract()?,
                    v.extract::<Option<String>>()?.unwrap_or_default(),
                ))
            })
            .collect::<PyResult<_>>()?
    } else {
        map.extract().map_err(|_| {
            crate::type_error("map must be a dict, a list of pairs or \"INPUT=COLUMN,...\"")
        })?
    };
    if let Some((from, _)) = pairs.iter().find(|(from, _)| from.is_empty()) {
        return Err(PyValueError::new_err(format!(
            "expected INPUT=COLUMN, not '={from}'"
        )));
    }
    Ok(pairs)
}

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
            BATCH_ROWS,
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
            BATCH_ROWS,
            true,
        )
    };
    opened.map_err(|e| input_error(py, e))
}

/// An input error: a usage error for an option the input cannot take, else a failed run.
pub(crate) fn input_error(py: Python<'_>, error: InputError) -> PyErr {
    let kind = match error {
        InputError::Options(_) => LoadErrorKind::InvalidOption,
        _ => LoadErrorKind::Input,
    };
    engine_error(py, &EngineError::new(kind, error.to_string()), Vec::new())
}

/// What to read: the engine's dataset for a path, an array or a table.
struct SourceKeywords<'py> {
    source: Bound<'py, PyAny>,
    column: Option<String>,
    input_format: Option<String>,
    dataset: String,
    rows: Option<Bound<'py, PyAny>>,
    shard: Option<Bound<'py, PyAny>>,
    ids: Option<Bound<'py, PyAny>>,
    first_row: u64,
    map: Vec<(String, String)>,
    row_number_column: Option<String>,
}

impl SourceKeywords<'_> {
    fn open(&self, py: Python<'_>) -> PyResult<Dataset> {
        if !in_memory(&self.source) {
            return self.open_path(py);
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
        Dataset::from_reader(reader, &self.map, self.row_number_column.clone())
            .map_err(|e| engine_error(py, &e, Vec::new()))
    }

    fn open_path(&self, py: Python<'_>) -> PyResult<Dataset> {
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
        let format = self
            .input_format
            .as_deref()
            .map(|name| name.parse())
            .transpose()
            .map_err(|e: input::UnknownInputFormat| usage(py, e.to_string()))?;
        let rows = self
            .rows
            .as_ref()
            .map(|rows| rows_argument(rows, "rows"))
            .transpose()?;
        let shard = self.shard.as_ref().map(shard_argument).transpose()?;
        if rows.is_some() && shard.is_some() {
            return Err(usage(py, "rows and shard select rows two ways: give one"));
        }
        let options = DatasetOptions {
            path: Some(path),
            input: InputOptions {
                format,
                column: self.column.clone(),
                dataset: self.dataset.clone(),
                selection: RowSelection::of(rows, shard),
                batch_rows: BATCH_ROWS,
                vectors_optional: true,
            },
            map: self.map.clone(),
            row_number_column: self.row_number_column.clone(),
        };
        Dataset::open(&options).map_err(|e| engine_error(py, &e, Vec::new()))
    }
}

/// Load `source` into `table` (``KEYSPACE.TABLE``) through `hosts` on the engine of `cqlwire
/// load`, with the GIL released; returns a `LoadReport` (written, rejected, rejects, retried,
/// bytes, elapsed, resume_from).
///
/// `source`: a path of any input `cqlwire load` reads, a 2-D NumPy array (`ids` a key per row,
/// or `row_number_column`; `first_row` numbers its rows), or a pyarrow Table or RecordBatch
/// (columns map by name). The other keywords are the command's flags with underscores: `map`,
/// `query`, `row_number_column`, `column`, `input_format`, `dataset`, `rows`, `shard`,
/// `concurrency`, `rejects`, `dry_run`, `consistency`, `timeout`, `username`, `password`, `tls`,
/// `tls_ca`, `tls_cert`, `tls_key`. Rejected rows do not raise. Raises `LoadError` for what the
/// command exits 2 on and `LoadFailed` (with `report`) for a run that could not finish; Ctrl-C
/// drains the run and raises `KeyboardInterrupt` carrying the run's `report`.
#[pyfunction]
#[pyo3(signature = (
    source, *, hosts, table, map=None, query=None, row_number_column=None, column=None,
    input_format=None, dataset="train".to_owned(), rows=None, shard=None, ids=None, first_row=0,
    concurrency=None, rejects=None, dry_run=false, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn load<'py>(
    py: Python<'py>,
    source: Bound<'py, PyAny>,
    hosts: &Bound<'py, PyAny>,
    table: String,
    map: Option<&Bound<'py, PyAny>>,
    query: Option<String>,
    row_number_column: Option<String>,
    column: Option<String>,
    input_format: Option<String>,
    dataset: String,
    rows: Option<Bound<'py, PyAny>>,
    shard: Option<Bound<'py, PyAny>>,
    ids: Option<Bound<'py, PyAny>>,
    first_row: u64,
    concurrency: Option<u32>,
    rejects: Option<PathBuf>,
    dry_run: bool,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<LoadReport> {
    let mut options =
        LoadOptions::new(ConnectionKeywords::new(hosts, table, connection)?.options(py)?);
    options.query = query;
    if let Some(n) = concurrency {
        if n == 0 {
            return Err(usage(py, "concurrency must be at least 1"));
        }
        options.concurrency = Concurrency::Fixed(n as usize);
    }
    let map = map.map(map_argument).transpose()?.unwrap_or_default();
    let source = SourceKeywords {
        source,
        column,
        input_format,
        dataset,
        rows,
        shard,
        ids,
        first_row,
        map,
        row_number_column,
    };
    let mut dataset = source.open(py)?;
    let file = rejects
        .as_ref()
        .map(|path| {
            CsvRejects::append(path).map_err(|e| {
                engine_error(
                    py,
                    &EngineError::new(
                        LoadErrorKind::Rejects,
                        format!("cannot open {}: {e}", path.display()),
                    ),
                    Vec::new(),
                )
            })
        })
        .transpose()?;
    let mut sink = Collected {
        kept: Vec::new(),
        file,
    };
    let mode = if dry_run { Mode::DryRun } else { Mode::Write };
    let control = RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let ((result, kept), interrupt) = run_until_interrupted(py, &runtime, stop, async move {
        let result = match Loader::connect_for(options, &mut dataset).await {
            Ok(loader) => loader.load(dataset, &mut sink, &control, mode).await,
            Err(error) => Err(error),
        };
        (result, sink.kept)
    })?;
    if let Some(interrupt) = interrupt {
        return Err(with_report(py, interrupt, &result, kept));
    }
    match result {
        Ok(report) => Ok(LoadReport::new(&report, kept)),
        Err(error) => Err(engine_error(py, &error, kept)),
    }
}

/// The KeyboardInterrupt of a drained load, carrying the run's report as `report` and saying where
/// to resume (`rows=R..`), as the command line does on Ctrl-C.
fn with_report(
    py: Python<'_>,
    interrupt: PyErr,
    result: &Result<EngineReport, EngineError>,
    kept: Vec<(u64, String, String)>,
) -> PyErr {
    let report = match result {
        Ok(report) => Some(report),
        Err(error) => error.report(),
    };
    let Some(report) = report else {
        return interrupt;
    };
    let message = match report.resume_from {
        Some(row) => format!("interrupted; resume with rows=\"{row}..\""),
        None => "interrupted after every row was written".to_owned(),
    };
    let value = interrupt.value(py);
    let set = Py::new(py, LoadReport::new(report, kept)).and_then(|report| {
        value.setattr("report", report)?;
        value.setattr("args", (message,))
    });
    match set {
        Ok(()) => interrupt,
        Err(error) => error,
    }
}
