//! Vector serialization benchmarks: the conversion kernel against a plain memcpy of the same bytes,
//! in bulk (1000 rows at once) and per row, for dims 128/768/1536 and float/double/int/bigint, plus a
//! variable-size element type (smallint) and the parallel batch path.
//!
//! Run with `cargo bench --bench vector`.

use cqlwire::input::{Batch, Elements};
use cqlwire::types::{parse_type, UdtRegistry};
use cqlwire::vector::{Rows, VectorEncoder};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// Rows per benchmark iteration.
const ROWS: usize = 1000;

/// Deterministic pseudo-random numbers (splitmix64).
fn numbers(count: usize) -> Vec<u64> {
    let mut state = 42u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn encoder(ty: &str) -> VectorEncoder {
    let ty = parse_type(ty, &UdtRegistry::new()).expect("benchmark type");
    VectorEncoder::new(&ty).expect("benchmark encoder")
}

/// Input elements of one element type for `count` elements.
fn elements(element: &str, count: usize) -> Elements {
    let n = numbers(count);
    match element {
        "float" => Elements::F32(n.iter().map(|&x| (x >> 40) as f32 / 1e6).collect()),
        "double" => Elements::F64(n.iter().map(|&x| (x >> 11) as f64 / 1e9).collect()),
        "int" => Elements::I32(n.iter().map(|&x| x as i32).collect()),
        "bigint" => Elements::I64(n.iter().map(|&x| x as i64).collect()),
        _ => Elements::I16(n.iter().map(|&x| x as i16).collect()),
    }
}

/// vector<float, 768>: the kernel in bulk and per row next to memcpy of the same bytes, one group.
fn float_768_against_memcpy(c: &mut Criterion) {
    let dimension = 768;
    let bytes = ROWS * dimension * 4;
    let encoder = encoder("vector<float, 768>");
    let input = elements("float", ROWS * dimension);
    let source = vec![0x5au8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut group = c.benchmark_group("vector<float,768> x1000");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("memcpy", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&source)));
    });
    group.bench_function("bulk", |b| {
        b.iter(|| encoder.encode_fixed_into(Rows::from(black_box(&input)), 0, &mut dst))
    });
    group.bench_function("per row", |b| {
        b.iter(|| per_row(&encoder, &input, dimension, &mut dst))
    });
    group.bench_function("batch (rayon, allocating)", |b| {
        b.iter(|| {
            let batch = Batch {
                first_row: 0,
                rows: ROWS,
                elements: input.clone(),
                validity: None,
                columns: None,
            };
            encoder.encode_batch(black_box(batch), Vec::new())
        })
    });
    group.finish();
}

/// Each row converted on its own into its slice of `dst`.
fn per_row(encoder: &VectorEncoder, input: &Elements, dimension: usize, dst: &mut [u8]) {
    let rows = Rows::from(input);
    let size = dst.len() / ROWS;
    for (row, out) in dst.chunks_exact_mut(size).enumerate() {
        let part = rows.slice(row * dimension, (row + 1) * dimension);
        let _ = black_box(encoder.encode_fixed_into(part, row as u64, out));
    }
}

/// Bulk and per-row serialization for every fixed-size type and dimension.
fn fixed_size_types(c: &mut Criterion) {
    for element in ["float", "double", "int", "bigint"] {
        let mut group = c.benchmark_group(format!("vector<{element},N> x1000"));
        for dimension in [128, 768, 1536] {
            let encoder = encoder(&format!("vector<{element}, {dimension}>"));
            let input = elements(element, ROWS * dimension);
            let bytes = ROWS * dimension * encoder.element_size().unwrap_or(0);
            let mut dst = vec![0u8; bytes];
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_with_input(BenchmarkId::new("bulk", dimension), &input, |b, input| {
                b.iter(|| encoder.encode_fixed_into(Rows::from(input), 0, &mut dst))
            });
            group.bench_with_input(
                BenchmarkId::new("per row", dimension),
                &input,
                |b, input| b.iter(|| per_row(&encoder, input, dimension, &mut dst)),
            );
        }
        group.finish();
    }
}

/// vector<smallint, 768> (vint-prefixed elements) from int16 input.
fn variable_size(c: &mut Criterion) {
    let dimension = 768;
    let encoder = encoder("vector<smallint, 768>");
    let input = elements("smallint", ROWS * dimension);
    let mut group = c.benchmark_group("vector<smallint,768> x1000");
    // Each element is a 1-byte length then 2 bytes.
    group.throughput(Throughput::Bytes((ROWS * dimension * 3) as u64));
    let mut out = Vec::new();
    group.bench_function("bulk", |b| {
        b.iter(|| {
            out.clear();
            encoder.encode_rows(Rows::from(black_box(&input)), 0, &mut out)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = float_768_against_memcpy, fixed_size_types, variable_size
}
criterion_main!(benches);
