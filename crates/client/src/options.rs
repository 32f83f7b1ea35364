//! What a load writes and how it sends.

use std::num::NonZeroU32;

use crate::session::{RetryOptions, SessionOptions};

/// How many requests may be in flight at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Concurrency {
    /// Exactly this many (at least 1).
    Fixed(usize),
    /// A window that starts at `initial`, grows by one per window of acknowledged requests while
    /// latency stays near the best seen, and halves on Overloaded, timeouts or Unavailable (AIMD),
    /// never below 1 nor above `max`.
    Adaptive {
        /// Window at the start.
        initial: usize,
        /// Largest window.
        max: usize,
    },
}

impl Default for Concurrency {
    /// Adaptive from 32 up to 512 requests.
    fn default() -> Self {
        Concurrency::Adaptive {
            initial: 32,
            max: 512,
        }
    }
}

/// What to load and how to send it.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The cluster, the table and the rules of every request (login, TLS, consistency, timeout,
    /// compression). Its consistency is that of every write: the default `LOCAL_QUORUM` puts an
    /// acknowledged row on a majority of the local replicas, so the resume point stays true if one
    /// replica dies (`LOCAL_ONE`, the Python and Java drivers' default, is faster but not that).
    pub session: SessionOptions,
    /// Columns of the default INSERT, in marker order; `None` means every column of the table.
    /// Ignored when `query` is given.
    pub columns: Option<Vec<String>>,
    /// A full statement to prepare instead of the default INSERT, e.g.
    /// `INSERT INTO ks.t (id, v) VALUES (?, ?) USING TTL 86400`.
    pub query: Option<String>,
    /// Requests in flight.
    pub concurrency: Concurrency,
    /// Retries of requests that failed for a reason that may pass (a request that takes longer
    /// than the request timeout is one).
    pub retry: RetryOptions,
    /// Rows per second: [`Loader::load`](crate::Loader::load) hands row `n` to the run no
    /// earlier than `n / rate` seconds after it starts (`None`: as fast as the run takes them).
    /// A server slower than the rate falls behind the schedule; the rows due then go at once.
    pub rate: Option<NonZeroU32>,
    /// Rows a request may carry: 1 sends each row as its own EXECUTE; more gathers rows whose
    /// partitions share their replicas into UNLOGGED batches of up to this many rows (at most
    /// [`MAX_BATCH_ROWS`](crate::MAX_BATCH_ROWS)), each row still acknowledged or rejected alone.
    /// Counter updates always go one by one.
    pub batch_rows: usize,
    /// The bound of a batch's size as the server counts it against its
    /// `batch_size_fail_threshold` (the values and 16 bytes a cell, and more; a row bigger than
    /// this goes alone). `None`: the server's threshold when `system_views.settings` shows it,
    /// else [`DEFAULT_BATCH_BYTES`](crate::DEFAULT_BATCH_BYTES); a bound above the threshold the
    /// server shows is lowered to it.
    pub batch_bytes: Option<u64>,
}

impl LoadOptions {
    /// A load of every column through `session`, everything else at its default.
    pub fn new(session: SessionOptions) -> Self {
        LoadOptions {
            session,
            columns: None,
            query: None,
            concurrency: Concurrency::default(),
            retry: RetryOptions::default(),
            rate: None,
            batch_rows: 1,
            batch_bytes: None,
        }
    }
}
