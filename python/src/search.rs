//! `cqlwire.search`: ANN queries on a live table and their recall, on the job of `cqlwire search`
//! ([`cqlwire_client::SearchJob`]): the same prepared `SELECT … ORDER BY … ANN OF ? LIMIT k`, each
//! query vector bound as bytes, the same latency and recall measures.

use crate::load::{
    engine_error, in_memory, job_failure, memory_reader, rows_argument, run_interruptible, runtime,
    usage, ConnectionKeywords,
};
use cqlwire_client::{
    GroundTruth, Key, QuerySource, SearchError, SearchJob, SearchOptions,
    SearchReport as EngineReport,
};
use cqlwire_vector::input::{self, InputFormat, Neighbors};
use numpy::PyUntypedArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A returned key: an int for an integer column, else the CQL literal.
#[derive(Clone, IntoPyObject, FromPyObject)]
pub(crate) enum PyKey {
    Int(i64),
    Literal(String),
}

/// One measured query: (query row, latency in ms, keys nearest first, recall or None, error or
/// None).
type QueryRow = (u64, f64, Vec<PyKey>, Option<f64>, Option<String>);

/// What a search measured.
#[pyclass(module = "cqlwire", frozen, get_all)]
pub(crate) struct SearchReport {
    /// Queries measured (warm-up excluded), answered or not.
    queries: u64,
    /// Rows asked of each query.
    k: usize,
    /// Mean recall@k of the answered queries, when there is ground truth.
    recall: Option<f64>,
    /// The lowest recall@k of an answered query.
    recall_min: Option<f64>,
    /// Answered queries per second.
    qps: f64,
    /// Latency percentiles of the answered queries, in ms: p50, p95, p99, max.
    latency_ms: std::collections::BTreeMap<String, f64>,
    /// Queries in flight at once.
    concurrency: usize,
    /// Queries that failed.
    errors: u64,
    /// Wall time of the measured queries, in seconds.
    elapsed: f64,
    /// The distinct warnings the server attached to answers, in the order first seen: (its text,
    /// how many measured answers carried it).
    warnings: Vec<(String, u64)>,
    /// Warnings whose text was not among the first 16 distinct ones kept.
    other_warnings: u64,
    /// Seconds until the index answered, with `wait_for_index`.
    index_wait: Option<f64>,
    /// The statement each query ran.
    statement: String,
    /// Every measured query, in query order.
    results: Vec<QueryRow>,
}

#[pymethods]
impl SearchReport {
    /// A report from its fields, in their order (what unpickling calls).
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (queries, k, recall, recall_min, qps, latency_ms, concurrency, errors, elapsed,
                        warnings, other_warnings, index_wait, statement, results))]
    fn from_fields(
        queries: u64,
        k: usize,
        recall: Option<f64>,
        recall_min: Option<f64>,
        qps: f64,
        latency_ms: std::collections::BTreeMap<String, f64>,
        concurrency: usize,
        errors: u64,
        elapsed: f64,
        warnings: Vec<(String, u64)>,
        other_warnings: u64,
        index_wait: Option<f64>,
        statement: String,
        results: Vec<QueryRow>,
    ) -> Self {
        SearchReport {
            queries,
            k,
            recall,
            recall_min,
            qps,
            latency_ms,
            concurrency,
            errors,
            elapsed,
            warnings,
            other_warnings,
            index_wait,
            statement,
            results,
        }
    }

    /// Pickling: the class and its fields, so a report crosses processes (a Dask task's result).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let (r, py) = (slf.get(), slf.py());
        // Fourteen fields: more than a Rust tuple converts, so a list of objects.
        let fields = [
            r.queries.into_bound_py_any(py)?,
            r.k.into_bound_py_any(py)?,
            r.recall.into_bound_py_any(py)?,
            r.recall_min.into_bound_py_any(py)?,
            r.qps.into_bound_py_any(py)?,
            r.latency_ms.clone().into_bound_py_any(py)?,
            r.concurrency.into_bound_py_any(py)?,
            r.errors.into_bound_py_any(py)?,
            r.elapsed.into_bound_py_any(py)?,
            r.warnings.clone().into_bound_py_any(py)?,
            r.other_warnings.into_bound_py_any(py)?,
            r.index_wait.into_bound_py_any(py)?,
            r.statement.clone().into_bound_py_any(py)?,
            r.results.clone().into_bound_py_any(py)?,
        ];
        (slf.get_type(), PyTuple::new(py, fields)?).into_pyobject(py)
    }

    fn __repr__(&self) -> String {
        let recall = self.recall.map_or("None".to_owned(), |r| format!("{r:.4}"));
        format!(
            "SearchReport(queries={}, k={}, recall={recall}, qps={:.1}, errors={})",
            self.queries, self.k, self.qps, self.errors
        )
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

impl SearchReport {
    fn new(report: EngineReport, index_wait: Option<Duration>, statement: String) -> Self {
        let l = report.latency;
        SearchReport {
            queries: report.queries,
            k: report.k,
            recall: report.recall,
            recall_min: report.recall_min,
            qps: report.qps,
            latency_ms: [
                ("p50", ms(l.p50)),
                ("p95", ms(l.p95)),
                ("p99", ms(l.p99)),
                ("max", ms(l.max)),
            ]
            .into_iter()
            .map(|(name, ms)| (name.to_owned(), ms))
            .collect(),
            concurrency: report.concurrency,
            errors: report.errors,
            elapsed: report.elapsed.as_secs_f64(),
            warnings: report
                .warnings
                .into_iter()
                .map(|warning| (warning.message, warning.queries))
                .collect(),
            other_warnings: report.other_warnings,
            index_wait: index_wait.map(|w| w.as_secs_f64()),
            statement,
            results: report
                .results
                .into_iter()
                .map(|r| {
                    let keys = r
                        .keys
                        .into_iter()
                        .map(|key| match key {
                            Key::Int(id) => PyKey::Int(id),
                            other => PyKey::Literal(other.to_string()),
                        })
                        .collect();
                    (r.number, ms(r.latency), keys, r.recall, r.error)
                })
                .collect(),
        }
    }
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

/// A path keyword: `str` or `os.PathLike`.
fn path_argument(value: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    value
        .extract()
        .map_err(|_| crate::type_error(format!("{what} must be a path")))
}

/// The ground truth keywords: lists given as an array, or where the engine finds them.
fn ground_truth(
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

/// The job's error as `cqlwire.LoadError` (what the command exits 2 on) or `cqlwire.LoadFailed`:
/// `kind` `no_index` (usage) for a column without a vector index, `stopped` for a stopped wait for
/// the index, `output` for the results file.
pub(crate) fn search_error(py: Python<'_>, error: SearchError) -> PyErr {
    match error {
        SearchError::Search(error) => engine_error(py, &error, Vec::new()),
        SearchError::QueryFile(error) => usage(py, error.to_string()),
        SearchError::ResultsIsInput(error) => usage(py, error.to_string()),
        error @ SearchError::NoIndex { .. } => job_failure(py, true, "no_index", error.to_string()),
        error @ SearchError::Stopped { .. } => job_failure(py, false, "stopped", error.to_string()),
        other => job_failure(py, false, "output", other.to_string()),
    }
}

/// Run ANN queries on `table` through `hosts` on the engine of `cqlwire search`, with the GIL
/// released; returns a `SearchReport` (queries, k, recall, recall_min, qps, latency_ms,
/// concurrency, errors, warnings, index_wait, statement, results).
///
/// `queries`: a path (any input `cqlwire search` reads), a 2-D NumPy array or a pyarrow Table.
/// Ground truth: `ground_truth` (a 2-D integer array or a file), else `exact` (a training file
/// searched by brute force), else an HDF5 query file's `neighbors`. The other keywords are the
/// command's flags with underscores: `vector_column` (or `column`), `key`, `k`, `dataset`,
/// `input_format`, `input_column`, `query_rows`, `where`, `concurrency`, `warmup`,
/// `wait_for_index`, `results` and the connection's (`consistency` is LOCAL_ONE by default).
/// Raises `LoadError` for what the command exits 2 on (no vector index, a query the server
/// refuses) and `LoadFailed` otherwise.
#[pyfunction]
#[pyo3(signature = (
    queries, *, hosts, table, vector_column=None, column=None, key=None, k=10, dataset="test".to_owned(),
    input_format=None, input_column=None, query_rows=None, ground_truth=None, exact=None,
    r#where=None, concurrency=1, warmup=0, wait_for_index=None, results=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn search<'py>(
    py: Python<'py>,
    queries: Bound<'py, PyAny>,
    hosts: &Bound<'py, PyAny>,
    table: String,
    vector_column: Option<String>,
    column: Option<String>,
    key: Option<String>,
    k: usize,
    dataset: String,
    input_format: Option<String>,
    input_column: Option<String>,
    query_rows: Option<Bound<'py, PyAny>>,
    ground_truth: Option<Bound<'py, PyAny>>,
    exact: Option<Bound<'py, PyAny>>,
    r#where: Option<String>,
    concurrency: usize,
    warmup: usize,
    wait_for_index: Option<u64>,
    results: Option<PathBuf>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<SearchReport> {
    let table_name = table.clone();
    let settings = ConnectionKeywords::new(hosts, table, connection)?.settings(py)?;
    let mut options =
        SearchOptions::from_settings(&settings).map_err(|e| engine_error(py, &e, Vec::new()))?;
    options.column = crate::load::vector_column(py, vector_column, column)?;
    options.key = key;
    options.k = k;
    options.predicate = r#where;
    options.concurrency = concurrency;
    options.warmup = warmup;
    let format = input_format
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: input::UnknownInputFormat| usage(py, e.to_string()))?;
    let source = if in_memory(&queries) {
        if query_rows.is_some() {
            return Err(usage(
                py,
                "query_rows goes with a query file; slice the array or table instead",
            ));
        }
        QuerySource::Reader(memory_reader(
            py,
            &queries,
            input_column.as_deref(),
            None,
            0,
        )?)
    } else {
        let path: PathBuf = queries.extract().map_err(|_| {
            crate::type_error("queries must be a path, a NumPy array or a pyarrow Table")
        })?;
        let rows = query_rows
            .as_ref()
            .map(|rows| rows_argument(rows, "query_rows"))
            .transpose()?;
        QuerySource::File {
            path,
            format,
            column: input_column,
            rows,
            dataset,
        }
    };
    let ground_truth = self::ground_truth(
        py,
        ground_truth.as_ref(),
        exact.as_ref(),
        source.path(),
        format,
    )?;
    let job = SearchJob {
        queries: source,
        ground_truth,
        wait_for_index: wait_for_index.map(Duration::from_secs),
        results,
    };
    job.check().map_err(|e| search_error(py, e))?;
    if let Some(seconds) = wait_for_index {
        // The wait for a new index can take minutes: say so to whoever listens to the logs.
        py.import("logging")?
            .call_method1("getLogger", ("cqlwire",))?
            .call_method1(
                "info",
                (format!(
                    "waiting up to {seconds} s for the vector index of {table_name} to answer"
                ),),
            )?;
    }
    let control = cqlwire_client::RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let outcome = run_interruptible(py, &runtime, stop, async move {
        job.run(options, &control, &()).await
    })?;
    match outcome {
        Ok(outcome) => Ok(SearchReport::new(
            outcome.report,
            outcome.index_wait,
            outcome.statement,
        )),
        Err(error) => Err(search_error(py, error)),
    }
}
