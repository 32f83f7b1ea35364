//! The search metrics, one definition for `search` and `bench`, as VectorDBBench computes them
//! (`vectordb_bench/metric.py` of its 2.0.0 release; NumPy's `percentile`):
//!
//! - [`calc_recall`]: the distinct ids among the first `count` returned that are in the ground
//!   truth, over `count`;
//! - [`calc_ndcg`]: over the *set* of returned ids, each id of the ground truth adding
//!   `1 / log2(rank + 2)` (its first rank there, from 0), over [`ideal_dcg`]`(k)`;
//! - [`percentile`]: NumPy's `percentile` with its default (`linear`) method, the latency
//!   percentiles of both commands;
//! - [`mean`] and [`round4`] (Python's `round(x, 4)`).

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
}
