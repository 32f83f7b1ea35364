//! `cqlwire compress`: a payload into a CQL v4 LZ4 body, or every frame of a stream into a
//! compressed frame.

use super::lz4_stream::{self, StreamArgs};
use super::CliError;
use cqlwire_protocol::lz4;
use cqlwire_protocol::recompress::Recompress;

/// Compress a payload into a CQL v4 LZ4 body, or the frames of a v3/v4 stream.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Compress a payload into a CQL v4 LZ4 body: the 4-byte big-endian uncompressed length, \
                  then the raw LZ4 block, as the drivers and servers write it.\n\n\
                  With --frames the input is a sequence of whole v3/v4 frames (e.g. one direction of a \
                  captured TCP stream): each body is compressed, flag 0x01 set and the length \
                  rewritten. Frames a peer never compresses pass through unchanged: frames already \
                  flagged, empty bodies, and STARTUP requests (compression is negotiated in them). A \
                  body above 256 MiB (the largest frame Cassandra accepts) is refused as soon as \
                  its header is read.",
    after_help = "Examples:\n  \
        $ printf 'hello hello hello hello' | xxd -p | cqlwire compress --hex\n  \
        000000176868656c6c6f2006005068656c6c6f\n  \
        $ cqlwire compress fixtures/lz4/payloads/text-8192.bin -o body.lz4\n  \
        $ cqlwire compress --frames fixtures/lz4/frames/requests.plain.bin -o requests-lz4.bin"
)]
pub struct Args {
    #[command(flatten)]
    stream: StreamArgs,
}

/// Runs `cqlwire compress`.
pub fn run(args: Args) -> Result<(), CliError> {
    let stream = &args.stream;
    // A payload is at most 256 MiB, the largest frame Cassandra accepts (and what decompress takes
    // by default), so an endless input ends there.
    let max_size = lz4::DEFAULT_MAX_SIZE;
    if !stream.frames {
        return lz4_stream::run_body(
            stream,
            max_size as u64,
            "the largest body compress takes (256 MiB, the largest frame Cassandra accepts)",
            lz4::compress_body,
        );
    }
    lz4_stream::run_frames(stream, Recompress::Compress { max_size })
}
