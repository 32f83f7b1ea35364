//! What `compress` and `decompress` share: the input/output flags, reading binary or hex input,
//! writing binary or hex output atomically, and driving the library's frame-by-frame
//! recompression for `--frames`.

use super::progress;
use super::CliError;
use crate::files::{self, Output};
use clap::Args;
use cqlwire_codec::hex::{self, HexError, HexReader};
use cqlwire_protocol::lz4::{Lz4Error, Lz4ErrorKind};
use cqlwire_protocol::recompress::{recompress_frames, Recompress, RecompressError, RecordSink};
use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;

/// Size of the read buffer in front of a binary `--frames` input.
const READ_BUFFER: usize = 1 << 20;

/// Input bytes between two updates of the progress bar.
const PROGRESS_STEP: u64 = 1 << 20;

/// Input, output and mode flags common to `compress` and `decompress`.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// Input file; `-` or nothing reads standard input.
    pub input: Option<PathBuf>,
    /// Output file, written atomically; `-` or nothing writes standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Treat the input as a sequence of whole v3/v4 frames (9-byte header + body) instead of one
    /// body. A binary input is streamed frame by frame: memory stays at about one frame.
    #[arg(long)]
    pub frames: bool,
    /// Read and write hex text instead of binary (input may have 0x, spaces, colons, newlines;
    /// output is one line per body, or per frame with --frames). Byte offsets in errors count
    /// decoded bytes.
    #[arg(long)]
    pub hex: bool,
    /// No progress bar (one is shown on a terminal for --frames).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Where the converted bytes go: binary, or hex text with one line per record.
struct Sink {
    output: Output,
    hex: bool,
}

impl Sink {
    fn open(args: &StreamArgs) -> Result<Self, CliError> {
        files::refuse_same_file(args.input.as_deref(), args.output.as_deref())?;
        let output = Output::open(args.output.as_deref(), !args.hex)?;
        Ok(Sink {
            output,
            hex: args.hex,
        })
    }

    fn commit(self) -> Result<(), CliError> {
        Ok(self.output.commit()?)
    }
}

impl Write for Sink {
    /// Writes bytes, as hex digits in hex mode.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.hex {
            self.output.write_all(hex::encode(buf).as_bytes())?;
        } else {
            self.output.write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.output.flush()
    }
}

impl RecordSink for Sink {
    /// Ends a record (a body, or a frame): a new line in hex mode.
    fn end_record(&mut self) -> io::Result<()> {
        if self.hex {
            self.output.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// The input's name in messages.
fn input_name(args: &StreamArgs) -> String {
    files::named(args.input.as_deref())
        .map_or_else(|| "standard input".to_string(), |p| p.display().to_string())
}

/// The input as bytes: binary as it is, hex text decoded and checked while it is read (the first bad
/// character stops it, whatever follows).
fn open_source(args: &StreamArgs) -> Result<Box<dyn Read>, CliError> {
    let file = files::open_input(files::named(args.input.as_deref()))?;
    let buffered = BufReader::with_capacity(READ_BUFFER, file);
    Ok(if args.hex {
        Box::new(HexReader::new(buffered))
    } else {
        Box::new(buffered)
    })
}

/// A read error: a hex error as `invalid hex input: …`, anything else as I/O.
fn read_error(error: io::Error) -> CliError {
    match HexError::from_io(&error) {
        Some(hex) => CliError::from(hex.clone()),
        None => CliError::from(error),
    }
}

/// Reads the whole input, at most `limit` bytes (hex input counted in decoded bytes); more is an
/// error saying `too_long`. A regular binary file over the limit is refused before it is read.
fn read_all(args: &StreamArgs, limit: u64, too_long: &str) -> Result<Vec<u8>, CliError> {
    let over = || {
        CliError::data(format!(
            "{}: more than {limit} bytes: {too_long}",
            input_name(args)
        ))
    };
    if !args.hex {
        return files::read_input(args.input.as_deref(), limit).map_err(|e| {
            if e.kind() == io::ErrorKind::FileTooLarge {
                over()
            } else {
                CliError::from(e)
            }
        });
    }
    let mut bytes = Vec::new();
    open_source(args)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(over());
    }
    Ok(bytes)
}

/// Body mode: converts the whole input (at most `limit` bytes; more is an error saying `too_long`)
/// with `convert` and writes the result.
pub fn run_body(
    args: &StreamArgs,
    limit: u64,
    too_long: &str,
    convert: impl FnOnce(&[u8]) -> Result<Vec<u8>, Lz4Error>,
) -> Result<(), CliError> {
    let mut sink = Sink::open(args)?;
    let input = read_all(args, limit, too_long)?;
    let converted = convert(&input).map_err(|error| {
        let over_limit = matches!(error.kind, Lz4ErrorKind::OverLimit { .. });
        CliError::Data(with_max_size_hint(error.to_string(), over_limit))
    })?;
    sink.write_all(&converted)?;
    sink.end_record()?;
    sink.commit()
}

/// The flag that raises the limit a declared length went over, after the limit's figure.
fn with_max_size_hint(message: String, over_limit: bool) -> String {
    const LIMIT_END: &str = " bytes";
    match message.find("exceeds the limit of ") {
        Some(at) if over_limit => {
            let end = message[at..]
                .find(LIMIT_END)
                .map_or(message.len(), |i| at + i + LIMIT_END.len());
            format!(
                "{} (raise it with --max-size){}",
                &message[..end],
                &message[end..]
            )
        }
        _ => message,
    }
}

/// `--frames` mode: recompresses frame by frame as `mode` says (binary and hex input alike are
/// streamed: memory stays at about one frame) and writes the result.
pub fn run_frames(args: &StreamArgs, mode: Recompress) -> Result<(), CliError> {
    let mut sink = Sink::open(args)?;
    // The progress bar counts decoded bytes, so it knows the length of a binary file only.
    let len = files::named(args.input.as_deref())
        .filter(|_| !args.hex)
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| m.len());
    let source = open_source(args)?;
    let progress = progress::bar(len, progress::Unit::Bytes, args.quiet);
    let mut shown = 0u64;
    recompress_frames(source, mode, &mut sink, |offset| {
        if offset - shown >= PROGRESS_STEP {
            progress.set_position(offset);
            shown = offset;
        }
    })
    .map_err(|error| match error {
        RecompressError::Io(error) => read_error(error),
        other => {
            let over_limit = matches!(
                other,
                RecompressError::Body {
                    kind: Lz4ErrorKind::OverLimit { .. },
                    ..
                }
            );
            CliError::Data(with_max_size_hint(other.to_string(), over_limit))
        }
    })?;
    progress.finish_and_clear();
    sink.commit()
}
