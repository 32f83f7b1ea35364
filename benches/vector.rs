//! Vector serialization benchmarks: the conversion kernel against a plain memcpy of the same bytes,
//! in bulk (1000 rows at once) and per row, for dims 128/768/1536 and float/double/int/bigint; the
//! vint-prefixed element types of fixed width (tinyint, smallint, date, time) next to int on the same
//! int16 input; and the variable-size element types (text, ascii, varint, decimal) next to float on
//! the same float32 input.
//!
//! Run with `cargo bench --bench vector`.

use cqlwire_codec::types::{parse_type, UdtRegistry};
use cqlwire_vector::input::Elements;
use cqlwire_vector::kernel::{Rows, VectorEncoder};
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
        // Small non-negative integers, valid for every integer and date/time element type.
        "int16" => Elements::I16(n.iter().map(|&x| (x % 128) as i16).collect()),
        // Integral floats (for varint).
        "integral" => Elements::F32(n.iter().map(|&x| (x >> 44) as f32 - 524_288.0).collect()),
        _ => Elements::I64(n.iter().map(|&x| x as i64).collect()),
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

/// vector<T, 768> ×1000 for the vint-prefixed types of fixed width, next to int, all from the same
/// int16 input (values 0..=127, valid for every one of them); throughput is output bytes.
fn vint_prefixed(c: &mut Criterion) {
    let dimension = 768;
    let input = elements("int16", ROWS * dimension);
    let mut group = c.benchmark_group("vint-prefixed vector<T,768> x1000");
    for element in ["int", "smallint", "tinyint", "date", "time"] {
        let encoder = encoder(&format!("vector<{element}, {dimension}>"));
        let bytes = ROWS * dimension * encoder.element_size().unwrap_or(0);
        let mut dst = vec![0u8; bytes];
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(element, |b| {
            b.iter(|| encoder.encode_fixed_into(Rows::from(black_box(&input)), 0, &mut dst))
        });
    }
    group.finish();
}

/// vector<T, 768> ×1000 for the variable-size types, next to float, from the same float32 input
/// (integral values for varint); then text and decimal from float64, and varint, decimal and text
/// from int64 (`T from double`, `T from bigint`); throughput is output bytes.
fn variable_size(c: &mut Criterion) {
    let dimension = 768;
    let floats = elements("float", ROWS * dimension);
    let integral = elements("integral", ROWS * dimension);
    let doubles = elements("double", ROWS * dimension);
    let longs = elements("bigint", ROWS * dimension);
    let mut group = c.benchmark_group("variable vector<T,768> x1000");
    let mut out = Vec::new();
    let cases = [
        ("float", "float", &floats),
        ("text", "text", &floats),
        ("ascii", "ascii", &floats),
        ("varint", "varint", &integral),
        ("decimal", "decimal", &floats),
        ("text from double", "text", &doubles),
        ("decimal from double", "decimal", &doubles),
        ("varint from bigint", "varint", &longs),
        ("decimal from bigint", "decimal", &longs),
        ("text from bigint", "text", &longs),
    ];
    for (name, element, input) in cases {
        let encoder = encoder(&format!("vector<{element}, {dimension}>"));
        out.clear();
        encoder
            .encode_rows(Rows::from(input), 0, &mut out)
            .expect("benchmark input converts");
        group.throughput(Throughput::Bytes(out.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                encoder.encode_rows(Rows::from(black_box(input)), 0, &mut out)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = float_768_against_memcpy, fixed_size_types, vint_prefixed, variable_size
}
criterion_main!(benches);
