//! What a load connects to and how it sends.

use std::path::PathBuf;
use std::time::Duration;

use scylla::statement::Consistency;

use crate::error::{LoadError, LoadErrorKind};
use crate::session::{parse_consistency, split_table_name, Credentials, Host, TlsOptions};

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

/// Retries of a request that failed for a reason that may pass (timeout, Overloaded, Unavailable,
/// lost connection): waits `initial_backoff`, doubling up to `max_backoff` (each wait jittered to
/// 50–100 %), at most `max_retries` times; then the cluster is taken as gone and the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOptions {
    /// Retries of one row before the run is ended.
    pub max_retries: u32,
    /// First wait.
    pub initial_backoff: Duration,
    /// Longest wait.
    pub max_backoff: Duration,
}

impl Default for RetryOptions {
    /// 10 retries, 100 ms doubling to 10 s (about a minute of trying per row, plus the timeouts).
    fn default() -> Self {
        RetryOptions {
            max_retries: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
        }
    }
}

impl RetryOptions {
    /// The wait before retry number `retry` (0-based) of row `row`: exponential, capped, jittered
    /// by a hash of both so that rows that failed together do not retry together.
    pub fn backoff(&self, retry: u32, row: u64) -> Duration {
        let full = self
            .initial_backoff
            .saturating_mul(1u32 << retry.min(20))
            .min(self.max_backoff);
        let jitter = splitmix64(row ^ (u64::from(retry) << 56)) % 1024;
        full / 2 + full / 2 * u32::try_from(jitter).unwrap_or(0) / 1024
    }
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Where and how to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Contact points; the driver discovers the other nodes.
    pub hosts: Vec<Host>,
    /// Keyspace of the table, as written in CQL (unquoted names are case-insensitive).
    pub keyspace: String,
    /// Table, as written in CQL.
    pub table: String,
    /// Columns of the default INSERT, in marker order; `None` means every column of the table.
    /// Ignored when `query` is given.
    pub columns: Option<Vec<String>>,
    /// A full statement to prepare instead of the default INSERT, e.g.
    /// `INSERT INTO ks.t (id, v) VALUES (?, ?) USING TTL 86400`.
    pub query: Option<String>,
    /// Consistency of every write. Default `LOCAL_QUORUM`, the ScyllaDB driver's own default: an
    /// acknowledged row is then on a majority of the local replicas, so the resume point stays true if
    /// one replica dies (`LOCAL_ONE`, the Python and Java drivers' default, is faster but not that).
    pub consistency: Consistency,
    /// Requests in flight.
    pub concurrency: Concurrency,
    /// Client-side timeout of one request; a request that takes longer is retried.
    pub request_timeout: Duration,
    /// Retries of requests that failed for a reason that may pass.
    pub retry: RetryOptions,
    /// Login, when the cluster uses `PasswordAuthenticator`.
    pub credentials: Option<Credentials>,
    /// Client TLS; `None` connects in plain text.
    pub tls: Option<TlsOptions>,
    /// LZ4-compress request bodies (off by default: float vectors hardly compress, and it costs
    /// client CPU; worth it over slow links with text-heavy rows).
    pub compression: bool,
}

impl LoadOptions {
    /// Options for `keyspace.table` through `hosts`, everything else at its default.
    pub fn new(hosts: Vec<Host>, keyspace: impl Into<String>, table: impl Into<String>) -> Self {
        LoadOptions {
            hosts,
            keyspace: keyspace.into(),
            table: table.into(),
            columns: None,
            query: None,
            consistency: Consistency::LocalQuorum,
            concurrency: Concurrency::default(),
            request_timeout: Duration::from_secs(12),
            retry: RetryOptions::default(),
            credentials: None,
            tls: None,
            compression: false,
        }
    }

    /// Splits `KS.TABLE` (each part plain or double-quoted) into the keyspace and table of the options.
    pub fn with_table_name(hosts: Vec<Host>, name: &str) -> Result<Self, LoadError> {
        let (keyspace, table) = split_table_name(name)?;
        Ok(LoadOptions::new(hosts, keyspace, table))
    }
}

/// The connection as text settings give it (command-line flags, keyword arguments): parsed and
/// checked into [`LoadOptions`] by [`ConnectionSettings::options`].
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    /// Contact points, `HOST[:PORT][,HOST[:PORT]…]`.
    pub hosts: String,
    /// The table, `KEYSPACE.TABLE`.
    pub table: String,
    /// Consistency level by name (when `None`: `LOCAL_QUORUM`, or the default that
    /// [`options_with_default_consistency`](ConnectionSettings::options_with_default_consistency) is given).
    pub consistency: Option<String>,
    /// Timeout of one request (at least one second is used).
    pub timeout: Duration,
    /// Login.
    pub credentials: Option<Credentials>,
    /// Connect with TLS (also implied by a CA file or a client certificate).
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate.
    pub tls_ca: Option<PathBuf>,
    /// Client certificate and its private key (PEM).
    pub tls_client: Option<(PathBuf, PathBuf)>,
}

impl ConnectionSettings {
    /// Settings for `table` through `hosts`, everything else at its default.
    pub fn new(hosts: impl Into<String>, table: impl Into<String>) -> Self {
        ConnectionSettings {
            hosts: hosts.into(),
            table: table.into(),
            consistency: None,
            timeout: Duration::from_secs(12),
            credentials: None,
            tls: false,
            tls_ca: None,
            tls_client: None,
        }
    }

    /// The library's options for this connection, everything else at its default (consistency
    /// `LOCAL_QUORUM` when the settings name none).
    pub fn options(&self) -> Result<LoadOptions, LoadError> {
        self.options_with_default_consistency(Consistency::LocalQuorum)
    }

    /// The library's options for this connection, with `consistency` when the settings name no
    /// level, everything else at its default.
    pub fn options_with_default_consistency(
        &self,
        consistency: Consistency,
    ) -> Result<LoadOptions, LoadError> {
        let hosts = Host::parse_list(&self.hosts)?;
        let mut options = LoadOptions::with_table_name(hosts, &self.table)?;
        options.consistency = match &self.consistency {
            Some(level) => parse_consistency(level)?,
            None => consistency,
        };
        if self.timeout < Duration::from_secs(1) {
            return Err(LoadError::new(
                LoadErrorKind::InvalidOption,
                format!(
                    "a request timeout of {} s leaves no time to answer: give at least 1 s",
                    self.timeout.as_secs_f64()
                ),
            ));
        }
        options.request_timeout = self.timeout;
        options.credentials = self.credentials.clone();
        if self.tls || self.tls_ca.is_some() || self.tls_client.is_some() {
            options.tls = Some(TlsOptions {
                ca_file: self.tls_ca.clone(),
                client_cert: self.tls_client.clone(),
                ..TlsOptions::default()
            });
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap_with_jitter_of_at_most_half() {
        let retry = RetryOptions {
            max_retries: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        for (attempt, full) in [
            (0, 100),
            (1, 200),
            (2, 400),
            (3, 800),
            (4, 1000),
            (30, 1000),
        ] {
            for row in 0..50 {
                let wait = retry.backoff(attempt, row);
                assert!(
                    wait >= Duration::from_millis(full / 2),
                    "{attempt} {row} {wait:?}"
                );
                assert!(
                    wait <= Duration::from_millis(full),
                    "{attempt} {row} {wait:?}"
                );
            }
        }
        assert_ne!(retry.backoff(3, 1), retry.backoff(3, 2));
    }
}
