//! Exact nearest neighbours by brute force: the ground truth of a query set over a training set,
//! with the similarity function of a vector index.
//!
//! The training set is streamed batch by batch (memory: one batch, the queries and a top-k list
//! per query); each batch is cut into tiles that stay in the core's cache while every query of the
//! thread's share is scored against them, four queries by two training rows at a time (eight
//! independent accumulators of one vector register each, so the loops vectorise without
//! reassociating a sum). On x86-64 the kernel is compiled three times (baseline, AVX2 + FMA,
//! AVX-512) and the best the CPU has is chosen at run time; other targets get the portable build.
//!
//! Ties: candidates are ranked by score, then by row number (the lower first); a later row with
//! the same score as the k-th never displaces it.

use crate::input::{BatchReader, Elements, InputError, Neighbors};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// Training rows scored per tile (a tile of 768 floats × 64 rows is 192 KiB: it stays in L2).
const TILE_BYTES: usize = 192 << 10;

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
        for query in queries.chunks_exact_mut(dimension) {
            let norm = dot(query, query).sqrt();
            if norm > 0.0 {
                query.iter_mut().for_each(|x| *x /= norm);
            }
        }
    }
    let threads = rayon::current_num_threads().max(1);
    // Each thread scores its share of the queries against every tile.
    let share = count.div_ceil(threads).div_ceil(4).max(1) * 4;
    let mut lists: Vec<TopK> = (0..count).map(|_| TopK::new(k)).collect();
    let mut train_rows = 0u64;
    let mut floats = Vec::new();
    let kernel = Kernel::detect();
    while let Some(batch) = train.next_batch()? {
        let rows = batch.rows;
        as_f32(&batch.elements, &mut floats);
        if floats.len() != rows.saturating_mul(dimension) {
            return Err(InputError::Data(format!(
                "training batch at row {} is not {rows} rows of {dimension}",
                batch.first_row
            )));
        }
        let norms = row_terms(&floats, dimension, similarity);
        let valid = batch.validity.as_deref();
        let tile_rows = (TILE_BYTES / (dimension * 4)).clamp(2, 1024) & !1;
        let first_row = batch.first_row;
        lists
            .par_chunks_mut(share)
            .zip(queries.par_chunks(share * dimension))
            .for_each(|(lists, queries)| {
                let scorer = Scorer {
                    queries,
                    dimension,
                    similarity,
                    norms: &norms,
                    valid,
                    first_row,
                    kernel,
                };
                for start in (0..rows).step_by(tile_rows) {
                    let end = (start + tile_rows).min(rows);
                    let tile = floats
                        .get(start * dimension..end * dimension)
                        .unwrap_or(&[]);
                    scorer.tile(tile, start, lists);
                }
            });
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

/// Per training row: 1/|x| for cosine, |x|² for euclidean, nothing for dot product.
fn row_terms(floats: &[f32], dimension: usize, similarity: Similarity) -> Vec<f32> {
    let rows = floats.chunks_exact(dimension);
    match similarity {
        Similarity::Cosine => rows
            .map(|x| {
                let norm = dot(x, x).sqrt();
                if norm > 0.0 {
                    1.0 / norm
                } else {
                    0.0
                }
            })
            .collect(),
        Similarity::Euclidean => rows.map(|x| dot(x, x)).collect(),
        Similarity::DotProduct => Vec::new(),
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

    #[inline]
    fn offer(&mut self, score: f32, row: u64) {
        if self.k == 0 || score.is_nan() {
            return;
        }
        if self.best.len() == self.k {
            match self.best.last() {
                Some(&(worst, _)) if score > worst => {}
                _ => return,
            }
            self.best.pop();
        }
        // After every entry at least as good: rows come in increasing order, so ties keep the
        // lower row first.
        let at = self.best.partition_point(|&(s, _)| s >= score);
        self.best.insert(at, (score, row));
    }
}

/// Which compiled kernel to run.
#[derive(Debug, Clone, Copy)]
enum Kernel {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Kernel::Avx2;
            }
        }
        Kernel::Portable
    }
}

/// One thread's queries and the terms of the current batch.
struct Scorer<'a> {
    queries: &'a [f32],
    dimension: usize,
    similarity: Similarity,
    norms: &'a [f32],
    valid: Option<&'a [bool]>,
    first_row: u64,
    kernel: Kernel,
}

impl Scorer<'_> {
    /// Scores every query against the training rows of `tile` (its first row is `start` of the
    /// batch) and offers them to `lists`.
    fn tile(&self, tile: &[f32], start: usize, lists: &mut [TopK]) {
        let d = self.dimension;
        let tile_rows = tile.len() / d;
        let mut dots = [[0f32; 4]; 2];
        for (block, lists) in self.queries.chunks(4 * d).zip(lists.chunks_mut(4)) {
            let q = |i: usize| block.get(i * d..(i + 1) * d).unwrap_or(&[]);
            for pair in (0..tile_rows).step_by(2) {
                let x0 = tile.get(pair * d..(pair + 1) * d).unwrap_or(&[]);
                let x1 = tile.get((pair + 1) * d..(pair + 2) * d).unwrap_or(x0);
                dot4x2(self.kernel, [q(0), q(1), q(2), q(3)], [x0, x1], &mut dots);
                for (j, dots) in dots.iter().enumerate().take(tile_rows - pair) {
                    let row = start + pair + j;
                    if self.valid.is_some_and(|v| v.get(row) != Some(&true)) {
                        continue;
                    }
                    let id = self.first_row + row as u64;
                    for (list, &dot) in lists.iter_mut().zip(dots) {
                        list.offer(self.score(dot, row), id);
                    }
                }
            }
        }
    }

    /// The score of a dot product with training row `row` of the batch (higher is better).
    #[inline]
    fn score(&self, dot: f32, row: usize) -> f32 {
        let term = self.norms.get(row).copied().unwrap_or(0.0);
        match self.similarity {
            Similarity::DotProduct => dot,
            Similarity::Cosine => dot * term,
            // -(|x|² - 2 q·x) ranks as -|q - x|² (|q|² is the same for every row).
            Similarity::Euclidean => 2.0 * dot - term,
        }
    }
}

/// `out[j][i] = q[i] · x[j]` (missing queries are empty slices and score 0).
#[inline]
fn dot4x2(kernel: Kernel, q: [&[f32]; 4], x: [&[f32]; 2], out: &mut [[f32; 4]; 2]) {
    match kernel {
        Kernel::Portable => block::<8, false>(q, x, out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::detect` chose this kernel only after seeing the CPU has AVX2 and FMA.
        Kernel::Avx2 => unsafe { block_avx2(q, x, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Kernel::detect` chose this kernel only after seeing the CPU has AVX-512F.
        Kernel::Avx512 => unsafe { block_avx512(q, x, out) },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn block_avx2(q: [&[f32]; 4], x: [&[f32]; 2], out: &mut [[f32; 4]; 2]) {
    block::<8, true>(q, x, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn block_avx512(q: [&[f32]; 4], x: [&[f32]; 2], out: &mut [[f32; 4]; 2]) {
    block::<16, true>(q, x, out);
}

/// The 4 × 2 dot products in lanes of `L` floats (one vector register each), fused multiply-adds
/// when `FMA` (only compiled so where the CPU has them).
#[inline(always)]
fn block<const L: usize, const FMA: bool>(q: [&[f32]; 4], x: [&[f32]; 2], out: &mut [[f32; 4]; 2]) {
    let d = x[0].len();
    let q = q.map(|q| if q.len() == d { q } else { x[0] });
    let mut acc = [[[0f32; L]; 2]; 4];
    let full = d - d % L;
    let mut at = 0;
    while at < full {
        let xs = [&x[0][at..at + L], &x[1][at..at + L]];
        for i in 0..4 {
            let qs = &q[i][at..at + L];
            for j in 0..2 {
                for l in 0..L {
                    acc[i][j][l] = if FMA {
                        qs[l].mul_add(xs[j][l], acc[i][j][l])
                    } else {
                        qs[l] * xs[j][l] + acc[i][j][l]
                    };
                }
            }
        }
        at += L;
    }
    for i in 0..4 {
        for j in 0..2 {
            let tail: f32 = (full..d).map(|e| q[i][e] * x[j][e]).sum();
            out[j][i] = acc[i][j].iter().sum::<f32>() + tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{open_stream, InputFormat, InputOptions, RowSelection};
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
        for (d, n, queries) in [(37usize, 301usize, 9usize), (128, 130, 5), (3, 17, 4)] {
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
