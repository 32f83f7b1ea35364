//! Segments of the CQL native protocol v5, which carry the envelopes once a connection is set up.
//!
//! A segment is a header, its CRC24, a payload and the payload's CRC32:
//! - uncompressed: a 3-byte little-endian header (bits 0–16 payload length, bit 17 self-contained),
//! - LZ4: a 5-byte little-endian header (bits 0–16 compressed length, bits 17–33 uncompressed
//!   length, bit 34 self-contained); an uncompressed length of 0 means the payload is stored raw,
//!
//! then the 3-byte little-endian CRC24 of the header bytes, the payload, and the 4-byte
//! little-endian CRC32 of the payload as on the wire (compressed for LZ4). As in Cassandra's
//! `Crc.java`, the CRC24 uses polynomial 0x1974F0B and initial value 0x875060 over the header bytes
//! in wire order, and the CRC32 (the zlib one) is seeded by first feeding the bytes `FA 2D 55 CA`.
//!
//! A self-contained segment holds one or more whole envelopes; an envelope too large for one
//! segment is spread over several segments that are not self-contained. [`EnvelopeAssembler`]
//! turns segment payloads back into envelopes.

use super::frame::{split_frame, FrameError, FrameHeader, HEADER_LEN, MAX_VERSION};
use crate::lz4::{self, Lz4Error};

/// The largest payload a segment carries: 17 bits of length (128 KiB − 1).
pub const MAX_PAYLOAD_LEN: usize = (1 << 17) - 1;

/// Size of a segment's CRC24.
pub const CRC24_LEN: usize = 3;

/// Size of a segment's trailing CRC32.
pub const CRC32_LEN: usize = 4;

const CRC24_INIT: u32 = 0x87_5060;
const CRC24_POLY: u32 = 0x197_4F0B;
const CRC32_SEED: [u8; 4] = [0xfa, 0x2d, 0x55, 0xca];
const LENGTH_MASK: u64 = MAX_PAYLOAD_LEN as u64;

/// Cassandra's CRC24 of a segment header's bytes.
pub fn crc24(bytes: &[u8]) -> u32 {
    bytes.iter().fold(CRC24_INIT, |mut crc, &byte| {
        crc ^= u32::from(byte) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x100_0000 != 0 {
                crc ^= CRC24_POLY;
            }
        }
        crc & 0xff_ffff
    })
}

/// Cassandra's CRC32 of a segment payload (zlib's CRC32 after the seed bytes `FA 2D 55 CA`).
pub fn crc32(payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&CRC32_SEED);
    hasher.update(payload);
    hasher.finalize()
}

/// How a connection's segments are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SegmentFormat {
    /// 3-byte headers, payloads as they are.
    Uncompressed,
    /// 5-byte headers, LZ4-compressed payloads (raw when the uncompressed length is 0).
    Lz4,
}

impl SegmentFormat {
    /// Size of the header without its CRC24: 3 or 5 bytes.
    pub fn header_len(self) -> usize {
        match self {
            SegmentFormat::Uncompressed => 3,
            SegmentFormat::Lz4 => 5,
        }
    }

    /// Size of the header with its CRC24: 6 or 8 bytes.
    pub fn header_with_crc_len(self) -> usize {
        self.header_len() + CRC24_LEN
    }

    /// The format whose header CRC24 matches at the start of `bytes`, when compression is not
    /// known (LZ4 tried first): `None` when neither matches or fewer than 8 bytes are there (the
    /// shortest segment, uncompressed and empty, is 10 bytes), so the answer never changes as
    /// more bytes arrive.
    pub fn detect(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < SegmentFormat::Lz4.header_with_crc_len() {
            return None;
        }
        [SegmentFormat::Lz4, SegmentFormat::Uncompressed]
            .into_iter()
            .find(|format| matches!(SegmentHeader::parse(bytes, *format), Some(h) if h.crc_ok))
    }
}

/// A parsed segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The layout it was read with.
    pub format: SegmentFormat,
    /// Payload bytes on the wire (compressed for LZ4).
    pub payload_len: usize,
    /// Bytes the LZ4 payload decompresses to; 0 for a payload stored raw (always 0 uncompressed).
    pub uncompressed_len: usize,
    /// Whether the payload holds whole envelopes only.
    pub self_contained: bool,
    /// Whether the header's CRC24 matches.
    pub crc_ok: bool,
}

impl SegmentHeader {
    /// Parses the header and its CRC24 at the start of `bytes` in `format`; `None` if too few bytes.
    pub fn parse(bytes: &[u8], format: SegmentFormat) -> Option<Self> {
        let len = format.header_len();
        let header = bytes.get(..len)?;
        let crc = bytes.get(len..len + CRC24_LEN)?;
        let bits = header
            .iter()
            .rev()
            .fold(0u64, |bits, &byte| bits << 8 | u64::from(byte));
        let stored = crc
            .iter()
            .rev()
            .fold(0u32, |crc, &byte| crc << 8 | u32::from(byte));
        let (uncompressed_len, flag_bit) = match format {
            SegmentFormat::Uncompressed => (0, 17),
            SegmentFormat::Lz4 => ((bits >> 17 & LENGTH_MASK) as usize, 34),
        };
        Some(SegmentHeader {
            format,
            payload_len: (bits & LENGTH_MASK) as usize,
            uncompressed_len,
            self_contained: bits >> flag_bit & 1 == 1,
            crc_ok: crc24(header) == stored,
        })
    }

    /// Size of the whole segment: header, CRC24, payload and CRC32.
    pub fn segment_len(&self) -> usize {
        self.format.header_with_crc_len() + self.payload_len + CRC32_LEN
    }

    /// The payload's size once decompressed.
    pub fn content_len(&self) -> usize {
        match self.uncompressed_len {
            0 => self.payload_len,
            len => len,
        }
    }
}

/// A segment cut off a byte slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Offset of the header in the stream.
    pub offset: u64,
    /// The parsed header (with whether its CRC24 matched).
    pub header: SegmentHeader,
    /// The payload as on the wire.
    pub payload: &'a [u8],
    /// Whether the payload's CRC32 matches.
    pub payload_crc_ok: bool,
}

impl Segment<'_> {
    /// Offset of the payload in the stream.
    pub fn payload_offset(&self) -> u64 {
        self.offset + self.header.format.header_with_crc_len() as u64
    }

    /// Puts the payload's content in `out` (replacing it): decompressed for an LZ4 segment with an
    /// uncompressed length, as is otherwise. LZ4 errors carry the offset in the payload.
    pub fn content_into(&self, out: &mut Vec<u8>) -> Result<(), Lz4Error> {
        out.clear();
        match self.header.uncompressed_len {
            0 => {
                out.extend_from_slice(self.payload);
                Ok(())
            }
            len => lz4::decompress_block_into(self.payload, len, MAX_PAYLOAD_LEN, out),
        }
    }
}

/// Cuts the segment at the start of `bytes` (at `offset` of the stream): `None` when `bytes` does
/// not yet hold all of it (the header says how long it is once [`SegmentHeader::parse`] succeeds).
/// CRC mismatches are reported in the result, not refused.
pub fn split_segment(
    bytes: &[u8],
    offset: u64,
    format: SegmentFormat,
) -> Option<(Segment<'_>, &[u8])> {
    let header = SegmentHeader::parse(bytes, format)?;
    let start = format.header_with_crc_len();
    let payload = bytes.get(start..start + header.payload_len)?;
    let crc = bytes.get(start + header.payload_len..header.segment_len())?;
    let stored = u32::from_le_bytes(crc.try_into().ok()?);
    let segment = Segment {
        offset,
        header,
        payload,
        payload_crc_ok: crc32(payload) == stored,
    };
    Some((segment, &bytes[header.segment_len()..]))
}

/// Appends one segment carrying `content` (at most [`MAX_PAYLOAD_LEN`] bytes) to `out`, as
/// Cassandra and the drivers write it: LZ4 payloads that do not shrink are stored raw.
pub fn encode_segment(
    content: &[u8],
    self_contained: bool,
    format: SegmentFormat,
    out: &mut Vec<u8>,
) {
    assert!(content.len() <= MAX_PAYLOAD_LEN, "segment content too long");
    let flag = u64::from(self_contained);
    let mut compressed = Vec::new();
    let (bits, payload) = match format {
        SegmentFormat::Uncompressed => (content.len() as u64 | flag << 17, content),
        SegmentFormat::Lz4 => {
            // A payload under 2^31 bytes always compresses.
            let _ = lz4::compress_block_into(content, &mut compressed);
            if compressed.len() < content.len() {
                let bits = compressed.len() as u64 | (content.len() as u64) << 17 | flag << 34;
                (bits, &compressed[..])
            } else {
                (content.len() as u64 | flag << 34, content)
            }
        }
    };
    let header = &bits.to_le_bytes()[..format.header_len()];
    out.extend_from_slice(header);
    out.extend_from_slice(&crc24(header).to_le_bytes()[..CRC24_LEN]);
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32(payload).to_le_bytes());
}

/// An envelope rebuilt from segment payloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// Stream offset of the segment the envelope starts in.
    pub segment_offset: u64,
    /// Where the envelope starts in that segment's (decompressed) payload.
    pub offset_in_segment: usize,
    /// The envelope's header.
    pub header: FrameHeader,
    /// The envelope's body.
    pub body: Vec<u8>,
}

/// A problem met while rebuilding envelopes from segments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// An envelope header inside a segment payload is not valid.
    #[error("{error} (in the payload of the segment at byte {segment_offset})")]
    BadEnvelope {
        /// Stream offset of the segment.
        segment_offset: u64,
        /// What is wrong (its offset counts from the start of the segment's payload).
        error: FrameError,
    },
    /// A self-contained segment ends inside an envelope, or a self-contained segment comes while an
    /// envelope spread over earlier segments is unfinished; the partial envelope is dropped.
    #[error(
        "{dropped} bytes of an unfinished envelope dropped at the segment at byte {segment_offset}"
    )]
    Unfinished {
        /// Stream offset of the segment where that shows.
        segment_offset: u64,
        /// Bytes dropped.
        dropped: usize,
    },
    /// An envelope spread over segments declares more than the caller's limit.
    #[error(
        "envelope of {length} bytes over the limit of {limit} bytes in the segment at byte \
         {segment_offset}"
    )]
    TooLarge {
        /// Stream offset of the segment where the envelope starts.
        segment_offset: u64,
        /// The body length it declares.
        length: u32,
        /// The limit.
        limit: usize,
    },
}

/// Rebuilds envelopes from the contents of consecutive segments of one direction: several
/// envelopes in one self-contained segment, one envelope over several segments that are not.
/// Memory stays at one envelope; an envelope declaring more than `max_envelope` bytes is refused.
#[derive(Debug)]
pub struct EnvelopeAssembler {
    pending: Vec<u8>,
    pending_start: Option<(u64, usize)>,
    max_envelope: usize,
}

impl EnvelopeAssembler {
    /// An assembler refusing envelopes longer than `max_envelope` bytes.
    pub fn new(max_envelope: usize) -> Self {
        EnvelopeAssembler {
            pending: Vec::new(),
            pending_start: None,
            max_envelope,
        }
    }

    /// Takes the start of an unfinished envelope, when there is one: the offset of the segment it
    /// starts in, where in that segment, and its bytes so far.
    pub fn take_unfinished(&mut self) -> Option<(u64, usize, Vec<u8>)> {
        let (offset, in_segment) = self.pending_start.take()?;
        Some((offset, in_segment, std::mem::take(&mut self.pending)))
    }

    /// Drops an unfinished envelope (after a gap in the stream); returns the bytes dropped.
    pub fn reset(&mut self) -> usize {
        self.pending_start = None;
        std::mem::take(&mut self.pending).len()
    }

    /// Feeds the content of the segment at `segment_offset`; calls `envelope` for each envelope
    /// completed and `problem` for what goes wrong (the rest of a payload after a bad envelope
    /// header is dropped).
    pub fn push(
        &mut self,
        segment_offset: u64,
        self_contained: bool,
        content: &[u8],
        mut envelope: impl FnMut(Envelope),
        mut problem: impl FnMut(AssemblyError),
    ) {
        if self_contained && !self.pending.is_empty() {
            problem(AssemblyError::Unfinished {
                segment_offset,
                dropped: self.reset(),
            });
        }
        if !self.pending.is_empty() {
            self.pending.extend_from_slice(content);
            let (start_offset, start_in) = self.pending_start.unwrap_or((segment_offset, 0));
            match split_frame(&self.pending, 0, MAX_VERSION) {
                Ok((frame, [])) => {
                    envelope(Envelope {
                        segment_offset: start_offset,
                        offset_in_segment: start_in,
                        header: frame.header,
                        body: frame.body.to_vec(),
                    });
                    self.reset();
                }
                Ok(_) => problem(AssemblyError::Unfinished {
                    segment_offset,
                    dropped: self.reset(),
                }),
                Err(FrameError::TruncatedBody { declared, .. })
                    if declared as usize > self.max_envelope =>
                {
                    self.reset();
                    problem(AssemblyError::TooLarge {
                        segment_offset: start_offset,
                        length: declared,
                        limit: self.max_envelope,
                    });
                }
                Err(FrameError::TruncatedBody { .. } | FrameError::TruncatedHeader { .. }) => {}
                Err(error) => {
                    self.reset();
                    problem(AssemblyError::BadEnvelope {
                        segment_offset: start_offset,
                        error,
                    });
                }
            }
            return;
        }
        let mut at = 0;
        while at < content.len() {
            match split_frame(&content[at..], at as u64, MAX_VERSION) {
                Ok((frame, _)) => {
                    envelope(Envelope {
                        segment_offset,
                        offset_in_segment: at,
                        header: frame.header,
                        body: frame.body.to_vec(),
                    });
                    at += HEADER_LEN + frame.body.len();
                }
                Err(FrameError::TruncatedBody { declared, .. }) if !self_contained => {
                    if declared as usize > self.max_envelope {
                        problem(AssemblyError::TooLarge {
                            segment_offset,
                            length: declared,
                            limit: self.max_envelope,
                        });
                    } else {
                        self.pending.extend_from_slice(&content[at..]);
                        self.pending_start = Some((segment_offset, at));
                    }
                    return;
                }
                Err(FrameError::TruncatedHeader { .. }) if !self_contained => {
                    self.pending.extend_from_slice(&content[at..]);
                    self.pending_start = Some((segment_offset, at));
                    return;
                }
                Err(FrameError::TruncatedBody { .. } | FrameError::TruncatedHeader { .. }) => {
                    problem(AssemblyError::Unfinished {
                        segment_offset,
                        dropped: content.len() - at,
                    });
                    return;
                }
                Err(error) => {
                    problem(AssemblyError::BadEnvelope {
                        segment_offset,
                        error,
                    });
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_segments_split_back_with_good_crcs() {
        for format in [SegmentFormat::Uncompressed, SegmentFormat::Lz4] {
            let mut stream = Vec::new();
            encode_segment(&[7; 1000], true, format, &mut stream);
            encode_segment(b"", false, format, &mut stream);
            let (first, rest) = split_segment(&stream, 0, format).unwrap();
            assert!(first.header.crc_ok && first.payload_crc_ok && first.header.self_contained);
            let mut content = Vec::new();
            first.content_into(&mut content).unwrap();
            assert_eq!(content, [7; 1000]);
            let (second, rest) = split_segment(rest, 0, format).unwrap();
            assert_eq!(
                (second.header.payload_len, second.header.self_contained),
                (0, false)
            );
            assert!(rest.is_empty());
            assert_eq!(SegmentFormat::detect(&stream), Some(format));
            assert!(split_segment(&stream[..stream.len() - 1], 0, format).is_some());
            assert!(split_segment(&stream[..first.header.segment_len() - 1], 0, format).is_none());
        }
        assert_eq!(SegmentFormat::detect(&[0; 5]), None);
    }

    #[test]
    fn an_envelope_over_segments_and_a_bad_one() {
        let mut envelope = vec![5, 0, 0, 3, 0x07, 0, 0, 0, 20];
        envelope.extend([1; 20]);
        let mut assembler = EnvelopeAssembler::new(1 << 20);
        let mut found = Vec::new();
        let mut problems = Vec::new();
        for (i, piece) in envelope.chunks(4).enumerate() {
            assembler.push(
                i as u64 * 100,
                false,
                piece,
                |e| found.push(e),
                |p| problems.push(p),
            );
        }
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].segment_offset, found[0].body.len()), (0, 20));
        assembler.push(9, true, &[9; 12], |e| found.push(e), |p| problems.push(p));
        assert_eq!(
            problems[0].to_string(),
            "unsupported protocol version byte 0x09 in frame header at byte 0 (v3 to v5 frames are \
             supported) (in the payload of the segment at byte 9)"
        );
        let huge = [5, 0, 0, 3, 0x07, 0x7f, 0xff, 0xff, 0xff];
        assembler.push(50, false, &huge, |e| found.push(e), |p| problems.push(p));
        assert!(problems[1]
            .to_string()
            .starts_with("envelope of 2147483647 bytes over the limit"));
    }

    proptest::proptest! {
        #[test]
        fn random_segment_streams_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            lz4 in proptest::prelude::any::<bool>(),
        ) {
            let format = if lz4 { SegmentFormat::Lz4 } else { SegmentFormat::Uncompressed };
            let mut assembler = EnvelopeAssembler::new(1 << 16);
            let mut rest = &bytes[..];
            let mut content = Vec::new();
            while let Some((segment, after)) = split_segment(rest, 0, format) {
                if segment.content_into(&mut content).is_ok() {
                    assembler.push(0, segment.header.self_contained, &content, |_| {}, |_| {});
                }
                rest = after;
            }
        }
    }
}
