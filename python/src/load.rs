//! `cqlwire.load`: a dataset (a file, a NumPy array, a pyarrow table or record batch) into a live
//! Cassandra/ScyllaDB table, on the job of the command line ([`cqlwire_client::LoadJob`]): the
//! keywords become the job as the command's flags do, and the run goes with the GIL released.

use crate::conversion::{ConnectionKeywords, Count, Hosts, Renames, Shard};
use crate::errors::engine_error;
use crate::reports::{with_report, Collected, LoadReport};
use crate::runtime::{run_until_interrupted, runtime};
use crate::sources::SourceKeywords;
use cqlwire_client::{LoadJob, RejectSink, RunControl};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Load `source` into `table` (``KEYSPACE.TABLE``) through `hosts` on the engine of `cqlwire
/// load`, with the GIL released; returns a `LoadReport` (written, rejected, rejects, retried,
/// bytes, elapsed, resume_from).
///
/// `source`: a path of any input `cqlwire load` reads, a 2-D NumPy array (`ids` a key per row,
/// or `row_number_column`; `first_row` numbers its rows), or a pyarrow Table or RecordBatch
/// (columns map by name). The other keywords are the command's flags with underscores: `map`,
/// `query`, `row_number_column`, `column`, `input_format`, `dataset`, `rows`, `shard`,
/// `concurrency`, `batch`, `batch_bytes`, `rejects`, `dry_run`, `consistency`, `timeout`, `username`, `password`, `tls`,
/// `tls_ca`, `tls_cert`, `tls_key`. Rejected rows do not raise. Raises `UsageError` (`LoadError`) for
/// what the command exits 2 on and `JobFailed` (`LoadFailed`, with `report`) for a run that could not finish; Ctrl-C
/// drains the run and raises `KeyboardInterrupt` carrying the run's `report`.
#[pyfunction]
#[pyo3(signature = (
    source, *, hosts, table, map=None, query=None, row_number_column=None, column=None,
    input_format=None, dataset="train".to_owned(), rows=None, shard=None, ids=None, first_row=0,
    concurrency=None, batch=None, batch_bytes=None, rejects=None, dry_run=false, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn load<'py>(
    py: Python<'py>,
    source: Bound<'py, PyAny>,
    hosts: Hosts,
    table: String,
    map: Option<Renames>,
    query: Option<String>,
    row_number_column: Option<String>,
    column: Option<String>,
    input_format: Option<String>,
    dataset: String,
    rows: Option<Bound<'py, PyAny>>,
    shard: Option<Shard>,
    ids: Option<Bound<'py, PyAny>>,
    first_row: u64,
    concurrency: Option<Count>,
    batch: Option<Count>,
    batch_bytes: Option<Count>,
    rejects: Option<PathBuf>,
    dry_run: bool,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<LoadReport> {
    let connection = ConnectionKeywords::new(hosts, table, connection)?;
    let source = SourceKeywords {
        source,
        column,
        input_format,
        dataset,
        rows,
        shard,
        ids,
        first_row,
    };
    let job = LoadJob {
        map: map.map(|Renames(pairs)| pairs).unwrap_or_default(),
        query,
        row_number_column,
        concurrency: concurrency.map(|Count(n)| n),
        batch: batch.map(|Count(n)| n),
        batch_bytes: batch_bytes.map(|Count(n)| n),
        rejects,
        dry_run,
        ..LoadJob::new(source.source(py)?)
    };
    job.check().map_err(|e| engine_error(py, &e, Vec::new()))?;
    let session = connection.options(py)?;
    let control = RunControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let mut kept = Collected::default();
    let ((result, kept), interrupt) = run_until_interrupted(py, &runtime, stop, async move {
        let result = match job.prepare(session).await {
            Ok(prepared) => {
                prepared
                    .run(&control, Some(&mut kept as &mut dyn RejectSink))
                    .await
            }
            Err(error) => Err(error),
        };
        (result, kept.kept)
    })?;
    if let Some(interrupt) = interrupt {
        return Err(with_report(py, interrupt, &result, kept));
    }
    match result {
        Ok(report) => Ok(LoadReport::new(&report, kept)),
        Err(error) => Err(engine_error(py, &error, kept)),
    }
}
