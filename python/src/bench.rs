//! `cqlwire.bench`: VectorDBBench's performance case on a live table, on the engine of
//! `cqlwire bench` ([`cqlwire_bench::case`]); the result is VectorDBBench's metrics as a dict.

use crate::load::{engine_error, run_interruptible, runtime, usage, ConnectionKeywords};
use cqlwire_bench::case::{self, CaseError, CaseOptions, Stage};
use cqlwire_bench::chart::concurrency_chart;
use cqlwire_bench::dataset::{BenchDataset, DatasetFiles};
use cqlwire_bench::folder::Filter;
use cqlwire_bench::result::ResultDb;
use cqlwire_client::{RunControl, SearchOptions};
use cqlwire_vector::output::Output;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A case error as `LoadError` (what the command refuses with exit code 2) or `LoadFailed`.
fn case_error(py: Python<'_>, error: CaseError) -> PyErr {
    let usage_error = case::is_usage(&error);
    match error {
        CaseError::Engine(error) => engine_error(py, &error, Vec::new()),
        CaseError::Search(error) => crate::search::search_error(py, error),
        CaseError::TableExists(table) => usage(
            py,
            format!("table {table} exists: drop it first, or pass drop=True"),
        ),
        other if usage_error => usage(py, other.to_string()),
        other => engine_error(
            py,
            &cqlwire_client::LoadError::new(
                cqlwire_client::LoadErrorKind::Input,
                other.to_string(),
            ),
            Vec::new(),
        ),
    }
}

/// An output file, opened before the work (a missing folder is refused now).
fn open(py: Python<'_>, path: Option<&Path>) -> PyResult<Option<Output>> {
    path.map(|path| Output::open(Some(path), false))
        .transpose()
        .map_err(|e| usage(py, e.to_string()))
}

/// Writes `text` to `output` and renames it into place.
fn write(py: Python<'_>, output: Option<Output>, text: &str) -> PyResult<()> {
    if let Some(mut output) = output {
        output
            .write_all(text.as_bytes())
            .and_then(|()| output.commit().map_err(std::io::Error::other))
            .map_err(|e| usage(py, e.to_string()))?;
    }
    Ok(())
}

/// Runs VectorDBBench's performance case on `folder` (a dataset folder or an ann-benchmarks HDF5
/// file), or on the files `train`, `test` and
/// `ground_truth` (see the stubs).
#[pyfunction]
#[pyo3(signature = (
    folder=None, *, hosts, table, train=None, test=None, ground_truth=None, stages=None, drop=false, metric=None,
    index_options=None, k=100, concurrency=vec![1, 5, 10, 20, 30, 40, 60, 80], duration=30,
    index_wait=3600, filter=None, index_first=false, output=None, db="Cassandra".to_owned(), plot=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bench<'py>(
    py: Python<'py>,
    folder: Option<PathBuf>,
    hosts: &Bound<'py, PyAny>,
    table: String,
    train: Option<PathBuf>,
    test: Option<PathBuf>,
    ground_truth: Option<PathBuf>,
    stages: Option<Vec<String>>,
    drop: bool,
    metric: Option<String>,
    index_options: Option<std::collections::BTreeMap<String, String>>,
    k: usize,
    concurrency: Vec<usize>,
    duration: u64,
    index_wait: u64,
    filter: Option<String>,
    index_first: bool,
    output: Option<PathBuf>,
    db: String,
    plot: Option<PathBuf>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let settings = ConnectionKeywords::new(hosts, table, connection)?.settings(py)?;
    let load_connection = settings
        .options()
        .map_err(|e| engine_error(py, &e, Vec::new()))?;
    let search_connection = SearchOptions::from_settings(&settings)
        .map_err(|e| engine_error(py, &e, Vec::new()))?
        .session;
    let stages = match stages {
        None => Stage::ALL.to_vec(),
        Some(names) => Stage::parse_list(&names).map_err(|e| usage(py, e))?,
    };
    let filter = filter
        .map(|text| text.parse::<Filter>())
        .transpose()
        .map_err(|e| usage(py, e.to_string()))?;
    let db = ResultDb::from_value(&db)
        .ok_or_else(|| usage(py, format!("db is Cassandra or test, not '{db}'")))?;
    let options = CaseOptions {
        connection: load_connection,
        search_connection,
        stages,
        drop,
        similarity: metric,
        index_options: index_options.unwrap_or_default().into_iter().collect(),
        k,
        concurrency,
        duration: Duration::from_secs(duration),
        index_wait: Duration::from_secs(index_wait),
        filter,
        index_first,
    };
    let dataset = match (folder, train, test, ground_truth) {
        (Some(folder), None, None, None) => {
            BenchDataset::open(&folder).map_err(|e| usage(py, e.to_string()))?
        }
        (None, Some(train), Some(test), Some(truth)) => DatasetFiles::new(&train, &test, &truth)
            .map(BenchDataset::Files)
            .map_err(|e| usage(py, e.to_string()))?,
        _ => {
            return Err(usage(
                py,
                "bench takes a dataset folder, or train, test and ground_truth".to_owned(),
            ))
        }
    };
    let name = dataset.name();
    let (result_file, plot_file) = (open(py, output.as_deref())?, open(py, plot.as_deref())?);
    let control = RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let run_options = options.clone();
    let report = run_interruptible(py, &runtime, stop, async move {
        case::run(&dataset, &run_options, &control, &mut |_| {}).await
    })?
    .map_err(|e| case_error(py, e))?;
    let result = report.result(&options, db);
    write(py, result_file, &result.to_json())?;
    if plot_file.is_some() {
        let title = format!("{name} on {}", report.server);
        let svg = concurrency_chart(&result.results[0].metrics, &title)
            .map_err(|e| usage(py, e.to_string()))?;
        write(py, plot_file, &svg)?;
    }
    let value = report.summary(&result.results[0].metrics);
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}
