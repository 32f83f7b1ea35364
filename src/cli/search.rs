//! `cqlwire search`: a query set's ANN queries on a live table, with recall@k against ground truth,
//! queries per second and latency percentiles.
//!
//! A thin face over [`cqlwire_client::SearchJob`]: the arguments become the job and its options
//! (the connection flags are `load`'s, the ground truth a [`cqlwire_client::GroundTruth`]), and
//! this file adds the progress display, the signals and the summary.

use super::connection::{engine_error as load_error, Connection};
use super::input::parse_input_format;
use super::live::{self, Threads};
use super::progress::{self, Unit};
use super::CliError;
use crate::messages;
use cqlwire_client::{
    GroundTruth, QuerySource, RunControl, SearchError, SearchJob, SearchObserver, SearchOptions,
    SearchReport, VectorIndex, DISTINCT_WARNINGS,
};
use cqlwire_vector::input::{parse_rows, InputFormat};
use indicatif::ProgressBar;
use serde_json::json;
use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # A VectorDBBench-style run: load the training set, index it, query it, read the recall.
  cqlwire load train.fbin --hosts db1 --table ks.vectors --row-number-column id
  cqlsh db1 -e \"CREATE CUSTOM INDEX ON ks.vectors(emb) USING 'StorageAttachedIndex' \\
      WITH OPTIONS = {'similarity_function': 'euclidean'}\"
  cqlwire search query.fbin --hosts db1 --table ks.vectors --ground-truth groundtruth.bin \\
      --k 10 --concurrency 16 --warmup 100 --wait-for-index 600

  # SIFT1M (TEXMEX files), 100 neighbours, one JSON object for a script:
  cqlwire search sift_query.fvecs --hosts db1 --table ks.sift --ground-truth sift_groundtruth.ivecs \\
      --k 100 --format json

  # No ground truth file: compute it by brute force over the training set, with the index's
  # similarity function, and keep every query's answer for plotting:
  cqlwire search queries.npy --hosts db1 --table ks.docs --exact train.npy --results answers.csv

  # A VectorDBBench dataset folder loaded with its ids: its test queries and neighbors.parquet
  cqlwire search cohere/test.parquet --hosts db1 --table ks.cohere \\
      --ground-truth cohere/neighbors.parquet --k 100

Output: the summary on standard output (text, or one JSON object with --format json: queries, k, \
recall, recall_min, qps, latency_ms {p50, p95, p99, max}, concurrency, errors, warnings, and \
index_wait_s with --wait-for-index, interrupted when a signal stopped the run); progress on standard \
error. recall@k of a query is the number of its first \
k ground-truth ids among the keys returned, over k (ids are compared, not distances: a row as near \
as the k-th true neighbour but not listed counts as a miss); recall is its mean over the answered \
queries. A failed query (a timeout too) is counted in errors and the run goes on; exit code 1 when \
any failed.";

/// Arguments of `cqlwire search`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The query vectors: .npy, fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin, Parquet, Arrow.
    pub queries: PathBuf,
    #[command(flatten)]
    pub connection: Connection,
    /// The vector column searched [default: the table's only vector column].
    #[arg(long, value_name = "COL", visible_alias = "column")]
    pub vector_column: Option<String>,
    /// The column returned for each row, compared with the ground truth's ids [default: the
    /// partition key].
    #[arg(long, value_name = "COL")]
    pub key: Option<String>,
    /// Neighbours asked of each query (LIMIT), and the k of recall@k.
    #[arg(long, value_name = "K", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=SearchOptions::MAX_K as i64))]
    pub k: u32,
    /// Ground truth: big-ann-benchmarks binary (u32 n, u32 k, u32 ids, f32 distances), .ivecs, an
    /// integer .npy, an HDF5 file's `neighbors`, or VectorDBBench's neighbors.parquet (its
    /// `neighbors_id` lists); ids are the keys the table holds: training row numbers (load
    /// --row-number-column), or the `id` values of VectorDBBench's train files.
    #[arg(long, value_name = "FILE", conflicts_with = "exact")]
    pub ground_truth: Option<PathBuf>,
    /// Compute the ground truth by brute force over this training file, with the index's similarity
    /// function; ids are its row numbers. One file, not a VectorDBBench folder (whose ground truth
    /// is its neighbors.parquet).
    #[arg(long, value_name = "TRAIN")]
    pub exact: Option<PathBuf>,
    /// The dataset of an HDF5 query file (ann-benchmarks' layout: train, test, neighbors,
    /// distances); its `neighbors` dataset is the ground truth unless --ground-truth or --exact.
    #[arg(long, value_name = "NAME", default_value = "test")]
    pub dataset: String,
    /// Input format of the queries [default: from the extension, else the magic bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// The vector column of a Parquet or Arrow query file.
    #[arg(long, value_name = "NAME")]
    pub input_column: Option<String>,
    /// Run queries START..END of the file only (0-based, END exclusive; the ground truth's rows
    /// follow the query numbers).
    #[arg(long = "queries", id = "queries_range", value_name = "START..END", value_parser = parse_rows)]
    pub queries_range: Option<Range<u64>>,
    /// A CQL condition added to the query as WHERE, e.g. "category = 'books'".
    #[arg(long = "where", value_name = "PREDICATE")]
    pub predicate: Option<String>,
    /// Queries in flight at once.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=SearchOptions::MAX_CONCURRENCY as i64))]
    pub concurrency: u32,
    /// Queries sent first and not measured (the query set is cycled).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warmup: u32,
    /// Send the first query until it is answered, at most this long, and report the wait (a new
    /// index answers only once it is built).
    #[arg(long, value_name = "SECONDS")]
    pub wait_for_index: Option<u64>,
    /// Write one CSV line per query here: query,latency_ms,recall,keys,error.
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Summary format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = ["text", "json"])]
    pub format: String,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs `cqlwire search`.
pub fn run(args: Args) -> Result<(), CliError> {
    let ground_truth = GroundTruth::choose(
        args.ground_truth.clone(),
        args.exact.clone(),
        Some(&args.queries),
        args.input_format,
    );
    let job = SearchJob {
        queries: QuerySource::File {
            path: args.queries.clone(),
            format: args.input_format,
            column: args.input_column.clone(),
            rows: args.queries_range.clone(),
            dataset: args.dataset.clone(),
        },
        ground_truth,
        wait_for_index: args.wait_for_index.map(Duration::from_secs),
        results: args.results.clone(),
    };
    job.check().map_err(search_error)?;
    let mut options =
        SearchOptions::from_settings(&args.connection.settings()?).map_err(load_error)?;
    options.column = args.vector_column.clone();
    options.key = args.key.clone();
    options.k = args.k as usize;
    options.predicate = args.predicate.clone();
    options.concurrency = args.concurrency as usize;
    options.warmup = args.warmup as usize;

    let control = RunControl::default();
    let runtime = live::runtime(Threads::One, &control.stop)?;
    let display = Display::new(&control, args.quiet);
    let outcome = runtime
        .block_on(job.run(options, &control, &display))
        .map_err(search_error)?;
    let report = &outcome.report;

    let mut out = messages::Stdout(io::stdout().lock());
    if args.format == "json" {
        writeln!(
            out,
            "{}",
            summary_json(report, outcome.index_wait, outcome.stopped)
        )?;
    } else {
        summary_text(&mut out, report, outcome.index_wait, &outcome.statement)?;
    }
    out.flush()?;
    if outcome.stopped {
        let kept = match &args.results {
            Some(path) => format!(" ({} left as it was)", path.display()),
            None => String::new(),
        };
        return Err(CliError::data(format!(
            "interrupted after {} of {} queries{kept}",
            report.queries, outcome.queries
        )));
    }
    if report.errors > 0 {
        let first = report
            .results
            .iter()
            .find_map(|r| r.error.as_deref())
            .unwrap_or_default();
        return Err(CliError::data(format!(
            "{} of {} queries failed (the first: {first})",
            report.errors, report.queries
        )));
    }
    Ok(())
}

/// The job's error with the exit code it deserves ([`SearchError::is_usage`]).
pub(super) fn search_error(error: SearchError) -> CliError {
    match error {
        SearchError::Search(error) => load_error(error),
        error if error.is_usage() => CliError::usage(error),
        error => CliError::data(error),
    }
}

/// The progress display of a search on standard error: a spinner while a new index builds (which
/// can take minutes), then a bar of the queries answered.
struct Display<'a> {
    control: &'a RunControl,
    quiet: bool,
    /// The spinner or the bar shown, and the task that updates the bar.
    shown: Mutex<Option<(ProgressBar, Option<JoinHandle<()>>)>>,
}

impl<'a> Display<'a> {
    fn new(control: &'a RunControl, quiet: bool) -> Self {
        Display {
            control,
            quiet,
            shown: Mutex::new(None),
        }
    }

    fn show(&self, bar: ProgressBar, ticker: Option<JoinHandle<()>>) {
        if let Ok(mut shown) = self.shown.lock() {
            *shown = Some((bar, ticker));
        }
    }

    fn clear(&self) {
        if let Some((bar, ticker)) = self.shown.lock().ok().and_then(|mut shown| shown.take()) {
            if let Some(ticker) = ticker {
                ticker.abort();
            }
            bar.finish_and_clear();
        }
    }
}

impl SearchObserver for Display<'_> {
    fn waiting_for_index(&self, index: &VectorIndex, timeout: Duration) {
        let waiting = progress::bar(None, Unit::Waiting, self.quiet);
        waiting.set_message(format!(
            "waiting up to {} s for the index {} to answer",
            timeout.as_secs(),
            index.name
        ));
        waiting.enable_steady_tick(Duration::from_millis(200));
        self.show(waiting, None);
    }

    fn index_waited(&self) {
        self.clear();
    }

    fn run_started(&self, queries: usize) {
        let bar = progress::bar(Some(queries as u64), Unit::Queries, self.quiet);
        let ticker = live::watch(self.control, &bar, |now| format!("{} errors", now.rejected));
        self.show(bar, Some(ticker));
    }

    fn run_ended(&self) {
        self.clear();
    }
}

/// Milliseconds of a duration.
fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// The JSON summary: field names scripts depend on (`interrupted` only when the run was stopped).
fn summary_json(
    report: &SearchReport,
    index_wait: Option<Duration>,
    interrupted: bool,
) -> serde_json::Value {
    let mut summary = json!({
        "queries": report.queries,
        "k": report.k,
        "recall": report.recall,
        "recall_min": report.recall_min,
        "qps": report.qps,
        "latency_ms": {
            "p50": ms(report.latency.p50),
            "p95": ms(report.latency.p95),
            "p99": ms(report.latency.p99),
            "max": ms(report.latency.max),
        },
        "concurrency": report.concurrency,
        "errors": report.errors,
        "warnings": report.warnings.iter().map(|warning| json!({
            "message": warning.message,
            "queries": warning.queries,
        })).collect::<Vec<_>>(),
    });
    if let Some(object) = summary.as_object_mut() {
        if report.other_warnings > 0 {
            object.insert("other_warnings".into(), json!(report.other_warnings));
        }
        if let Some(wait) = index_wait {
            object.insert("index_wait_s".into(), json!(wait.as_secs_f64()));
        }
        if interrupted {
            object.insert("interrupted".into(), json!(true));
        }
    }
    summary
}

/// The text summary.
fn summary_text(
    out: &mut dyn Write,
    report: &SearchReport,
    index_wait: Option<Duration>,
    statement: &str,
) -> io::Result<()> {
    writeln!(out, "query      {statement}")?;
    if let Some(wait) = index_wait {
        writeln!(out, "index      answered after {:.1} s", wait.as_secs_f64())?;
    }
    writeln!(
        out,
        "queries    {} at concurrency {}, {} errors, {:.2} s",
        report.queries,
        report.concurrency,
        report.errors,
        report.elapsed.as_secs_f64()
    )?;
    if let (Some(mean), Some(min)) = (report.recall, report.recall_min) {
        writeln!(
            out,
            "recall@{:<3} {mean:.4} (worst query {min:.4})",
            report.k
        )?;
    }
    writeln!(out, "qps        {:.1}", report.qps)?;
    let l = &report.latency;
    writeln!(
        out,
        "latency    p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(l.p50),
        ms(l.p95),
        ms(l.p99),
        ms(l.max)
    )?;
    for warning in &report.warnings {
        // Quoted with escapes: the text is the server's.
        writeln!(
            out,
            "warning    on {} of {} answers, the server said: {:?}",
            warning.queries, report.queries, warning.message
        )?;
    }
    if report.other_warnings > 0 {
        writeln!(
            out,
            "warning    {} more, of texts beyond the first {DISTINCT_WARNINGS}",
            report.other_warnings
        )?;
    }
    Ok(())
}
