//! Counters of a run: live ones for a progress display, and the final report.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Rows acknowledged by the server (in a dry run: rows that bound).
    pub written: u64,
    /// Rows written to the rejects sink.
    pub rejected: u64,
    /// Retries of requests (a row retried three times counts three).
    pub retried: u64,
    /// Value bytes of the written rows.
    pub bytes: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// `None` when every input row was acknowledged or rejected; otherwise the lowest row number
    /// neither acknowledged nor rejected: every input row below it is one of the two, so a new run
    /// from this row on completes the load.
    pub resume_from: Option<u64>,
}

impl LoadReport {
    /// Acknowledged rows per second of wall time.
    pub fn rows_per_second(&self) -> f64 {
        rate(self.written, self.elapsed)
    }
}

fn rate(count: u64, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Live counters of a run, updated as rows are acknowledged; read them from another thread for a
/// progress bar.
#[derive(Debug)]
pub struct Progress {
    started: Instant,
    written: AtomicU64,
    rejected: AtomicU64,
    retried: AtomicU64,
    bytes: AtomicU64,
    in_flight: AtomicUsize,
    window: AtomicUsize,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            started: Instant::now(),
            written: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            retried: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            window: AtomicUsize::new(0),
        }
    }
}

/// The counters of a [`Progress`] at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressSnapshot {
    /// Rows acknowledged.
    pub written: u64,
    /// Rows rejected.
    pub rejected: u64,
    /// Retries so far.
    pub retried: u64,
    /// Value bytes acknowledged.
    pub bytes: u64,
    /// Requests in flight (including those waiting to be retried).
    pub in_flight: usize,
    /// Requests allowed in flight.
    pub window: usize,
    /// Time since the counters were made.
    pub elapsed: Duration,
    /// Acknowledged rows per second since then.
    pub rows_per_second: f64,
}

impl Progress {
    /// The counters now.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let written = self.written.load(Ordering::Relaxed);
        let elapsed = self.started.elapsed();
        ProgressSnapshot {
            written,
            rejected: self.rejected.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            window: self.window.load(Ordering::Relaxed),
            elapsed,
            rows_per_second: rate(written, elapsed),
        }
    }

    pub(crate) fn add_written(&self, bytes: u64) {
        self.written.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn add_rejected(&self) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_retry(&self) {
        self.retried.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn set_in_flight(&self, in_flight: usize, window: usize) {
        self.in_flight.store(in_flight, Ordering::Relaxed);
        self.window.store(window, Ordering::Relaxed);
    }

    pub(crate) fn report(&self, resume_from: Option<u64>) -> LoadReport {
        let now = self.snapshot();
        LoadReport {
            written: now.written,
            rejected: now.rejected,
            retried: now.retried,
            bytes: now.bytes,
            elapsed: now.elapsed,
            resume_from,
        }
    }
}

/// Shared between the caller and a run: the live counters and the stop flag.
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Live counters of the run.
    pub progress: Arc<Progress>,
    /// Set it (e.g. from a Ctrl-C handler) to stop reading input: the run drains the requests in
    /// flight, without retrying them, and returns with [`LoadReport::resume_from`] set.
    pub stop: Arc<AtomicBool>,
}

impl RunControl {
    pub(crate) fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
