//! The run: rows in, single-partition EXECUTEs (or replica-grouped batches) out, bounded by the
//! window, retried with backoff.

use std::collections::{BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use scylla::cluster::ClusterState;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::response::query_result::QueryResult;
use scylla::serialize::SerializationError;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::bound::BoundStatement;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;
use tokio::sync::mpsc;

use crate::batch::Grouper;
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
    /// The batch was refused as a whole, and none of its rows is known to be written: each is
    /// sent alone, for a verdict of its own.
    OneByOne,
}

/// What one request carries.
enum Carried {
    /// One row: its number, key and value bytes.
    Row { row: u64, key: String, bytes: u64 },
    /// A batch of rows, kept for sending them one by one.
    Batch(Vec<Row>),
}

struct Sent {
    carried: Carried,
    outcome: Outcome,
}

impl Sent {
    /// Number, key and value bytes of each row carried (no allocation: this runs per answer).
    fn rows(&self) -> impl Iterator<Item = (u64, &str, u64)> {
        let (single, batch): (Option<(u64, &str, u64)>, &[Row]) = match &self.carried {
            Carried::Row { row, key, bytes } => (Some((*row, key.as_str(), *bytes)), &[]),
            Carried::Batch(rows) => (None, rows),
        };
        let batch = batch
            .iter()
            .map(|row| (row.number, row.key.as_str(), row.value_bytes() as u64));
        single.into_iter().chain(batch)
    }

    /// `row N`, or `rows N to M` of a batch.
    fn name(&self) -> String {
        match &self.carried {
            Carried::Row { row, .. } => format!("row {row}"),
            Carried::Batch(rows) => format!(
                "rows {} to {}",
                rows.first().map_or(0, |row| row.number),
                rows.last().map_or(0, |row| row.number)
            ),
        }
    }
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
    /// partition, or, with [`LoadOptions::batch_rows`](crate::LoadOptions::batch_rows) above 1, in
    /// UNLOGGED batches of rows that share their replicas, at most the concurrency window of
    /// requests in flight.
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
        // Batching: rows gathered by replica set, and the rows of refused batches to send alone
        // (all of them unresolved until each has its verdict).
        let mut grouper = self
            .batch
            .as_ref()
            .map(|plan| Grouper::new(plan.bounds, plan.key_markers.clone()));
        let mut singles: VecDeque<Row> = VecDeque::new();
        // The topology when the run starts: grouping by one that changed since costs only
        // routing, never a row.
        let cluster = self.session.get_cluster_state();
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
                // Rows of refused batches first, then ready batches, then new rows.
                let row = match singles.pop_front() {
                    Some(row) => row,
                    None => match grouper.as_mut().and_then(Grouper::next_ready) {
                        Some(mut batch) if batch.len() == 1 => batch.remove(0),
                        Some(batch) => {
                            let timestamp = batch
                                .last()
                                .and_then(|row| timestamp_of(timestamps, first_row, row.number));
                            in_flight.push(
                                self.send_batch(batch, timestamp, &window, &stopping, control)
                                    .boxed(),
                            );
                            continue;
                        }
                        None => {
                            if rows.pending.is_empty() {
                                match batches.try_recv() {
                                    Ok(batch) => {
                                        rows.pending.extend(batch);
                                        continue;
                                    }
                                    Err(mpsc::error::TryRecvError::Empty) => {}
                                    Err(mpsc::error::TryRecvError::Disconnected) => {
                                        rows.input_done = true;
                                    }
                                }
                                // No row waits: the batches being filled go as they are.
                                match grouper.as_mut().filter(|grouper| grouper.has_open()) {
                                    Some(grouper) => {
                                        grouper.flush();
                                        continue;
                                    }
                                    None => break,
                                }
                            }
                            let Some(row) = rows.take() else { break };
                            rows.unresolved.insert(row.number);
                            match (&mut grouper, self.unconverted(&row)) {
                                (Some(grouper), None) => {
                                    let replicas = self.replicas_of(&row, &cluster);
                                    grouper.add(row, replicas);
                                    continue;
                                }
                                _ => row,
                            }
                        }
                    },
                };
                let bytes = row.value_bytes() as u64;
                let timestamp = timestamp_of(timestamps, first_row, row.number);
                match self.bind(&row, timestamp) {
                    Ok(bound) => {
                        let sent = Sent {
                            carried: Carried::Row {
                                row: row.number,
                                key: row.key,
                                bytes,
                            },
                            outcome: Outcome::Abandoned,
                        };
                        in_flight.push(self.send(bound, sent, &window, &stopping, control).boxed());
                    }
                    Err(reason) => {
                        if let Err(error) = rejects.reject(row.number, &row.key, &reason) {
                            failure = Some(rejects_failed(&error));
                            break;
                        }
                        rows.unresolved.remove(&row.number);
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
                    match &sent.outcome {
                        Outcome::Acknowledged(latency) => {
                            for (row, _, bytes) in sent.rows() {
                                rows.unresolved.remove(&row);
                                progress.add_written(bytes);
                            }
                            if let Ok(mut window) = window.lock() {
                                window.on_success(*latency);
                            }
                        }
                        Outcome::Rejected(error) => {
                            for (row, key, _) in sent.rows() {
                                if let Err(error) = rejects.reject(row, key, error) {
                                    failure.get_or_insert_with(|| rejects_failed(&error));
                                    break;
                                }
                                rows.unresolved.remove(&row);
                                progress.add_rejected();
                            }
                        }
                        Outcome::GaveUp(error) => {
                            failure.get_or_insert_with(|| LoadError::new(
                                LoadErrorKind::ServerGone,
                                format!("{} could not be written: {error}", sent.name()),
                            ));
                        }
                        Outcome::Abandoned => {}
                        Outcome::OneByOne => {
                            if let Carried::Batch(batch) = sent.carried {
                                singles.extend(batch);
                            }
                        }
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
        if let Some(reason) = self.unconverted(row) {
            return Err(reason);
        }
        let (statement, kept) = self.statement_for(row);
        let mut statement = statement.clone();
        statement.set_timestamp(timestamp);
        statement
            .bind(kept.as_ref().unwrap_or(row))
            .map_err(|error| bind_error_text(&error))
    }

    /// Why the row cannot be sent, when the input could not convert one of its values.
    fn unconverted(&self, row: &Row) -> Option<String> {
        row.values
            .iter()
            .zip(self.bind_markers())
            .find_map(|(value, marker)| match value.cell() {
                Cell::Invalid(reason) => Some(format!("column {}: {reason}", marker.name)),
                _ => None,
            })
    }

    /// The statement that writes `row`: the static-only INSERT, with the values it binds, for a
    /// row that has static values alone (see [`StaticOnly`](crate::loader::StaticOnly)); else the
    /// prepared statement, which binds the row itself.
    fn statement_for(&self, row: &Row) -> (&PreparedStatement, Option<Row>) {
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
                return (&only.prepared, Some(kept));
            }
        }
        (&self.prepared, None)
    }

    /// The hosts that own `row`'s partition, as a batch's group: none when the cluster has one
    /// node or the token cannot be computed (every row then in the same group).
    fn replicas_of(&self, row: &Row, cluster: &ClusterState) -> Vec<u128> {
        let (Some(spec), true) = (
            self.prepared.get_table_spec(),
            cluster.get_nodes_info().len() > 1,
        ) else {
            return Vec::new();
        };
        let Ok(Some(token)) = self.prepared.calculate_token(row) else {
            return Vec::new();
        };
        let mut hosts: Vec<u128> = cluster
            .get_token_endpoints(spec.ks_name(), spec.table_name(), token)
            .iter()
            .map(|(node, _)| node.host_id.as_u128())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts
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
        let row = match &sent.carried {
            Carried::Row { row, .. } => *row,
            Carried::Batch(_) => 0,
        };
        let request = || self.session.execute_bound_unpaged(&bound);
        sent.outcome = self
            .send_until_done(request, false, row, window, stopping, control)
            .await;
        sent
    }

    /// Sends `rows` (in row order, more than one) as one UNLOGGED batch at `timestamp` until it is
    /// acknowledged, refused, retried too often, or the run stops. A batch the server refused, or
    /// whose retries ran out on a failure of its rows' own, comes back to be sent one row at a time
    /// ([`Outcome::OneByOne`]) where that cannot write a row twice: always for a statement safe to
    /// apply twice, else only when the server certainly applied none of it.
    async fn send_batch(
        &self,
        rows: Vec<Row>,
        timestamp: Option<i64>,
        window: &Mutex<Window>,
        stopping: &AtomicBool,
        control: &RunControl,
    ) -> Sent {
        let mut batch = Batch::new(BatchType::Unlogged);
        let statements: Vec<(&PreparedStatement, Option<Row>)> =
            rows.iter().map(|row| self.statement_for(row)).collect();
        for (statement, _) in &statements {
            batch.append_statement((*statement).clone());
        }
        batch.set_timestamp(timestamp);
        batch.set_is_idempotent(self.retry_unsafe.is_none());
        let values: Vec<&Row> = statements
            .iter()
            .zip(&rows)
            .map(|((_, kept), row)| kept.as_ref().unwrap_or(row))
            .collect();
        let first = rows.first().map_or(0, |row| row.number);
        let request = || self.session.batch(&batch, &values);
        let outcome = self
            .send_until_done(request, true, first, window, stopping, control)
            .await;
        Sent {
            carried: Carried::Batch(rows),
            outcome,
        }
    }

    /// Sends one request (`request` makes each attempt; `batch`: a batch of rows) until it is
    /// acknowledged, rejected, retried too often, or the run stops; `row` varies the backoff.
    async fn send_until_done<F, R>(
        &self,
        request: F,
        batch: bool,
        row: u64,
        window: &Mutex<Window>,
        stopping: &AtomicBool,
        control: &RunControl,
    ) -> Outcome
    where
        F: Fn() -> R,
        R: Future<Output = Result<QueryResult, ExecutionError>>,
    {
        let retry_unsafe = self.retry_unsafe;
        let idempotent = retry_unsafe.is_none();
        let retry = self.options.retry;
        let mut retries = 0;
        loop {
            let started = Instant::now();
            let error = match request().await {
                Ok(result) => {
                    return match not_applied(result) {
                        None => Outcome::Acknowledged(started.elapsed()),
                        // A conditional batch is applied whole or not at all.
                        Some(_) if batch => Outcome::OneByOne,
                        Some(reason) => Outcome::Rejected(reason),
                    };
                }
                Err(error) => error,
            };
            match classify(&error, idempotent) {
                Failure::Reject if batch && (idempotent || certainly_not_applied(&error)) => {
                    return Outcome::OneByOne
                }
                Failure::Reject if batch => {
                    let why = retry_unsafe.map_or("", RetryUnsafe::twice);
                    return Outcome::Rejected(format!(
                        "{error}; not sent again row by row: the server may have applied part of \
                         the batch, and {why}"
                    ));
                }
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
                            Exhausted::Reject if batch => Outcome::OneByOne,
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

/// Whether the server certainly applied nothing of a refused request: the driver refused to
/// send it, or the server found it invalid before writing anything.
fn certainly_not_applied(error: &ExecutionError) -> bool {
    match error {
        ExecutionError::BadQuery(_) => true,
        ExecutionError::LastAttemptError(attempt) => matches!(
            attempt,
            RequestAttemptError::SerializationError(_)
                | RequestAttemptError::CqlRequestSerialization(_)
                | RequestAttemptError::DbError(DbError::Invalid | DbError::SyntaxError, _)
        ),
        _ => false,
    }
}

/// The write timestamp of row `number`: one microsecond per row after `base` (see
/// [`Loader::run`]), none without a base.
fn timestamp_of(base: Option<i64>, first_row: u64, number: u64) -> Option<i64> {
    base.map(|base| {
        let offset = number.saturating_sub(first_row);
        base.saturating_add(i64::try_from(offset).unwrap_or(i64::MAX))
    })
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
