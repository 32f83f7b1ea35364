//! The ScyllaDB Rust driver alone, as a plain loader would use it: reads a Parquet file
//! (`id int64, emb list<float>`), binds each row as `(i64, Vec<f32>)` to a prepared INSERT (the
//! driver serializes the floats itself) and keeps CONCURRENCY requests in flight. It shows what the
//! driver costs without cqlwire's conversion and window; `benches/compare/load.py` runs it beside
//! `cqlwire load` on the same file and table:
//!
//! ```text
//! cargo build --release -p cqlwire-client --example bench_load_driver
//! target/release/examples/bench_load_driver FILE.parquet 127.0.0.1:9042 ks.table 100
//! ```
//!
//! Prints one line: rows, seconds and rows per second from the first request to the last
//! acknowledgement (reading the file included, as it goes). The server must not require a login.

use std::fs::File;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int64Type};
use futures::stream::{FuturesUnordered, StreamExt};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use scylla::client::session_builder::SessionBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, host, table, concurrency] = args.as_slice() else {
        return Err("usage: bench_load_driver FILE.parquet HOST:PORT KS.TABLE CONCURRENCY".into());
    };
    let concurrency: usize = concurrency.parse()?;

    let session = SessionBuilder::new().known_node(host).build().await?;
    let insert = session
        .prepare(format!("INSERT INTO {table} (id, emb) VALUES (?, ?)"))
        .await?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?
        .with_batch_size(1024)
        .build()?;

    let started = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    let mut written = 0u64;
    for batch in reader {
        let batch = batch?;
        let ids = batch
            .column_by_name("id")
            .ok_or("no id column")?
            .as_primitive::<Int64Type>();
        let embeddings = batch
            .column_by_name("emb")
            .ok_or("no emb column")?
            .as_list::<i32>();
        for (row, id) in ids.values().iter().enumerate() {
            let floats = embeddings.value(row);
            let emb: Vec<f32> = floats.as_primitive::<Float32Type>().values().to_vec();
            if in_flight.len() >= concurrency {
                if let Some(done) = in_flight.next().await {
                    let _: scylla::response::query_result::QueryResult = done?;
                    written += 1;
                }
            }
            in_flight.push(session.execute_unpaged(&insert, (*id, emb)));
        }
    }
    while let Some(done) = in_flight.next().await {
        done?;
        written += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{written} rows in {seconds:.2} s: {:.0} rows/s at concurrency {concurrency}",
        written as f64 / seconds
    );
    Ok(())
}
