//! The run: rows in, single-partition EXECUTEs out, bounded by the window, retried with backoff.

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::response::query_result::QueryResult;
use scylla::serialize::SerializationError;
use scylla::statement::bound::BoundStatement;
use scylla::value::CqlValue;
use tokio::sync::mpsc;

use crate::error::{LoadError, LoadErrorKind};
use crate::loader::{Loader, RetryUnsafe};
use crate::rejects::RejectSink;
use crate::report::{LoadReport, RunControl};
use crate::table_guard::{self, TableGuard};
use crate::value::{BindError, Cell, Row};
use crate::window::Window;

/// How often the run looks at the stop flag while it waits.
const STOP_POLL: Duration = Duration::from_millis(50);

/// What to do after a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// It may pass: retry after a backoff; `congestion` says whether it is a sign of overload,
    /// `exhausted` what to do when the retries run out.
    Retry {
        congestion: bool,
        exhausted: Exhausted,
    },
    /// Retrying cannot help this row: reject it.
    Reject,
    /// The server may have applied the write, and the statement is not safe to apply twice:
    /// reject the row, saying why it was not retried.
    Uncertain,
    /// Retrying cannot help any row (e.g. permission denied): end the run.
    Fatal,
}

/// What happens to a row whose retries ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exhausted {
    /// The cluster is taken as gone: the run ends, with a resume point.
    EndRun,
    /// The failure is the row's own (a replica failed to apply this write): the row is rejected
    /// and the run goes on.
    Reject,
}

/// Retried; when the retries run out the cluster is taken as gone.
const RETRY: Failure = Failure::Retry {
    congestion: true,
    exhausted: Exhausted::EndRun,
};

/// Sorts an error of the driver. A statement that is not idempotent is retried only where the
/// server has certainly not applied it; an unknown outcome rejects the row
/// ([`Failure::Uncertain`]).
///
/// A `WriteFailure` (a replica failed to apply the write, e.g. Apache Cassandra 5.0.9's vector
/// index refusing writes under load, CASSANDRA-21644) is retried with a narrower window and, when
/// the retries run out, rejects the row only.
pub(crate) fn classify(error: &ExecutionError, idempotent: bool) -> Failure {
    let unknown_outcome = if idempotent {
        RETRY
    } else {
        Failure::Uncertain
    };
    match error {
        ExecutionError::BadQuery(_) => Failure::Reject,
        ExecutionError::EmptyPlan
        | ExecutionError::ConnectionPoolError(_)
        | ExecutionError::PrepareError(_) => RETRY,
        ExecutionError::RequestTimeout(_) => unknown_outcome,
        ExecutionError::LastAttemptError(attempt) => match attempt {
            RequestAttemptError::SerializationError(_)
            | RequestAttemptError::CqlRequestSerialization(_) => Failure::Reject,
            RequestAttemptError::UnableToAllocStreamId => RETRY,
            RequestAttemptError::BrokenConnectionError(_) => unknown_outcome,
            RequestAttemptError::DbError(db_error, _) => match db_error {
                DbError::Overloaded
                | DbError::Unavailable { .. }
                | DbError::IsBootstrapping
                | DbError::RateLimitReached { .. } => RETRY,
                DbError::Unprepared { .. } => Failure::Retry {
                    congestion: false,
                    exhausted: Exhausted::EndRun,
                },
                DbError::WriteFailure { .. } if idempotent => Failure::Retry {
                    congestion: true,
                    exhausted: Exhausted::Reject,
                },
                // Another replica may have applied it.
                DbError::WriteFailure { .. } => Failure::Uncertain,
                DbError::WriteTimeout { .. } | DbError::ReadTimeout { .. } => unknown_outcome,
                DbError::AuthenticationError | DbError::Unauthorized => Failure::Fatal,
                _ => Failure::Reject,
            },
            _ => Failure::Reject,
        },
        _ => Failure::Fatal,
    }
}

/// How a row's request ended.
enum Outcome {
    /// Acknowledged after this latency (of the last attempt).
    Acknowledged(Duration),
    /// Refused for good: goes to the rejects.
    Rejected(String),
    /// Retries exhausted, or an error no row can pass: the run ends.
    GaveUp(String),
    /// Not retried because the run is stopping.
    Abandoned,
}

struct Sent {
    row: u64,
    key: String,
    bytes: u64,
    outcome: Outcome,
}

/// The one-line reason of a binding failure, without the driver's prefix.
fn bind_error_text(error: &SerializationError) -> String {
    match error.downcast_ref::<BindError>() {
        Some(error) => error.to_string(),
        None => error.to_string(),
    }
}

/// The state of the rows of a run, for the resume point.
struct Rows {
    /// Rows taken from the input and not yet acknowledged or rejected.
    unresolved: BTreeSet<u64>,
    /// The row after the last one taken from the input (or the first row, before any).
    next: u64,
    /// Rows received but not yet sent.
    pending: VecDeque<Row>,
    /// The input said it has no more rows.
    input_done: bool,
}

impl Rows {
    fn new(first_row: u64) -> Self {
        Rows {
            unresolved: BTreeSet::new(),
            next: first_row,
            pending: VecDeque::new(),
            input_done: false,
        }
    }

    fn take(&mut self) -> Option<Row> {
        let row = self.pending.pop_front()?;
        self.next = row.number.saturating_add(1);
        Some(row)
    }

    fn finished(&self) -> bool {
        self.input_done && self.pending.is_empty() && self.unresolved.is_empty()
    }

    fn resume_from(&self) -> Option<u64> {
        if self.finished() {
            return None;
        }
        let waiting = self.pending.front().map_or(self.next, |row| row.number);
        Some(
            self.unresolved
                .first()
                .map_or(waiting, |&row| row.min(waiting)),
        )
    }
}

impl Loader {
    /// Loads the rows of `batches` (rows in increasing number order, the first numbered at least
    /// `first_row`), each as one EXECUTE of the prepared statement routed to a replica of its
    /// partition, at most the concurrency window in flight.
    ///
    /// Rows the server (or the binding) refuses for good go to `rejects` at once; requests that fail
    /// for a reason that may pass are retried with backoff. The run ends when the input ends and
    /// every row is acknowledged or rejected (`Ok`, `resume_from` is `None`), when `control.stop` is
    /// set (`Ok`, `resume_from` says where to go on), or when retrying stops helping or the rejects
    /// cannot be written (`Err` of kind [`LoadErrorKind::ServerGone`] or [`LoadErrorKind::Rejects`],
    /// whose [`LoadError::report`] has the resume point). Ending early, it stops reading the input
    /// and waits for the requests in flight, without retrying them.
    ///
    /// Memory: the batches in the channel, the one being sent and the serialized rows in flight.
    pub async fn run(
        &self,
        mut batches: mpsc::Receiver<Vec<Row>>,
        first_row: u64,
        rejects: &mut dyn RejectSink,
        control: &RunControl,
    ) -> Result<LoadReport, LoadError> {
        let progress = &control.progress;
        let window = Mutex::new(Window::new(self.options.concurrency));
        let window_size = || window.lock().map_or(1, |window| window.size());
        let stopping = AtomicBool::new(false);
        let mut rows = Rows::new(first_row);
        let mut in_flight = FuturesUnordered::new();
        let mut failure: Option<LoadError> = None;
        // Client timestamps in row order: of two rows with the same key, the later one wins (with
        // server timestamps, concurrent writes land in any order). One microsecond per row from
        // the start of the run stays behind the clock: no row is sent within a microsecond of
        // the one before. Counter updates take no timestamp.
        let timestamps = (self.retry_unsafe != Some(RetryUnsafe::Counter)).then(now_micros);
        let guard = match self.prepared.get_table_spec() {
            Some(spec) => {
                TableGuard::start(&self.session, spec.ks_name(), spec.table_name(), "load").await
            }
            None => None,
        };
        let mut guard_tick = tokio::time::interval(table_guard::POLL);
        guard_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut guard_check: Option<Pin<Box<dyn Future<Output = Option<String>> + Send + '_>>> =
            None;
        // Set when the table changed: every row of the run must be written again.
        let mut table_changed = false;
        let mut tick = tokio::time::interval(STOP_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if control.stop_requested() || failure.is_some() {
                stopping.store(true, Ordering::Relaxed);
            }
            let halted = stopping.load(Ordering::Relaxed);
            while !halted && in_flight.len() < window_size() {
                if rows.pending.is_empty() {
                    match batches.try_recv() {
                        Ok(batch) => rows.pending.extend(batch),
                        Err(mpsc::error::TryRecvError::Empty) => break,
                        Err(mpsc::error::TryRecvError::Disconnected) => {
                            rows.input_done = true;
                            break;
                        }
                    }
                    continue;
                }
                let Some(row) = rows.take() else { break };
                let bytes = row.value_bytes() as u64;
                let timestamp = timestamps.map(|base| {
                    let offset = row.number.saturating_sub(first_row);
                    base.saturating_add(i64::try_from(offset).unwrap_or(i64::MAX))
                });
                match self.bind(&row, timestamp) {
                    Ok(bound) => {
                        rows.unresolved.insert(row.number);
                        let sent = Sent {
                            row: row.number,
                            key: row.key,
                            bytes,
                            outcome: Outcome::Abandoned,
                        };
                        in_flight.push(self.send(bound, sent, &window, &stopping, control));
                    }
                    Err(reason) => {
                        if let Err(error) = rejects.reject(row.number, &row.key, &reason) {
                            failure = Some(rejects_failed(&error));
                            rows.unresolved.insert(row.number);
                            break;
                        }
                        progress.add_rejected();
                    }
                }
            }
            progress.set_in_flight(in_flight.len(), window_size());
            let halted = stopping.load(Ordering::Relaxed) || failure.is_some();
            if in_flight.is_empty() && (halted || rows.finished()) {
                break;
            }
            let want_input = !halted
                && rows.pending.is_empty()
                && !rows.input_done
                && in_flight.len() < window_size();
            tokio::select! {
                Some(sent) = in_flight.next(), if !in_flight.is_empty() => {
                    match sent.outcome {
                        Outcome::Acknowledged(latency) => {
                            rows.unresolved.remove(&sent.row);
                            progress.add_written(sent.bytes);
                            if let Ok(mut window) = window.lock() {
                                window.on_success(latency);
                            }
                        }
                        Outcome::Rejected(error) => match rejects.reject(sent.row, &sent.key, &error) {
                            Ok(()) => {
                                rows.unresolved.remove(&sent.row);
                                progress.add_rejected();
                            }
                            Err(error) => {
                                failure.get_or_insert_with(|| rejects_failed(&error));
                            }
                        },
                        Outcome::GaveUp(error) => {
                            failure.get_or_insert_with(|| LoadError::new(
                                LoadErrorKind::ServerGone,
                                format!("row {} could not be written: {error}", sent.row),
                            ));
                        }
                        Outcome::Abandoned => {}
                    }
                }
                batch = batches.recv(), if want_input => match batch {
                    Some(batch) => rows.pending.extend(batch),
                    None => rows.input_done = true,
                },
                _ = guard_tick.tick(), if guard.is_some() && guard_check.is_none() && !halted => {
                    guard_check = guard
                        .as_ref()
                        .map(|guard| Box::pin(guard.check(&self.session)) as Pin<Box<_>>);
                }
                change = async { guard_check.as_mut().expect("checked by the guard").await },
                    if guard_check.is_some() =>
                {
                    guard_check = None;
                    if let Some(change) = change {
                        table_changed = true;
                        failure.get_or_insert_with(|| LoadError::new(
                            LoadErrorKind::TableChanged,
                            format!(
                                "{change}: the rows of this run are gone with the old table or \
                                 may hold bytes made for the old types, so the whole run must \
                                 be loaded again"
                            ),
                        ));
                    }
                }
                _ = tick.tick() => {}
            }
        }
        progress.set_in_flight(0, window_size());
        let resume_from = if table_changed {
            Some(first_row)
        } else {
            rows.resume_from()
        };
        finish(rejects, control, resume_from, failure)
    }

    /// Everything [`run`](Loader::run) does but sending: binds every row to the prepared statement
    /// (type checks included) and lists the rows that do not bind in `rejects`; the report counts
    /// the rows that bound as written.
    pub async fn dry_run(
        &self,
        mut batches: mpsc::Receiver<Vec<Row>>,
        first_row: u64,
        rejects: &mut dyn RejectSink,
        control: &RunControl,
    ) -> Result<LoadReport, LoadError> {
        let progress = &control.progress;
        let mut rows = Rows::new(first_row);
        let mut failure = None;
        'input: while !control.stop_requested() {
            let Some(batch) = batches.recv().await else {
                rows.input_done = true;
                break;
            };
            rows.pending.extend(batch);
            while let Some(row) = rows.take() {
                match self.bind(&row, None) {
                    Ok(_) => progress.add_written(row.value_bytes() as u64),
                    Err(reason) => {
                        if let Err(error) = rejects.reject(row.number, &row.key, &reason) {
                            rows.unresolved.insert(row.number);
                            failure = Some(rejects_failed(&error));
                            break 'input;
                        }
                        progress.add_rejected();
                    }
                }
            }
        }
        finish(rejects, control, rows.resume_from(), failure)
    }

    /// The row bound to the prepared statement (written at `timestamp`, when given), or why it
    /// cannot be: a value the input could not convert is refused here, before any binding, and
    /// binding checks each value's type against its marker.
    fn bind(&self, row: &Row, timestamp: Option<i64>) -> Result<BoundStatement, String> {
        let unconverted = row
            .values
            .iter()
            .zip(self.bind_markers())
            .find_map(|(value, marker)| match value.cell() {
                Cell::Invalid(reason) => Some(format!("column {}: {reason}", marker.name)),
                _ => None,
            });
        if let Some(reason) = unconverted {
            return Err(reason);
        }
        if let Some(only) = &self.static_only {
            let null = |&i: &usize| row.values.get(i).is_some_and(|v| *v.cell() == Cell::Null);
            if only.empty.iter().all(null) {
                let kept = Row {
                    number: row.number,
                    key: String::new(),
                    values: only
                        .kept
                        .iter()
                        .filter_map(|&i| row.values.get(i).cloned())
                        .collect(),
                };
                let mut statement = only.prepared.clone();
                statement.set_timestamp(timestamp);
                return statement
                    .bind(&kept)
                    .map_err(|error| bind_error_text(&error));
            }
        }
        let mut statement = self.prepared.clone();
        statement.set_timestamp(timestamp);
        statement.bind(row).map_err(|error| bind_error_text(&error))
    }

    /// Sends one bound row until it is acknowledged, rejected, retried too often, or the run stops;
    /// returns `sent` with the outcome.
    async fn send(
        &self,
        bound: BoundStatement,
        mut sent: Sent,
        window: &Mutex<Window>,
        stopping: &AtomicBool,
        control: &RunControl,
    ) -> Sent {
        sent.outcome = self
            .send_until_done(&bound, sent.row, window, stopping, control)
            .await;
        sent
    }

    async fn send_until_done(
        &self,
        bound: &BoundStatement,
        row: u64,
        window: &Mutex<Window>,
        stopping: &AtomicBool,
        control: &RunControl,
    ) -> Outcome {
        let retry_unsafe = self.retry_unsafe;
        let idempotent = retry_unsafe.is_none();
        let retry = self.options.retry;
        let mut retries = 0;
        loop {
            let started = Instant::now();
            let error = match self.session.execute_bound_unpaged(bound).await {
                Ok(result) => {
                    return match not_applied(result) {
                        None => Outcome::Acknowledged(started.elapsed()),
                        Some(reason) => Outcome::Rejected(reason),
                    }
                }
                Err(error) => error,
            };
            match classify(&error, idempotent) {
                Failure::Reject => return Outcome::Rejected(error.to_string()),
                Failure::Uncertain => {
                    let why = retry_unsafe.map_or("", RetryUnsafe::twice);
                    return Outcome::Rejected(format!(
                        "{error}; not retried: the server may have applied it, and {why}"
                    ));
                }
                Failure::Fatal => return Outcome::GaveUp(error.to_string()),
                Failure::Retry {
                    congestion,
                    exhausted,
                } => {
                    if congestion {
                        if let Ok(mut window) = window.lock() {
                            window.on_congestion();
                        }
                    }
                    if stopping.load(Ordering::Relaxed) {
                        return Outcome::Abandoned;
                    }
                    if retries >= retry.max_retries {
                        let error = format!("{error} (after {retries} retries)");
                        return match exhausted {
                            Exhausted::EndRun => Outcome::GaveUp(error),
                            Exhausted::Reject => Outcome::Rejected(error),
                        };
                    }
                    control.progress.add_retry();
                    tokio::time::sleep(retry.backoff(retries, row)).await;
                    retries += 1;
                    if stopping.load(Ordering::Relaxed) {
                        return Outcome::Abandoned;
                    }
                }
            }
        }
    }
}

/// Why a conditional statement (`… IF NOT EXISTS`, `UPDATE … IF …`) did not write its row: its
/// result is a row whose `[applied]` column is false. `None` for every other result. Apache
/// Cassandra does not mark such a statement when it is prepared, so each result is looked at.
fn not_applied(result: QueryResult) -> Option<String> {
    let rows = result.into_rows_result().ok()?;
    let applied = rows.column_specs().get_by_index(0)?.name() == "[applied]";
    if !applied {
        return None;
    }
    let first = rows.rows::<scylla::value::Row>().ok()?.next()?.ok()?;
    match first.columns.first() {
        Some(Some(CqlValue::Boolean(true))) => None,
        _ => Some(
            "not applied: the statement's IF condition was false, so the row was not written"
                .to_owned(),
        ),
    }
}

/// Microseconds since the Unix epoch, the unit of CQL write timestamps.
fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
        })
}

/// Flushes the rejects and reports the run, as an error when it ended with `failure`.
fn finish(
    rejects: &mut dyn RejectSink,
    control: &RunControl,
    resume_from: Option<u64>,
    failure: Option<LoadError>,
) -> Result<LoadReport, LoadError> {
    let flushed = rejects.flush();
    let report = control.progress.report(resume_from);
    match (failure, flushed) {
        (Some(error), _) => Err(error.with_report(report)),
        (None, Err(error)) => Err(rejects_failed(&error).with_report(report)),
        (None, Ok(())) => Ok(report),
    }
}

fn rejects_failed(error: &std::io::Error) -> LoadError {
    LoadError::new(
        LoadErrorKind::Rejects,
        format!("cannot write the rejects: {error}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::errors::{BadQuery, ConnectionPoolError, WriteType};
    use scylla::statement::Consistency;

    fn db(error: DbError) -> ExecutionError {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(error, "message".into()))
    }

    #[test]
    fn overload_timeouts_and_lost_connections_are_retried() {
        let retry = RETRY;
        assert_eq!(classify(&db(DbError::Overloaded), true), retry);
        let unavailable = DbError::Unavailable {
            consistency: Consistency::LocalQuorum,
            required: 2,
            alive: 1,
        };
        assert_eq!(classify(&db(unavailable.clone()), true), retry);
        let timeout = DbError::WriteTimeout {
            consistency: Consistency::LocalQuorum,
            received: 0,
            required: 1,
            write_type: WriteType::Simple,
        };
        assert_eq!(classify(&db(timeout.clone()), true), retry);
        let client_timeout = ExecutionError::RequestTimeout(Duration::from_secs(1));
        assert_eq!(classify(&client_timeout, true), retry);
        let no_pool = ExecutionError::ConnectionPoolError(ConnectionPoolError::Initializing);
        assert_eq!(classify(&no_pool, true), retry);
        // Not idempotent: only errors that prove the write was not applied are retried.
        assert_eq!(classify(&db(unavailable), false), retry);
        assert_eq!(classify(&db(timeout), false), Failure::Uncertain);
        assert_eq!(classify(&client_timeout, false), Failure::Uncertain);
    }

    #[test]
    fn invalid_values_are_rejected_and_permission_errors_end_the_run() {
        assert_eq!(classify(&db(DbError::Invalid), true), Failure::Reject);
        assert_eq!(classify(&db(DbError::ServerError), true), Failure::Reject);
        let bad = ExecutionError::BadQuery(BadQuery::SerializationError(SerializationError::new(
            BindError::TooLong(1),
        )));
        assert_eq!(classify(&bad, true), Failure::Reject);
        assert_eq!(classify(&db(DbError::Unauthorized), true), Failure::Fatal);
    }

    #[test]
    fn a_failed_write_is_retried_then_rejects_only_its_row() {
        let failure = db(DbError::WriteFailure {
            consistency: Consistency::LocalQuorum,
            received: 0,
            required: 1,
            numfailures: 1,
            write_type: WriteType::Simple,
        });
        assert_eq!(
            classify(&failure, true),
            Failure::Retry {
                congestion: true,
                exhausted: Exhausted::Reject
            }
        );
        assert_eq!(classify(&failure, false), Failure::Uncertain);
    }

    fn row(number: u64) -> Row {
        Row {
            number,
            key: number.to_string(),
            values: Vec::new(),
        }
    }

    #[test]
    fn the_resume_point_is_the_lowest_row_neither_acknowledged_nor_rejected() {
        let mut rows = Rows::new(100);
        assert_eq!(rows.resume_from(), Some(100));
        rows.pending
            .extend([row(100), row(101), row(102), row(103)]);
        for _ in 0..3 {
            let taken = rows.take().unwrap();
            rows.unresolved.insert(taken.number);
        }
        assert_eq!(rows.resume_from(), Some(100));
        rows.unresolved.remove(&100);
        rows.unresolved.remove(&102);
        assert_eq!(rows.resume_from(), Some(101));
        rows.unresolved.remove(&101);
        assert_eq!(rows.resume_from(), Some(103));
        let taken = rows.take().unwrap();
        rows.unresolved.insert(taken.number);
        rows.unresolved.remove(&103);
        assert_eq!(rows.resume_from(), Some(104));
        rows.input_done = true;
        assert_eq!(rows.resume_from(), None);
    }
}
