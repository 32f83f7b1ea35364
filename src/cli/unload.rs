//! `cqlwire unload`: a live Cassandra/ScyllaDB table into Parquet, Arrow, NPY, fbin, raw or hex.
//!
//! A thin face over [`cqlwire_client::UnloadJob`]: the arguments become the job and its options,
//! and this file adds the signals, the progress bar and the summary line.

use super::connection::{engine_error, Connection, Flags};
use super::live::{self, Threads};
use super::progress::{self, Unit};
use super::CliError;
use crate::messages;
use cqlwire_client::{
    LoadError, LoadErrorKind, Setting, SettingNames, UnloadControl, UnloadError, UnloadFormat,
    UnloadJob, UnloadObserver, UnloadOptions, UnloadReport,
};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Mutex;
use tokio::task::JoinHandle;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # Every column of ks.docs into Parquet (typed: bigint → int64, vector<float, 768> →
  # fixed_size_list<float32, 768>, text → utf8, ...):
  cqlwire unload --hosts 10.0.0.1 --table ks.docs -o docs.parquet

  # The vector column as a little-endian float32 .npy, and the partition keys of the same rows:
  cqlwire unload --hosts db1 --table ks.docs -o vectors.npy --ids ids.npy

  # Some columns only, as an Arrow IPC stream, with more ranges read at once:
  cqlwire unload --hosts db1 --table ks.docs --columns id,emb -o docs.arrow --concurrency 16

  # Each vector's CQL value bytes, one 0x... line per row, of the rows that meet a condition:
  cqlwire unload --hosts db1 --table ks.docs --vector-column emb --format hex --where \"lang = 'en'\"

  # Back into another table, byte for byte:
  cqlwire unload --hosts db1 --table ks.docs -o docs.parquet
  cqlwire load docs.parquet --hosts db2 --table ks.docs_copy

The table is read by token range (the ring's ranges, each cut into --split parts), --concurrency \
ranges at a time, each from a replica of its range, paged and retried; rows come out in token \
order. Memory stays bounded by --concurrency × 2 pages of about 4 MiB and a Parquet row group, \
whatever the table size. The output appears only when the whole table is read.";

/// Arguments of `cqlwire unload`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The cluster and the table.
    #[command(flatten)]
    pub connection: Connection,
    /// Output file (`-` or none: standard output; npy and fbin need a file).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// parquet, arrow (every column read), npy, fbin, raw or hex (the vector column) [default:
    /// from the output's extension, else parquet].
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<UnloadFormat>,
    /// The columns of a parquet or arrow output, in order [default: all].
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// The vector column of an npy, fbin, raw or hex output [default: the table's only vector column].
    #[arg(long, value_name = "COLUMN", visible_alias = "column")]
    pub vector_column: Option<String>,
    /// Also write the partition keys of the rows of an npy, fbin, raw or hex output, in the same
    /// order: `.npy` (int64, for one integer key column), else CSV.
    #[arg(long, value_name = "FILE")]
    pub ids: Option<PathBuf>,
    /// Only the rows that meet this CQL condition (added with ALLOW FILTERING).
    #[arg(long = "where", value_name = "CONDITION")]
    pub condition: Option<String>,
    /// Parts each token range of the ring is cut into.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=UnloadOptions::MAX_SPLITS as i64))]
    pub split: u32,
    /// Token ranges read at once.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=UnloadOptions::MAX_CONCURRENCY as i64))]
    pub concurrency: u32,
    /// Rows per page [default: about 4 MiB of rows, from the columns' types].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=UnloadOptions::MAX_PAGE_ROWS as i64))]
    pub page_rows: Option<u32>,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Parses `--format`.
fn parse_format(name: &str) -> Result<UnloadFormat, String> {
    name.parse()
        .map_err(|_| format!("expected parquet, arrow, npy, fbin, raw or hex, not '{name}'"))
}

/// The library's error with the exit code it deserves, and the flag that fixes an unsupported type
/// for `format`.
fn unload_error(error: LoadError, format: UnloadFormat) -> CliError {
    if error.kind() == LoadErrorKind::UnsupportedType {
        let choose = if format.holds_columns() {
            "choose the columns to unload with --columns"
        } else {
            "name another vector column with --vector-column, or unload every column to parquet \
             or arrow"
        };
        return CliError::usage(format!("{} ({choose})", error.message()));
    }
    engine_error(error)
}

/// The job's error with the exit code it deserves ([`UnloadError::is_usage`]); a stopped scan
/// says what became of the output.
fn job_error(error: UnloadError, job: &UnloadJob, format: UnloadFormat) -> CliError {
    match error {
        UnloadError::VectorColumn(error) => unload_error(
            error.into_load_error(&Flags.hint(Setting::VectorColumn)),
            format,
        ),
        UnloadError::Unload(error) => unload_error(error, format),
        UnloadError::Stopped => match crate::files::named(job.output.as_deref()) {
            Some(path) => CliError::data(format!(
                "interrupted; no output written ({} left as it was)",
                path.display()
            )),
            None => CliError::data(
                "interrupted; what standard output received is incomplete (write to a file \
                     with -o for an output that appears only when whole)",
            ),
        },
        UnloadError::OutputOpen(error) => error.into(),
        UnloadError::OutputWrite(error) => error.into(),
        error if error.is_usage() => CliError::usage(error.message(&Flags)),
        other => CliError::data(other),
    }
}

/// Runs `cqlwire unload`.
pub fn run(args: Args) -> Result<(), CliError> {
    let job = UnloadJob {
        output: args.output.clone(),
        format: args.format,
        columns: (!args.columns.is_empty()).then(|| args.columns.clone()),
        column: args.vector_column.clone(),
        ids: args.ids.clone(),
    };
    let format = job
        .check()
        .map_err(|error| job_error(error, &job, job.format()))?;

    let connection = args.connection.options()?;
    let mut options = UnloadOptions::new(connection);
    options.condition = args.condition.clone();
    options.splits = args.split as usize;
    options.concurrency = args.concurrency as usize;
    options.page_rows = args.page_rows.map(|n| n as usize);

    // The signals are the run's before the outputs are opened (see `live::runtime`).
    let control = UnloadControl::default();
    let runtime = live::runtime(Threads::All, &control.stop)?;
    let display = Display::new(&control, args.quiet);
    let outcome = runtime
        .block_on(job.clone().run(options, &control, &display))
        .map_err(|error| job_error(error, &job, format))?;
    if !args.quiet {
        summary(&outcome.report, outcome.skipped);
    }
    Ok(())
}

/// The progress bar of the rows read, on standard error.
struct Display<'a> {
    control: &'a UnloadControl,
    bar: ProgressBar,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

impl<'a> Display<'a> {
    fn new(control: &'a UnloadControl, quiet: bool) -> Self {
        Display {
            control,
            bar: progress::bar(None, Unit::Rows, quiet),
            ticker: Mutex::new(None),
        }
    }
}

impl UnloadObserver for Display<'_> {
    fn scan_started(&self, ranges: usize) {
        let progress = self.control.progress.clone();
        let bar = self.bar.clone();
        let ticker = live::ticker(move || {
            bar.set_position(progress.rows());
            bar.set_message(format!(
                "{:.1} MB  {}/{ranges} ranges  {} retries",
                progress.bytes() as f64 / 1e6,
                progress.ranges_done(),
                progress.retried()
            ));
        });
        if let Ok(mut shown) = self.ticker.lock() {
            *shown = Some(ticker);
        }
    }

    fn scan_ended(&self) {
        if let Some(ticker) = self.ticker.lock().ok().and_then(|mut shown| shown.take()) {
            ticker.abort();
        }
        self.bar.finish_and_clear();
    }
}

/// The one-line summary on standard error.
fn summary(report: &UnloadReport, skipped: u64) {
    let seconds = report.elapsed.as_secs_f64();
    let rows = report.rows - skipped;
    let skipped = if skipped > 0 {
        format!(", {skipped} rows without a vector left out")
    } else {
        String::new()
    };
    messages::line(format_args!(
        "cqlwire: unloaded {rows} rows ({:.1} MB) from {} token ranges in {seconds:.2} s, \
         {:.0} rows/s, {:.1} MB/s, {} retries{skipped}",
        report.bytes as f64 / 1e6,
        report.ranges,
        rows as f64 / seconds.max(1e-9),
        report.bytes as f64 / 1e6 / seconds.max(1e-9),
        report.retried,
    ));
}
