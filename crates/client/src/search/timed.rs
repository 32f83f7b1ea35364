//! Time-boxed runs of the prepared query, one concurrency level each: what a benchmark's sweep
//! measures (VectorDBBench's concurrent search: each worker cycles through the queries from a
//! random start until the time is up).

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use super::{QuerySet, Searcher};
use crate::error::LoadError;
use crate::report::RunControl;
use crate::table_guard::TableGuard;

/// What one time-boxed level measured.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TimedRun {
    /// Queries in flight at once (one per worker).
    pub concurrency: usize,
    /// The latency of each answered query, in the order they were answered.
    pub latencies: Vec<Duration>,
    /// Queries that failed (a timeout included); they are not in `latencies`.
    pub errors: u64,
    /// From the first query sent to the last answer.
    pub elapsed: Duration,
}

impl TimedRun {
    /// Answered queries per second of wall time (0 when no time passed).
    pub fn queries_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.latencies.len() as f64 / seconds
        } else {
            0.0
        }
    }
}

/// A start in `0..count` that differs from run to run (no seed to pass around: the standard
/// library's hasher keys are random per process and per call).
fn random_start(count: usize) -> usize {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(count);
    (hasher.finish() % count.max(1) as u64) as usize
}

impl Searcher {
    /// Runs `concurrency` workers for `duration`: each sends one query at a time, cycling through
    /// `queries` from a random start, and sends no new query once the time is up (the ones in
    /// flight then are awaited and counted). `control.stop` ends the level early; its progress
    /// counts answered queries as written and failed ones as rejected. Nothing is scored: a
    /// sweep measures speed (the serial [`run`](Searcher::run) measures recall).
    pub async fn run_for(
        &self,
        queries: &QuerySet,
        concurrency: usize,
        duration: Duration,
        control: &RunControl,
    ) -> Result<TimedRun, LoadError> {
        let count = queries.len();
        let concurrency = concurrency.max(1);
        if count == 0 {
            return Ok(TimedRun {
                concurrency,
                latencies: Vec::new(),
                errors: 0,
                elapsed: Duration::ZERO,
            });
        }
        let started = Instant::now();
        let deadline = started + duration;
        let worker = |first: usize| async move {
            let mut latencies = Vec::new();
            let mut errors = 0u64;
            let mut refusal = None;
            let mut i = first;
            while Instant::now() < deadline && !control.stop_requested() {
                let (value, number) = (&queries.values[i], queries.numbers[i]);
                let (result, _, refused) = self.one(value, number, None).await;
                match result.error {
                    None => {
                        latencies.push(result.latency);
                        control.progress.add_written(0);
                    }
                    Some(error) => {
                        errors += 1;
                        control.progress.add_rejected();
                        if refused {
                            refusal = Some(error);
                            break;
                        }
                    }
                }
                i = (i + 1) % count;
            }
            (latencies, errors, refusal)
        };
        let mut workers: FuturesUnordered<_> = (0..concurrency)
            .map(|_| worker(random_start(count)))
            .collect();
        control.progress.set_in_flight(concurrency, concurrency);
        let (mut latencies, mut errors, mut refusal) = (Vec::new(), 0, None);
        while let Some((answered, failed, refused)) = workers.next().await {
            latencies.extend(answered);
            errors += failed;
            refusal = refusal.or(refused);
        }
        let elapsed = started.elapsed();
        control.progress.set_in_flight(0, concurrency);
        TableGuard::refuse_change(self.guard.as_ref(), &self.session).await?;
        if let Some(error) = refusal {
            return Err(self.refused(&error));
        }
        Ok(TimedRun {
            concurrency,
            latencies,
            errors,
            elapsed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_starts_fall_in_the_query_set_and_vary() {
        let starts: Vec<usize> = (0..64).map(|_| random_start(1000)).collect();
        assert!(starts.iter().all(|&s| s < 1000));
        assert!(starts.iter().any(|&s| s != starts[0]));
        assert_eq!(random_start(1), 0);
    }

    #[test]
    fn queries_per_second_counts_answers_over_wall_time() {
        let run = TimedRun {
            concurrency: 2,
            latencies: vec![Duration::from_millis(5); 30],
            errors: 4,
            elapsed: Duration::from_secs(3),
        };
        assert_eq!(run.queries_per_second(), 10.0);
        let none = TimedRun {
            elapsed: Duration::ZERO,
            ..run
        };
        assert_eq!(none.queries_per_second(), 0.0);
    }
}
