//! Draws the charts of VectorDBBench result files:
//! `cargo run -p cqlwire-bench --example charts -- OUTDIR RESULT.json...` writes
//! `OUTDIR/concurrency.svg` (the first file's first case) and `OUTDIR/recall_qps.svg` (every case
//! of every file, with the Pareto frontier).

use cqlwire_bench::chart::{concurrency_chart, recall_qps_chart, Run};
use cqlwire_bench::result::TestResult;
use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: charts OUTDIR RESULT.json...")?);
    let mut runs = Vec::new();
    let mut first = None;
    for file in args {
        let result = TestResult::read(Path::new(&file))?;
        runs.extend(result.results.iter().map(Run::of));
        first = first.or_else(|| result.results.into_iter().next());
    }
    let case = first.ok_or("no case in the files")?;
    let db = &case.task_config.db_config;
    let title = format!("{} {}: QPS and p99 latency", db.db_label, db.version);
    std::fs::write(
        out.join("concurrency.svg"),
        concurrency_chart(&case.metrics, &title)?,
    )?;
    let chart = recall_qps_chart(&runs, "Recall against QPS")?;
    std::fs::write(out.join("recall_qps.svg"), chart)?;
    Ok(())
}
