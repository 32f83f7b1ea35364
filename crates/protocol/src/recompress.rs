//! Recompressing a v3/v4 frame stream frame by frame, as `compress --frames` and
//! `decompress --frames` do: every body LZ4-compressed (flag 0x01 set) or decompressed (flag
//! cleared), the header's length rewritten, other frames passed through.
//!
//! Memory stays bounded by what has arrived: bodies are read in steps of [`READ_STEP`], a frame is
//! written only once whole (so the output never ends inside a frame), and when decompressing a
//! compressed body's 4-byte length prefix is checked against the limit and against what the frame's
//! length leaves for the block as soon as it arrives, and a plain body's length against the limit
//! as soon as the header arrives, so a header or prefix that lies fails before the rest is read.

use super::frame::{BodyTooLarge, FrameHeader, FrameReader, HEADER_LEN, READ_STEP};
use crate::lz4::{self, Lz4Error, Lz4ErrorKind, LENGTH_PREFIX};
use std::io::{self, Read, Write};

/// What to do to each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recompress {
    /// Compress the bodies a peer would compress ([`FrameHeader::is_compressible`]), refusing
    /// bodies longer than `max_size`.
    Compress {
        /// Largest body accepted, in bytes.
        max_size: usize,
    },
    /// Decompress the bodies flagged compressed, refusing declared lengths above `max_size`.
    Decompress {
        /// Largest uncompressed length accepted, in bytes.
        max_size: usize,
    },
}

/// Where recompressed frames go: bytes, plus the end of each frame (a hex writer ends its line).
pub trait RecordSink: Write {
    /// Called after each frame's header and body have been written.
    fn end_record(&mut self) -> io::Result<()>;
}

/// A frame stream that could not be recompressed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecompressError {
    /// Reading or writing failed, or the stream does not split into frames (an
    /// [`io::ErrorKind::InvalidData`] error wrapping a [`super::frame::FrameError`]).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A body cannot be compressed or decompressed.
    #[error("{kind} at byte {at} (frame at byte {frame}, stream {stream})")]
    Body {
        /// What is wrong with the body.
        kind: Lz4ErrorKind,
        /// Offset in the stream of the byte where it shows.
        at: u64,
        /// Offset of the frame's header.
        frame: u64,
        /// The frame's stream id.
        stream: i16,
    },
    /// An uncompressed body is longer than the limit.
    #[error(
        "uncompressed frame body of {length} bytes exceeds the limit of {limit} bytes at byte {} \
         (frame at byte {frame}, stream {stream})",
        frame + 5
    )]
    PlainOverLimit {
        /// The body length the header declares.
        length: u32,
        /// The limit in bytes.
        limit: usize,
        /// Offset of the frame's header.
        frame: u64,
        /// The frame's stream id.
        stream: i16,
    },
    /// A converted body is too long for a frame.
    #[error("{error} (frame at byte {frame}, stream {stream})")]
    TooLarge {
        /// The body's size.
        error: BodyTooLarge,
        /// Offset of the frame's header.
        frame: u64,
        /// The frame's stream id.
        stream: i16,
    },
}

impl RecompressError {
    /// A body error of the frame at `frame`: the LZ4 error's offset moves from the body to the stream.
    pub fn body(frame: u64, header: &FrameHeader, error: Lz4Error) -> Self {
        RecompressError::Body {
            at: frame + HEADER_LEN as u64 + error.offset as u64,
            kind: error.kind,
            frame,
            stream: header.stream,
        }
    }
}

/// Recompresses every frame of `input` into `sink` as `mode` says; `progress` is called with the
/// offset of each frame read. Stops at the first error (the sink then holds a partial stream).
pub fn recompress_frames(
    input: impl Read,
    mode: Recompress,
    sink: &mut impl RecordSink,
    mut progress: impl FnMut(u64),
) -> Result<(), RecompressError> {
    let mut reader = FrameReader::new(input);
    let mut body = Vec::new();
    let mut converted = Vec::new();
    while let Some((offset, header)) = reader.next_header()? {
        progress(offset);
        let new_header = match mode {
            Recompress::Compress { max_size } | Recompress::Decompress { max_size }
                if header.length as usize > max_size && !header.is_compressed() =>
            {
                return Err(RecompressError::PlainOverLimit {
                    length: header.length,
                    limit: max_size,
                    frame: offset,
                    stream: header.stream,
                });
            }
            Recompress::Compress { .. } if header.is_compressible() => {
                body.clear();
                while reader.read_body_chunk(&mut body, READ_STEP)? > 0 {}
                lz4::compress_body_into(&body, &mut converted)
                    .map_err(|e| RecompressError::body(offset, &header, e))?;
                Some(header.with_body(true, converted.len()))
            }
            Recompress::Decompress { max_size } if header.is_compressed() => {
                body.clear();
                reader.read_body_chunk(&mut body, LENGTH_PREFIX)?;
                if let Ok(prefix) = <[u8; LENGTH_PREFIX]>::try_from(&body[..]) {
                    let block_len = header.length as usize - LENGTH_PREFIX;
                    lz4::check_declared(prefix, block_len, max_size)
                        .map_err(|e| RecompressError::body(offset, &header, e))?;
                }
                while reader.read_body_chunk(&mut body, READ_STEP)? > 0 {}
                lz4::decompress_body_into(&body, max_size, &mut converted)
                    .map_err(|e| RecompressError::body(offset, &header, e))?;
                Some(header.with_body(false, converted.len()))
            }
            _ => {
                body.clear();
                while reader.read_body_chunk(&mut body, READ_STEP)? > 0 {}
                None
            }
        };
        match new_header {
            Some(new_header) => {
                let new_header = new_header.map_err(|error| RecompressError::TooLarge {
                    error,
                    frame: offset,
                    stream: header.stream,
                })?;
                sink.write_all(&new_header.to_bytes())?;
                sink.write_all(&converted)?;
            }
            None => {
                sink.write_all(&header.to_bytes())?;
                sink.write_all(&body)?;
            }
        }
        sink.end_record()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lines(Vec<u8>, usize);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl RecordSink for Lines {
        fn end_record(&mut self) -> io::Result<()> {
            self.1 += 1;
            Ok(())
        }
    }

    fn frame(flags: u8, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![4, flags, 0, 1, opcode];
        bytes.extend_from_slice(&(body.len() as u32).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn compress_then_decompress_restores_the_stream() {
        let mut stream = frame(0, 0x01, b"startup body");
        stream.extend(frame(0, 0x07, &[b'a'; 5000]));
        stream.extend(frame(0, 0x05, b""));
        let mut compressed = Lines(Vec::new(), 0);
        let mode = Recompress::Compress { max_size: 10_000 };
        recompress_frames(&stream[..], mode, &mut compressed, |_| {}).unwrap();
        assert_eq!(compressed.1, 3);
        assert!(compressed.0.len() < stream.len());
        assert_eq!(compressed.0[..21], stream[..21]);
        let mut plain = Lines(Vec::new(), 0);
        let mode = Recompress::Decompress { max_size: 10_000 };
        recompress_frames(&compressed.0[..], mode, &mut plain, |_| {}).unwrap();
        assert_eq!(plain.0, stream);
    }

    #[test]
    fn a_lying_prefix_fails_before_the_body_is_read() {
        // The body claims 2 GiB; its prefix says 0x7fffffff uncompressed bytes; only 8 bytes follow.
        let mut stream = frame(1, 0x07, &[]);
        stream[5..9].copy_from_slice(&i32::MAX.to_be_bytes());
        stream.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let mode = Recompress::Decompress { max_size: 1 << 20 };
        let error =
            recompress_frames(&stream[..], mode, &mut Lines(Vec::new(), 0), |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "declared uncompressed length 2147483647 exceeds the limit of 1048576 bytes at byte 9 \
             (frame at byte 0, stream 1)"
        );
    }
}
