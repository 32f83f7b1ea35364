//! Brute-force ground truth (`cqlwire search --exact`): 20,000 × 768 float32 training rows against
//! 100 queries, k = 10, for each similarity function, the training rows read from an in-memory
//! fbin file as the command streams them. `benches/compare/search.py --exact` times the full size
//! (100,000 × 1,000) against NumPy.
//!
//! Run with `cargo bench --bench exact`.

use cqlwire_client::exact::{exact_neighbors, Similarity};
use cqlwire_vector::input::{open_stream, InputFormat, InputOptions, RowSelection};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

const TRAIN: usize = 20_000;
const QUERIES: usize = 100;
const DIMENSION: usize = 768;

/// Deterministic pseudo-random floats in [-0.5, 0.5) (an LCG's high bits).
fn floats(seed: u64, count: usize) -> Vec<f32> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

fn brute_force(c: &mut Criterion) {
    let mut fbin = Vec::with_capacity(8 + TRAIN * DIMENSION * 4);
    fbin.extend_from_slice(&(TRAIN as u32).to_le_bytes());
    fbin.extend_from_slice(&(DIMENSION as u32).to_le_bytes());
    for x in floats(1, TRAIN * DIMENSION) {
        fbin.extend_from_slice(&x.to_le_bytes());
    }
    let fbin: Arc<[u8]> = fbin.into();
    let queries = floats(2, QUERIES * DIMENSION);
    let options = InputOptions {
        format: Some(InputFormat::Fbin),
        column: None,
        selection: RowSelection::All,
        // 8 MiB batches, as the command reads them.
        batch_rows: (8 << 20) / (DIMENSION * 4),
        dataset: "train".to_string(),
        vectors_optional: false,
    };
    let mut group = c.benchmark_group(format!("exact {TRAIN}x{DIMENSION} x{QUERIES} queries"));
    group.throughput(Throughput::Elements((TRAIN * QUERIES) as u64));
    for similarity in [
        Similarity::Cosine,
        Similarity::DotProduct,
        Similarity::Euclidean,
    ] {
        group.bench_function(BenchmarkId::from_parameter(similarity), |b| {
            b.iter(|| {
                let stream = Box::new(Cursor::new(fbin.clone()));
                let mut train = open_stream("train.fbin", stream, &options).expect("fbin");
                black_box(
                    exact_neighbors(train.as_mut(), &queries, DIMENSION, 10, similarity)
                        .expect("neighbours"),
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = brute_force
}
criterion_main!(benches);
