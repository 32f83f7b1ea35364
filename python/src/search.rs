//! `cqlwire.search`: ANN queries on a live table and their recall, on the job of `cqlwire search`
//! ([`cqlwire_client::SearchJob`]): the same prepared `SELECT … ORDER BY … ANN OF ? LIMIT k`, each
//! query vector bound as bytes, the same latency and recall measures.

use crate::conversion::{one_vector_column, rows_argument, ConnectionKeywords, Count, Hosts};
use crate::errors::{engine, search_error, usage};
use crate::reports::SearchReport;
use crate::runtime::{run_interruptible, runtime};
use crate::sources::{self, in_memory, memory_reader, parse_format};
use cqlwire_client::{QuerySource, RunControl, SearchJob, SearchOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::time::Duration;

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
/// Raises `UsageError` (`LoadError`) for what the command exits 2 on (no vector index, a query
/// the server refuses, a results file that is an input) and `JobFailed` (`LoadFailed`) otherwise.
#[pyfunction]
#[pyo3(signature = (
    queries, *, hosts, table, vector_column=None, column=None, key=None, k=Count(10), dataset="test".to_owned(),
    input_format=None, input_column=None, query_rows=None, ground_truth=None, exact=None,
    r#where=None, concurrency=Count(1), warmup=Count(0), wait_for_index=None, results=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn search<'py>(
    py: Python<'py>,
    queries: Bound<'py, PyAny>,
    hosts: Hosts,
    table: String,
    vector_column: Option<String>,
    column: Option<String>,
    key: Option<String>,
    k: Count,
    dataset: String,
    input_format: Option<String>,
    input_column: Option<String>,
    query_rows: Option<Bound<'py, PyAny>>,
    ground_truth: Option<Bound<'py, PyAny>>,
    exact: Option<Bound<'py, PyAny>>,
    r#where: Option<String>,
    concurrency: Count,
    warmup: Count,
    wait_for_index: Option<Count>,
    results: Option<PathBuf>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<SearchReport> {
    let table_name = table.clone();
    let settings = ConnectionKeywords::new(hosts, table, connection)?.settings(py)?;
    let mut options = SearchOptions::from_settings(&settings).map_err(engine(py))?;
    options.column = one_vector_column(py, vector_column, column)?;
    options.key = key;
    options.k = k.size();
    options.predicate = r#where;
    options.concurrency = concurrency.size();
    options.warmup = warmup.size();
    options.check().map_err(engine(py))?;
    let format = parse_format(py, input_format.as_deref())?;
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
    let ground_truth = sources::ground_truth(
        py,
        ground_truth.as_ref(),
        exact.as_ref(),
        source.path(),
        format,
    )?;
    let job = SearchJob {
        queries: source,
        ground_truth,
        wait_for_index: wait_for_index.map(|Count(s)| Duration::from_secs(s)),
        results,
    };
    job.check().map_err(|e| search_error(py, e))?;
    if let Some(Count(seconds)) = wait_for_index {
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
    let control = RunControl::default();
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
