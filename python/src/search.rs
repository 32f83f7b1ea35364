//! `cqlwire.search`: ANN queries on a live table and their recall, on the engine of `cqlwire search`
//! ([`cqlwire_client::Searcher`]): the same prepared `SELECT … ORDER BY … ANN OF ? LIMIT k`, each
//! query vector bound as bytes, the same latency and recall measures.

use crate::load::{
    engine_error, in_memory, memory_reader, rows_argument, run_interruptible, runtime, usage,
    ConnectionKeywords,
};
use cqlwire_client::{
    GroundTruth, Key, LoadError as EngineError, LoadErrorKind, SearchOptions,
    SearchReport as EngineReport, Searcher, RESULTS_HEADER,
};
use cqlwire_vector::convert;
use cqlwire_vector::input::{self, InputFormat, InputOptions, Neighbors, RowSelection};
use cqlwire_vector::output::{refuse_same_file, Output};
use numpy::PyUntypedArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Query vectors per batch read.
const QUERY_BATCH_ROWS: usize = 4096;

/// A returned key: an int for an integer column, else the CQL literal.
#[derive(Clone, IntoPyObject)]
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
    latency_ms: std::collections::BTreeMap<&'static str, f64>,
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
) -> PyResult<(Option<Neighbors>, GroundTruth)> {
    if truth.is_some() && exact.is_some() {
        return Err(usage(
            py,
            "ground_truth and exact both give the ground truth: give one",
        ));
    }
    if let Some(truth) = truth.filter(|t| t.cast::<PyUntypedArray>().is_ok()) {
        return Ok((Some(array_truth(py, truth)?), GroundTruth::None));
    }
    let file = truth
        .map(|t| path_argument(t, "ground_truth (or a 2-D integer NumPy array)"))
        .transpose()?;
    let exact = exact
        .map(|e| path_argument(e, "exact (the training vectors)"))
        .transpose()?;
    Ok((None, GroundTruth::choose(file, exact, queries, format)))
}

/// A failed write of the results file, as the engine's output error.
fn output_error(error: &dyn std::fmt::Display) -> EngineError {
    EngineError::new(LoadErrorKind::Output, error.to_string())
}

/// The results file at `path` (written atomically), its CSV header written and flushed.
fn open_results(path: &Path) -> Result<Output, EngineError> {
    let mut output = Output::open(Some(path), false).map_err(|e| output_error(&e))?;
    output
        .write_all(RESULTS_HEADER.as_bytes())
        .and_then(|()| output.flush())
        .map_err(|e| output_error(&e))?;
    Ok(output)
}

/// Writes the per-query lines of `report` after the header and puts the file in place.
fn write_results(mut output: Output, report: &EngineReport) -> Result<(), EngineError> {
    report
        .write_csv_rows(&mut output)
        .map_err(|e| output_error(&e))?;
    output.commit().map_err(|e| output_error(&e))
}

/// Run ANN queries on `table` through `hosts` on the engine of `cqlwire search`, with the GIL
/// released; returns a `SearchReport` (queries, k, recall, recall_min, qps, latency_ms,
/// concurrency, errors, warnings, index_wait, statement, results).
///
/// `queries`: a path (any input `cqlwire search` reads), a 2-D NumPy array or a pyarrow Table.
/// Ground truth: `ground_truth` (a 2-D integer array or a file), else `exact` (a training file
/// searched by brute force), else an HDF5 query file's `neighbors`. The other keywords are the
/// command's flags with underscores: `column`, `key`, `k`, `dataset`, `input_format`,
/// `input_column`, `query_rows`, `where`, `concurrency`, `warmup`, `wait_for_index`, `results`
/// and the connection's (`consistency` is LOCAL_ONE by default). Raises `LoadError` for what the
/// command exits 2 on (no vector index, a query the server refuses) and `LoadFailed` otherwise.
#[pyfunction]
#[pyo3(signature = (
    queries, *, hosts, table, column=None, key=None, k=10, dataset="test".to_owned(),
    input_format=None, input_column=None, query_rows=None, ground_truth=None, exact=None,
    r#where=None, concurrency=1, warmup=0, wait_for_index=None, results=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn search<'py>(
    py: Python<'py>,
    queries: Bound<'py, PyAny>,
    hosts: &Bound<'py, PyAny>,
    table: String,
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
    options.column = column;
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
    let mut asked = None;
    let (reader, path) = if in_memory(&queries) {
        if query_rows.is_some() {
            return Err(usage(
                py,
                "query_rows goes with a query file; slice the array or table instead",
            ));
        }
        let reader = memory_reader(py, &queries, input_column.as_deref(), None, 0)?;
        (reader, None)
    } else {
        let path: PathBuf = queries.extract().map_err(|_| {
            crate::type_error("queries must be a path, a NumPy array or a pyarrow Table")
        })?;
        let rows = query_rows
            .as_ref()
            .map(|rows| rows_argument(rows, "query_rows"))
            .transpose()?;
        asked = rows.clone();
        let options = InputOptions {
            format,
            column: input_column,
            selection: RowSelection::of(rows, None),
            batch_rows: QUERY_BATCH_ROWS,
            dataset,
            vectors_optional: false,
        };
        let reader = convert::open(Some(&path), options).map_err(|e| usage(py, e.to_string()))?;
        (reader, Some(path))
    };
    let (given, choice) = self::ground_truth(
        py,
        ground_truth.as_ref(),
        exact.as_ref(),
        path.as_deref(),
        format,
    )?;
    if let Some(results) = &results {
        for input in [path.as_deref(), choice.path()].into_iter().flatten() {
            refuse_same_file(Some(input), Some(results)).map_err(|e| usage(py, e.to_string()))?;
        }
    }
    // Opened (its header written) before any query: a missing folder or a full device is refused
    // before the work, not after it.
    let results = results
        .as_deref()
        .map(open_results)
        .transpose()
        .map_err(|e| engine_error(py, &e, Vec::new()))?;
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
    let (result, statement) = run_interruptible(py, &runtime, stop, async move {
        let searcher = match Searcher::connect(options).await {
            Ok(searcher) => searcher,
            Err(error) => return (Err(error), String::new()),
        };
        let statement = searcher.statement().to_owned();
        let run = async {
            let queries = searcher.read_queries(reader, choice.needs_floats())?;
            if let Some(range) = &asked {
                queries.check_range(range)?;
            }
            let truth = match given {
                Some(truth) => Some(truth),
                None => choice.neighbors(&searcher, &queries)?,
            };
            if let Some(truth) = &truth {
                searcher.check_truth(&queries, truth)?;
            }
            let waited = match wait_for_index {
                Some(seconds) => {
                    searcher
                        .wait_for_index(&queries, Duration::from_secs(seconds), &control)
                        .await?
                }
                None => None,
            };
            let report = searcher.run(&queries, truth.as_ref(), &control).await?;
            // An interrupted run's results are partial: the file keeps what it held.
            if let (Some(output), false) = (
                results,
                control.stop.load(std::sync::atomic::Ordering::Relaxed),
            ) {
                write_results(output, &report)?;
            }
            Ok((report, waited))
        };
        (run.await, statement)
    })?;
    match result {
        Ok((report, waited)) => Ok(SearchReport::new(report, waited, statement)),
        Err(error) => Err(engine_error(py, &error, Vec::new())),
    }
}
