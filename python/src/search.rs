//! `cqlwire.search`: ANN queries on a live table and their recall, on the engine of `cqlwire search`
//! ([`cqlwire_load::Searcher`]): the same prepared `SELECT … ORDER BY … ANN OF ? LIMIT k`, each
//! query vector bound as bytes, the same latency and recall measures.

use crate::load::{
    engine_error, in_memory, input_error, memory_reader, run_interruptible, runtime, usage,
    ConnectionKeywords,
};
use cqlwire_load::{Key, SearchOptions, SearchReport as EngineReport, Searcher};
use cqlwire_vector::convert;
use cqlwire_vector::input::{self, InputOptions, Neighbors, RowSelection};
use numpy::PyUntypedArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
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

/// Ground truth: a 2-D integer array (one row of ids per query) or a file `read_neighbors` reads.
fn ground_truth(py: Python<'_>, truth: &Bound<'_, PyAny>) -> PyResult<Neighbors> {
    if truth.cast::<PyUntypedArray>().is_ok() {
        let numpy = py.import("numpy")?;
        let array = numpy.call_method1("asarray", (truth, "int64"))?;
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
        return Neighbors::new(rows, k, ids)
            .ok_or_else(|| usage(py, "ground_truth does not hold whole rows"));
    }
    let path: PathBuf = truth.extract().map_err(|_| {
        crate::type_error("ground_truth must be a path or a 2-D integer NumPy array")
    })?;
    input::read_neighbors(&path, None).map_err(|e| input_error(py, e))
}

/// Runs ANN queries on `table` (see the stubs).
#[pyfunction]
#[pyo3(signature = (
    queries, *, hosts, table, column=None, key=None, k=10, dataset="test".to_owned(),
    input_format=None, input_column=None, ground_truth=None, r#where=None, concurrency=1,
    warmup=0, wait_for_index=None, **connection
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
    ground_truth: Option<Bound<'py, PyAny>>,
    r#where: Option<String>,
    concurrency: usize,
    warmup: usize,
    wait_for_index: Option<u64>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<SearchReport> {
    let mut options =
        SearchOptions::new(ConnectionKeywords::new(hosts, table, connection)?.options(py)?);
    options.column = column;
    options.key = key;
    options.k = k;
    options.predicate = r#where;
    options.concurrency = concurrency;
    options.warmup = warmup;
    let reader = if in_memory(&queries) {
        memory_reader(py, &queries, input_column.as_deref(), None, 0)?
    } else {
        let path: PathBuf = queries.extract().map_err(|_| {
            crate::type_error("queries must be a path, a NumPy array or a pyarrow Table")
        })?;
        let format = input_format
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e: input::UnknownInputFormat| usage(py, e.to_string()))?;
        let options = InputOptions {
            format,
            column: input_column,
            selection: RowSelection::All,
            batch_rows: QUERY_BATCH_ROWS,
            dataset,
        };
        convert::open(Some(&path), options).map_err(|e| usage(py, e.to_string()))?
    };
    let truth = ground_truth
        .map(|t| self::ground_truth(py, &t))
        .transpose()?;
    let control = cqlwire_load::RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let (result, statement) = run_interruptible(py, &runtime, stop, async move {
        let searcher = match Searcher::connect(options).await {
            Ok(searcher) => searcher,
            Err(error) => return (Err(error), String::new()),
        };
        let statement = searcher.statement().to_owned();
        let run = async {
            let queries = searcher.read_queries(reader, false)?;
            let waited = match wait_for_index {
                Some(seconds) => Some(
                    searcher
                        .wait_for_index(&queries, Duration::from_secs(seconds))
                        .await?,
                ),
                None => None,
            };
            let report = searcher.run(&queries, truth.as_ref(), &control).await?;
            Ok((report, waited))
        };
        (run.await, statement)
    })?;
    match result {
        Ok((report, waited)) => Ok(SearchReport::new(report, waited, statement)),
        Err(error) => Err(engine_error(py, &error, Vec::new())),
    }
}
