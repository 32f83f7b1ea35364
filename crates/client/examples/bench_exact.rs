//! Times `cqlwire_client::exact::exact_neighbors` (what `cqlwire search --exact` runs) on a
//! training and a query `.npy`; `benches/compare/search.py --exact` runs it beside NumPy:
//!
//! ```text
//! cargo build --release -p cqlwire-client --example bench_exact
//! target/release/examples/bench_exact TRAIN.npy QUERIES.npy K cosine|dot_product|euclidean ANSWERS
//! ```
//!
//! Writes the neighbour ids of each query (one line per query) to ANSWERS and prints the seconds of
//! the search alone (the queries read before the clock starts; the training file read during it,
//! as the command does).

use std::io::Write;
use std::time::Instant;

use cqlwire_client::exact::{exact_neighbors, Similarity};
use cqlwire_vector::input::{self, Elements, InputOptions, RowSelection};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [train, queries, k, similarity, answers] = args.as_slice() else {
        return Err("usage: bench_exact TRAIN.npy QUERIES.npy K SIMILARITY ANSWERS".into());
    };
    let k: usize = k.parse()?;
    let similarity: Similarity = similarity.parse()?;
    let options = |batch_rows| InputOptions {
        format: None,
        column: None,
        selection: RowSelection::All,
        batch_rows,
        dataset: "train".to_string(),
        vectors_optional: false,
    };
    let mut reader = input::open(Some(queries.as_ref()), &options(4096))?;
    let dimension = reader.dimension();
    let mut floats = Vec::new();
    while let Some(batch) = reader.next_batch()? {
        let Elements::F32(v) = batch.elements else {
            return Err("the queries must be float32".into());
        };
        floats.extend(v);
    }
    let started = Instant::now();
    // Batches of 8 MiB of training vectors, as the command reads them.
    let mut train = input::open(
        Some(train.as_ref()),
        &options(((8 << 20) / (dimension * 4)).max(1)),
    )?;
    let neighbors = exact_neighbors(train.as_mut(), &floats, dimension, k, similarity)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::BufWriter::new(std::fs::File::create(answers)?);
    for row in 0..neighbors.rows() {
        let ids: Vec<String> = neighbors.row(row).iter().map(ToString::to_string).collect();
        writeln!(out, "{}", ids.join(" "))?;
    }
    out.flush()?;
    println!("{} queries in {seconds:.3} s", neighbors.rows());
    Ok(())
}
