//! The text summaries of a bench run, VectorDBBench's metrics in its names: what `cqlwire bench`
//! prints on standard output without `--format json`.

use std::io::{self, Write};

use crate::case::{CaseOptions, CaseReport, Stage};
use crate::job::{BenchJob, JobCase};
use crate::streaming::StreamingReport;

impl BenchJob {
    /// The summary of `cases` (a case per value set of the sweep): each case's summary, with its
    /// value set and its loads' spread, then the sweep's table.
    pub fn write_text_summary(&self, out: &mut impl Write, cases: &[JobCase]) -> io::Result<()> {
        for case in cases {
            if !case.point.0.is_empty() {
                writeln!(out, "sweep: {}", case.point)?;
            }
            case_summary(out, &case.report, &case.options, &self.dataset.name())?;
            if let Some(line) = case.loads_line() {
                writeln!(out, "{line}")?;
            }
        }
        if !self.sweep.is_empty() {
            sweep_table(out, cases)?;
        }
        Ok(())
    }
}

/// A sweep's cases side by side: each value set's recall, NDCG, serial p99 and highest QPS.
pub fn sweep_table(out: &mut impl Write, cases: &[JobCase]) -> io::Result<()> {
    let width = cases
        .iter()
        .map(|case| case.point.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    writeln!(
        out,
        "{:<width$}  {:>7}  {:>7}  {:>10}  {:>10}",
        "value set", "recall", "ndcg", "p99 ms", "qps"
    )?;
    for case in cases {
        let serial = case.report.serial.as_ref();
        writeln!(
            out,
            "{:<width$}  {:>7.4}  {:>7.4}  {:>10.2}  {:>10.1}",
            case.point.to_string(),
            serial.map_or(0.0, |s| s.recall),
            serial.map_or(0.0, |s| s.ndcg),
            serial.map_or(0.0, |s| s.latency_p99 * 1e3),
            crate::metrics::max_qps(&case.report.levels)
        )?;
    }
    Ok(())
}

/// The text summary, VectorDBBench's metrics in its names.
pub fn case_summary(
    out: &mut impl Write,
    report: &CaseReport,
    options: &CaseOptions,
    dataset: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "{} on {}, table {}.{}, k = {}",
        dataset, report.server, options.connection.keyspace, options.connection.table, options.k
    )?;
    if let Some(streaming) = &report.streaming {
        return streaming_summary(out, report, streaming);
    }
    let has = |stage| report.stages.contains(&stage);
    if has(Stage::Load) || has(Stage::Optimize) {
        writeln!(
            out,
            "load_duration {:.2} s: insert_duration {:.2} s ({} rows), optimize_duration {:.2} s",
            report.insert_duration + report.optimize_duration,
            report.insert_duration,
            report.rows,
            report.optimize_duration
        )?;
    }
    if let Some(load) = &report.index_first {
        writeln!(out, "load: {load}")?;
    }
    if has(Stage::Index) {
        writeln!(out, "index: {}", report.index)?;
        if !report.filter_index.is_empty() {
            writeln!(out, "filter index: {}", report.filter_index)?;
        }
    }
    if let Some(filter) = &report.filter {
        writeln!(out, "filter: WHERE {filter}")?;
    }
    if let Some(serial) = &report.serial {
        writeln!(
            out,
            "search_serial: recall {:.4}, ndcg {:.4}, serial_latency_p99 {:.4} s, \
             serial_latency_p95 {:.4} s, {} errors",
            serial.recall,
            serial.ndcg,
            serial.latency_p99,
            serial.latency_p95,
            report.serial_errors
        )?;
    }
    if !report.levels.is_empty() {
        writeln!(
            out,
            "{:>11}  {:>10}  {:>9}  {:>9}  {:>9}  {:>6}",
            "concurrency", "qps", "p99 ms", "p95 ms", "avg ms", "errors"
        )?;
        for (level, errors) in report.levels.iter().zip(&report.level_errors) {
            writeln!(
                out,
                "{:>11}  {:>10.1}  {:>9.2}  {:>9.2}  {:>9.2}  {:>6}",
                level.concurrency,
                level.qps,
                level.latency_p99 * 1e3,
                level.latency_p95 * 1e3,
                level.latency_avg * 1e3,
                errors
            )?;
        }
        writeln!(
            out,
            "qps {:.1} (the highest level's)",
            crate::metrics::max_qps(&report.levels)
        )?;
    }
    if let Some(line) = report.spread_line() {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The streaming case's summary: the insert against its rate, the index, then a line per search.
fn streaming_summary(
    out: &mut impl Write,
    report: &CaseReport,
    streaming: &StreamingReport,
) -> io::Result<()> {
    let insert = &streaming.insert;
    writeln!(
        out,
        "insert: {} rows at {} rows/s asked, {:.1} rows/s achieved ({:.3} of the rate); \
         insert_duration {:.2} s (ideal {} s), largest backlog {} rows, {} writes retried, \
         {} rows rejected",
        streaming.rows,
        insert.asked_rate,
        insert.achieved_rate(),
        insert.achieved_rate() / f64::from(insert.asked_rate.max(1)),
        insert.seconds,
        streaming.schedule().ideal_seconds(),
        insert.max_backlog,
        insert.retried,
        insert.rejected
    )?;
    if let Some(rejected) = insert.rejection() {
        writeln!(out, "insert: {rejected}")?;
    }
    write!(out, "index: {}", report.index)?;
    match streaming.index_built {
        Some((rows, seconds)) => writeln!(
            out,
            " (made with {rows} rows in, answering after {seconds:.2} s)"
        )?,
        None => writeln!(out)?,
    }
    if streaming.options.optimize_after_write {
        writeln!(out, "optimize_duration {:.2} s", report.optimize_duration)?;
    }
    writeln!(
        out,
        "{:>5}  {:>8}  {:>8}  {:>6}  {:>6}  {:>8}  {:>9}  {:>6}",
        "stage", "time s", "rows", "recall", "ndcg", "p99 ms", "max qps", "failed"
    )?;
    for search in &streaming.searches {
        let qps = if search.levels.is_empty() {
            "-".to_owned()
        } else {
            format!("{:.1}", crate::metrics::max_qps(&search.levels))
        };
        writeln!(
            out,
            "{:>5}  {:>8.2}  {:>8}  {:>6.4}  {:>6.4}  {:>8.2}  {:>9}  {:>6.4}",
            search.stage,
            search.time,
            search.rows,
            search.serial.recall,
            search.serial.ndcg,
            search.serial.latency_p99 * 1e3,
            qps,
            search.failed_rate
        )?;
    }
    Ok(())
}
