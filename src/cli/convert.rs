//! `cqlwire convert`: embeddings (NPY, Parquet, TEXMEX, big-ann-benchmarks, Arrow) to CQL vector values.
//!
//! A reader thread feeds batches through a bounded queue; the main thread converts each batch on the
//! rayon pool (`--threads`); a writer thread writes them in order. At most a few batches are in flight,
//! so memory stays bounded whatever the input size.

use super::CliError;
use cqlwire::files::{self, Output};
use cqlwire::input::{
    self, Batch, BatchReader, InputError, InputFormat, InputOptions, RowSelection,
};
use cqlwire::output::{self, NullPolicy, OutputFormat, VectorWriter, WriteError, WriterOptions};
use cqlwire::types::{self, CqlType, UdtRegistry};
use cqlwire::vector::{self, EncodedBatch, VectorEncoder, VectorError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

/// Input bytes per batch the readers are asked for (files; standard input uses [`STREAM_BATCH_ROWS`]).
const BATCH_BYTES: usize = 2 << 20;

/// Rows per batch when the row size is not known before opening (standard input).
const STREAM_BATCH_ROWS: usize = 1024;

/// Batches waiting between the reader and the converter, and between the converter and the writer.
const QUEUE: usize = 2;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # The bundled sample (Parquet, list<float> column `emb`, id column `id`) to raw CQL values:
  cqlwire convert fixtures/convert/sample/train.parquet -o train.bin

  # The same as `id,0x…` CSV lines, e.g. for a loader script:
  cqlwire convert fixtures/convert/sample/train.parquet --format hex --id-column id | head -3

  # Protocol [bytes] (length-prefixed) values of a declared type, row 1000 onwards:
  cqlwire convert vectors.npy --type 'vector<float, 768>' --format framed --rows 1000.. -o part.bin

  # The second of four shards (concatenating the four outputs equals the whole run):
  cqlwire convert big.fbin --shard 2/4 -o big.2.bin

  # A Parquet file with the ids and a binary `emb_cql` column; null vectors kept as nulls:
  cqlwire convert fixtures/convert/sample/train.parquet --format parquet --on-null null -o out.parquet

The target type defaults to vector<float, N> for f16/f32 inputs, vector<double, N> for f64, \
vector<bigint, N> for int64 and vector<int, N> for other integers, N being the row length. \
Casts are checked: a value that does not fit the element type exactly is an error naming its row \
and element. `--format` defaults to the extension of -o (.npy, .parquet, .arrow), else raw.";

/// Arguments of `cqlwire convert`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Input file (`-` or none: standard input, which needs --input-format or magic bytes).
    pub input: Option<PathBuf>,
    /// Output file (`-` or none: standard output), written atomically.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Output format [default: from the -o extension, else raw].
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// The vector column of a Parquet or Arrow input [default: the only list column, else emb,
    /// embedding or vector].
    #[arg(long)]
    pub column: Option<String>,
    /// A column of the input (Parquet, Arrow) written before each value in hex output (`id,0x…`).
    #[arg(long)]
    pub id_column: Option<String>,
    /// Target CQL type, e.g. 'vector<float, 768>' [default: from the input's element type and row
    /// length].
    #[arg(long = "type", value_name = "TYPE")]
    pub target_type: Option<String>,
    /// Input format: npy, parquet, fvecs, ivecs, bvecs, fbin, ibin, u8bin, i8bin, arrow [default:
    /// from the extension, else the magic bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// What to do with a null vector: stop with an error, leave the row out, or write a null (framed,
    /// hex, parquet, arrow).
    #[arg(long, value_enum, default_value_t = NullPolicy::Error)]
    pub on_null: NullPolicy,
    /// Convert rows START..END only (0-based, END exclusive; `START..` to the end, `..END` from 0).
    #[arg(long, value_name = "START..END", value_parser = parse_rows, conflicts_with = "shard")]
    pub rows: Option<Range<u64>>,
    /// Convert the K-th of N contiguous, balanced parts (1 ≤ K ≤ N).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Worker threads for the conversion [default: all cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Parses `--input-format`.
fn parse_input_format(text: &str) -> Result<InputFormat, String> {
    text.parse()
}

/// Parses `--rows START..END` (either bound may be omitted).
fn parse_rows(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| format!("expected START..END, e.g. 0..1000, not '{text}'"))?;
    let bound = |s: &str, default: u64| -> Result<u64, String> {
        let s = s.trim();
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse()
                .map_err(|_| format!("'{s}' is not a row number (in '{text}')"))
        }
    };
    let range = bound(start, 0)?..bound(end, u64::MAX)?;
    if range.start > range.end {
        return Err(format!("the range {text} ends before it starts"));
    }
    Ok(range)
}

/// Parses `--shard K/N` with 1 ≤ K ≤ N.
fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!(
            "expected K/N with 1 ≤ K ≤ N, e.g. 2/8, not '{text}'"
        )),
    }
}

/// Runs `cqlwire convert`.
pub fn run(args: Args) -> Result<(), CliError> {
    let started = Instant::now();
    let requested_type = match &args.target_type {
        None => None,
        Some(text) => Some(
            types::parse_type(text, &UdtRegistry::new())
                .map_err(|e| CliError::usage(format!("invalid --type '{text}': {e}")))?,
        ),
    };
    let selection = match (&args.rows, args.shard) {
        (Some(range), _) => RowSelection::Range(range.clone()),
        (None, Some((k, n))) => RowSelection::Shard { k, n },
        (None, None) => RowSelection::All,
    };
    let mut options = InputOptions {
        format: args.input_format,
        column: args.column.clone(),
        selection,
        batch_rows: STREAM_BATCH_ROWS,
    };
    let input_path = args.input.as_deref();
    let mut reader = input::open(input_path, &options).map_err(input_error)?;
    let row_bytes = reader
        .dimension()
        .saturating_mul(element_bytes(reader.element_type()));
    if files::named(input_path).is_some() {
        // A file can be opened again, with batches of about BATCH_BYTES now that the row size is known.
        let batch_rows = (BATCH_BYTES / row_bytes.max(1)).max(1);
        if batch_rows != options.batch_rows {
            options.batch_rows = batch_rows;
            reader = input::open(input_path, &options).map_err(input_error)?;
        }
    }
    let target = target_type(requested_type, reader.as_ref(), args.target_type.as_deref())?;
    let encoder = VectorEncoder::new(&target).map_err(vector_error)?;
    let format = args
        .format
        .or_else(|| format_from_extension(args.output.as_deref()))
        .unwrap_or(OutputFormat::Raw);
    // Like other bulk writers (cp, NumPy, pyarrow), no fsync of gigabytes before the atomic rename.
    let output = Output::open(args.output.as_deref(), format.is_binary())?.without_sync();
    let writer_options = WriterOptions {
        format,
        nulls: args.on_null,
        id_column: args.id_column.clone(),
        column_name: reader.column_name().unwrap_or("vector").to_string(),
        passthrough: reader.passthrough_schema(),
        expected_rows: reader.rows(),
    };
    let writer = output::create(output, &encoder, writer_options).map_err(write_error)?;
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(CliError::data)?;
    let progress = progress_bar(reader.rows(), args.quiet);
    let job = Job {
        encoder: &encoder,
        nulls: args.on_null,
        format,
        pool: &pool,
        progress: &progress,
    };
    let totals = job.run(reader, writer)?;
    progress.finish_and_clear();
    if !args.quiet {
        eprintln!("{}", summary(&totals, started.elapsed().as_secs_f64()));
    }
    Ok(())
}

/// The size in bytes of one stored input element.
fn element_bytes(element: input::ElementType) -> usize {
    use input::ElementType as E;
    match element {
        E::I8 | E::U8 => 1,
        E::F16 | E::I16 => 2,
        E::F32 | E::I32 => 4,
        E::F64 | E::I64 => 8,
    }
}

/// The target type: `--type` (a vector whose dimension is the input's), or the default for the
/// input's element type and row length.
fn target_type(
    requested: Option<CqlType>,
    reader: &dyn BatchReader,
    text: Option<&str>,
) -> Result<CqlType, CliError> {
    let dimension = reader.dimension();
    match requested {
        Some(CqlType::Vector(element, declared)) => {
            if declared != dimension {
                return Err(CliError::data(format!(
                    "--type {} has dimension {declared} but the input's rows have {dimension} \
                     elements",
                    text.unwrap_or_default()
                )));
            }
            Ok(CqlType::Vector(element, declared))
        }
        Some(other) => Err(CliError::usage(format!(
            "--type must be a vector type such as vector<float, {dimension}>, not {other}"
        ))),
        None => {
            if dimension == 0 {
                return Err(CliError::data("the input's rows have no elements"));
            }
            let element = vector::default_element(reader.element_type());
            Ok(CqlType::Vector(
                Box::new(CqlType::Native(element)),
                dimension,
            ))
        }
    }
}

/// The output format implied by the output file's extension, if any.
fn format_from_extension(path: Option<&Path>) -> Option<OutputFormat> {
    let extension = files::named(path)?
        .extension()?
        .to_str()?
        .to_ascii_lowercase();
    match extension.as_str() {
        "npy" => Some(OutputFormat::Npy),
        "parquet" | "pq" => Some(OutputFormat::Parquet),
        "arrow" | "arrows" | "ipc" => Some(OutputFormat::Arrow),
        _ => None,
    }
}

/// A progress bar on standard error when it is a terminal (and not `--quiet`), else a hidden one.
fn progress_bar(rows: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(rows, ProgressDrawTarget::stderr());
    let template = if rows.is_some() {
        "{bar:30} {human_pos}/{human_len} rows  {msg}  {per_sec}  ETA {eta}"
    } else {
        "{spinner} {human_pos} rows  {msg}  {per_sec}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// What a run produced.
struct Totals {
    /// Rows read.
    rows: u64,
    /// Null rows left out (`--on-null skip`).
    skipped: u64,
    /// Value bytes written.
    bytes: u64,
}

/// The one-line summary printed at the end.
fn summary(totals: &Totals, seconds: f64) -> String {
    let megabytes = totals.bytes as f64 / 1e6;
    let skipped = if totals.skipped > 0 {
        format!(" ({} null rows skipped)", totals.skipped)
    } else {
        String::new()
    };
    format!(
        "cqlwire: converted {} rows{skipped}, {megabytes:.1} MB of values in {seconds:.2} s ({:.1} MB/s)",
        totals.rows,
        megabytes / seconds.max(1e-9)
    )
}

/// One conversion: the settings shared by the pipeline's stages.
struct Job<'a> {
    encoder: &'a VectorEncoder,
    nulls: NullPolicy,
    format: OutputFormat,
    pool: &'a rayon::ThreadPool,
    progress: &'a ProgressBar,
}

impl Job<'_> {
    /// Reads, converts and writes every batch in order, then completes the output.
    fn run(
        &self,
        reader: Box<dyn BatchReader>,
        writer: Box<dyn VectorWriter>,
    ) -> Result<Totals, CliError> {
        let (batch_sender, batches) = mpsc::sync_channel::<Result<Batch, InputError>>(QUEUE);
        let (encoded_sender, encoded) = mpsc::sync_channel::<EncodedBatch>(QUEUE);
        let (recycle_sender, recycled) = mpsc::sync_channel::<Vec<u8>>(QUEUE + 1);
        std::thread::scope(|scope| {
            scope.spawn(move || read_batches(reader, batch_sender));
            let writing = scope.spawn(move || write_batches(writer, encoded, recycle_sender));
            let converted = self.convert_batches(batches, encoded_sender, recycled);
            let written = writing
                .join()
                .map_err(|_| CliError::data("the writer thread failed"))?;
            // A writer error concerns earlier rows than anything the converter met since.
            let (writer, bytes) = written.map_err(write_error)?;
            let (rows, skipped) = converted?;
            writer.finish().map_err(write_error)?;
            Ok(Totals {
                rows,
                skipped,
                bytes,
            })
        })
    }

    /// Converts batches as they arrive and hands them to the writer; returns the rows read and the
    /// null rows skipped.
    fn convert_batches(
        &self,
        batches: mpsc::Receiver<Result<Batch, InputError>>,
        encoded: mpsc::SyncSender<EncodedBatch>,
        recycled: mpsc::Receiver<Vec<u8>>,
    ) -> Result<(u64, u64), CliError> {
        let mut rows = 0u64;
        let mut skipped = 0u64;
        let mut bytes = 0u64;
        for batch in batches {
            let batch = batch.map_err(input_error)?;
            let refused_null = output::check_nulls(
                batch.first_row,
                batch.validity.as_deref(),
                self.nulls,
                self.format,
            )
            .err();
            let nulls = batch
                .validity
                .as_ref()
                .map_or(0, |v| v.iter().filter(|valid| !**valid).count() as u64);
            let batch_rows = batch.rows as u64;
            let buffer = recycled.try_recv().unwrap_or_default();
            let result = self
                .pool
                .install(|| self.encoder.encode_batch(batch, buffer));
            let converted = match (result, refused_null) {
                (Ok(converted), None) => converted,
                (Ok(_), Some((_, null_error))) => return Err(write_error(null_error)),
                (Err(cast), Some((null_row, null_error)))
                    if cast.row().is_none_or(|row| null_row < row) =>
                {
                    return Err(write_error(null_error))
                }
                (Err(cast), _) => return Err(vector_error(cast)),
            };
            rows += batch_rows;
            if self.nulls == NullPolicy::Skip {
                skipped += nulls;
            }
            bytes += converted.bytes.len() as u64;
            self.progress.inc(batch_rows);
            self.progress
                .set_message(format!("{:.1} MB", bytes as f64 / 1e6));
            if encoded.send(converted).is_err() {
                // The writer stopped with an error, which the caller reports.
                break;
            }
        }
        Ok((rows, skipped))
    }
}

/// The reader thread: sends batches in order until the end, an error, or the receiver leaving.
fn read_batches(
    mut reader: Box<dyn BatchReader>,
    batches: mpsc::SyncSender<Result<Batch, InputError>>,
) {
    loop {
        let next = match reader.next_batch() {
            Ok(Some(batch)) => Ok(batch),
            Ok(None) => return,
            Err(error) => Err(error),
        };
        let failed = next.is_err();
        if batches.send(next).is_err() || failed {
            return;
        }
    }
}

/// The writer thread: writes batches in order, returning their buffers for reuse; returns the writer
/// (to be finished) and the value bytes written.
fn write_batches(
    mut writer: Box<dyn VectorWriter>,
    batches: mpsc::Receiver<EncodedBatch>,
    recycle: mpsc::SyncSender<Vec<u8>>,
) -> Result<(Box<dyn VectorWriter>, u64), WriteError> {
    let mut bytes = 0;
    for batch in batches {
        bytes += writer.write(&batch)?;
        // If the converter has enough spare buffers, this one is simply freed.
        let _ = recycle.try_send(batch.bytes);
    }
    Ok((writer, bytes))
}

/// Maps an input error: options that do not fit the input are usage errors, the rest bad data.
fn input_error(error: InputError) -> CliError {
    match error {
        InputError::Options(_) => CliError::usage(error),
        InputError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => {
            CliError::BrokenPipe
        }
        _ => CliError::data(error),
    }
}

/// Maps a conversion error: an unsupported target type is a usage error, the rest bad data.
fn vector_error(error: VectorError) -> CliError {
    match error {
        VectorError::Unsupported(_) => CliError::usage(error),
        _ => CliError::data(error),
    }
}

/// Maps a write error.
fn write_error(error: WriteError) -> CliError {
    match error {
        WriteError::Usage(_) => CliError::usage(error),
        WriteError::Io(io) => CliError::from(io),
        _ => CliError::data(error),
    }
}
