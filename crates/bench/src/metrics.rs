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

use std::collections::{HashMap, HashSet};

/// VectorDBBench's `calc_recall(count, ground_truth, got)`: how many distinct ids among the first
/// `count` returned are in `ground_truth`, divided by `count` (0 when `count` is 0). The serial
/// pass passes the ground truth's first `k` ids.
pub fn calc_recall(count: usize, ground_truth: &[i64], got: &[i64]) -> f64 {
    if count == 0 {
        return 0.0;
    }
    let truth: HashSet<i64> = ground_truth.iter().copied().collect();
    let hits: HashSet<i64> = got
        .iter()
        .take(count)
        .copied()
        .filter(|id| truth.contains(id))
        .collect();
    hits.len() as f64 / count as f64
}

/// VectorDBBench's `get_ideal_dcg(k)`: `Σ_{i<k} 1 / log2(i + 2)`, the DCG of a perfect answer of
/// `k` ids, summed in rank order.
pub fn ideal_dcg(k: usize) -> f64 {
    (0..k).map(|i| 1.0 / ((i + 2) as f64).log2()).sum()
}

/// VectorDBBench's `calc_ndcg(ground_truth, got, ideal_dcg)`: each *distinct* returned id found in
/// `ground_truth` adds `1 / log2(rank + 2)`, where `rank` is its first position there (from 0);
/// the sum is divided by `ideal_dcg` (0 when `ideal_dcg` is not positive).
pub fn calc_ndcg(ground_truth: &[i64], got: &[i64], ideal_dcg: f64) -> f64 {
    if ideal_dcg <= 0.0 || ideal_dcg.is_nan() {
        return 0.0;
    }
    let mut ranks = HashMap::with_capacity(ground_truth.len());
    for (rank, &id) in ground_truth.iter().enumerate() {
        ranks.entry(id).or_insert(rank);
    }
    let mut seen = HashSet::with_capacity(got.len().min(ground_truth.len()));
    let mut dcg = 0.0;
    for &id in got {
        if let Some(rank) = ranks.get(&id).filter(|_| seen.insert(id)) {
            dcg += 1.0 / ((rank + 2) as f64).log2();
        }
    }
    dcg / ideal_dcg
}

/// NumPy's `percentile(values, q)` with its default `linear` method: the order statistic at
/// `(n − 1) × q / 100`, interpolated between its neighbours as NumPy's `_lerp` does (from the
/// upper neighbour when the fraction is at least one half). None for no values, or `q` outside
/// 0–100, or a NaN among the values.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&q) || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len() - 1;
    let virtual_index = last as f64 * (q / 100.0);
    let below = virtual_index.floor();
    let gamma = virtual_index - below;
    // floor of a value in 0..=last, so in range; `min` keeps any rounding inside.
    let previous = (below as usize).min(last);
    let next = (previous + 1).min(last);
    let (a, b) = (*sorted.get(previous)?, *sorted.get(next)?);
    let difference = b - a;
    Some(if gamma >= 0.5 {
        b - difference * (1.0 - gamma)
    } else {
        a + difference * gamma
    })
}

/// The arithmetic mean (0 for no values).
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Python's `round(x, 4)`: the decimal of 4 places nearest to `x`'s exact binary value (ties to
/// even), as the nearest double. Rust's fixed-precision formatting rounds the same way.
pub fn round4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

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
    fn recall_counts_distinct_hits_among_the_first_count() {
        assert_eq!(calc_recall(4, &[1, 2, 3, 4], &[4, 9, 1, 8]), 0.5);
        assert_eq!(calc_recall(2, &[1, 2], &[1, 1]), 0.5);
        assert_eq!(calc_recall(2, &[1, 2], &[3, 1, 2]), 0.5);
        assert_eq!(calc_recall(0, &[1], &[1]), 0.0);
    }

    #[test]
    fn ndcg_of_a_perfect_answer_is_one_and_of_a_repeated_id_counts_once() {
        let truth = [7, 3, 5];
        let ideal = ideal_dcg(3);
        assert!((calc_ndcg(&truth, &[7, 3, 5], ideal) - 1.0).abs() < 1e-15);
        assert_eq!(calc_ndcg(&truth, &[7, 7, 7], ideal), 1.0 / ideal);
        assert_eq!(calc_ndcg(&truth, &[1, 2], ideal), 0.0);
        assert_eq!(calc_ndcg(&truth, &[7], 0.0), 0.0);
        assert_eq!(ideal_dcg(0), 0.0);
    }

    #[test]
    fn percentiles_interpolate_between_order_statistics() {
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 50.0), Some(2.0));
        assert_eq!(percentile(&[1.0, 2.0], 25.0), Some(1.25));
        assert_eq!(percentile(&[1.0, 2.0], 75.0), Some(1.75));
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
        assert_eq!(percentile(&[1.0, 2.0], 100.0), Some(2.0));
        assert_eq!(percentile(&[], 99.0), None);
        assert_eq!(percentile(&[1.0, f64::NAN], 99.0), None);
        assert_eq!(percentile(&[1.0], 101.0), None);
    }

    #[test]
    fn rounding_follows_python_round_to_four_places() {
        assert_eq!(round4(0.03125), 0.0312);
        assert_eq!(round4(0.09375), 0.0938);
        assert_eq!(round4(0.99995), 1.0);
        assert_eq!(round4(0.123449), 0.1234);
    }

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
