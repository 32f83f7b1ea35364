//! Exact nearest neighbours by brute force: the ground truth of a query set over a training set,
//! with the similarity function of a vector index.
//!
//! The training set is streamed batch by batch (memory: one batch, the queries, a top-k list per
//! query and one block of 256 × 512 scores per thread). Each thread takes a share of the queries
//! and scores them, 256 at a time, against blocks of 512 training rows with a blocked matrix
//! product (`matrixmultiply`'s packed kernels, AVX-512, AVX2 + FMA or portable, chosen at run
//! time), then walks each query's row of scores: one comparison with the k-th best so far per
//! score, an insertion only for the few that beat it. For cosine both sides are divided by their
//! norms first, as NumPy's brute force does.
//!
//! Ties: candidates are ranked by score, then by row number (the lower first); a later row with
//! the same score as the k-th never displaces it.

use cqlwire_vector::input::{BatchReader, Elements, InputError, Neighbors};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// Training rows per block of scores.
const BLOCK_ROWS: usize = 512;
/// Queries per block of scores (a block is 256 × 512 f32, 512 KiB, whatever the query count).
const BLOCK_QUERIES: usize = 256;

/// The similarity function of a vector index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Similarity {
    /// Cosine of the angle (the default of Cassandra's SAI vector index).
    Cosine,
    /// Dot product (for vectors of unit length it ranks like cosine).
    DotProduct,
    /// Euclidean distance, the nearest first.
    Euclidean,
}

impl Similarity {
    /// The name an index's options use: `cosine`, `dot_product`, `euclidean`.
    pub fn name(self) -> &'static str {
        match self {
            Similarity::Cosine => "cosine",
            Similarity::DotProduct => "dot_product",
            Similarity::Euclidean => "euclidean",
        }
    }
}

impl fmt::Display for Similarity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no similarity function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown similarity function {0:?} (known: cosine, dot_product, euclidean)")]
#[non_exhaustive]
pub struct UnknownSimilarity(pub String);

impl FromStr for Similarity {
    type Err = UnknownSimilarity;

    /// Parses an index option's value, case-insensitively.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cosine" => Ok(Similarity::Cosine),
            "dot_product" => Ok(Similarity::DotProduct),
            "euclidean" => Ok(Similarity::Euclidean),
            _ => Err(UnknownSimilarity(name.to_owned())),
        }
    }
}

/// The `k` nearest training rows of every query (`queries`: row-major, `dimension` floats each),
/// by `similarity`, over every row `train` yields (null rows are never neighbours). The lists
/// hold row numbers of the training input, best first; with fewer than `k` training rows they are
/// that long.
pub fn exact_neighbors(
    train: &mut dyn BatchReader,
    queries: &[f32],
    dimension: usize,
    k: usize,
    similarity: Similarity,
) -> Result<Neighbors, InputError> {
    if dimension == 0 || !queries.len().is_multiple_of(dimension) {
        return Err(InputError::Options(format!(
            "the queries are not rows of {dimension} numbers"
        )));
    }
    if train.dimension() != dimension && train.rows() != Some(0) {
        return Err(InputError::Options(format!(
            "the training vectors have {} elements, the queries {dimension}",
            train.dimension()
        )));
    }
    let count = queries.len() / dimension;
    let mut queries = queries.to_vec();
    if similarity == Similarity::Cosine {
        normalize(&mut queries, dimension);
    }
    let threads = rayon::current_num_threads().max(1);
    // Each thread scores its share of the queries against every block.
    let share = count.div_ceil(threads).max(1);
    let mut lists: Vec<TopK> = (0..count).map(|_| TopK::new(k)).collect();
    let mut train_rows = 0u64;
    let mut floats = Vec::new();
    while let Some(batch) = train.next_batch()? {
        let rows = batch.rows;
        as_f32(&batch.elements, &mut floats);
        if floats.len() != rows.saturating_mul(dimension) {
            return Err(InputError::Data(format!(
                "training batch at row {} is not {rows} rows of {dimension}",
                batch.first_row
            )));
        }
        let squares = match similarity {
            Similarity::Cosine => {
                normalize(&mut floats, dimension);
                Vec::new()
            }
            Similarity::Euclidean => floats.chunks_exact(dimension).map(|x| dot(x, x)).collect(),
            Similarity::DotProduct => Vec::new(),
        };
        let block = Block {
            floats: &floats,
            dimension,
            similarity,
            squares: &squares,
            valid: batch.validity.as_deref(),
            first_row: batch.first_row,
        };
        lists
            .par_chunks_mut(share)
            .zip(queries.par_chunks(share * dimension))
            .for_each(|(lists, queries)| block.score(queries, lists));
        train_rows += rows as u64;
        train.recycle(batch.elements);
    }
    let k = k.min(usize::try_from(train_rows).unwrap_or(usize::MAX));
    let mut ids = Vec::with_capacity(count.saturating_mul(k));
    for list in lists {
        let mut row: Vec<i64> = list.best.iter().map(|&(_, id)| id as i64).collect();
        row.resize(k, -1);
        ids.extend(row);
    }
    Neighbors::new(count, k, ids)
        .ok_or_else(|| InputError::Data("the neighbour lists are incomplete".to_owned()))
}

/// The elements as f32 (in `out`, whose memory is reused).
fn as_f32(elements: &Elements, out: &mut Vec<f32>) {
    out.clear();
    match elements {
        Elements::F32(v) => out.extend_from_slice(v),
        other => out.extend(other.to_f64().into_iter().map(|x| x as f32)),
    }
}

/// Divides every row by its norm (rows of norm 0 stay as they are).
fn normalize(floats: &mut [f32], dimension: usize) {
    for row in floats.chunks_exact_mut(dimension) {
        let norm = dot(row, row).sqrt();
        if norm > 0.0 {
            row.iter_mut().for_each(|x| *x /= norm);
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a8.zip(b8) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The best `k` (score, row) pairs seen, best first.
struct TopK {
    k: usize,
    best: Vec<(f32, u64)>,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            best: Vec::with_capacity(k.min(4096) + 1),
        }
    }

    /// Offers the scores of consecutive rows (`row(j)` is the id of `scores[j]`, or `None` for a
    /// null row): the k-th best is the threshold, only scores above it are inserted.
    #[inline]
    fn offer_all(
        &mut self,
        scores: &[f32],
        score: impl Fn(usize, f32) -> f32,
        row: impl Fn(usize) -> Option<u64>,
    ) {
        if self.k == 0 {
            return;
        }
        let mut threshold = self.threshold();
        for (j, &dot) in scores.iter().enumerate() {
            let s = score(j, dot);
            // While the list is not full (no threshold) every score but NaN goes in.
            if s.is_nan() || threshold.is_some_and(|t| s <= t) {
                continue;
            }
            let Some(id) = row(j) else { continue };
            self.insert(s, id);
            threshold = self.threshold();
        }
    }

    /// The k-th best score, once there are k.
    #[inline]
    fn threshold(&self) -> Option<f32> {
        (self.best.len() == self.k).then(|| self.best.last().map_or(f32::INFINITY, |b| b.0))
    }

    /// Inserts a score better than the threshold (or any while the list is not full).
    fn insert(&mut self, score: f32, row: u64) {
        if self.best.len() == self.k {
            self.best.pop();
        }
        // After every entry at least as good: rows come in increasing order, so ties keep the
        // lower row first.
        let at = self.best.partition_point(|&(s, _)| s >= score);
        self.best.insert(at, (score, row));
    }
}

/// One batch of training rows and their terms.
struct Block<'a> {
    floats: &'a [f32],
    dimension: usize,
    similarity: Similarity,
    /// |x|² per row for euclidean (empty otherwise).
    squares: &'a [f32],
    valid: Option<&'a [bool]>,
    first_row: u64,
}

impl Block<'_> {
    /// Scores `queries` (row-major) against every row of the batch, offering them to `lists`
    /// (one per query).
    fn score(&self, queries: &[f32], lists: &mut [TopK]) {
        let d = self.dimension;
        let rows = self.floats.len() / d;
        let m = (queries.len() / d).min(BLOCK_QUERIES);
        let mut scores = vec![0f32; m * BLOCK_ROWS.min(rows)];
        for start in (0..rows).step_by(BLOCK_ROWS) {
            let n = BLOCK_ROWS.min(rows - start);
            let tile = &self.floats[start * d..(start + n) * d];
            for (queries, lists) in queries
                .chunks(BLOCK_QUERIES * d)
                .zip(lists.chunks_mut(BLOCK_QUERIES))
            {
                let scores = &mut scores[..lists.len() * n];
                product(queries, tile, d, scores);
                self.offer(lists, scores, start, n);
            }
        }
    }

    /// Offers a block of scores (one row of `n` per list, training rows from `start` of the
    /// batch) to the lists.
    fn offer(&self, lists: &mut [TopK], scores: &[f32], start: usize, n: usize) {
        for (list, scores) in lists.iter_mut().zip(scores.chunks_exact(n)) {
            let valid = self.valid;
            let row = |j: usize| {
                let row = start + j;
                (valid.is_none_or(|v| v.get(row) == Some(&true)))
                    .then(|| self.first_row + row as u64)
            };
            match self.similarity {
                Similarity::Cosine | Similarity::DotProduct => {
                    list.offer_all(scores, |_, dot| dot, row)
                }
                // -(|x|² - 2 q·x) ranks as -|q - x|² (|q|² is the same for every row).
                Similarity::Euclidean => {
                    let squares = self.squares.get(start..start + n).unwrap_or(&[]);
                    list.offer_all(
                        scores,
                        |j, dot| 2.0 * dot - squares.get(j).copied().unwrap_or(f32::NAN),
                        row,
                    )
                }
            }
        }
    }
}

/// `out[i · n + j] = a_i · b_j` for the `m` rows of `a` and the `n` rows of `b` (`d` floats each;
/// `out` holds m × n floats).
fn product(a: &[f32], b: &[f32], d: usize, out: &mut [f32]) {
    let (m, n) = (a.len() / d, b.len() / d);
    assert!(a.len() == m * d && b.len() == n * d && out.len() == m * n);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: `a` holds m rows of d floats (row stride d, column stride 1), `b` read as its
    // transpose holds d rows of n (row stride 1, column stride d), `out` m rows of n (row stride
    // n): every element the product reads or writes is in bounds, as asserted above. Strides fit
    // isize: they are lengths of slices.
    unsafe {
        matrixmultiply::sgemm(
            m,
            d,
            n,
            1.0,
            a.as_ptr(),
            d as isize,
            1,
            b.as_ptr(),
            1,
            d as isize,
            0.0,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlwire_vector::input::{open_stream, InputFormat, InputOptions, RowSelection};
    use std::io::Cursor;

    /// A reader of `rows` (fbin in memory).
    fn reader(rows: &[Vec<f32>], batch_rows: usize) -> Box<dyn BatchReader> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(rows.first().map_or(0, Vec::len) as u32).to_le_bytes());
        for x in rows.iter().flatten() {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let options = InputOptions {
            format: Some(InputFormat::Fbin),
            column: None,
            selection: RowSelection::All,
            batch_rows,
            dataset: "train".to_string(),
            vectors_optional: false,
        };
        open_stream("train", Box::new(Cursor::new(bytes)), &options).unwrap()
    }

    /// Scores in f64 and a full sort: the reference of the tests.
    fn brute(train: &[Vec<f32>], query: &[f32], k: usize, similarity: Similarity) -> Vec<i64> {
        let dot = |a: &[f32], b: &[f32]| -> f64 {
            a.iter()
                .zip(b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum()
        };
        let mut scored: Vec<(f64, i64)> = train
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let s = match similarity {
                    Similarity::DotProduct => dot(query, x),
                    Similarity::Cosine => dot(query, x) / (dot(query, query) * dot(x, x)).sqrt(),
                    Similarity::Euclidean => -x
                        .iter()
                        .zip(query)
                        .map(|(a, b)| f64::from(a - b).powi(2))
                        .sum::<f64>(),
                };
                (s, i as i64)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(k).map(|(_, i)| i).collect()
    }

    fn pseudo_random(seed: u64, n: usize, d: usize) -> Vec<Vec<f32>> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                (0..d)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn brute_force_matches_a_double_precision_full_sort() {
        // The last case has more queries than a block of scores holds.
        for (d, n, queries) in [
            (37usize, 301usize, 9usize),
            (128, 130, 5),
            (3, 17, 4),
            (64, 100, 300),
        ] {
            let train = pseudo_random(d as u64, n, d);
            let query_rows = pseudo_random(7 + d as u64, queries, d);
            let flat: Vec<f32> = query_rows.iter().flatten().copied().collect();
            for similarity in [
                Similarity::Cosine,
                Similarity::DotProduct,
                Similarity::Euclidean,
            ] {
                let mut train_reader = reader(&train, 23);
                let truth =
                    exact_neighbors(train_reader.as_mut(), &flat, d, 10, similarity).unwrap();
                assert_eq!((truth.rows(), truth.k()), (queries, 10));
                for (i, query) in query_rows.iter().enumerate() {
                    assert_eq!(
                        truth.row(i),
                        brute(&train, query, 10, similarity),
                        "{similarity} d={d} query {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn ties_keep_the_lower_row_and_short_training_sets_give_short_lists() {
        let train = vec![vec![1.0, 0.0], vec![1.0, 0.0], vec![0.0, 1.0]];
        let mut train_reader = reader(&train, 1);
        let truth = exact_neighbors(
            train_reader.as_mut(),
            &[1.0, 0.0],
            2,
            5,
            Similarity::DotProduct,
        )
        .unwrap();
        assert_eq!(truth.row(0), [0, 1, 2]);
        assert_eq!("Dot_Product".parse(), Ok(Similarity::DotProduct));
        assert!("l2".parse::<Similarity>().is_err());
    }
}
