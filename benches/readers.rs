//! Input reader throughput on a generated 20,000 × 768 `float32` dataset (61 MB), as NPY and as a
//! snappy Parquet `list<float>` file, beside a plain sequential read of the NPY file (what `cat`
//! does) as the baseline; then `cqlwire convert` end to end (the release binary as a whole process)
//! on the same two files to a raw output file. Throughput is in input-file bytes.
//!
//! Run: `cargo bench --bench readers`.

use arrow_array::{ArrayRef, Float32Array, ListArray, RecordBatch};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema};
use cqlwire_vector::input::{self, InputOptions, RowSelection};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const ROWS: usize = 20_000;
const DIMENSION: usize = 768;

/// Deterministic pseudo-random floats in [-1, 1).
fn values() -> Vec<f32> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..ROWS * DIMENSION)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn write_npy(path: &Path, values: &[f32]) {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({ROWS}, {DIMENSION}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut file = File::create(path).unwrap();
    file.write_all(b"\x93NUMPY\x01\x00").unwrap();
    file.write_all(&(header.len() as u16).to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    file.write_all(&bytes).unwrap();
}

fn write_parquet(path: &Path, values: &[f32]) {
    let item = Arc::new(Field::new("element", DataType::Float32, true));
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(DIMENSION, ROWS));
    let list = ListArray::new(
        item.clone(),
        offsets,
        Arc::new(Float32Array::from(values.to_vec())),
        None,
    );
    let schema = Arc::new(Schema::new(vec![Field::new(
        "emb",
        DataType::List(item),
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(list) as ArrayRef]).unwrap();
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(2_000))
        .build();
    let mut writer =
        ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Reads every batch, recycling each batch's memory; returns the number of elements (so nothing
/// is optimised away).
fn read_all(path: &Path, batch_rows: usize) -> usize {
    let options = InputOptions {
        format: None,
        column: None,
        dataset: "train".to_string(),
        selection: RowSelection::All,
        batch_rows,
        vectors_optional: false,
    };
    let mut reader = input::open(Some(path), &options).unwrap();
    let mut elements = 0;
    while let Some(batch) = reader.next_batch().unwrap() {
        elements += batch.elements.len();
        // As the converter does: give the memory back for the next batch.
        reader.recycle(batch.elements);
    }
    elements
}

/// A sequential read of the whole file through an 8 MiB buffer: the `cat` baseline.
fn read_plain(path: &Path) -> usize {
    let mut file = File::open(path).unwrap();
    let mut buffer = vec![0u8; 8 << 20];
    let mut total = 0;
    loop {
        let n = file.read(&mut buffer).unwrap();
        if n == 0 {
            return total;
        }
        total += n;
    }
}

fn readers(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("bench.npy");
    let parquet = dir.path().join("bench.parquet");
    let values = values();
    write_npy(&npy, &values);
    write_parquet(&parquet, &values);
    drop(values);

    let mut group = c.benchmark_group("readers");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    let npy_bytes = std::fs::metadata(&npy).unwrap().len();
    group.throughput(Throughput::Bytes(npy_bytes));
    group.bench_function("plain read (cat baseline), 20k x 768 f32", |b| {
        b.iter(|| read_plain(&npy))
    });
    group.bench_function("npy, 20k x 768 f32", |b| b.iter(|| read_all(&npy, 2730)));
    let parquet_bytes = std::fs::metadata(&parquet).unwrap().len();
    group.throughput(Throughput::Bytes(parquet_bytes));
    group.bench_function("parquet snappy list<float>, 20k x 768", |b| {
        b.iter(|| read_all(&parquet, 2000))
    });
    group.finish();

    let mut group = c.benchmark_group("convert end to end");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    let output = dir.path().join("out.bin");
    for (name, input, bytes) in [
        ("npy -> raw, 20k x 768 f32", &npy, npy_bytes),
        ("parquet -> raw, 20k x 768 f32", &parquet, parquet_bytes),
    ] {
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(name, |b| b.iter(|| convert(input, &output)));
    }
    group.finish();
}

/// Runs the built binary: `cqlwire convert INPUT -o OUTPUT --quiet`.
fn convert(input: &Path, output: &Path) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_cqlwire"))
        .arg("convert")
        .arg(input)
        .arg("-o")
        .arg(output)
        .arg("--quiet")
        .status()
        .unwrap();
    assert!(status.success());
}

criterion_group!(benches, readers);
criterion_main!(benches);
