//! The ScyllaDB Rust driver alone, as a plain exporter would use it: pages through
//! `SELECT id, emb FROM KS.TABLE` (one query, PAGE rows a page) and deserializes each row as
//! `(i64, Vec<f32>)`, keeping the vectors' floats in one growing buffer. It shows what the driver
//! costs without cqlwire's range scan and Arrow decoding; `benches/compare/unload.py` runs it beside
//! `cqlwire unload` on the same table:
//!
//! ```text
//! cargo build --release -p cqlwire-client --example bench_unload_driver
//! target/release/examples/bench_unload_driver 127.0.0.1:9042 ks.table 5000
//! ```
//!
//! Prints one line: rows, seconds and rows per second from the first request to the last row. The
//! server must not require a login.

use std::time::Instant;

use futures::stream::StreamExt;
use scylla::client::session_builder::SessionBuilder;
use scylla::statement::unprepared::Statement;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [host, table, page] = args.as_slice() else {
        return Err("usage: bench_unload_driver HOST:PORT KS.TABLE PAGE_ROWS".into());
    };
    let session = SessionBuilder::new().known_node(host).build().await?;
    let mut select = Statement::new(format!("SELECT id, emb FROM {table}"));
    select.set_page_size(page.parse()?);

    let started = Instant::now();
    let mut rows = session
        .query_iter(select, ())
        .await?
        .rows_stream::<(i64, Vec<f32>)>()?;
    let mut ids = Vec::new();
    let mut floats = Vec::new();
    while let Some(row) = rows.next().await {
        let (id, emb) = row?;
        ids.push(id);
        floats.extend_from_slice(&emb);
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} rows in {seconds:.2} s: {:.0} rows/s ({} floats)",
        ids.len(),
        ids.len() as f64 / seconds,
        floats.len()
    );
    Ok(())
}
