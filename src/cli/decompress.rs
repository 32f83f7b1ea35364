//! `cqlwire decompress`: a CQL v4 LZ4 body back into its payload, or the compressed frames of a
//! stream back into plain frames.

use super::lz4_stream::{self, StreamArgs};
use super::CliError;
use cqlwire_protocol::lz4;
use cqlwire_protocol::recompress::Recompress;

/// Decompress a CQL v4 LZ4 body, or the compressed frames of a v3/v4 stream.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Decompress a CQL v4 LZ4 body ([4-byte big-endian uncompressed length][LZ4 block]) \
                  into its payload.\n\n\
                  With --frames the input is a sequence of whole v3/v4 frames: bodies of frames with \
                  flag 0x01 are decompressed, the flag cleared and the length rewritten; other frames \
                  pass through unchanged; a plain body above --max-size is refused.\n\n\
                  A declared length above --max-size, or more than the block could hold, is refused \
                  before anything is allocated; a block that decompresses to another length than \
                  declared, or is corrupt, is an error naming the byte where it goes wrong.",
    after_help = "Examples:\n  \
        $ echo 000000176868656c6c6f2006005068656c6c6f | cqlwire decompress --hex | xxd -r -p\n  \
        hello hello hello hello\n  \
        $ cqlwire decompress fixtures/lz4/bodies/text-65536.lz4 -o payload.bin\n  \
        $ cqlwire decompress --frames --max-size 16MiB fixtures/lz4/frames/requests.lz4.bin -o plain.bin"
)]
pub struct Args {
    #[command(flatten)]
    stream: StreamArgs,
    /// Largest uncompressed length accepted, in bytes (suffixes KiB, MiB, GiB or K, M, G allowed).
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = parse_size)]
    max_size: usize,
}

/// Runs `cqlwire decompress`.
pub fn run(args: Args) -> Result<(), CliError> {
    let stream = &args.stream;
    let max_size = args.max_size;
    if !stream.frames {
        // A body holding `max_size` bytes is far shorter than twice that (LZ4 expands by < 0.5%).
        let limit = (max_size as u64)
            .saturating_mul(2)
            .saturating_add(lz4::LENGTH_PREFIX as u64);
        let too_long = format!(
            "no LZ4 body of a payload within --max-size {max_size} is that long (raise --max-size)"
        );
        return lz4_stream::run_body(stream, limit, &too_long, |body| {
            lz4::decompress_body(body, max_size)
        });
    }
    lz4_stream::run_frames(stream, Recompress::Decompress { max_size })
}

/// Parses a byte count: digits, optionally followed by K/KiB, M/MiB or G/GiB (powers of 1024).
fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?} (use KiB, MiB or GiB)")),
    };
    let count: usize = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a byte count"))?;
    count
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("4 k"), Ok(4096));
        assert!(parse_size("12XB").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }
}
