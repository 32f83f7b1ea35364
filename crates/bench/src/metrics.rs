//! VectorDBBench's metrics, computed as its code computes them (`vectordb_bench/metric.py`,
//! `backend/runner/serial_runner.py` and `backend/runner/mp_runner.py`, in the 2.0.0 release and at
//! commit 4ea1810):
//!
//! - [`calc_recall`]: the distinct ids among the first `count` returned that are in the ground
//!   truth, over `count`;
//! - [`calc_ndcg`]: over the *set* of returned ids, each id of the ground truth adding
//!   `1 / log2(rank + 2)` (its first rank there, from 0), over [`ideal_dcg`]`(k)`;
//! - [`percentile`]: NumPy's `percentile` with its default (`linear`) method;
//! - [`SerialSummary`]: the serial pass's recall, NDCG, p99 and p95 (the release's
//!   `calc_vector_metrics`: the first `k` returned ids against the first `k` of the ground
//!   truth), each rounded to 4 decimals as Python's `round(x, 4)` does; [`LevelSummary`]: one
//!   concurrency level's qps (rounded the same way), p99, p95 and mean latency (not rounded).
//!
//! 4ea1810's `calc_recall` counts positions rather than distinct ids, and its `calc_ndcg` looks at
//! every returned id rather than the first `k`: the two agree with the release whenever an answer
//! has at most `k` ids and no id twice, which an ANN query with `LIMIT k` on a table keyed by id
//! always has. cqlwire follows the release.

pub use cqlwire_client::metrics::{calc_ndcg, calc_recall, ideal_dcg, mean, percentile, round4};

/// What the serial pass reports: the means of each query's recall and NDCG, and the latency
/// percentiles, each rounded to 4 decimals (seconds for the latencies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SerialSummary {
    /// Mean recall@k, rounded.
    pub recall: f64,
    /// Mean NDCG@k, rounded.
    pub ndcg: f64,
    /// The 99th percentile latency in seconds, rounded.
    pub latency_p99: f64,
    /// The 95th percentile latency in seconds, rounded.
    pub latency_p95: f64,
}

impl SerialSummary {
    /// Scores the serial pass: `answers[i]` is what query `i` returned (its first `k` ids are
    /// scored), `ground_truth(i)` its ground truth (best first; its first `k` ids are used),
    /// `latencies` each query's time in seconds.
    pub fn score<'a>(
        k: usize,
        answers: &[Vec<i64>],
        ground_truth: impl Fn(usize) -> &'a [i64],
        latencies: &[f64],
    ) -> SerialSummary {
        let ideal = ideal_dcg(k);
        let (mut recalls, mut ndcgs) = (Vec::new(), Vec::new());
        let first = |ids: &'a [i64]| ids.get(..k.min(ids.len())).unwrap_or(ids);
        for (query, got) in answers.iter().enumerate() {
            let truth = first(ground_truth(query));
            let got = got.get(..k.min(got.len())).unwrap_or(got);
            recalls.push(calc_recall(k, truth, got));
            ndcgs.push(calc_ndcg(truth, got, ideal));
        }
        SerialSummary {
            recall: round4(mean(&recalls)),
            ndcg: round4(mean(&ndcgs)),
            latency_p99: round4(percentile(latencies, 99.0).unwrap_or(0.0)),
            latency_p95: round4(percentile(latencies, 95.0).unwrap_or(0.0)),
        }
    }
}

/// One concurrency level of the sweep: queries answered in `seconds` and their latencies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSummary {
    /// Queries in flight at once.
    pub concurrency: u32,
    /// Answered queries per second, rounded to 4 decimals.
    pub qps: f64,
    /// The 99th percentile latency in seconds.
    pub latency_p99: f64,
    /// The 95th percentile latency in seconds.
    pub latency_p95: f64,
    /// The mean latency in seconds.
    pub latency_avg: f64,
}

impl LevelSummary {
    /// Summarises a level: `latencies` of the queries answered (seconds), over `seconds` of wall
    /// time (VectorDBBench's `all_count / cost`; 0 queries per second when no time passed).
    pub fn of(concurrency: u32, latencies: &[f64], seconds: f64) -> LevelSummary {
        let qps = if seconds > 0.0 {
            round4(latencies.len() as f64 / seconds)
        } else {
            0.0
        };
        LevelSummary {
            concurrency,
            qps,
            latency_p99: percentile(latencies, 99.0).unwrap_or(0.0),
            latency_p95: percentile(latencies, 95.0).unwrap_or(0.0),
            latency_avg: mean(latencies),
        }
    }
}

/// VectorDBBench's `qps` metric: the largest qps of the levels (`max_qps` in `mp_runner.py`; 0
/// with no level).
pub fn max_qps(levels: &[LevelSummary]) -> f64 {
    levels.iter().map(|level| level.qps).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qps_metric_is_the_largest_level() {
        let levels = [
            LevelSummary::of(1, &[0.1; 10], 1.0),
            LevelSummary::of(5, &[0.1; 40], 1.0),
            LevelSummary::of(10, &[0.1; 30], 1.0),
        ];
        assert_eq!(max_qps(&levels), 40.0);
        assert_eq!(LevelSummary::of(1, &[], 0.0).qps, 0.0);
    }
}
