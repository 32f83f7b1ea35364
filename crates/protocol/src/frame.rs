//! Frames of the CQL native protocol v3 and v4 (and the envelopes of v5, which share their header):
//! the 9-byte header and a body of the length it declares. [`split_frame`] cuts one frame off a byte
//! slice without copying and [`Frames`] walks a slice with it; [`FrameReader`] reads a stream (a
//! file, standard input) one frame at a time into a reused buffer.
//!
//! Header layout: `version` (bit 0x80 set for responses), `flags`, `stream` (signed 16-bit),
//! `opcode`, `length` (signed 32-bit, big-endian, never negative).

use std::fmt;
use std::io::{self, Read};
use std::str::FromStr;

/// Size of a v3/v4 frame header (and of a v5 envelope header).
pub const HEADER_LEN: usize = 9;

/// Version-byte bit set on responses (server to client).
pub const RESPONSE_BIT: u8 = 0x80;

/// The newest protocol version whose frames are whole on the wire (v5 wraps envelopes in segments).
pub const MAX_FRAMED_VERSION: u8 = 4;

/// The newest protocol version whose envelope headers are understood.
pub const MAX_VERSION: u8 = 5;

/// The oldest protocol version understood.
pub const MIN_VERSION: u8 = 3;

/// Which way a frame goes, as the version byte's high bit says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server (high bit clear).
    Request,
    /// Server to client (high bit set).
    Response,
}

impl Direction {
    /// Lower-case name: `request` or `response`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }
}

/// Declares [`Opcode`] from one table: each variant with its byte, its spec name and the way it
/// goes. A new opcode is one line here; the compiler then asks for it in every `match` on
/// [`Opcode`] (none has a wildcard arm), and [`Opcode::ALL`], [`Opcode::from_byte`], `FromStr`,
/// `Display` and `--opcode` take it from here.
macro_rules! opcodes {
    ($($byte:literal $variant:ident $name:literal $goes:ident;)*) => {
        /// The message type of a frame: every opcode of protocol v3 to v5, by its spec name, as
        /// its byte on the wire (`Opcode::Query as u8 == 0x07`). A header's byte that is none of
        /// them is a [`HeaderOpcode::Unknown`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", stringify!($byte), "` ", $name, ".")]
                $variant = $byte,
            )*
        }

        impl Opcode {
            /// Every opcode of protocol v3 to v5, in byte order.
            pub const ALL: [Opcode; [$($byte),*].len()] = [$(Opcode::$variant),*];

            /// The opcode a byte stands for, `None` for a byte no spec of v3 to v5 names (0x04
            /// was v1/v2's CREDENTIALS).
            pub const fn from_byte(byte: u8) -> Option<Self> {
                match byte {
                    $($byte => Some(Opcode::$variant),)*
                    _ => None,
                }
            }

            /// The spec's name (`QUERY`, `AUTH_CHALLENGE`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Opcode::$variant => $name,)*
                }
            }

            /// Which way a message of this opcode goes (e.g. QUERY only from the client).
            pub const fn direction(self) -> Direction {
                match self {
                    $(Opcode::$variant => Direction::$goes,)*
                }
            }
        }
    };
}

opcodes! {
    0x00 Error "ERROR" Response;
    0x01 Startup "STARTUP" Request;
    0x02 Ready "READY" Response;
    0x03 Authenticate "AUTHENTICATE" Response;
    0x05 Options "OPTIONS" Request;
    0x06 Supported "SUPPORTED" Response;
    0x07 Query "QUERY" Request;
    0x08 Result "RESULT" Response;
    0x09 Prepare "PREPARE" Request;
    0x0A Execute "EXECUTE" Request;
    0x0B Register "REGISTER" Request;
    0x0C Event "EVENT" Response;
    0x0D Batch "BATCH" Request;
    0x0E AuthChallenge "AUTH_CHALLENGE" Response;
    0x0F AuthResponse "AUTH_RESPONSE" Request;
    0x10 AuthSuccess "AUTH_SUCCESS" Response;
}

impl Opcode {
    /// The opcode's byte on the wire.
    pub const fn to_byte(self) -> u8 {
        self as u8
    }

    /// Whether a message of this opcode may go in `direction`.
    pub fn goes(self, direction: Direction) -> bool {
        self.direction() == direction
    }
}

impl fmt::Display for Opcode {
    /// The spec name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<u8> for Opcode {
    type Error = u8;

    /// The opcode of a byte; the byte back when it is none.
    fn try_from(byte: u8) -> Result<Self, u8> {
        Opcode::from_byte(byte).ok_or(byte)
    }
}

/// The opcode byte of a frame header: an [`Opcode`], or a byte that is none (kept raw, so a
/// header is written back as it was read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderOpcode {
    /// One of [`Opcode::ALL`].
    Known(Opcode),
    /// A byte no spec of v3 to v5 names.
    Unknown(u8),
}

impl HeaderOpcode {
    /// The header opcode of a byte.
    pub const fn from_byte(byte: u8) -> Self {
        match Opcode::from_byte(byte) {
            Some(opcode) => HeaderOpcode::Known(opcode),
            None => HeaderOpcode::Unknown(byte),
        }
    }

    /// The byte on the wire.
    pub const fn to_byte(self) -> u8 {
        match self {
            HeaderOpcode::Known(opcode) => opcode.to_byte(),
            HeaderOpcode::Unknown(byte) => byte,
        }
    }

    /// The opcode, `None` for an unknown byte.
    pub const fn known(self) -> Option<Opcode> {
        match self {
            HeaderOpcode::Known(opcode) => Some(opcode),
            HeaderOpcode::Unknown(_) => None,
        }
    }

    /// The spec's name, `None` for an unknown byte.
    pub const fn name(self) -> Option<&'static str> {
        match self {
            HeaderOpcode::Known(opcode) => Some(opcode.name()),
            HeaderOpcode::Unknown(_) => None,
        }
    }

    /// Whether the byte is an opcode of v3 to v5.
    pub const fn is_known(self) -> bool {
        matches!(self, HeaderOpcode::Known(_))
    }

    /// Whether a message of this opcode may go in `direction` (never for an unknown byte).
    pub fn goes(self, direction: Direction) -> bool {
        self.known().is_some_and(|opcode| opcode.goes(direction))
    }
}

impl From<Opcode> for HeaderOpcode {
    fn from(opcode: Opcode) -> Self {
        HeaderOpcode::Known(opcode)
    }
}

impl PartialEq<Opcode> for HeaderOpcode {
    fn eq(&self, other: &Opcode) -> bool {
        *self == HeaderOpcode::Known(*other)
    }
}

impl fmt::Display for HeaderOpcode {
    /// The spec name, or `0x04` style hex for an unknown byte.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderOpcode::Known(opcode) => f.write_str(opcode.name()),
            HeaderOpcode::Unknown(byte) => write!(f, "0x{byte:02x}"),
        }
    }
}

/// A name that is no opcode of [`Opcode::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown opcode {name:?}")]
#[non_exhaustive]
pub struct UnknownOpcode {
    /// The name as given.
    pub name: String,
}

impl FromStr for Opcode {
    type Err = UnknownOpcode;

    /// Parses a spec name (`QUERY`, `auth_response`: case-insensitive).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Opcode::ALL
            .into_iter()
            .find(|op| op.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownOpcode {
                name: name.to_owned(),
            })
    }
}

/// The flags byte of a frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    /// 0x01: the body is compressed (v3/v4; v5 compresses segments instead).
    pub const COMPRESSION: u8 = 0x01;
    /// 0x02: tracing asked for (request) or a tracing id leads the body (response).
    pub const TRACING: u8 = 0x02;
    /// 0x04: a custom payload map leads the body.
    pub const CUSTOM_PAYLOAD: u8 = 0x04;
    /// 0x08: a list of warnings leads the body (responses).
    pub const WARNING: u8 = 0x08;
    /// 0x10: the frame uses a beta protocol version.
    pub const USE_BETA: u8 = 0x10;

    /// Each named flag with its bit, in bit order.
    pub const NAMED: [(u8, &'static str); 5] = [
        (Self::COMPRESSION, "compression"),
        (Self::TRACING, "tracing"),
        (Self::CUSTOM_PAYLOAD, "custom_payload"),
        (Self::WARNING, "warning"),
        (Self::USE_BETA, "use_beta"),
    ];

    /// Whether every bit of `bits` is set.
    pub fn contains(self, bits: u8) -> bool {
        self.0 & bits == bits
    }

    /// These flags with `bits` set or cleared.
    pub fn with(self, bits: u8, set: bool) -> Self {
        if set {
            Flags(self.0 | bits)
        } else {
            Flags(self.0 & !bits)
        }
    }

    /// The names of the set flags, in bit order; unnamed bits are not listed.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Flags::NAMED
            .into_iter()
            .filter(move |(bit, _)| self.contains(*bit))
            .map(|(_, name)| name)
    }
}

/// The header of a v3/v4 frame or a v5 envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Protocol version, without the direction bit (3, 4 or 5).
    pub version: u8,
    /// Which way the frame goes (the version byte's high bit).
    pub direction: Direction,
    /// Header flags.
    pub flags: Flags,
    /// Stream id; responses carry their request's id, server-pushed events use -1.
    pub stream: i16,
    /// Message type.
    pub opcode: HeaderOpcode,
    /// Body length in bytes (at most `i32::MAX`).
    pub length: u32,
}

impl FrameHeader {
    /// Parses a header found at `offset` of a stream: the protocol version must be from 3 to
    /// `max_version` ([`MAX_FRAMED_VERSION`] for a frame stream, [`MAX_VERSION`] for an envelope)
    /// and the length must not be negative.
    pub fn parse(
        bytes: &[u8; HEADER_LEN],
        offset: u64,
        max_version: u8,
    ) -> Result<Self, FrameError> {
        let [version, flags, s0, s1, opcode, l0, l1, l2, l3] = *bytes;
        let stream = i16::from_be_bytes([s0, s1]);
        if !(MIN_VERSION..=max_version).contains(&(version & !RESPONSE_BIT)) {
            return Err(FrameError::UnsupportedVersion {
                offset,
                version,
                max_version,
            });
        }
        let length = i32::from_be_bytes([l0, l1, l2, l3]);
        let length = u32::try_from(length).map_err(|_| FrameError::NegativeLength {
            offset,
            stream,
            length,
        })?;
        let direction = if version & RESPONSE_BIT != 0 {
            Direction::Response
        } else {
            Direction::Request
        };
        Ok(FrameHeader {
            version: version & !RESPONSE_BIT,
            direction,
            flags: Flags(flags),
            stream,
            opcode: HeaderOpcode::from_byte(opcode),
            length,
        })
    }

    /// The version byte as on the wire: the version, plus [`RESPONSE_BIT`] for responses.
    pub fn version_byte(&self) -> u8 {
        match self.direction {
            Direction::Request => self.version,
            Direction::Response => self.version | RESPONSE_BIT,
        }
    }

    /// The header's wire bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let [s0, s1] = self.stream.to_be_bytes();
        let [l0, l1, l2, l3] = self.length.to_be_bytes();
        [
            self.version_byte(),
            self.flags.0,
            s0,
            s1,
            self.opcode.to_byte(),
            l0,
            l1,
            l2,
            l3,
        ]
    }

    /// Whether the frame goes from server to client.
    pub fn is_response(&self) -> bool {
        self.direction == Direction::Response
    }

    /// Whether the compression flag is set.
    pub fn is_compressed(&self) -> bool {
        self.flags.contains(Flags::COMPRESSION)
    }

    /// Whether a peer would compress this frame on a compressed connection: not already compressed,
    /// a non-empty body (the driver never compresses an empty one), and not a STARTUP request (sent
    /// before compression is agreed on).
    pub fn is_compressible(&self) -> bool {
        let is_startup = self.opcode == Opcode::Startup && !self.is_response();
        !self.is_compressed() && self.length > 0 && !is_startup
    }

    /// This header for a new body: the compression flag set or cleared and the length replaced.
    /// Fails if `body_len` exceeds the `i32::MAX` a frame can declare.
    pub fn with_body(&self, compressed: bool, body_len: usize) -> Result<Self, BodyTooLarge> {
        let length = i32::try_from(body_len).map_err(|_| BodyTooLarge { len: body_len })?;
        Ok(FrameHeader {
            flags: self.flags.with(Flags::COMPRESSION, compressed),
            length: length.unsigned_abs(),
            ..*self
        })
    }
}

/// A body too large for a frame's signed 32-bit length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("body of {len} bytes is too large for a frame (at most 2147483647 bytes)")]
#[non_exhaustive]
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
#[non_exhaustive]
pub enum FrameError {
    /// The stream ends inside a frame header.
    #[error("truncated frame header at byte {offset}: {available} of 9 bytes left")]
    TruncatedHeader {
        /// Offset of the header.
        offset: u64,
        /// Bytes left in the stream.
        available: usize,
    },
    /// The version is not from 3 to the newest the caller accepts (with or without the response bit).
    #[error(
        "unsupported protocol version byte 0x{version:02x} in frame header at byte {offset} \
         (v3 {} v{max_version} frames are supported)",
        if *max_version == MIN_VERSION + 1 { "and" } else { "to" }
    )]
    UnsupportedVersion {
        /// Offset of the header.
        offset: u64,
        /// The version byte.
        version: u8,
        /// The newest version accepted there.
        max_version: u8,
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

impl FrameError {
    /// The error for a frame whose body is cut off with `available` body bytes left.
    pub fn truncated_body(offset: u64, header: &FrameHeader, available: usize) -> Self {
        FrameError::TruncatedBody {
            offset,
            stream: header.stream,
            declared: header.length,
            available,
        }
    }
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
    /// Walks the v3/v4 frames of `bytes`, the first starting at byte 0.
    pub fn new(bytes: &'a [u8]) -> Self {
        Frames {
            rest: bytes,
            offset: 0,
            failed: false,
        }
    }
}

/// Cuts the frame at the start of `bytes` (found at `offset` of its stream, versions 3 to
/// `max_version`): returns it and the bytes after it.
pub fn split_frame(
    bytes: &[u8],
    offset: u64,
    max_version: u8,
) -> Result<(Frame<'_>, &[u8]), FrameError> {
    let (header, after_header) =
        bytes
            .split_first_chunk::<HEADER_LEN>()
            .ok_or(FrameError::TruncatedHeader {
                offset,
                available: bytes.len(),
            })?;
    let header = FrameHeader::parse(header, offset, max_version)?;
    let length = header.length as usize;
    if after_header.len() < length {
        return Err(FrameError::truncated_body(
            offset,
            &header,
            after_header.len(),
        ));
    }
    let (body, rest) = after_header.split_at(length);
    let frame = Frame {
        offset,
        header,
        body,
    };
    Ok((frame, rest))
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        match split_frame(self.rest, self.offset, MAX_FRAMED_VERSION) {
            Ok((frame, rest)) => {
                self.rest = rest;
                self.offset = frame.body_offset() + frame.body.len() as u64;
                Some(Ok(frame))
            }
            Err(error) => {
                self.failed = true;
                Some(Err(error))
            }
        }
    }
}

impl std::iter::FusedIterator for Frames<'_> {}

/// The most a body buffer grows beyond the bytes that have arrived: bodies are read in steps of
/// this size, so a header claiming 2 GiB in front of a short stream costs at most this much.
pub const READ_STEP: usize = 1 << 20;

/// Reads frames one by one from a stream into a caller's buffer, so memory stays at one frame
/// whatever the stream's size. Frame errors come back as [`io::ErrorKind::InvalidData`] errors
/// wrapping a [`FrameError`].
///
/// A frame is read whole with [`next_frame`](Self::next_frame), or as [`next_header`](Self::next_header)
/// followed by [`read_body_chunk`](Self::read_body_chunk) calls, which lets a caller check a body's
/// first bytes (or pass it on in pieces) before the rest has arrived.
pub struct FrameReader<R> {
    reader: R,
    /// Offset of the next unread byte.
    offset: u64,
    /// The frame whose body is being read: its offset, header and body bytes still unread.
    current: Option<(u64, FrameHeader, usize)>,
}

impl<R: Read> FrameReader<R> {
    /// Reads v3/v4 frames from `reader` (wrap files in a `BufReader`), the first starting at byte 0.
    pub fn new(reader: R) -> Self {
        FrameReader {
            reader,
            offset: 0,
            current: None,
        }
    }

    /// Reads the next frame: returns its offset and header and puts its body in `body` (replacing
    /// its content), or `None` at the end of the stream. The body buffer grows with the bytes
    /// actually read (plus at most [`READ_STEP`]), never with the length a header claims.
    pub fn next_frame(&mut self, body: &mut Vec<u8>) -> io::Result<Option<(u64, FrameHeader)>> {
        let Some(found) = self.next_header()? else {
            return Ok(None);
        };
        body.clear();
        while self.read_body_chunk(body, READ_STEP)? > 0 {}
        Ok(Some(found))
    }

    /// Reads the next frame's header: returns its offset and the header, or `None` at the end of
    /// the stream. Whatever is left of the previous frame's body is skipped first.
    pub fn next_header(&mut self) -> io::Result<Option<(u64, FrameHeader)>> {
        if let Some((offset, header, left)) = self.current.take() {
            let skipped = io::copy(&mut (&mut self.reader).take(left as u64), &mut io::sink())?;
            self.offset += skipped;
            if skipped < left as u64 {
                let available = header.length as usize - left + skipped as usize;
                return Err(FrameError::truncated_body(offset, &header, available).into());
            }
        }
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
        let header = FrameHeader::parse(&header, offset, MAX_FRAMED_VERSION)?;
        self.offset += HEADER_LEN as u64;
        self.current = Some((offset, header, header.length as usize));
        Ok(Some((offset, header)))
    }

    /// Appends the next `min(max, bytes left)` bytes of the current frame's body to `buf` and
    /// returns how many; 0 once the body is read whole. A stream ending inside the body is a
    /// [`FrameError::TruncatedBody`] error.
    pub fn read_body_chunk(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let Some((offset, header, left)) = self.current.as_mut() else {
            return Ok(0);
        };
        let want = max.min(*left);
        let start = buf.len();
        buf.resize(start + want, 0);
        let got = read_up_to(&mut self.reader, &mut buf[start..])?;
        buf.truncate(start + got);
        *left -= got;
        self.offset += got as u64;
        if got < want {
            let available = header.length as usize - *left;
            let error = FrameError::truncated_body(*offset, header, available);
            self.current = None;
            return Err(error.into());
        }
        if *left == 0 {
            self.current = None;
        }
        Ok(got)
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
        let header = FrameHeader::parse(&bytes, 0, MAX_FRAMED_VERSION).unwrap();
        assert_eq!(header.version, 4);
        assert_eq!(header.opcode, Opcode::Event);
        assert_eq!(
            header.flags.names().collect::<Vec<_>>(),
            ["compression", "tracing"]
        );
        assert!(header.is_response());
        assert!(header.is_compressed());
        assert_eq!(header.stream, -1);
        assert_eq!(header.length, 5);
        assert_eq!(header.to_bytes(), bytes);
        let plain = header.with_body(false, 70_000).unwrap();
        assert_eq!(plain.flags, Flags(Flags::TRACING));
        assert_eq!(plain.length, 70_000);
        assert!(header.with_body(true, 1 << 31).is_err());
    }

    #[test]
    fn rejects_bad_versions_and_negative_lengths() {
        let mut bytes: [u8; 9] = frame_bytes(0x05, 0, 7, 7, &[])[..9].try_into().unwrap();
        assert_eq!(
            FrameHeader::parse(&bytes, 12, MAX_FRAMED_VERSION),
            Err(FrameError::UnsupportedVersion {
                offset: 12,
                version: 5,
                max_version: 4
            })
        );
        bytes[0] = 0x83;
        bytes[5..].copy_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(
            FrameHeader::parse(&bytes, 0, MAX_FRAMED_VERSION),
            Err(FrameError::NegativeLength {
                offset: 0,
                stream: 7,
                length: -2
            })
        );
    }

    #[test]
    fn opcodes_round_trip_with_their_names() {
        for byte in 0..=255u8 {
            let opcode = HeaderOpcode::from_byte(byte);
            assert_eq!(opcode.to_byte(), byte);
            assert_eq!(opcode.is_known(), byte <= 0x10 && byte != 0x04);
            assert_eq!(Opcode::try_from(byte).ok(), opcode.known());
        }
        let known: Vec<Opcode> = (0..=255u8).filter_map(Opcode::from_byte).collect();
        assert_eq!(known, Opcode::ALL);
        for op in Opcode::ALL {
            assert_eq!(op.to_string().to_lowercase().parse(), Ok(op));
            assert_eq!(Opcode::from_byte(op as u8), Some(op));
        }
        assert!("CREDENTIALS".parse::<Opcode>().is_err());
        assert_eq!(Opcode::AuthChallenge.to_string(), "AUTH_CHALLENGE");
        assert_eq!(HeaderOpcode::from_byte(0x04).to_string(), "0x04");
        assert!(Opcode::Query.goes(Direction::Request));
        assert!(!Opcode::Query.goes(Direction::Response));
        assert!(!HeaderOpcode::Unknown(0x04).goes(Direction::Request));
        let v5: [u8; 9] = [0x85, 0, 0, 1, 0x02, 0, 0, 0, 0];
        assert!(FrameHeader::parse(&v5, 0, MAX_FRAMED_VERSION).is_err());
        let header = FrameHeader::parse(&v5, 0, MAX_VERSION).unwrap();
        assert_eq!((header.version, header.opcode), (5, Opcode::Ready.into()));
        assert_eq!(header.to_bytes(), v5);
    }

    #[test]
    fn compressible_frames() {
        let header = |flags, opcode, length| FrameHeader {
            version: 4,
            direction: Direction::Request,
            flags: Flags(flags),
            stream: 0,
            opcode: HeaderOpcode::Known(opcode),
            length,
        };
        assert!(header(0, Opcode::Query, 10).is_compressible());
        assert!(!header(0x01, Opcode::Query, 10).is_compressible());
        assert!(!header(0, Opcode::Options, 0).is_compressible());
        assert!(!header(0, Opcode::Startup, 22).is_compressible());
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
        assert_eq!(
            (offset, header.opcode, &body[..]),
            (9, Opcode::Supported.into(), &b"hello"[..])
        );
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
        assert!(body.capacity() <= READ_STEP);
    }

    proptest::proptest! {
        #[test]
        fn random_streams_never_panic_and_both_walks_agree(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            valid_header in proptest::prelude::any::<bool>(),
        ) {
            let mut bytes = bytes;
            if valid_header && bytes.len() >= HEADER_LEN {
                bytes[0] = 0x84;
                let length = (bytes.len() as i32 - 9) / 2;
                bytes[5..9].copy_from_slice(&length.to_be_bytes());
            }
            let from_slice: Vec<_> = Frames::new(&bytes)
                .map(|f| f.map(|f| (f.offset, f.header, f.body.to_vec())).map_err(|e| e.to_string()))
                .collect();
            let mut reader = FrameReader::new(&bytes[..]);
            let mut from_stream = Vec::new();
            let mut body = Vec::new();
            loop {
                match reader.next_frame(&mut body) {
                    Ok(Some((offset, header))) => from_stream.push(Ok((offset, header, body.clone()))),
                    Ok(None) => break,
                    Err(e) => {
                        from_stream.push(Err(e.to_string()));
                        break;
                    }
                }
            }
            proptest::prop_assert_eq!(from_slice, from_stream);
        }
    }
}
