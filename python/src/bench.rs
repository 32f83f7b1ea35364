//! `cqlwire.bench`: VectorDBBench's performance case on a live table, on the engine of
//! `cqlwire bench` ([`cqlwire_bench::case`]); the result is VectorDBBench's metrics as a dict.

use crate::load::{
    engine_error, job_failure, run_interruptible, runtime, usage, ConnectionKeywords,
};
use cqlwire_bench::case::{CaseError, CaseOptions, Event, Stage};
use cqlwire_bench::dataset::{BenchDataset, DatasetFiles};
use cqlwire_bench::folder::Filter;
use cqlwire_bench::job::{BenchJob, Written};
use cqlwire_bench::result::ResultDb;
use cqlwire_bench::DatasetError;
use cqlwire_client::{RunControl, SearchOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::time::Duration;

/// A case error as `LoadError` (what the command refuses with exit code 2) or `LoadFailed`.
fn case_error(py: Python<'_>, error: CaseError) -> PyErr {
    let usage_error = error.is_usage();
    match error {
        CaseError::Engine(error) => engine_error(py, &error, Vec::new()),
        CaseError::Search(error) => crate::search::search_error(py, error),
        CaseError::TableExists(table) => usage(
            py,
            format!("table {table} exists: drop it first, or pass drop=True"),
        ),
        CaseError::Stopped(_) => job_failure(py, false, "stopped", error.to_string()),
        CaseError::Output(_) | CaseError::Write(_) => {
            job_failure(py, usage_error, "output", error.to_string())
        }
        other if usage_error => usage(py, other.to_string()),
        other => job_failure(py, false, "input", other.to_string()),
    }
}

/// Runs VectorDBBench's performance case on `folder` (a dataset folder or an ann-benchmarks HDF5
/// file), or on the files `train`, `test` and
/// `ground_truth` (see the stubs).
#[pyfunction]
#[pyo3(signature = (
    folder=None, *, hosts, table, train=None, test=None, ground_truth=None, stages=None, drop=false, metric=None,
    index_options=None, k=100, concurrency=vec![1, 5, 10, 20, 30, 40, 60, 80], duration=30,
    index_wait=3600, schema_timeout=600, rounds=1, optimize_command=None, filter=None, index_first=false, output=None, db="Cassandra".to_owned(), plot=None,
    keep_failed=false, label=None, results_dir=None, title=None, progress=None, **connection
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
    schema_timeout: u64,
    rounds: usize,
    optimize_command: Option<String>,
    filter: Option<String>,
    index_first: bool,
    output: Option<PathBuf>,
    db: String,
    plot: Option<PathBuf>,
    keep_failed: bool,
    label: Option<String>,
    results_dir: Option<PathBuf>,
    title: Option<String>,
    progress: Option<Py<PyAny>>,
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
        schema_timeout: Duration::from_secs(schema_timeout),
        rounds,
        optimize_command,
        filter,
        index_first,
    };
    let dataset = match (folder, train, test, ground_truth) {
        (Some(folder), None, None, None) => {
            BenchDataset::open(&folder).map_err(|e| dataset_error(py, e))?
        }
        (None, Some(train), Some(test), Some(truth)) => DatasetFiles::new(&train, &test, &truth)
            .map(BenchDataset::Files)
            .map_err(|e| dataset_error(py, e))?,
        _ => {
            return Err(usage(
                py,
                "bench takes a dataset folder, or train, test and ground_truth".to_owned(),
            ))
        }
    };
    let mut job = BenchJob::new(dataset, options);
    job.outputs.result = output;
    job.outputs.plot = plot;
    job.outputs.db = db;
    job.outputs.keep_failed = keep_failed;
    job.outputs.label = label;
    job.outputs.results_dir = results_dir;
    job.outputs.title = title;
    let outputs = job.open_outputs().map_err(|e| case_error(py, e))?;
    let control = RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let running = job.clone();
    let report = run_interruptible(py, &runtime, stop, async move {
        let mut observe = |event: Event| {
            if let Some(callback) = &progress {
                Python::attach(|py| report_progress(py, callback, event));
            }
        };
        running.run(&control, &mut observe).await
    })?
    .map_err(|e| case_error(py, e))?;
    let result = job.result(&report);
    let summary = py.import("json")?.call_method1(
        "loads",
        (report.summary(&result.results[0].metrics).to_string(),),
    )?;
    let written = job.write(&report, outputs).map_err(|e| case_error(py, e))?;
    let failed = report.failed_queries();
    if failed > 0 {
        let withheld = match written {
            Written::Withheld(files) if !files.is_empty() => "; no result file written \
                 (keep_failed=True writes it, marked failed)"
                .to_owned(),
            _ => String::new(),
        };
        let error = job_failure(
            py,
            false,
            "queries_failed",
            format!("{failed} queries failed{withheld}"),
        );
        error.value(py).setattr("summary", &summary)?;
        return Err(error);
    }
    Ok(summary)
}

/// Calls `progress(event)` with the event as a dict: `{"event": "started", "stage": "load",
/// "units": 300}`, `{"event": "level", "stage": "concurrent", "concurrency": 5}`, `{"event":
/// "finished", "stage": "load", "seconds": 0.71}`. What the callback raises is printed as Python
/// prints an exception it cannot raise, and the case goes on.
fn report_progress(py: Python<'_>, callback: &Py<PyAny>, event: Event) {
    let dict = PyDict::new(py);
    let filled = match event {
        Event::Started { stage, units } => dict
            .set_item("event", "started")
            .and_then(|()| dict.set_item("stage", stage.name()))
            .and_then(|()| dict.set_item("units", units)),
        Event::Level { concurrency } => dict
            .set_item("event", "level")
            .and_then(|()| dict.set_item("stage", Stage::Concurrent.name()))
            .and_then(|()| dict.set_item("concurrency", concurrency)),
        Event::Finished { stage, seconds } => dict
            .set_item("event", "finished")
            .and_then(|()| dict.set_item("stage", stage.name()))
            .and_then(|()| dict.set_item("seconds", seconds)),
        _ => Ok(()),
    };
    if let Err(error) = filled.and_then(|()| callback.call1(py, (dict,)).map(drop)) {
        error.write_unraisable(py, Some(callback.bind(py)));
    }
}

/// A dataset error as the usage exception or the failure one, as the command line's exit code.
fn dataset_error(py: Python<'_>, error: DatasetError) -> PyErr {
    if error.is_usage() {
        usage(py, error.to_string())
    } else {
        job_failure(py, false, "input", error.to_string())
    }
}
