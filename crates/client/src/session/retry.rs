//! Retries of the requests that failed for a reason that may pass.

use std::time::Duration;

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
