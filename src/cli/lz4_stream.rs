//! What `compress` and `decompress` share: the input/output flags, reading binary or hex input,
//! writing binary or hex output atomically, and the frame-by-frame loop of `--frames`.

use super::progress;
use super::CliError;
use clap::Args;
use cqlwire::files::{self, Output};
use cqlwire::hex;
use cqlwire::lz4::Lz4Error;
use cqlwire::protocol::frame::{FrameHeader, FrameReader, HEADER_LEN};
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

    /// Writes one record (a body, or a frame's header and body).
    fn write_record(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        for part in parts {
            if self.hex {
                self.output.write_all(hex::encode(part).as_bytes())?;
            } else {
                self.output.write_all(part)?;
            }
        }
        if self.hex {
            self.output.write_all(b"\n")?;
        }
        Ok(())
    }

    fn commit(self) -> Result<(), CliError> {
        Ok(self.output.commit()?)
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
    sink.write_record(&[&converted])?;
    sink.commit()
}

/// What a frame converter says about one frame.
pub enum FrameAction {
    /// Write the frame unchanged.
    PassThrough,
    /// Write this header followed by the converter's output buffer.
    Replace(FrameHeader),
}

/// A frame being converted, for error messages.
pub struct FrameContext {
    /// Offset of the frame's header in the stream.
    pub offset: u64,
    /// The frame's header.
    pub header: FrameHeader,
}

impl FrameContext {
    /// A data error about this frame's body: an LZ4 error's offset is moved from the body to the
    /// stream, and the frame's offset and stream id are named.
    pub fn body_error(&self, error: &Lz4Error) -> CliError {
        let at = self.offset + HEADER_LEN as u64 + error.offset as u64;
        CliError::Data(format!(
            "{} at byte {at} (frame at byte {}, stream {})",
            error.kind, self.offset, self.header.stream
        ))
    }

    /// A data error about this frame as a whole.
    pub fn frame_error(&self, error: impl std::fmt::Display) -> CliError {
        CliError::Data(format!(
            "{error} (frame at byte {}, stream {})",
            self.offset, self.header.stream
        ))
    }
}

/// `--frames` mode: reads frame by frame (a binary input is streamed, a hex input is parsed whole),
/// lets `convert` decide each frame with reused buffers, and writes the result.
pub fn run_frames(
    args: &StreamArgs,
    mut convert: impl FnMut(&FrameContext, &[u8], &mut Vec<u8>) -> Result<FrameAction, CliError>,
) -> Result<(), CliError> {
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
    let mut reader = FrameReader::new(source);
    let mut body = Vec::new();
    let mut converted = Vec::new();
    let mut shown = 0u64;
    while let Some((offset, header)) = reader.next_frame(&mut body)? {
        let frame = FrameContext { offset, header };
        match convert(&frame, &body, &mut converted)? {
            FrameAction::PassThrough => sink.write_record(&[&header.to_bytes(), &body])?,
            FrameAction::Replace(new_header) => {
                sink.write_record(&[&new_header.to_bytes(), &converted])?
            }
        }
        if offset - shown >= PROGRESS_STEP {
            progress.set_position(offset);
            shown = offset;
        }
    }
    progress.finish_and_clear();
    sink.commit()
}
