//! The reports the jobs return to Python: plain frozen objects that pickle (a Dask task's result).

use cqlwire_bench::case::{Event, Stage};
use cqlwire_client::{
    Key, LoadError as EngineError, LoadReport as EngineReport, RejectSink,
    SearchReport as SearchReportOf, UnloadOutcome,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Rejected rows kept in [`LoadReport::rejects`] (all are counted, and all go to `rejects=`).
const KEPT_REJECTS: usize = 10_000;

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
    pub(crate) fn new(report: &EngineReport, rejects: Vec<(u64, String, String)>) -> Self {
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

/// Rejected rows kept (the first [`KEPT_REJECTS`]) for the report; all go to the `rejects=` file.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) kept: Vec<(u64, String, String)>,
}

impl RejectSink for Collected {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        if self.kept.len() < KEPT_REJECTS {
            self.kept.push((row, key.to_owned(), error.to_owned()));
        }
        Ok(())
    }
}

/// The KeyboardInterrupt of a drained load, carrying the run's report as `report` and saying where
/// to resume (`rows=R..`), as the command line does on Ctrl-C.
pub(crate) fn with_report(
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
    pub(crate) fn new(
        report: SearchReportOf,
        index_wait: Option<Duration>,
        statement: String,
    ) -> Self {
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

/// The report of an unload into `job`'s file.
pub(crate) fn file_report(
    outcome: UnloadOutcome,
    output: PathBuf,
    ids: Option<PathBuf>,
) -> UnloadReport {
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

/// Calls `progress(event)` with the event as a dict: `{"event": "started", "stage": "load",
/// "units": 300}`, `{"event": "level", "stage": "concurrent", "concurrency": 5}`, `{"event":
/// "finished", "stage": "load", "seconds": 0.71}`. What the callback raises is printed as Python
/// prints an exception it cannot raise, and the case goes on.
pub(crate) fn report_progress(py: Python<'_>, callback: &Py<PyAny>, event: Event) {
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
