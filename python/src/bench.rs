//! `cqlwire.bench`: VectorDBBench's performance case on a live table, on the engine of
//! `cqlwire bench` ([`cqlwire_bench::case`]); the result is VectorDBBench's metrics as a dict.

use crate::conversion::{ConnectionKeywords, Count, Hosts};
use crate::errors::{case_error, dataset_error, engine, failure, usage};
use crate::reports::report_progress;
use crate::runtime::{run_interruptible, runtime};
use cqlwire_bench::case::{CaseOptions, Event, Stage};
use cqlwire_bench::dataset::{BenchDataset, DatasetFiles};
use cqlwire_bench::folder::Filter;
use cqlwire_bench::job::{BenchJob, Written};
use cqlwire_bench::result::ResultDb;
use cqlwire_bench::streaming::StreamingOptions;
use cqlwire_bench::sweep::Sweep;
use cqlwire_client::{RunControl, SearchOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::time::Duration;

/// Runs VectorDBBench's performance case on `folder` (a dataset folder or an ann-benchmarks HDF5
/// file), or on the files `train`, `test` and
/// `ground_truth` (see the stubs).
#[pyfunction]
#[pyo3(signature = (
    folder=None, *, hosts, table, train=None, test=None, ground_truth=None, stages=None, drop=false, metric=None,
    index_options=None, k=Count(100),
    concurrency=None, duration=None, streaming=false, insert_rate=None, search_stages=None,
    read_duration=None, optimize_after_write=true,
    index_wait=Count(3600), schema_timeout=Count(600), rounds=Count(1), rounds_load=Count(1),
    optimize_command=None, filter=None, index_first=false, sweep=None, output=None,
    db="Cassandra".to_owned(), plot=None,
    keep_failed=false, label=None, results_dir=None, title=None, progress=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bench<'py>(
    py: Python<'py>,
    folder: Option<PathBuf>,
    hosts: Hosts,
    table: String,
    train: Option<PathBuf>,
    test: Option<PathBuf>,
    ground_truth: Option<PathBuf>,
    stages: Option<Vec<String>>,
    drop: bool,
    metric: Option<String>,
    index_options: Option<std::collections::BTreeMap<String, String>>,
    k: Count,
    concurrency: Option<Vec<Count>>,
    duration: Option<Count>,
    streaming: bool,
    insert_rate: Option<Count>,
    search_stages: Option<Vec<Count>>,
    read_duration: Option<Count>,
    optimize_after_write: bool,
    index_wait: Count,
    schema_timeout: Count,
    rounds: Count,
    rounds_load: Count,
    optimize_command: Option<String>,
    filter: Option<String>,
    index_first: bool,
    sweep: Option<&Bound<'py, PyAny>>,
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
    let load_connection = settings.options().map_err(engine(py))?;
    let search_connection = SearchOptions::from_settings(&settings)
        .map_err(engine(py))?
        .session;
    let stages = match stages {
        None => Stage::ALL.to_vec(),
        Some(names) => Stage::parse_list(&names).map_err(|e| usage(py, e))?,
    };
    let filter = filter
        .map(|text| text.parse::<Filter>())
        .transpose()
        .map_err(|e| usage(py, e.to_string()))?;
    let streaming = streaming_options(
        py,
        streaming,
        [insert_rate, read_duration, duration],
        search_stages,
        optimize_after_write,
    )?;
    let concurrency = match concurrency {
        Some(levels) => levels.into_iter().map(Count::size).collect(),
        None if streaming.is_some() => cqlwire_bench::streaming::DEFAULT_CONCURRENCY.to_vec(),
        None => cqlwire_bench::case::DEFAULT_CONCURRENCY.to_vec(),
    };
    let db = ResultDb::from_value(&db)
        .ok_or_else(|| usage(py, format!("db is Cassandra or test, not '{db}'")))?;
    let options = CaseOptions {
        connection: load_connection,
        search_connection,
        stages,
        drop,
        similarity: metric,
        index_options: index_options.unwrap_or_default().into_iter().collect(),
        k: k.size(),
        concurrency,
        duration: Duration::from_secs(duration.map_or(30, |d| d.0)),
        index_wait: Duration::from_secs(index_wait.0),
        schema_timeout: Duration::from_secs(schema_timeout.0),
        rounds: rounds.size(),
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
    job.streaming = streaming;
    job.outputs.result = output;
    job.outputs.plot = plot;
    job.outputs.db = db;
    job.outputs.keep_failed = keep_failed;
    job.outputs.label = label;
    job.outputs.results_dir = results_dir;
    job.outputs.title = title;
    let lists = sweep.map(sweep_lists).transpose()?.unwrap_or_default();
    job.sweep = Sweep::from_lists(&lists).map_err(|e| case_error(py, e))?;
    job.load_rounds = rounds_load.size();
    let outputs = job.open_outputs().map_err(|e| case_error(py, e))?;
    let control = RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let running = job.clone();
    let run = run_interruptible(py, &runtime, stop, async move {
        let mut observe = |event: Event| {
            if let Some(callback) = &progress {
                Python::attach(|py| report_progress(py, callback, event));
            }
        };
        running.run_cases(&control, &mut observe).await
    })?;
    let cases = run.cases;
    let error = match run.error {
        Some(error) if cases.is_empty() => return Err(case_error(py, error)),
        error => error,
    };
    let summary = py
        .import("json")?
        .call_method1("loads", (job.summary(&cases).to_string(),))?;
    let written = job
        .write_cases(&cases, outputs)
        .map_err(|e| case_error(py, e))?;
    if let Some(error) = error {
        let error = case_error(py, error);
        error.value(py).setattr("summary", &summary)?;
        return Err(error);
    }
    let rejected = cases[0].report.streaming.as_ref();
    if let Some(rejected) = rejected.and_then(|s| s.insert.rejection()) {
        let error = failure(py, false, "rows_rejected", rejected);
        error.value(py).setattr("summary", &summary)?;
        return Err(error);
    }
    let failed: u64 = cases.iter().map(|case| case.report.failed_queries()).sum();
    if failed > 0 {
        let withheld = match written {
            Written::Withheld(files) if !files.is_empty() => "; no result file written \
                 (keep_failed=True writes it, marked failed)"
                .to_owned(),
            _ => String::new(),
        };
        let error = failure(
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

/// The streaming case's parameters, VectorDBBench's defaults for those not given; refuses them
/// (and `duration`, which the streaming case does not use) without `streaming`.
fn streaming_options(
    py: Python<'_>,
    streaming: bool,
    [insert_rate, read_duration, duration]: [Option<Count>; 3],
    search_stages: Option<Vec<Count>>,
    optimize_after_write: bool,
) -> PyResult<Option<StreamingOptions>> {
    let percent = |count: Count| u32::try_from(count.0).unwrap_or(u32::MAX);
    if !streaming {
        if insert_rate.is_some()
            || read_duration.is_some()
            || search_stages.is_some()
            || !optimize_after_write
        {
            return Err(usage(
                py,
                "insert_rate, search_stages, read_duration and optimize_after_write are the \
                 streaming case's: pass streaming=True"
                    .to_owned(),
            ));
        }
        return Ok(None);
    }
    if duration.is_some() {
        return Err(usage(
            py,
            "the streaming case times its own levels: read_duration after the write, not duration"
                .to_owned(),
        ));
    }
    let mut options = StreamingOptions::default();
    if let Some(rate) = insert_rate {
        options.insert_rate = percent(rate);
    }
    if let Some(stages) = search_stages {
        options.search_stages = stages.into_iter().map(percent).collect();
    }
    if let Some(seconds) = read_duration {
        options.read_duration = Duration::from_secs(seconds.0);
    }
    options.optimize_after_write = optimize_after_write;
    Ok(Some(options))
}

/// The `sweep` keyword, a mapping of each key to its values (whole numbers or strings), as the
/// library's lists, in the mapping's order.
fn sweep_lists(sweep: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Vec<String>)>> {
    let py = sweep.py();
    let mut lists = Vec::new();
    for item in sweep.call_method0("items")?.try_iter()? {
        let (key, values): (String, Bound<'_, PyAny>) = item?.extract()?;
        if values.is_instance_of::<pyo3::types::PyString>() {
            return Err(usage(
                py,
                format!("the sweep of {key} takes a list of values, not a string"),
            ));
        }
        let mut list = Vec::new();
        for value in values.try_iter()? {
            let value = value?;
            if value.is_instance_of::<pyo3::types::PyBool>() {
                return Err(usage(py, format!("the sweep of {key} takes no bool")));
            }
            list.push(match value.extract::<i64>() {
                Ok(n) => n.to_string(),
                Err(_) => value.extract::<String>()?,
            });
        }
        lists.push((key, list));
    }
    Ok(lists)
}
