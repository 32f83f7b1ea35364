//! A whole dataset through a run: a reader thread converts the input batch by batch into a bounded
//! channel while the run sends; an input that turns out damaged ends the run after the rows before
//! the damage, with the damaged row as the resume point.

use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use crate::dataset::Dataset;
use crate::error::{LoadError, LoadErrorKind};
use crate::loader::Loader;
use crate::rejects::RejectSink;
use crate::report::{LoadReport, RunControl};
use crate::session::schema_name;
use crate::value::Row;

/// Batches queued between the reader thread and the run (memory: this many batches of rows).
const QUEUED_BATCHES: usize = 4;

/// Whether rows are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Each row is written.
    Write,
    /// Each row is bound and checked, none sent ([`Loader::dry_run`]).
    DryRun,
}

impl Loader {
    /// Connects for `dataset` ([`connect_with`](Loader::connect_with)): the default INSERT names the
    /// table columns the dataset fills, and the dataset is bound to the prepared statement's markers
    /// ([`Dataset::bind`]), ready for [`load`](Loader::load).
    pub async fn connect_for(
        options: crate::options::LoadOptions,
        dataset: &mut Dataset,
    ) -> Result<Loader, LoadError> {
        let (keyspace, table) = (
            options.session.keyspace.clone(),
            options.session.table.clone(),
        );
        let loader = Self::connect_with(options, |table| dataset.table_columns(table).map(Some))
            .await
            .map_err(|error| {
                if error.kind() != LoadErrorKind::UnknownTable
                    || !error.message().starts_with("table ")
                {
                    return error;
                }
                let (statement, numbered) =
                    dataset.create_table(&schema_name(&keyspace), &schema_name(&table));
                let key = if numbered {
                    " (keyed by each row's number, loaded as the row-number column id)"
                } else {
                    ""
                };
                LoadError::new(
                    LoadErrorKind::UnknownTable,
                    format!(
                        "{}; a table for this input{key}: {statement}",
                        error.message()
                    ),
                )
            })?;
        dataset.bind(loader.bind_markers(), loader.columns())?;
        Ok(loader)
    }

    /// Loads every selected row of `dataset` (bound to this loader's markers with
    /// [`Dataset::bind`]): [`run`](Loader::run) (or [`dry_run`](Loader::dry_run)) fed by a thread
    /// that reads and converts the input, at most a few batches ahead.
    ///
    /// A damaged input (a ragged row, a truncated file) ends the run once the rows before the
    /// damage are acknowledged or rejected: an error of kind [`LoadErrorKind::Input`] whose report
    /// resumes at the first row not read. A run that ends early for another reason keeps its own
    /// error and resume point, lowered to the first row not read where the input failed too.
    pub async fn load(
        &self,
        mut dataset: Dataset,
        rejects: &mut dyn RejectSink,
        control: &RunControl,
        mode: Mode,
    ) -> Result<LoadReport, LoadError> {
        let first_row = dataset.first_row();
        let (sender, receiver) = mpsc::channel::<Vec<Row>>(QUEUED_BATCHES);
        let stop = control.stop.clone();
        let reader = std::thread::spawn(move || -> Result<(), (LoadError, u64)> {
            let mut next_row = first_row;
            while !stop.load(Ordering::Relaxed) {
                match dataset.next_rows() {
                    Ok(Some(rows)) => {
                        if let Some(last) = rows.last() {
                            next_row = last.number.saturating_add(1);
                        }
                        if sender.blocking_send(rows).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(error) => return Err((error, next_row)),
                }
            }
            Ok(())
        });
        let result = match mode {
            Mode::Write => self.run(receiver, first_row, rejects, control).await,
            Mode::DryRun => self.dry_run(receiver, first_row, rejects, control).await,
        };
        // A run that ended early does not wait for a reader blocked on its input (a pipe that
        // never ends): what it read after the end is not loaded anyway.
        if (result.is_err() || control.stop_requested()) && !reader.is_finished() {
            return result;
        }
        let read = tokio::task::spawn_blocking(move || reader.join())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_else(|| {
                Err((
                    LoadError::new(LoadErrorKind::Input, "the input reader failed"),
                    first_row,
                ))
            });
        let Err((input_error, unread)) = read else {
            return result;
        };
        match result {
            Ok(mut report) => {
                let resume = report.resume_from.map_or(unread, |row| row.min(unread));
                report.resume_from = Some(resume);
                Err(input_error.with_report(report))
            }
            Err(error) => {
                let mut report = error.report().cloned().unwrap_or_default();
                report.resume_from = Some(report.resume_from.map_or(unread, |row| row.min(unread)));
                Err(error.with_report(report))
            }
        }
    }
}
