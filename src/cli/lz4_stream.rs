//! What `compress` and `decompress` share: the input/output flags, reading binary or hex input,
//! writing binary or hex output atomically, and driving the library's frame-by-frame
//! recompression for `--frames`.

use super::progress;
use super::CliError;
use clap::Args;
use cqlwire::files::{self, Output};
use cqlwire::hex;
use cqlwire::lz4::Lz4Error;
use cqlwire::protocol::recompress::{recompress_frames, Recompress, RecompressError, RecordSink};
use std::io::{self, BufReader, Cursor, Read, Write};
use std::path::PathBuf;

/// Size of the read buffer in front of a binary `--frames` input.
const READ_BUFFER: usize = 1 << 20;

/// Largest `--frames --hex` stream, in bytes (hex text is read whole; binary input is streamed).
const MAX_HEX_STREAM_BYTES: u64 = 1 << 30;

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

/// Reads the whole input: the bytes of a binary input, or the bytes a hex input spells; at most
/// `limit` bytes (three hex characters per byte: two digits and a separator).
fn read_all(args: &StreamArgs, limit: u64) -> Result<Vec<u8>, CliError> {
    let text_limit = if args.hex {
        limit.saturating_mul(3)
    } else {
        limit
    };
    let bytes = files::read_input(args.input.as_deref(), text_limit)?;
    if !args.hex {
        return Ok(bytes);
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::Data(format!(
            "hex input is not text: invalid UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(hex::parse(&text)?)
}

/// Body mode: converts the whole input (at most `limit` bytes) with `convert` and writes the result.
pub fn run_body(
    args: &StreamArgs,
    limit: u64,
    convert: impl FnOnce(&[u8]) -> Result<Vec<u8>, Lz4Error>,
) -> Result<(), CliError> {
    let mut sink = Sink::open(args)?;
    let input = read_all(args, limit)?;
    let converted = convert(&input).map_err(CliError::data)?;
    sink.write_all(&converted)?;
    sink.end_record()?;
    sink.commit()
}

/// `--frames` mode: recompresses frame by frame as `mode` says (a binary input is streamed, a hex
/// input is parsed whole) and writes the result.
pub fn run_frames(args: &StreamArgs, mode: Recompress) -> Result<(), CliError> {
    let mut sink = Sink::open(args)?;
    let (source, len): (Box<dyn Read>, Option<u64>) = if args.hex {
        let bytes = read_all(args, MAX_HEX_STREAM_BYTES)?;
        let len = bytes.len() as u64;
        (Box::new(Cursor::new(bytes)), Some(len))
    } else {
        let path = files::named(args.input.as_deref());
        let len = path
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len());
        let file = files::open_input(path)?;
        (Box::new(BufReader::with_capacity(READ_BUFFER, file)), len)
    };
    let progress = progress::bar(len, progress::Unit::Bytes, args.quiet);
    let mut shown = 0u64;
    recompress_frames(source, mode, &mut sink, |offset| {
        if offset - shown >= PROGRESS_STEP {
            progress.set_position(offset);
            shown = offset;
        }
    })
    .map_err(|error| match error {
        RecompressError::Io(error) => CliError::from(error),
        other => CliError::data(other),
    })?;
    progress.finish_and_clear();
    sink.commit()
}
