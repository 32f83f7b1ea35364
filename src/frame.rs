//! Frames of the CQL native protocol v3 and v4: the 9-byte header and a body of the length it
//! declares. [`Frames`] walks a byte slice without copying; [`FrameReader`] reads a stream (a file,
//! standard input) one frame at a time into a reused buffer.
//!
//! Header layout: `version` (bit 0x80 set for responses), `flags`, `stream` (signed 16-bit),
//! `opcode`, `length` (signed 32-bit, big-endian, never negative).

use std::io::{self, Read};

/// Size of a v3/v4 frame header.
pub const HEADER_LEN: usize = 9;

/// Header flag: the body is compressed.
pub const FLAG_COMPRESSED: u8 = 0x01;

/// Version-byte bit set on responses (server to client).
pub const RESPONSE_BIT: u8 = 0x80;

/// Opcode of STARTUP, the request that negotiates compression and is therefore never compressed.
pub const OPCODE_STARTUP: u8 = 0x01;

/// The header of a v3/v4 frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The version byte as on the wire: protocol version, plus [`RESPONSE_BIT`] for responses.
    pub version: u8,
    /// Header flags ([`FLAG_COMPRESSED`], tracing 0x02, custom payload 0x04, warning 0x08, beta 0x10).
    pub flags: u8,
    /// Stream id; responses carry their request's id, server-pushed events use -1.
    pub stream: i16,
    /// Message type (e.g. 0x07 QUERY, 0x08 RESULT).
    pub opcode: u8,
    /// Body length in bytes (at most `i32::MAX`).
    pub length: u32,
}

impl FrameHeader {
    /// Parses a header found at `offset` of a stream: the protocol version must be 3 or 4 and the
    /// length must not be negative.
    pub fn parse(bytes: &[u8; HEADER_LEN], offset: u64) -> Result<Self, FrameError> {
        let [version, flags, s0, s1, opcode, l0, l1, l2, l3] = *bytes;
        let stream = i16::from_be_bytes([s0, s1]);
        if !matches!(version & !RESPONSE_BIT, 3 | 4) {
            return Err(FrameError::UnsupportedVersion { offset, version });
        }
        let length = i32::from_be_bytes([l0, l1, l2, l3]);
        let length = u32::try_from(length).map_err(|_| FrameError::NegativeLength {
            offset,
            stream,
            length,
        })?;
        Ok(FrameHeader {
            version,
            flags,
            stream,
            opcode,
            length,
        })
    }

    /// The header's wire bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let [s0, s1] = self.stream.to_be_bytes();
        let [l0, l1, l2, l3] = self.length.to_be_bytes();
        [
            self.version,
            self.flags,
            s0,
            s1,
            self.opcode,
            l0,
            l1,
            l2,
            l3,
        ]
    }

    /// The protocol version without the direction bit (3 or 4).
    pub fn protocol_version(&self) -> u8 {
        self.version & !RESPONSE_BIT
    }

    /// Whether the frame goes from server to client.
    pub fn is_response(&self) -> bool {
        self.version & RESPONSE_BIT != 0
    }

    /// Whether the compressed flag is set.
    pub fn is_compressed(&self) -> bool {
        self.flags & FLAG_COMPRESSED != 0
    }

    /// Whether a peer would compress this frame on a compressed connection: not already compressed,
    /// a non-empty body (the driver never compresses an empty one), and not a STARTUP request (sent
    /// before compression is agreed on).
    pub fn is_compressible(&self) -> bool {
        let is_startup = self.opcode == OPCODE_STARTUP && !self.is_response();
        !self.is_compressed() && self.length > 0 && !is_startup
    }

    /// This header for a new body: the compressed flag set or cleared and the length replaced.
    /// Fails if `body_len` exceeds the `i32::MAX` a frame can declare.
    pub fn with_body(&self, compressed: bool, body_len: usize) -> Result<Self, BodyTooLarge> {
        let length = i32::try_from(body_len).map_err(|_| BodyTooLarge { len: body_len })?;
        let flags = if compressed {
            self.flags | FLAG_COMPRESSED
        } else {
            self.flags & !FLAG_COMPRESSED
        };
        Ok(FrameHeader {
            flags,
            length: length.unsigned_abs(),
            ..*self
        })
    }
}

/// A body too large for a frame's signed 32-bit length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("body of {len} bytes is too large for a frame (at most 2147483647 bytes)")]
pub struct BodyTooLarge {
    /// The body's size in bytes.
    pub len: usize,
}

/// A frame of a byte slice: its header, its body and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Offset of the header in the stream.
    pub offset: u64,
    /// The parsed header.
    pub header: FrameHeader,
    /// The body, exactly `header.length` bytes.
    pub body: &'a [u8],
}

impl Frame<'_> {
    /// Offset of the body in the stream.
    pub fn body_offset(&self) -> u64 {
        self.offset + HEADER_LEN as u64
    }
}

/// A frame stream that cannot be split into frames, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The stream ends inside a frame header.
    #[error("truncated frame header at byte {offset}: {available} of 9 bytes left")]
    TruncatedHeader {
        /// Offset of the header.
        offset: u64,
        /// Bytes left in the stream.
        available: usize,
    },
    /// The version byte is not 3 or 4 (with or without the response bit).
    #[error(
        "unsupported protocol version byte 0x{version:02x} in frame header at byte {offset} \
         (v3 and v4 frames are supported)"
    )]
    UnsupportedVersion {
        /// Offset of the header.
        offset: u64,
        /// The version byte.
        version: u8,
    },
    /// The header's body length is negative.
    #[error("negative body length {length} in frame header at byte {offset} (stream {stream})")]
    NegativeLength {
        /// Offset of the header.
        offset: u64,
        /// The frame's stream id.
        stream: i16,
        /// The declared length.
        length: i32,
    },
    /// The stream ends inside a frame body.
    #[error(
        "truncated frame at byte {offset} (stream {stream}): header says {declared} body bytes, \
         {available} left"
    )]
    TruncatedBody {
        /// Offset of the header.
        offset: u64,
        /// The frame's stream id.
        stream: i16,
        /// The body length the header declares.
        declared: u32,
        /// Body bytes left in the stream.
        available: usize,
    },
}

impl From<FrameError> for io::Error {
    fn from(error: FrameError) -> Self {
        io::Error::new(io::ErrorKind::InvalidData, error)
    }
}

/// The frames of a byte slice, in order; a malformed or truncated frame ends the walk with an error.
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    rest: &'a [u8],
    offset: u64,
    failed: bool,
}

impl<'a> Frames<'a> {
    /// Walks the frames of `bytes`, the first starting at byte 0.
    pub fn new(bytes: &'a [u8]) -> Self {
        Frames {
            rest: bytes,
            offset: 0,
            failed: false,
        }
    }

    fn split_frame(&mut self) -> Result<Frame<'a>, FrameError> {
        let offset = self.offset;
        let (header, after_header) =
            self.rest
                .split_first_chunk::<HEADER_LEN>()
                .ok_or(FrameError::TruncatedHeader {
                    offset,
                    available: self.rest.len(),
                })?;
        let header = FrameHeader::parse(header, offset)?;
        let length = header.length as usize;
        let body = after_header
            .get(..length)
            .ok_or(FrameError::TruncatedBody {
                offset,
                stream: header.stream,
                declared: header.length,
                available: after_header.len(),
            })?;
        self.rest = after_header.get(length..).unwrap_or_default();
        self.offset += (HEADER_LEN + length) as u64;
        Ok(Frame {
            offset,
            header,
            body,
        })
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let frame = self.split_frame();
        self.failed = frame.is_err();
        Some(frame)
    }
}

impl std::iter::FusedIterator for Frames<'_> {}

/// Reads frames one by one from a stream into a caller's buffer, so memory stays at one frame
/// whatever the stream's size. Frame errors come back as [`io::ErrorKind::InvalidData`] errors
/// wrapping a [`FrameError`].
pub struct FrameReader<R> {
    reader: R,
    offset: u64,
}

impl<R: Read> FrameReader<R> {
    /// Reads frames from `reader` (wrap files in a `BufReader`), the first starting at byte 0.
    pub fn new(reader: R) -> Self {
        FrameReader { reader, offset: 0 }
    }

    /// Reads the next frame: returns its offset and header and puts its body in `body` (replacing
    /// its content), or `None` at the end of the stream. The body buffer grows with the bytes
    /// actually read, never with the length a header claims.
    pub fn next_frame(&mut self, body: &mut Vec<u8>) -> io::Result<Option<(u64, FrameHeader)>> {
        let offset = self.offset;
        let mut header = [0u8; HEADER_LEN];
        let got = read_up_to(&mut self.reader, &mut header)?;
        if got == 0 {
            return Ok(None);
        }
        if got < HEADER_LEN {
            return Err(FrameError::TruncatedHeader {
                offset,
                available: got,
            }
            .into());
        }
        let header = FrameHeader::parse(&header, offset)?;
        body.clear();
        let read = (&mut self.reader)
            .take(u64::from(header.length))
            .read_to_end(body)?;
        if read < header.length as usize {
            return Err(FrameError::TruncatedBody {
                offset,
                stream: header.stream,
                declared: header.length,
                available: read,
            }
            .into());
        }
        self.offset += (HEADER_LEN + read) as u64;
        Ok(Some((offset, header)))
    }
}

/// Fills `buf` as far as the stream allows; returns the number of bytes read (short only at the end).
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_bytes(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![version, flags];
        bytes.extend_from_slice(&stream.to_be_bytes());
        bytes.push(opcode);
        bytes.extend_from_slice(&(body.len() as i32).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn header_fields_and_round_trip() {
        let bytes: [u8; 9] = frame_bytes(0x84, 0x03, -1, 0x0c, &[0; 5])[..9]
            .try_into()
            .unwrap();
        let header = FrameHeader::parse(&bytes, 0).unwrap();
        assert_eq!(header.protocol_version(), 4);
        assert!(header.is_response());
        assert!(header.is_compressed());
        assert_eq!(header.stream, -1);
        assert_eq!(header.length, 5);
        assert_eq!(header.to_bytes(), bytes);
        let plain = header.with_body(false, 70_000).unwrap();
        assert_eq!(plain.flags, 0x02);
        assert_eq!(plain.length, 70_000);
        assert!(header.with_body(true, 1 << 31).is_err());
    }

    #[test]
    fn rejects_bad_versions_and_negative_lengths() {
        let mut bytes: [u8; 9] = frame_bytes(0x05, 0, 7, 7, &[])[..9].try_into().unwrap();
        assert_eq!(
            FrameHeader::parse(&bytes, 12),
            Err(FrameError::UnsupportedVersion {
                offset: 12,
                version: 5
            })
        );
        bytes[0] = 0x83;
        bytes[5..].copy_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(
            FrameHeader::parse(&bytes, 0),
            Err(FrameError::NegativeLength {
                offset: 0,
                stream: 7,
                length: -2
            })
        );
    }

    #[test]
    fn compressible_frames() {
        let header = |version, flags, opcode, length| FrameHeader {
            version,
            flags,
            stream: 0,
            opcode,
            length,
        };
        assert!(header(4, 0, 0x07, 10).is_compressible());
        assert!(!header(4, 0x01, 0x07, 10).is_compressible());
        assert!(!header(4, 0, 0x05, 0).is_compressible());
        assert!(!header(4, 0, OPCODE_STARTUP, 22).is_compressible());
    }

    #[test]
    fn slice_and_stream_agree_and_report_truncation() {
        let mut stream = frame_bytes(4, 0, 1, 0x05, &[]);
        stream.extend(frame_bytes(0x84, 0, 1, 0x06, b"hello"));
        stream.extend(frame_bytes(4, 0, 7, 0x07, &[1; 100]));
        stream.truncate(stream.len() - 60);

        let frames: Vec<_> = Frames::new(&stream).collect();
        assert_eq!(frames.len(), 3);
        let second = frames[1].as_ref().unwrap();
        assert_eq!((second.offset, second.body), (9, &b"hello"[..]));
        assert_eq!(second.body_offset(), 18);
        let error = frames[2].unwrap_err();
        assert_eq!(
            error.to_string(),
            "truncated frame at byte 23 (stream 7): header says 100 body bytes, 40 left"
        );

        let mut reader = FrameReader::new(&stream[..]);
        let mut body = Vec::new();
        assert_eq!(reader.next_frame(&mut body).unwrap().unwrap().0, 0);
        let (offset, header) = reader.next_frame(&mut body).unwrap().unwrap();
        assert_eq!((offset, header.opcode, &body[..]), (9, 0x06, &b"hello"[..]));
        let error = reader.next_frame(&mut body).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(error.to_string(), frames[2].unwrap_err().to_string());
    }

    #[test]
    fn truncated_header() {
        let stream = frame_bytes(4, 0, 1, 0x05, &[]);
        assert_eq!(
            Frames::new(&stream[..4]).next(),
            Some(Err(FrameError::TruncatedHeader {
                offset: 0,
                available: 4
            }))
        );
        let mut body = Vec::new();
        let error = FrameReader::new(&stream[..4])
            .next_frame(&mut body)
            .unwrap_err();
        assert!(error
            .to_string()
            .starts_with("truncated frame header at byte 0"));
        assert!(FrameReader::new(&[][..])
            .next_frame(&mut body)
            .unwrap()
            .is_none());
    }

    #[test]
    fn huge_declared_length_does_not_allocate() {
        let mut stream = frame_bytes(4, 0, 3, 0x07, &[]);
        stream[5..9].copy_from_slice(&i32::MAX.to_be_bytes());
        stream.extend_from_slice(&[0; 10]);
        let mut body = Vec::new();
        let error = FrameReader::new(&stream[..])
            .next_frame(&mut body)
            .unwrap_err();
        assert!(error.to_string().contains("2147483647 body bytes, 10 left"));
        assert!(body.capacity() < 1 << 20);
    }
}
