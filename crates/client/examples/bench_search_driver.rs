//! The ScyllaDB Rust driver alone, as a plain ANN client would use it: reads the query vectors of
//! an `.npy` file, binds each as a `Vec<f32>` to a prepared
//! `SELECT id FROM ks.t ORDER BY emb ANN OF ? LIMIT k` at `LOCAL_ONE` (the driver serializes the
//! floats itself) and keeps CONCURRENCY queries in flight; `benches/compare/search.py` runs it beside
//! `cqlwire search` on the same table and queries:
//!
//! ```text
//! cargo build --release -p cqlwire-client --example bench_search_driver
//! target/release/examples/bench_search_driver QUERIES.npy 127.0.0.1:9042 ks.table K CONCURRENCY ANSWERS
//! ```
//!
//! Writes the ids returned for each query, one line per query in query order, to ANSWERS, and
//! prints one line: queries, seconds, queries per second and latency percentiles (nearest rank) from
//! the first query to the last answer. The server must not require a login.

use std::io::Write;
use std::time::{Duration, Instant};

use cqlwire_vector::input::{self, Elements, InputOptions, RowSelection};
use futures::stream::{FuturesUnordered, StreamExt};
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::Consistency;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, host, table, k, concurrency, answers] = args.as_slice() else {
        return Err(
            "usage: bench_search_driver QUERIES.npy HOST:PORT KS.TABLE K CONCURRENCY ANSWERS"
                .into(),
        );
    };
    let concurrency: usize = concurrency.parse()?;
    let options = InputOptions {
        format: None,
        column: None,
        selection: RowSelection::All,
        batch_rows: 4096,
        dataset: "train".to_string(),
        vectors_optional: false,
    };
    let mut reader = input::open(Some(path.as_ref()), &options)?;
    let dimension = reader.dimension();
    let mut queries: Vec<Vec<f32>> = Vec::new();
    while let Some(batch) = reader.next_batch()? {
        let Elements::F32(floats) = batch.elements else {
            return Err("the queries must be float32".into());
        };
        queries.extend(floats.chunks_exact(dimension).map(<[f32]>::to_vec));
    }

    let session = SessionBuilder::new().known_node(host).build().await?;
    let mut select = session
        .prepare(format!(
            "SELECT id FROM {table} ORDER BY emb ANN OF ? LIMIT {k}"
        ))
        .await?;
    // LOCAL_ONE, as every peer queries: the level Cassandra runs ANN queries at. At the crate's
    // default, LOCAL_QUORUM, the server lowers it and attaches a warning to every answer.
    select.set_consistency(Consistency::LocalOne);
    let started = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    let mut answered: Vec<(usize, Duration, Vec<i64>)> = Vec::with_capacity(queries.len());
    let mut next = queries.iter().enumerate();
    loop {
        while in_flight.len() < concurrency {
            let Some((i, query)) = next.next() else { break };
            let session = &session;
            let select = &select;
            in_flight.push(async move {
                let sent = Instant::now();
                let result = session.execute_unpaged(select, (query.clone(),)).await;
                (i, sent.elapsed(), result)
            });
        }
        let Some((i, latency, result)) = in_flight.next().await else {
            break;
        };
        let rows = result?.into_rows_result()?;
        let ids = rows
            .rows::<(i64,)>()?
            .map(|row| row.map(|(id,)| id))
            .collect::<Result<Vec<_>, _>>()?;
        answered.push((i, latency, ids));
    }
    let seconds = started.elapsed().as_secs_f64();
    answered.sort_by_key(|(i, _, _)| *i);
    let mut out = std::io::BufWriter::new(std::fs::File::create(answers)?);
    for (_, _, ids) in &answered {
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        writeln!(out, "{}", ids.join(" "))?;
    }
    out.flush()?;
    let mut latencies: Vec<Duration> = answered.iter().map(|(_, latency, _)| *latency).collect();
    latencies.sort_unstable();
    let rank = |p: f64| {
        let n = latencies.len();
        let index = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
        latencies
            .get(index)
            .map_or(0.0, |latency| latency.as_secs_f64() * 1e3)
    };
    println!(
        "{} queries in {seconds:.3} s: {:.1} qps at concurrency {concurrency}; latency ms p50 {:.3} \
         p95 {:.3} p99 {:.3} max {:.3}",
        answered.len(),
        answered.len() as f64 / seconds,
        rank(50.0),
        rank(95.0),
        rank(99.0),
        rank(100.0)
    );
    Ok(())
}
