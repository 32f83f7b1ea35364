//! `cqlwire load`: a dataset (Parquet, Arrow, NPY, ANN formats, HDF5) into a live Cassandra/ScyllaDB table.
//!
//! A thin face over [`cqlwire_load`]: the arguments become library options, the password comes from
//! the environment or a prompt, and this file adds Ctrl-C, the progress bar, the rejects file and the
//! summary line.

use super::convert::{parse_input_format, parse_rows, parse_shard, selection};
use super::progress::{self, Unit};
use super::CliError;
use cqlwire_load::{
    parse_consistency, Concurrency, Credentials, CsvRejects, Dataset, DatasetOptions, Host,
    LoadError, LoadErrorKind, LoadOptions, LoadReport, Loader, Password, RejectSink, Row,
    RunControl, TlsOptions,
};
use cqlwire_vector::input::{InputFormat, InputOptions};
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The environment variable that holds the password of `--username`.
const PASSWORD_VARIABLE: &str = "CQLWIRE_PASSWORD";

/// Rows per input batch handed to the run.
const BATCH_ROWS: usize = 1024;

/// Batches queued between the reader and the run (memory: this many batches of rows).
const QUEUED_BATCHES: usize = 4;

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

  # Resume after a failure, from the row the summary named:
  cqlwire load base.fbin --hosts db1 --table ks.vectors --row-number-column id --rows 412000..

  # Full control of the statement, and a login (password from CQLWIRE_PASSWORD or a prompt):
  cqlwire load train.parquet --hosts db1 --username loader --tls --tls-ca ca.pem \\
      --query 'INSERT INTO ks.docs (id, emb) VALUES (?, ?) USING TTL 86400'

Every value is converted from the input's type to the type the server reports for its column, \
never through text, with convert's checked casts. A row whose value cannot be converted, or that the \
server refuses, goes to --rejects (standard error when not given) and the rest load; exit code 1 \
when any row was rejected. Timeouts, overload and unavailability are retried with backoff. Ctrl-C \
stops reading, waits for the rows in flight and says where to resume.";

/// Arguments of `cqlwire load`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Input file: Parquet, Arrow IPC, .npy, fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin (`-` or none:
    /// standard input, which needs --input-format or magic bytes).
    pub input: Option<PathBuf>,
    /// Contact points, HOST[:PORT][,HOST[:PORT]…] (port 9042 by default; ScyllaDB's shard-aware
    /// port is found by the driver).
    #[arg(long, value_name = "HOSTS")]
    pub hosts: String,
    /// The table, KEYSPACE.TABLE.
    #[arg(long, value_name = "KS.TABLE")]
    pub table: String,
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
    /// The vector column of a Parquet or Arrow input [default: the only list column, else emb,
    /// embedding or vector].
    #[arg(long)]
    pub column: Option<String>,
    /// Input format: npy, parquet, fvecs, ivecs, bvecs, fbin, ibin, u8bin, i8bin, arrow, hdf5
    /// [default: from the extension, else the magic bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// The dataset of an HDF5 input (ann-benchmarks files hold train, test, neighbors, distances).
    #[arg(long, value_name = "NAME", default_value = "train")]
    pub dataset: String,
    /// Load rows START..END only (0-based, END exclusive); row numbers stay those of the whole input.
    #[arg(long, value_name = "START..END", value_parser = parse_rows, conflicts_with = "shard")]
    pub rows: Option<Range<u64>>,
    /// Load the K-th of N contiguous, balanced parts (1 ≤ K ≤ N).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Consistency level of the writes [default: LOCAL_QUORUM].
    #[arg(long, value_name = "LEVEL")]
    pub consistency: Option<String>,
    /// Requests in flight [default: adaptive, growing while latency holds and backing off on
    /// overload and timeouts].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: Option<u32>,
    /// Timeout of one request, in seconds; a request that takes longer is retried.
    #[arg(long, value_name = "SECONDS", default_value_t = 12)]
    pub timeout: u64,
    /// Write rejected rows here as CSV (row,key,error) [default: standard error].
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,
    /// Log in as this user; the password comes from the CQLWIRE_PASSWORD environment variable, else a
    /// prompt on the terminal (it is never an argument).
    #[arg(long, value_name = "USER")]
    pub username: Option<String>,
    /// Connect with TLS (the server's certificate and host name are verified).
    #[arg(long)]
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate [default: the system's].
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM), for servers that require one; with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Read, convert, map and check every row against the prepared statement; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Parses one `INPUT=COLUMN` of `--map`.
fn parse_rename(pair: &str) -> Result<(String, String), String> {
    pair.split_once('=')
        .map(|(from, to)| (from.trim().to_owned(), to.trim().to_owned()))
        .filter(|(from, _)| !from.is_empty())
        .ok_or_else(|| format!("expected INPUT=COLUMN, not '{pair}'"))
}

/// The loader's error with the exit code it deserves: options, mapping and schema are usage.
fn load_error(error: LoadError) -> CliError {
    match error.kind() {
        LoadErrorKind::Authentication => CliError::data(format!(
            "{} (log in with --username; the password comes from {PASSWORD_VARIABLE} or a prompt)",
            error.message()
        )),
        LoadErrorKind::InvalidOption
        | LoadErrorKind::UnknownTable
        | LoadErrorKind::UnknownColumn
        | LoadErrorKind::MissingKeyColumn
        | LoadErrorKind::Statement
        | LoadErrorKind::Mapping
        | LoadErrorKind::UnsupportedType => CliError::usage(error.message()),
        _ => CliError::data(error.message()),
    }
}

/// The password of `user`: the environment variable, else a prompt on the terminal.
fn password(user: &str) -> Result<Password, CliError> {
    if let Some(password) = std::env::var_os(PASSWORD_VARIABLE) {
        return password
            .into_string()
            .map(Password::new)
            .map_err(|_| CliError::usage(format!("{PASSWORD_VARIABLE} is not valid UTF-8")));
    }
    if !io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "--username {user} needs a password: set {PASSWORD_VARIABLE} (no terminal to ask on)"
        )));
    }
    rpassword::prompt_password(format!("password for {user}: "))
        .map(Password::new)
        .map_err(|e| CliError::data(format!("cannot read the password: {e}")))
}

/// Rejected rows as lines on standard error, when no `--rejects` file is given.
struct StderrRejects;

impl RejectSink for StderrRejects {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        let error = crate::display::visible(error);
        let key = crate::display::visible(key);
        writeln!(io::stderr(), "cqlwire: rejected row {row} ({key}): {error}")
    }
}

/// Runs `cqlwire load`.
pub fn run(args: Args) -> Result<(), CliError> {
    let hosts = Host::parse_list(&args.hosts).map_err(load_error)?;
    let mut options = LoadOptions::with_table_name(hosts, &args.table).map_err(load_error)?;
    options.query = args.query.clone();
    if let Some(level) = &args.consistency {
        options.consistency = parse_consistency(level).map_err(load_error)?;
    }
    if let Some(n) = args.concurrency {
        options.concurrency = Concurrency::Fixed(n as usize);
    }
    options.request_timeout = Duration::from_secs(args.timeout.max(1));
    if let Some(user) = &args.username {
        options.credentials = Some(Credentials {
            username: user.clone(),
            password: password(user)?,
        });
    }
    if args.tls || args.tls_ca.is_some() || args.tls_cert.is_some() {
        options.tls = Some(TlsOptions {
            ca_file: args.tls_ca.clone(),
            client_cert: args.tls_cert.clone().zip(args.tls_key.clone()),
            ..TlsOptions::default()
        });
    }
    let dataset_options = DatasetOptions {
        path: args.input.clone(),
        input: InputOptions {
            format: args.input_format,
            column: args.column.clone(),
            dataset: args.dataset.clone(),
            selection: selection(args.rows.clone(), args.shard),
            batch_rows: BATCH_ROWS,
        },
        map: args.map.clone(),
        row_number_column: args.row_number_column.clone(),
    };
    let mut dataset = Dataset::open(&dataset_options).map_err(load_error)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::data(format!("cannot start the I/O threads: {e}")))?;
    // The default INSERT names the table columns the input fills, known once the table is read.
    let loader = runtime
        .block_on(Loader::connect_with(options, |table| {
            dataset.table_columns(table).map(Some)
        }))
        .map_err(load_error)?;
    dataset
        .bind(loader.bind_markers(), loader.columns())
        .map_err(load_error)?;

    let mut rejects: Box<dyn RejectSink> = match &args.rejects {
        Some(path) => Box::new(
            CsvRejects::new(BufWriter::new(File::create(path).map_err(|e| {
                CliError::data(format!("cannot create {}: {e}", path.display()))
            })?))
            .map_err(CliError::from)?,
        ),
        None => Box::new(StderrRejects),
    };
    let control = RunControl::default();
    let bar = progress::bar(dataset.rows(), Unit::Rows, args.quiet);
    let first_row = dataset.first_row();
    let (sender, receiver) = tokio::sync::mpsc::channel::<Vec<Row>>(QUEUED_BATCHES);
    let stop = control.stop.clone();
    let reader = std::thread::spawn(move || -> Result<(), LoadError> {
        while !stop.load(Ordering::Relaxed) {
            match dataset.next_rows()? {
                Some(rows) => {
                    if sender.blocking_send(rows).is_err() {
                        break;
                    }
                }
                None => break,
            }
        }
        Ok(())
    });
    let report = runtime.block_on(async {
        let stop = control.stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.store(true, Ordering::Relaxed);
                // A second Ctrl-C ends at once.
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        let progress = control.progress.clone();
        let ticker_bar = bar.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let now = progress.snapshot();
                ticker_bar.set_position(now.written + now.rejected);
                ticker_bar.set_message(format!(
                    "{:.1} MB  {} in flight  {} rejected  {} retries",
                    now.bytes as f64 / 1e6,
                    now.in_flight,
                    now.rejected,
                    now.retried
                ));
            }
        });
        let result = if args.dry_run {
            loader
                .dry_run(receiver, first_row, rejects.as_mut(), &control)
                .await
        } else {
            loader
                .run(receiver, first_row, rejects.as_mut(), &control)
                .await
        };
        ticker.abort();
        result
    });
    bar.finish_and_clear();
    let read = reader.join().unwrap_or_else(|_| {
        Err(LoadError::new(
            LoadErrorKind::Input,
            "the input reader failed",
        ))
    });
    let stopped = control.stop.load(Ordering::Relaxed);
    match report {
        Ok(report) => {
            if !args.quiet {
                summary(&report, args.dry_run);
            }
            if let Err(error) = read {
                return Err(CliError::data(format!(
                    "{}; rows before it are loaded{}",
                    error.message(),
                    resume_hint(&report)
                )));
            }
            if stopped {
                return Err(CliError::data(format!(
                    "interrupted{}",
                    resume_hint(&report)
                )));
            }
            if report.rejected > 0 {
                return Err(CliError::data(format!(
                    "{} rows rejected (listed in {})",
                    report.rejected,
                    args.rejects
                        .as_ref()
                        .map_or("standard error".to_owned(), |p| p.display().to_string())
                )));
            }
            Ok(())
        }
        Err(error) => {
            let hint = error.report().map(resume_hint).unwrap_or_default();
            if let Some(report) = error.report() {
                if !args.quiet {
                    summary(report, args.dry_run);
                }
            }
            Err(CliError::data(format!("{}{hint}", error.message())))
        }
    }
}

/// `; N rows confirmed, resume with --rows R..` when the run did not finish.
fn resume_hint(report: &LoadReport) -> String {
    match report.resume_from {
        Some(row) => format!(
            "; {} rows confirmed; resume with --rows {row}..",
            report.written
        ),
        None => String::new(),
    }
}

/// The one-line summary on standard error.
fn summary(report: &LoadReport, dry_run: bool) {
    let seconds = report.elapsed.as_secs_f64();
    let verb = if dry_run { "checked" } else { "loaded" };
    let _ = writeln!(
        io::stderr(),
        "{verb} {} rows ({:.1} MB) in {seconds:.2} s, {:.0} rows/s, {} retries, {} rejected",
        report.written,
        report.bytes as f64 / 1e6,
        report.rows_per_second(),
        report.retried,
        report.rejected,
    );
}
