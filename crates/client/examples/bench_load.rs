//! Loads ROWS rows of `vector<float, 768>` (bytes made before the clock starts) into a fresh table
//! `cqlwire_bench.vectors (id bigint PRIMARY KEY, v vector<float, 768>)` at a fixed concurrency and
//! prints rows per second; run it under `/usr/bin/time` for the client's CPU seconds and peak RSS:
//!
//! ```text
//! scripts/cassandra.sh start
//! cargo build --release -p cqlwire-client --example bench_load
//! /usr/bin/time -v target/release/examples/bench_load 127.0.0.1:9042 100000 100
//! scripts/cassandra.sh stop
//! ```
//!
//! Arguments: `HOST:PORT ROWS CONCURRENCY` (defaults 127.0.0.1:9042, 100000, 100; concurrency 0 is the
//! adaptive default); the server must not require a login.

use std::time::{Duration, Instant};

use bytes::Bytes;
use cqlwire_client::{
    Concurrency, Host, LoadOptions, Loader, Reject, Row, RunControl, SessionOptions, Value,
};
use scylla::client::session_builder::SessionBuilder;

const DIMENSIONS: usize = 768;
const BATCH: usize = 1000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let host = args.first().map_or("127.0.0.1:9042", String::as_str);
    let rows: u64 = args.get(1).map_or(Ok(100_000), |a| a.parse())?;
    let concurrency: usize = args.get(2).map_or(Ok(100), |a| a.parse())?;

    let admin = SessionBuilder::new().known_node(host).build().await?;
    admin
        .query_unpaged(
            "CREATE KEYSPACE IF NOT EXISTS cqlwire_bench WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            (),
        )
        .await?;
    admin
        .query_unpaged("DROP TABLE IF EXISTS cqlwire_bench.vectors", ())
        .await?;
    admin
        .query_unpaged(
            "CREATE TABLE cqlwire_bench.vectors (id bigint PRIMARY KEY, v vector<float, 768>)",
            (),
        )
        .await?;
    drop(admin);

    let mut options = LoadOptions::new(SessionOptions::new(
        Host::parse_list(host)?,
        "cqlwire_bench",
        "vectors",
    ));
    if concurrency > 0 {
        options.concurrency = Concurrency::Fixed(concurrency);
    }
    let loader = Loader::connect(options).await?;
    let types: Vec<_> = loader
        .bind_markers()
        .iter()
        .map(|m| m.cql_type.clone())
        .collect();

    // The converted input, made as the load goes (its CPU is in the client's time, ~0.2 s per 100k
    // rows): one buffer per batch of 1000 vectors, each row a slice of it.
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        for start in (0..rows).step_by(BATCH) {
            let end = (start + BATCH as u64).min(rows);
            if sender.send(make_batch(&types, start..end)).await.is_err() {
                return;
            }
        }
    });
    let started = Instant::now();
    let mut rejects = Vec::<Reject>::new();
    let control = RunControl::default();
    let report = loader.run(receiver, 0, &mut rejects, &control).await?;
    let seconds = started
        .elapsed()
        .max(Duration::from_micros(1))
        .as_secs_f64();
    println!(
        "{} rows ({} rejected, {} retries) of vector<float, {DIMENSIONS}> in {seconds:.2} s: \
         {:.0} rows/s at concurrency {concurrency} (window at the end: {})",
        report.written,
        report.rejected,
        report.retried,
        report.written as f64 / seconds,
        control.progress.snapshot().window
    );
    Ok(())
}

fn make_batch(types: &[cqlwire_client::ServerType], rows: std::ops::Range<u64>) -> Vec<Row> {
    let mut buffer = Vec::with_capacity((rows.end - rows.start) as usize * DIMENSIONS * 4);
    for n in rows.clone() {
        for i in 0..DIMENSIONS {
            buffer.extend_from_slice(&((n as f32) * 0.001 + i as f32).to_be_bytes());
        }
    }
    let buffer = Bytes::from(buffer);
    rows.clone()
        .map(|n| {
            let offset = (n - rows.start) as usize * DIMENSIONS * 4;
            Row {
                number: n,
                key: n.to_string(),
                values: vec![
                    Value::new(types[0].clone(), (n as i64).to_be_bytes().to_vec()),
                    Value::new(
                        types[1].clone(),
                        buffer.slice(offset..offset + DIMENSIONS * 4),
                    ),
                ],
            }
        })
        .collect()
}
