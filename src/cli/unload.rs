//! `cqlwire unload`: a live Cassandra/ScyllaDB table into Parquet, Arrow, NPY, fbin, raw or hex.
//!
//! A thin face over [`cqlwire_client::Unloader`]: the arguments become library options, the chosen
//! format picks the columns read, and this file adds the output files, Ctrl-C, the progress bar and
//! the summary line.

use super::connection::{engine_error, Connection};
use super::progress::{self, Unit};
use super::signals::stop_on_signals;
use super::CliError;
use crate::files::{refuse_same_file, same_destination, Output};
use crate::messages;
use cqlwire_client::{
    IdsFormat, LoadError, LoadErrorKind, UnloadControl, UnloadFormat, UnloadOptions, UnloadReport,
    UnloadWriter, Unloader,
};
use std::path::PathBuf;
use std::time::Duration;

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
  cqlwire unload --hosts db1 --table ks.docs --column emb --format hex --where \"lang = 'en'\"

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
    #[arg(long, value_name = "COLUMN")]
    pub column: Option<String>,
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
            "name another vector column with --column, or unload every column to parquet or arrow"
        };
        return CliError::usage(format!("{} ({choose})", error.message()));
    }
    engine_error(error)
}

/// Runs `cqlwire unload`.
pub fn run(args: Args) -> Result<(), CliError> {
    let format = args
        .format
        .unwrap_or_else(|| UnloadFormat::for_output(crate::files::named(args.output.as_deref())));
    if format.holds_columns() {
        if args.column.is_some() || args.ids.is_some() {
            return Err(CliError::usage(
                "--column and --ids go with the npy, fbin, raw and hex formats; a parquet or arrow \
                 output takes --columns",
            ));
        }
    } else if !args.columns.is_empty() {
        return Err(CliError::usage(
            "--columns goes with the parquet and arrow formats; the npy, fbin, raw and hex formats \
             take one vector column (--column)",
        ));
    }
    if let (Some(ids), output) = (&args.ids, args.output.as_deref()) {
        if same_destination(Some(ids), output) || refuse_same_file(Some(ids), output).is_err() {
            return Err(CliError::usage(
                "the output and the ids file are the same file; name two files",
            ));
        }
    }

    let connection = args.connection.options()?;
    let mut options = UnloadOptions::new(connection);
    options.columns = (!args.columns.is_empty()).then(|| args.columns.clone());
    options.condition = args.condition.clone();
    options.splits = args.split as usize;
    options.concurrency = args.concurrency as usize;
    options.page_rows = args.page_rows.map(|n| n as usize);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::data(format!("cannot start the I/O threads: {e}")))?;
    let vector_format = !format.holds_columns();
    let unloader = runtime
        .block_on(Unloader::connect_with(options, |table, options| {
            if vector_format {
                let ids = args.ids.is_some();
                options
                    .read_vector(table, format, args.column.as_deref(), ids)
                    .map_err(|error| error.into_load_error("--column"))?;
            }
            Ok(())
        }))
        .map_err(|error| unload_error(error, format))?;

    // The signals are the run's before the outputs are opened (see `stop_on_signals`).
    let control = UnloadControl::default();
    {
        let _context = runtime.enter();
        stop_on_signals(control.stop.clone());
    }
    let output = Output::open(args.output.as_deref(), format.is_binary())?.without_sync();
    let ids = match &args.ids {
        Some(path) => Some((
            Output::open(Some(path), true)?.without_sync(),
            IdsFormat::from_extension(path),
        )),
        None => None,
    };
    let writer = UnloadWriter::new(format, &unloader.schema(), output, ids)
        .map_err(|error| unload_error(error.into(), format))?;

    let bar = progress::bar(None, Unit::Rows, args.quiet);
    let ranges = unloader.range_count();
    let (result, written) = runtime.block_on(async {
        let progress = control.progress.clone();
        let ticker_bar = bar.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                ticker_bar.set_position(progress.rows());
                ticker_bar.set_message(format!(
                    "{:.1} MB  {}/{ranges} ranges  {} retries",
                    progress.bytes() as f64 / 1e6,
                    progress.ranges_done(),
                    progress.retried()
                ));
            }
        });
        let outcome = unloader.run_into(writer, &control).await;
        ticker.abort();
        outcome
    });
    bar.finish_and_clear();
    // A write error stopped the scan: it is the cause to report.
    let writer = written?;
    let report = result.map_err(|error| match error.kind() {
        LoadErrorKind::Stopped => match crate::files::named(args.output.as_deref()) {
            Some(path) => CliError::data(format!(
                "interrupted; no output written ({} left as it was)",
                path.display()
            )),
            None => CliError::data(
                "interrupted; what standard output received is incomplete (write to a file \
                 with -o for an output that appears only when whole)",
            ),
        },
        _ => unload_error(error, format),
    })?;
    let skipped = writer.skipped();
    let (output, ids) = writer.finish()?;
    if let Some(ids) = ids {
        ids.commit()?;
    }
    output.commit()?;
    if !args.quiet {
        summary(&report, skipped);
    }
    Ok(())
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
