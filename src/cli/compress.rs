//! `cqlwire compress`: a payload into a CQL v4 LZ4 body, or every frame of a stream into a
//! compressed frame.

use super::lz4_stream::{self, FrameAction, StreamArgs};
use super::CliError;
use cqlwire::lz4;

/// Compress a payload into a CQL v4 LZ4 body, or the frames of a v3/v4 stream.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Compress a payload into a CQL v4 LZ4 body: the 4-byte big-endian uncompressed length, \
                  then the raw LZ4 block, as the drivers and servers write it.\n\n\
                  With --frames the input is a sequence of whole v3/v4 frames (e.g. one direction of a \
                  captured TCP stream): each body is compressed, flag 0x01 set and the length \
                  rewritten. Frames a peer never compresses pass through unchanged: frames already \
                  flagged, empty bodies, and STARTUP requests (compression is negotiated in them).",
    after_help = "Examples:\n  \
        $ printf 'hello hello hello hello' | xxd -p | cqlwire compress --hex\n  \
        000000176768656c6c6f200600602068656c6c6f\n  \
        $ cqlwire compress payload.bin -o body.lz4\n  \
        $ cqlwire compress --frames requests.bin -o requests-lz4.bin"
)]
pub struct Args {
    #[command(flatten)]
    stream: StreamArgs,
}

/// Runs `cqlwire compress`.
pub fn run(args: Args) -> Result<(), CliError> {
    let stream = &args.stream;
    if !stream.frames {
        return lz4_stream::run_body(stream, lz4::compress_body);
    }
    lz4_stream::run_frames(stream, |frame, body, compressed| {
        if !frame.header.is_compressible() {
            return Ok(FrameAction::PassThrough);
        }
        lz4::compress_body_into(body, compressed).map_err(|e| frame.body_error(&e))?;
        let header = frame
            .header
            .with_body(true, compressed.len())
            .map_err(|e| frame.frame_error(e))?;
        Ok(FrameAction::Replace(header))
    })
}
