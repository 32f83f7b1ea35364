//! `cqlwire convert`: embeddings (NPY, Parquet, TEXMEX, big-ann-benchmarks, Arrow, HDF5) to CQL vector values.
//!
//! A thin face over [`cqlwire_vector::convert`]: the arguments become library options, and this file adds the
//! progress bar, the summary line and the flag names in errors.

use super::input::InputArgs;
use super::progress;
use super::util::{amount, counted};
use super::CliError;
use crate::files::{self, Output};
use crate::messages;
use cqlwire_codec::types::{self, UdtRegistry};
use cqlwire_vector::convert::{self, ConvertError, ConvertOptions, Totals};
use cqlwire_vector::input::{InputError, InputFormat};
use cqlwire_vector::kernel::{VectorEncoder, VectorError};
use cqlwire_vector::output::{NullPolicy, OutputFormat, WriteError};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::time::Instant;

/// The most `--threads` accepted; more is refused as a usage error.
const MAX_THREADS: i64 = 1024;

/// Rows per batch when the row size is not known before opening (standard input).
const STREAM_BATCH_ROWS: usize = 1024;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # The bundled sample (Parquet, list<float> column `emb`, id column `id`) to raw CQL values:
  cqlwire convert fixtures/convert/sample/train.parquet -o train.bin

  # The same as `id,0x…` CSV lines, e.g. for a loader script:
  cqlwire convert fixtures/convert/sample/train.parquet --format hex --id-column id | head -3

  # Protocol [bytes] (length-prefixed) values of a declared type, row 900 onwards:
  cqlwire convert fixtures/convert/sample/train.npy --type 'vector<float, 128>' --format framed \\
      --rows 900.. -o part.bin

  # The second of four shards (concatenating the four outputs equals the whole run):
  cqlwire convert fixtures/convert/inputs/sample.fbin --shard 2/4 -o sample.2.bin

  # A Parquet file with the ids and a binary `emb_cql` column; null vectors kept as nulls:
  cqlwire convert fixtures/convert/sample/train.parquet --format parquet --on-null null -o out.parquet

The target type defaults to vector<float, N> for f16/f32 inputs, vector<double, N> for f64, \
vector<bigint, N> for int64 and vector<int, N> for other integers, N being the row length. \
Casts: a double to float rounds to the nearest float, tiny values to subnormals or zero (as NumPy's \
astype('>f4') and the driver's struct.pack('>f') do); a finite double beyond the float range, an \
integer out of the element type's range or not exactly a float/double, a float with a fraction for \
an integer type, is an error naming its row and element. NaN and ±Infinity pass through to \
float/double. `--format` defaults to the extension of -o (.npy, .parquet, .arrow), else raw.";

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
    /// Which vectors of the input are read.
    #[command(flatten)]
    pub input_args: InputArgs,
    /// A column of the input (Parquet, Arrow) written before each value in hex output (`id,0x…`).
    #[arg(long)]
    pub id_column: Option<String>,
    /// Target CQL type, e.g. 'vector<float, 768>' [default: from the input's element type and row
    /// length].
    #[arg(long = "type", value_name = "TYPE")]
    pub target_type: Option<String>,
    /// What to do with a null vector: stop with an error, leave the row out, or write a null (framed,
    /// hex, parquet, arrow).
    #[arg(long, value_enum, default_value_t = OnNull::Error)]
    pub on_null: OnNull,
    /// Worker threads for CPU-bound conversions (variable-size element types, very large batches)
    /// [default: all cores; at most 4 per core are used]; with 1, reading, converting and writing
    /// all run on one thread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS))]
    pub threads: Option<u16>,
    /// No progress bar and no summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--on-null`: what to do with a null vector ([`NullPolicy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnNull {
    /// Stop with an error naming the row.
    Error,
    /// Leave the row out.
    Skip,
    /// Write a null: `-1` in `framed`, a `null` line in `hex`, a null cell in `parquet`/`arrow`.
    Null,
}

impl From<OnNull> for NullPolicy {
    fn from(policy: OnNull) -> Self {
        match policy {
            OnNull::Error => NullPolicy::Error,
            OnNull::Skip => NullPolicy::Skip,
            OnNull::Null => NullPolicy::Null,
        }
    }
}

/// Runs `cqlwire convert`.
pub fn run(args: Args) -> Result<(), CliError> {
    let started = Instant::now();
    keep_freed_memory();
    let target = match &args.target_type {
        None => None,
        Some(text) => Some(
            types::parse_type(text, &UdtRegistry::new())
                .map_err(|e| CliError::usage(format!("invalid --type '{text}': {e}")))?,
        ),
    };
    let input_options = args.input_args.options(STREAM_BATCH_ROWS, false);
    let input_path = args.input.as_deref();
    files::refuse_same_file(input_path, args.output.as_deref())?;
    let reader = convert::open(input_path, input_options).map_err(input_error)?;
    let format = args
        .format
        .or_else(|| files::named(args.output.as_deref()).and_then(OutputFormat::from_extension))
        .unwrap_or(OutputFormat::Raw);
    let options = ConvertOptions {
        target,
        format,
        nulls: args.on_null.into(),
        id_column: args.id_column.clone(),
        threads: args.threads.map(usize::from),
    };
    let type_text = args.target_type.as_deref().unwrap_or_default();
    // Type errors before the output is opened.
    let target = convert::target_type(options.target.clone(), reader.as_ref(), format)
        .map_err(|error| convert_error(error, type_text))?;
    VectorEncoder::new(&target).map_err(vector_error)?;
    // Like other bulk writers (cp, NumPy, pyarrow), no fsync of gigabytes before the atomic rename.
    let output = Output::open(args.output.as_deref(), format.is_binary())?.without_sync();
    let progress = progress::bar(reader.rows(), progress::Unit::Rows, args.quiet);
    let show = |totals: &Totals| show_progress(&progress, totals);
    let (output, totals) = convert::convert(reader, output, &options, &show)
        .map_err(|error| convert_error(error, type_text))?;
    output.commit()?;
    progress.finish_and_clear();
    if !args.quiet {
        messages::line(format_args!(
            "{}",
            summary(&totals, started.elapsed().as_secs_f64())
        ));
    }
    Ok(())
}

/// Largest allocation glibc's malloc serves from its heap rather than a fresh `mmap` during a
/// conversion ([`keep_freed_memory`]): above every per-page buffer of the Parquet reader and every
/// batch of the pipeline (about 16 MiB at most), and the most that glibc accepts (32 MiB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// Free memory glibc's malloc keeps at the top of its heap instead of handing it back to the kernel
/// ([`keep_freed_memory`]).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_TRIM_THRESHOLD: libc::c_int = 128 << 20;

/// Makes glibc's malloc reuse the memory a conversion frees instead of returning it to the kernel
/// and asking for fresh pages again.
///
/// The Parquet reader allocates and frees buffers of about a page (1 MiB) for every page it reads
/// and decompresses. With glibc's defaults they went back to the kernel (munmap, or a trim of the
/// heap's top) and came back as new zeroed pages: 74,800 page faults for 200,000 × 768 snappy
/// floats, about 300 MB of fresh memory, and about half of `convert`'s system time on a 2-core VM
/// (where a fresh page can also cost the hypervisor a fault). With these two settings: 2,800
/// faults, and a smaller peak RSS (21 MB instead of 72 MB). Other C libraries have their own
/// policies and are left alone.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes two tuning parameters of glibc's allocator; it is called before
    // this command starts its worker threads, and any value it refuses leaves the default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD);
    }
}

/// Moves the progress bar to `totals`.
fn show_progress(progress: &ProgressBar, totals: &Totals) {
    progress.set_position(totals.rows + totals.skipped);
    if !progress.is_hidden() {
        let megabytes = totals.bytes as f64 / 1e6;
        let seconds = progress.elapsed().as_secs_f64().max(1e-3);
        progress.set_message(format!(
            "{megabytes:.1} MB  {:.0} MB/s",
            megabytes / seconds
        ));
    }
}

/// The one-line summary printed at the end: rows written, null rows left out, value bytes (in bytes,
/// kB or MB), time, and the rate once there are 100 kB or more to time.
fn summary(totals: &Totals, seconds: f64) -> String {
    let skipped = match totals.skipped {
        0 => String::new(),
        n => format!(" ({} skipped)", counted(n, "null row")),
    };
    let rate = if totals.bytes >= 100_000 {
        let megabytes = totals.bytes as f64 / 1e6;
        format!(" ({:.1} MB/s)", megabytes / seconds.max(1e-9))
    } else {
        String::new()
    };
    format!(
        "cqlwire: converted {}{skipped}, {} of values in {seconds:.2} s{rate}",
        counted(totals.rows, "row"),
        amount(totals.bytes)
    )
}

/// Maps a conversion error, naming `--type` (given as `type_text`) where it is the cause.
fn convert_error(error: ConvertError, type_text: &str) -> CliError {
    match error {
        ConvertError::Input(error) => input_error(error),
        ConvertError::Vector(error) => vector_error(error),
        ConvertError::Write(error) => write_error(error),
        ConvertError::NotVector {
            requested,
            dimension,
        } => CliError::usage(format!(
            "--type must be a vector type such as vector<float, {dimension}>, not {requested}"
        )),
        ConvertError::Dimension {
            declared,
            dimension,
            ..
        } => CliError::data(format!(
            "--type {type_text} has dimension {declared} but the input's rows have {dimension} \
             elements"
        )),
        ConvertError::Empty => CliError::data(format!("{error} (give --type)")),
        _ => CliError::data(error),
    }
}

/// Maps an input error, naming the flag that fixes it: options that do not fit the input are usage
/// errors, the rest bad data.
fn input_error(error: InputError) -> CliError {
    match error {
        InputError::AmbiguousColumn { input, columns } => CliError::usage(format!(
            "{input}: several list columns ({}); choose one with --column",
            columns.join(", ")
        )),
        InputError::ShardNeedsRowCount {
            input,
            what,
            instead,
        } => CliError::usage(format!(
            "{input}: --shard needs the row count, which {what} does not declare (use {instead} or \
             --rows)"
        )),
        InputError::UnknownFormat { input } => CliError::data(format!(
            "{input}: cannot tell the input format from the file name or the first bytes; use \
             --input-format (supported: {})",
            InputFormat::NAMES.join(", ")
        )),
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

/// Maps a write error, naming the flags that fix it.
fn write_error(error: WriteError) -> CliError {
    let error = match error {
        WriteError::Io(io) => return CliError::from(io),
        other => other,
    };
    let message = match &error {
        WriteError::IdColumnFormat(format) => format!(
            "--id-column applies to the hex, parquet and arrow formats, not {}",
            format.name()
        ),
        WriteError::IdColumnMissing { .. } | WriteError::IdColumnType { .. } => {
            let text = error.to_string();
            format!(
                "--id-column {}",
                text.strip_prefix("id column ").unwrap_or(&text)
            )
        }
        WriteError::NullRow { format: None, .. } => format!(
            "{error} (use --on-null skip to leave such rows out, or --on-null null to write nulls)"
        ),
        WriteError::NullRow { .. } => {
            format!("{error} (use --on-null skip, or --format framed, hex, parquet or arrow)")
        }
        WriteError::NpyElement(_) => {
            format!("{error}; use --format raw, framed, hex, parquet or arrow")
        }
        WriteError::NpyRowCount => "npy output to standard output or a device needs the row count \
                                    up front, which this input does not give; use -o FILE"
            .to_string(),
        WriteError::NpyHeader { .. } => format!("{error}; use -o FILE"),
        _ => error.to_string(),
    };
    if error.is_usage() {
        CliError::Usage(message)
    } else {
        CliError::Data(message)
    }
}
