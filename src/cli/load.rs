//! `cqlwire load`: a dataset (Parquet, Arrow, NPY, ANN formats, HDF5) into a live Cassandra/ScyllaDB table.
//!
//! A thin face over [`cqlwire_client`]: the arguments become library options, the password comes from
//! the environment or a prompt, and this file adds Ctrl-C, the progress bar, the rejects file and the
//! summary line.

use super::connection::{engine_error, Connection};
use super::input::InputArgs;
use super::live::{self, Threads};
use super::progress::{self, Unit};
use super::util::{amount, counted};
use super::CliError;
use crate::messages;
use cqlwire_client::{
    parse_rename, LoadErrorKind, LoadJob, LoadReport, LoadSource, RejectSink, RunControl,
};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # A VectorDBBench-shaped Parquet file (id int64, emb list<float>) into ks.docs (id bigint
  # PRIMARY KEY, emb vector<float, 128>): columns map by name.
  cqlwire load train.parquet --hosts 10.0.0.1,10.0.0.2 --table ks.docs

  # The vector column has another name in the table; rejected rows listed in a file:
  cqlwire load train.parquet --hosts db1 --table ks.docs --map emb=embedding --rejects rejects.csv

  # An .npy file has no ids: each row's number goes to the key column.
  cqlwire load base.npy --hosts db1 --table ks.vectors --row-number-column id

  # Four machines, a quarter each (row numbers stay global, so shards never collide):
  cqlwire load base.fbin --hosts db1 --table ks.vectors --row-number-column id --shard 2/4

  # Rows of the same replicas in UNLOGGED batches of up to 16 rows (and the server's size bound):
  cqlwire load train.parquet --hosts db1 --table ks.docs --batch 16

  # Resume after a failure, from the row the summary named:
  cqlwire load base.fbin --hosts db1 --table ks.vectors --row-number-column id --rows 412000..

  # Full control of the statement, and a login (password from CQLWIRE_PASSWORD or a prompt):
  cqlwire load train.parquet --hosts db1 --table ks.docs --username loader --tls --tls-ca ca.pem \\
      --query 'INSERT INTO ks.docs (id, emb) VALUES (?, ?) USING TTL 86400'

Every value is converted from the input's type to the type the server reports for its column, \
never through text, with convert's checked casts. A row whose value cannot be converted, or that the \
server refuses, goes to --rejects (standard error when not given) and the rest load; exit code 1 \
when any row was rejected. Timeouts, overload and unavailability are retried with backoff. Ctrl-C \
stops reading, waits for the rows in flight and says where to resume.";

/// Arguments of `cqlwire load`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
#[command(mut_arg("rows", |rows| rows.help(
    "Load rows START..END only (0-based, END exclusive); row numbers stay those of the whole input"
)))]
#[command(mut_arg("shard", |shard| shard.help(
    "Load the K-th of N contiguous, balanced parts (1 ≤ K ≤ N)"
)))]
pub struct Args {
    /// Input file: Parquet, Arrow IPC, .npy, fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin (`-` or none:
    /// standard input, which needs --input-format or magic bytes).
    pub input: Option<PathBuf>,
    /// The cluster and the table.
    #[command(flatten)]
    pub connection: Connection,
    /// Rename input columns: INPUT=COLUMN,… (INPUT= leaves that input column out); repeatable.
    #[arg(long, value_name = "IN=COL,...", value_delimiter = ',', value_parser = parse_rename)]
    pub map: Vec<(String, String)>,
    /// The statement to prepare instead of the INSERT of the mapped columns, e.g.
    /// "INSERT INTO ks.t (id, v) VALUES (?, ?) USING TTL 86400"; its markers take input columns by name.
    #[arg(long, value_name = "STATEMENT")]
    pub query: Option<String>,
    /// The column that receives each row's number in the whole input (for inputs without ids).
    #[arg(long, value_name = "COLUMN")]
    pub row_number_column: Option<String>,
    /// Which vectors of the input are read.
    #[command(flatten)]
    pub input_args: InputArgs,
    /// Requests in flight [default: adaptive, growing while latency holds and backing off on
    /// overload and timeouts].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=LoadJob::MAX_CONCURRENCY as i64))]
    pub concurrency: Option<u32>,
    /// Rows a request may carry: more than 1 sends rows whose partitions share their replicas in
    /// UNLOGGED batches of up to ROWS rows (at most 1024), each row still acknowledged or rejected alone [default: 1].
    #[arg(long, value_name = "ROWS")]
    pub batch: Option<u64>,
    /// The bound of a batch's size as the server counts it (values and about 16 bytes a value)
    /// [default: the server's batch_size_fail_threshold, or 51200 when it does not say]; a bound
    /// above the server's threshold is lowered to it.
    #[arg(long, value_name = "BYTES")]
    pub batch_bytes: Option<u64>,
    /// Write rejected rows here as CSV (row,key,error) [default: standard error].
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,
    /// Read, convert, map and check every row against the prepared statement; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Rejected rows as lines on standard error, when no `--rejects` file is given.
struct StderrRejects;

impl RejectSink for StderrRejects {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        let error = crate::display::visible(error);
        let key = crate::display::visible(key);
        messages::try_line(format_args!("cqlwire: rejected row {row} ({key}): {error}"))
    }
}

/// Runs `cqlwire load`.
pub fn run(args: Args) -> Result<(), CliError> {
    let job = LoadJob {
        map: args.map.clone(),
        query: args.query.clone(),
        row_number_column: args.row_number_column.clone(),
        concurrency: args.concurrency.map(u64::from),
        batch: args.batch,
        batch_bytes: args.batch_bytes,
        rejects: args.rejects.clone(),
        dry_run: args.dry_run,
        ..LoadJob::new(LoadSource::File {
            path: args.input.clone(),
            format: args.input_args.input_format,
            column: args.input_args.column.clone(),
            dataset: args.input_args.dataset.clone(),
            rows: args.input_args.rows.clone(),
            shard: args.input_args.shard,
        })
    };
    job.check().map_err(engine_error)?;
    let session = args.connection.options()?;
    let control = RunControl::default();
    let runtime = live::runtime(Threads::All, &control.stop)?;
    let prepared = runtime
        .block_on(job.prepare(session))
        .map_err(engine_error)?;
    let bar = progress::bar(prepared.rows(), Unit::Rows, args.quiet);
    let selection_end = prepared.selection_end();
    let mut stderr = StderrRejects;
    let also: Option<&mut dyn RejectSink> = match args.rejects {
        Some(_) => None,
        None => Some(&mut stderr),
    };
    let result = runtime.block_on(async {
        let ticker = live::watch(&control, &bar, |now| {
            format!(
                "{:.1} MB  {} in flight  {} rejected  {} retries",
                now.bytes as f64 / 1e6,
                now.in_flight,
                now.rejected,
                now.retried
            )
        });
        let result = prepared.run(&control, also).await;
        ticker.abort();
        result
    });
    bar.finish_and_clear();
    let stopped = control.stop.load(Ordering::Relaxed);
    let hint = |report: &LoadReport| resume_hint(report, selection_end);
    let report = match &result {
        Ok(report) => Some(report),
        Err(error) => error.report(),
    };
    if let (Some(report), false) = (report, args.quiet) {
        summary(report, args.dry_run);
    }
    match result {
        Ok(report) if stopped => Err(CliError::data(format!("interrupted{}", hint(&report)))),
        Ok(report) if report.rejected > 0 => Err(CliError::data(format!(
            "{} rows rejected (listed in {})",
            report.rejected,
            args.rejects
                .as_ref()
                .map_or("standard error".to_owned(), |p| p.display().to_string())
        ))),
        Ok(_) => Ok(()),
        Err(error) => {
            let report = error.report();
            let before = if error.kind() == LoadErrorKind::Input && report.is_some() {
                "; the rows before it are loaded or listed as rejected"
            } else {
                ""
            };
            let hint = report.map(hint).unwrap_or_default();
            Err(CliError::data(format!("{}{before}{hint}", error.message())))
        }
    }
}

/// `; N rows confirmed; resume with --rows R..E` when the run did not finish (`E`, the end of the
/// selection, when `--rows` or `--shard` set one).
fn resume_hint(report: &LoadReport, end: Option<u64>) -> String {
    match report.resume_from {
        Some(row) => format!(
            "; {} rows confirmed; resume with --rows {row}..{}",
            report.written,
            end.map_or(String::new(), |end| end.to_string())
        ),
        None => String::new(),
    }
}

/// The one-line summary on standard error.
fn summary(report: &LoadReport, dry_run: bool) {
    let seconds = report.elapsed.as_secs_f64();
    let verb = if dry_run { "checked" } else { "loaded" };
    messages::line(format_args!(
        "cqlwire: {verb} {} ({}) in {seconds:.2} s, {:.0} rows/s, {} retries, {} rejected",
        counted(report.written, "row"),
        amount(report.bytes),
        report.rows_per_second(),
        report.retried,
        report.rejected,
    ));
}
