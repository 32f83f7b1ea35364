//! A whole dataset through a run: a reader thread converts the input batch by batch into a bounded
//! channel while the run sends; an input that turns out damaged ends the run after the rows before
//! the damage, with the damaged row as the resume point.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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

/// How often a paced reader hands rows to the run, per second.
const PACE_STEPS: u32 = 100;

/// How long a paced reader sleeps at most before it looks at the stop flag again.
const PACE_POLL: Duration = Duration::from_millis(50);

/// The schedule of a load at [`LoadOptions::rate`](crate::LoadOptions::rate): row `n` (counted
/// from the load's first) is handed to the run `n / rate` seconds after the start, in chunks of a
/// hundredth of a second's rows.
struct Pace {
    start: Instant,
    rate: f64,
    chunk: usize,
    sent: u64,
}

impl Pace {
    fn new(rate: NonZeroU32) -> Pace {
        Pace {
            start: Instant::now(),
            rate: f64::from(rate.get()),
            chunk: (rate.get() / PACE_STEPS).max(1) as usize,
            sent: 0,
        }
    }

    /// Hands `rows` to `sender` chunk by chunk, each when it is due; false when the run has ended
    /// or the stop flag is set.
    fn send(&mut self, rows: Vec<Row>, sender: &mpsc::Sender<Vec<Row>>, stop: &AtomicBool) -> bool {
        let mut rows = rows.into_iter();
        loop {
            let chunk: Vec<Row> = rows.by_ref().take(self.chunk).collect();
            if chunk.is_empty() {
                return true;
            }
            let due = self.start + Duration::from_secs_f64(self.sent as f64 / self.rate);
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
                std::thread::sleep((due - now).min(PACE_POLL));
            }
            self.sent += chunk.len() as u64;
            if sender.blocking_send(chunk).is_err() {
                return false;
            }
        }
    }
}

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
    /// With [`LoadOptions::rate`](crate::LoadOptions::rate), the thread hands the rows over on
    /// that schedule.
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
        let rate = self.options.rate;
        let reader = std::thread::spawn(move || -> Result<(), (LoadError, u64)> {
            let mut next_row = first_row;
            let mut pace = rate.map(Pace::new);
            while !stop.load(Ordering::Relaxed) {
                match dataset.next_rows() {
                    Ok(Some(rows)) => {
                        if let Some(last) = rows.last() {
                            next_row = last.number.saturating_add(1);
                        }
                        let sent = match &mut pace {
                            Some(pace) => pace.send(rows, &sender, &stop),
                            None => sender.blocking_send(rows).is_ok(),
                        };
                        if !sent {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(count: u64) -> Vec<Row> {
        (0..count)
            .map(|number| Row {
                number,
                key: format!("id={number}"),
                values: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_paced_reader_hands_every_row_over_in_chunks_of_a_hundredth_of_the_rate() {
        let (sender, mut receiver) = mpsc::channel(1000);
        let mut pace = Pace::new(NonZeroU32::new(1000).unwrap());
        let stop = AtomicBool::new(false);
        assert!(pace.send(rows(25), &sender, &stop));
        drop(sender);
        let mut sizes = Vec::new();
        let mut numbers = Vec::new();
        while let Ok(chunk) = receiver.try_recv() {
            sizes.push(chunk.len());
            numbers.extend(chunk.iter().map(|row| row.number));
        }
        assert_eq!(sizes, [10, 10, 5]);
        assert_eq!(numbers, (0..25).collect::<Vec<_>>());
        assert_eq!(pace.sent, 25);
        // A rate below a hundred rows a second goes row by row.
        assert_eq!(Pace::new(NonZeroU32::new(40).unwrap()).chunk, 1);
    }

    #[test]
    fn a_paced_reader_stops_when_told_or_when_the_run_has_ended() {
        let (sender, receiver) = mpsc::channel(1000);
        let mut pace = Pace::new(NonZeroU32::new(1).unwrap());
        let stop = AtomicBool::new(true);
        // The first row is due at once, the second a second later: the stop flag ends the wait.
        assert!(!pace.send(rows(2), &sender, &stop));
        drop(receiver);
        let mut pace = Pace::new(NonZeroU32::new(1000).unwrap());
        assert!(!pace.send(rows(1), &sender, &AtomicBool::new(false)));
    }
}
