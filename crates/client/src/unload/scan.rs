//! The scan: a window of token ranges read at once, each paged from a replica of its range and
//! retried from its paging state, the pages handed on in token order.
//!
//! Order and memory: the ranges are numbered in token order, and only the `concurrency` ranges
//! from the first one not yet handed on are read. The first of them streams its pages through; each
//! of the others decodes its pages into a channel of one page and stops requesting while that page
//! waits, so a range that runs ahead holds at most two decoded pages (one queued, one ready to
//! queue). Memory is bounded by `concurrency × 2` pages plus the caller's queue, whatever the table
//! size.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use scylla::deserialize::row::ColumnIterator;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::response::{PagingState, PagingStateResponse};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{
    ScanRange, UnloadControl, UnloadError, UnloadProgress, UnloadReport, Unloader, PAGE_BYTES,
};
use crate::error::{LoadError, LoadErrorKind};
use crate::run::{classify, Failure};
use crate::table_guard::TableGuard;

/// How often the run looks at the stop flag while it waits.
const STOP_POLL: Duration = Duration::from_millis(50);

/// A range being read: its pages, and its task.
struct Reading {
    pages: mpsc::Receiver<Result<RecordBatch, LoadError>>,
    task: JoinHandle<()>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Unloader {
    /// Reads every row of the chosen columns (of the rows that meet the condition), each page as
    /// one [`RecordBatch`] of [`Unloader::schema`] sent to `pages` in token order; returns when the
    /// last page is sent. A page that fails for a reason that may pass (timeout, overload,
    /// unavailability, a lost connection) is retried from its paging state on the next replica,
    /// with backoff; when the retries run out, or the server refuses the query, the run ends with an
    /// error of kind [`LoadErrorKind::ServerGone`]. A value that
    /// cannot be decoded ends it with [`LoadErrorKind::Input`]; setting `control.stop`, or closing
    /// `pages`, ends it with [`UnloadError::Stopped`]. A table dropped and created again, or a
    /// column's type changed, during the scan ends it with [`LoadErrorKind::TableChanged`] (also
    /// when the change made a page fail): the pages were read with the old types. The errors other
    /// than a stop are [`UnloadError::Unload`]'s.
    pub async fn run(
        &self,
        pages: mpsc::Sender<RecordBatch>,
        control: &UnloadControl,
    ) -> Result<UnloadReport, UnloadError> {
        let scanned = self.scan(pages, control).await;
        if matches!(scanned, Err(UnloadError::Stopped)) {
            return scanned;
        }
        TableGuard::refuse_change(self.guard.as_ref(), &self.session).await?;
        scanned
    }

    /// The scan of [`run`](Unloader::run), without the look at the table's shape.
    async fn scan(
        &self,
        pages: mpsc::Sender<RecordBatch>,
        control: &UnloadControl,
    ) -> Result<UnloadReport, UnloadError> {
        let started = Instant::now();
        let progress = &control.progress;
        let window = self.options.concurrency.max(1);
        let mut reading: VecDeque<Reading> = VecDeque::with_capacity(window);
        let mut next = 0usize;
        loop {
            if control.stop.load(Ordering::Relaxed) {
                return Err(UnloadError::Stopped);
            }
            while reading.len() < window && next < self.ranges.len() {
                reading.push_back(self.start(next, progress.clone()));
                next += 1;
            }
            let Some(head) = reading.front_mut() else {
                break;
            };
            let page = tokio::select! {
                page = head.pages.recv() => page,
                () = tokio::time::sleep(STOP_POLL) => continue,
            };
            match page {
                Some(Ok(batch)) => {
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    progress
                        .rows
                        .fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
                    if pages.send(batch).await.is_err() {
                        return Err(UnloadError::Stopped);
                    }
                }
                Some(Err(error)) => return Err(error.into()),
                None => {
                    reading.pop_front();
                    progress.ranges_done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(UnloadReport {
            rows: progress.rows(),
            bytes: progress.bytes(),
            ranges: progress.ranges_done(),
            retried: progress.retried(),
            elapsed: started.elapsed(),
        })
    }

    /// Starts the task that reads range `index` into a channel of one page.
    fn start(&self, index: usize, progress: Arc<UnloadProgress>) -> Reading {
        let (sender, receiver) = mpsc::channel(1);
        let reader = RangeReader {
            session: self.session.clone(),
            prepared: self.prepared.clone(),
            range: self.ranges[index].clone(),
            index,
            page_rows: self.page_rows,
            sized: self
                .options
                .page_rows
                .is_none()
                .then(|| self.sized_pages.clone()),
            retry: self.options.retry,
            builders: self.builders(),
            schema: self.schema(),
            progress,
        };
        let task = tokio::spawn(async move {
            let failed = sender.clone();
            if let Err(error) = reader.read(&sender).await {
                let _ = failed.send(Err(error)).await;
            }
        });
        Reading {
            pages: receiver,
            task,
        }
    }
}

/// Everything one range's task needs.
struct RangeReader {
    session: Arc<scylla::client::session::Session>,
    prepared: scylla::statement::prepared::PreparedStatement,
    range: ScanRange,
    index: usize,
    /// The most rows of a page.
    page_rows: usize,
    /// With pages sized by bytes (no row count given): the rows a page takes, learnt from the
    /// pages read so far by every range, at most `page_rows`.
    sized: Option<Arc<AtomicUsize>>,
    retry: crate::session::RetryOptions,
    builders: Vec<cqlwire_vector::arrays::ArrayBuilder>,
    schema: arrow_schema::SchemaRef,
    progress: Arc<UnloadProgress>,
}

impl RangeReader {
    /// Reads the range page by page into `pages`; ends quietly when the receiver is gone.
    async fn read(
        mut self,
        pages: &mpsc::Sender<Result<RecordBatch, LoadError>>,
    ) -> Result<(), LoadError> {
        let tokens = (self.range.tokens.start, self.range.tokens.end);
        let mut bound = self.prepared.clone().bind(&tokens).map_err(|error| {
            LoadError::new(
                LoadErrorKind::Statement,
                format!("cannot bind the token range: {error}"),
            )
            .with_source(error)
        })?;
        let mut paging = PagingState::start();
        let mut attempt = 0u32;
        loop {
            let page_rows = match &self.sized {
                Some(learnt) => learnt.load(Ordering::Relaxed).clamp(1, self.page_rows),
                None => self.page_rows,
            };
            bound.set_page_size(i32::try_from(page_rows).unwrap_or(i32::MAX));
            // Each attempt goes to the next replica of the range (the driver's own choice when
            // the ring is not known).
            let policy = (!self.range.replicas.is_empty()).then(|| {
                let node = &self.range.replicas[attempt as usize % self.range.replicas.len()];
                SingleTargetLoadBalancingPolicy::new(NodeIdentifier::Node(node.clone()), None)
            });
            bound.set_load_balancing_policy(policy);
            let (result, next) = match self
                .session
                .execute_bound_single_page(&bound, paging.clone())
                .await
            {
                Ok(answer) => answer,
                Err(error) => match classify(&error, true) {
                    Failure::Retry { .. } if attempt < self.retry.max_retries => {
                        tokio::time::sleep(self.retry.backoff(attempt, self.index as u64)).await;
                        attempt += 1;
                        self.progress.retried.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    Failure::Retry { .. } => {
                        return Err(LoadError::new(
                            LoadErrorKind::ServerGone,
                            format!(
                                "tokens {}..={} could not be read after {attempt} retries: {error}",
                                tokens.0, tokens.1
                            ),
                        ))
                    }
                    Failure::Reject | Failure::Uncertain | Failure::Fatal => {
                        return Err(LoadError::new(
                            LoadErrorKind::ServerGone,
                            format!(
                                "the server refused to read tokens {}..={}: {error}",
                                tokens.0, tokens.1
                            ),
                        ))
                    }
                },
            };
            attempt = 0;
            let (batch, bytes) = self.decode(result)?;
            if let (Some(learnt), Some(per_row)) =
                (&self.sized, bytes.checked_div(batch.num_rows() as u64))
            {
                let fits = (PAGE_BYTES as u64 / per_row.max(1)).clamp(1, self.page_rows as u64);
                learnt.store(fits as usize, Ordering::Relaxed);
            }
            if pages.send(Ok(batch)).await.is_err() {
                return Ok(());
            }
            match next {
                PagingStateResponse::HasMorePages { state } => paging = state,
                PagingStateResponse::NoMorePages => return Ok(()),
            }
        }
    }

    /// The rows of one page as a record batch, and their value bytes.
    fn decode(
        &mut self,
        result: scylla::response::query_result::QueryResult,
    ) -> Result<(RecordBatch, u64), LoadError> {
        let invalid = |message: String| LoadError::new(LoadErrorKind::Input, message);
        let rows = result
            .into_rows_result()
            .map_err(|e| invalid(format!("the scan did not return rows: {e}")))?;
        if rows.column_specs().len() != self.builders.len() {
            return Err(invalid(format!(
                "the scan returned {} columns for {} asked",
                rows.column_specs().len(),
                self.builders.len()
            )));
        }
        let mut bytes = 0u64;
        let iter = rows
            .rows::<ColumnIterator>()
            .map_err(|e| invalid(format!("the page cannot be read: {e}")))?;
        for row in iter {
            let row = row.map_err(|e| invalid(format!("a row cannot be read: {e}")))?;
            for (column, builder) in row.zip(self.builders.iter_mut()) {
                let column = column.map_err(|e| invalid(format!("a value cannot be read: {e}")))?;
                let value = column.slice.map(|slice| slice.as_slice());
                bytes += value.map_or(0, |v| v.len() as u64);
                builder
                    .append(value)
                    .map_err(|e| invalid(format!("column {}: {e}", column.spec.name())))?;
            }
        }
        let arrays = self
            .builders
            .iter_mut()
            .zip(self.schema.fields())
            .map(|(builder, field)| {
                builder
                    .finish()
                    .map_err(|e| invalid(format!("column {}: {e}", field.name())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.progress.bytes.fetch_add(bytes, Ordering::Relaxed);
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| invalid(format!("the page cannot be assembled: {e}")))?;
        Ok((batch, bytes))
    }
}
