//! `cqlwire.unload`: a live table into a pyarrow Table or a file, on the scan of `cqlwire unload`
//! ([`cqlwire_client::Unloader`]): the same token-range scan, paging, retries and Arrow types as the
//! command's Parquet and Arrow outputs. A Table gets the pages through the Arrow C data interface
//! without a copy; a file is written by the command's job ([`cqlwire_client::UnloadJob`]),
//! atomically.

use crate::arrow::to_pyarrow;
use crate::conversion::{one_vector_column, ConnectionKeywords, Count, Hosts};
use crate::errors::{unload_error, usage};
use crate::reports::file_report;
use crate::runtime::{run_interruptible, runtime};
use cqlwire_client::{
    UnloadControl, UnloadError, UnloadFormat, UnloadJob, UnloadOptions, Unloader,
};
use cqlwire_vector::input::named;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Pages queued between the scan and the collecting task.
const QUEUED_PAGES: usize = 2;

/// Read `table` through `hosts` on the scan of `cqlwire unload`, with the GIL released: without
/// `output`, into a `pyarrow.Table` (needs pyarrow); with `output`, into the file the command
/// writes, atomically, returning an `UnloadReport`.
///
/// Keywords are the command's flags with underscores: `columns`, `where`, `split`, `concurrency`,
/// `page_rows`, `output`, `format` (parquet, arrow, npy, fbin, raw, hex), `vector_column` (or
/// `column`), `ids` and the connection's. Raises `UsageError` (`LoadError`) for what the command
/// exits 2 on and `JobFailed` (`LoadFailed`) for a failed scan or write; Ctrl-C stops the scan, leaves no file and raises
/// `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (
    *, hosts, table, columns=None, r#where=None, split=Count(4), concurrency=Count(8), page_rows=None,
    output=None, format=None, vector_column=None, column=None, ids=None, **connection
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn unload<'py>(
    py: Python<'py>,
    hosts: Hosts,
    table: String,
    columns: Option<Vec<String>>,
    r#where: Option<String>,
    split: Count,
    concurrency: Count,
    page_rows: Option<Count>,
    output: Option<PathBuf>,
    format: Option<String>,
    vector_column: Option<String>,
    column: Option<String>,
    ids: Option<PathBuf>,
    connection: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let column = one_vector_column(py, vector_column, column)?;
    let mut options =
        UnloadOptions::new(ConnectionKeywords::new(hosts, table, connection)?.options(py)?);
    options.columns = columns.filter(|c| !c.is_empty());
    options.condition = r#where;
    options.splits = split.size();
    options.concurrency = concurrency.size();
    options.page_rows = page_rows.map(Count::size);
    let control = UnloadControl::default();
    let stop = control.stop.clone();
    let runtime = runtime()?;
    let Some(output) = output else {
        if format.is_some() || column.is_some() || ids.is_some() {
            return Err(usage(
                py,
                "format, vector_column and ids go with output=; without it the rows come back as a \
                 pyarrow Table",
            ));
        }
        let scanned = run_interruptible(py, &runtime, stop, async move {
            let unloader = Unloader::connect(options)
                .await
                .map_err(UnloadError::from)?;
            let schema = unloader.schema();
            let (sender, mut receiver) = tokio::sync::mpsc::channel(QUEUED_PAGES);
            let collect = tokio::spawn(async move {
                let mut pages = Vec::new();
                while let Some(page) = receiver.recv().await {
                    pages.push(page);
                }
                pages
            });
            let report = unloader.run(sender, &control).await;
            let pages = collect.await.unwrap_or_default();
            report.map(|_| (schema, pages))
        })?;
        return match scanned {
            Ok((schema, pages)) => to_pyarrow(py, &schema, pages),
            Err(error) => Err(unload_error(py, error)),
        };
    };
    if named(Some(&output)).is_none() {
        return Err(usage(py, "output must name a file"));
    }
    let format = format
        .as_deref()
        .map(|name| {
            name.parse::<UnloadFormat>().map_err(|_| {
                usage(
                    py,
                    format!("format must be parquet, arrow, npy, fbin, raw or hex, not {name:?}"),
                )
            })
        })
        .transpose()?;
    let job = UnloadJob {
        output: Some(output.clone()),
        format,
        columns: options.columns.take(),
        column,
        ids: ids.clone(),
    };
    job.check().map_err(|e| unload_error(py, e))?;
    let written = run_interruptible(py, &runtime, stop, async move {
        job.run(options, &control, &()).await
    })?;
    match written {
        Ok(outcome) => Ok(Bound::new(py, file_report(outcome, output, ids))?.into_any()),
        Err(error) => Err(unload_error(py, error)),
    }
}
