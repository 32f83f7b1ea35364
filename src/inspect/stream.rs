//! One direction of a CQL connection, bytes in, envelopes out: v3/v4 frames (and v5's unframed
//! exchange before READY), then v5 segments (uncompressed or LZ4, CRC24 header and CRC32 payload
//! checks) carrying envelopes; bodies decompressed (LZ4 or Snappy) when their flag says so.
//!
//! Bytes are pushed as they arrive ([`StreamDecoder::push`]) and envelopes pulled one at a time
//! ([`StreamDecoder::next`]), so the caller can switch the decoder to segments or set the
//! compression between two envelopes (after a STARTUP, a READY). Malformed bytes are reported as
//! [`Output::Problem`] and the decoder resynchronises on the next plausible frame header or v5
//! segment header; memory stays bounded by `max_frame` plus one push.

use crate::lz4;
use crate::protocol::frame::{self, FrameHeader, HEADER_LEN, MAX_VERSION};

/// The body compression of a connection, from its STARTUP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// No STARTUP seen: a compressed body is tried as LZ4, then as Snappy.
    Unknown,
    /// STARTUP without COMPRESSION.
    None,
    /// `lz4`.
    Lz4,
    /// `snappy`.
    Snappy,
}

impl Compression {
    /// The compression a STARTUP's `COMPRESSION` option names (`None` for an absent option).
    pub fn from_startup(option: Option<&str>) -> Self {
        match option.map(str::to_ascii_lowercase).as_deref() {
            Some("lz4") => Compression::Lz4,
            Some("snappy") => Compression::Snappy,
            _ => Compression::None,
        }
    }
}

/// One envelope of a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Offset of its header: in the TCP stream for frames, in the stream of segment payloads
    /// (decompressed, concatenated) for v5 envelopes in segments.
    pub offset: u64,
    /// Whether it came in v5 segments (so `offset` counts payload bytes).
    pub in_segments: bool,
    /// Its header.
    pub header: FrameHeader,
    /// The body, decompressed.
    pub body: Vec<u8>,
}

/// What a [`StreamDecoder`] yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A complete envelope.
    Envelope(Envelope),
    /// Bytes that could not be decoded: where in the TCP stream, and why. Decoding goes on.
    Problem {
        /// Offset in the direction's TCP stream.
        offset: u64,
        /// One line.
        message: String,
    },
}

/// Decodes one direction of a connection.
#[derive(Debug)]
pub struct StreamDecoder {
    /// Bytes received and not yet consumed.
    buf: Vec<u8>,
    /// Position in `buf` of the first unconsumed byte.
    start: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// Whether the next bytes are searched for a plausible header instead of trusted.
    resync: bool,
    /// The direction bit the envelopes must carry (`None`: either).
    expect: Option<frame::Direction>,
    /// Largest body accepted.
    max_frame: usize,
    /// Body compression.
    compression: Compression,
    /// v5 segments: `Some(lz4)` once the connection switched to them.
    segments: Option<bool>,
    /// v5: envelope bytes gathered from segment payloads, not yet consumed.
    envelopes: Vec<u8>,
    /// v5: payload-stream offset of `envelopes[0]`.
    envelopes_base: u64,
    /// Scratch buffer for decompression.
    scratch: Vec<u8>,
}

/// CRC24 of a v5 segment header (the header's bytes as a little-endian integer), as Cassandra's
/// `Crc.computeCrc24` computes it.
pub fn crc24(header: &[u8]) -> u32 {
    let mut crc: u32 = 0x87_5060;
    for &byte in header {
        crc ^= u32::from(byte) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x100_0000 != 0 {
                crc ^= 0x197_4F0B;
            }
        }
    }
    crc & 0xFF_FFFF
}

/// CRC32 of a v5 segment payload: CRC-32 seeded with the bytes `fa 2d 55 ca`.
pub fn crc32(payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[0xFA, 0x2D, 0x55, 0xCA]);
    hasher.update(payload);
    hasher.finalize()
}

/// Most payload bytes a v5 segment carries (17 bits).
const MAX_SEGMENT_PAYLOAD: usize = (1 << 17) - 1;

/// A v5 segment header, checked.
#[derive(Debug, Clone, Copy)]
struct SegmentHeader {
    /// Header bytes, CRC24 included (6 or 8).
    len: usize,
    /// Payload bytes on the wire.
    payload: usize,
    /// Decompressed payload length (0: stored raw, or an uncompressed segment).
    uncompressed: usize,
}

/// Parses the segment header at the start of `bytes`: `None` when too short, `Err` when its CRC24
/// does not match.
fn segment_header(bytes: &[u8], lz4: bool) -> Option<Result<SegmentHeader, u32>> {
    let n = if lz4 { 5 } else { 3 };
    let header = bytes.get(..n + 3)?;
    let mut value = 0u64;
    for (i, &b) in header[..n].iter().enumerate() {
        value |= u64::from(b) << (8 * i);
    }
    let crc = u32::from(header[n]) | u32::from(header[n + 1]) << 8 | u32::from(header[n + 2]) << 16;
    if crc24(&header[..n]) != crc {
        return Some(Err(crc));
    }
    let payload = (value & 0x1_FFFF) as usize;
    let uncompressed = if lz4 {
        ((value >> 17) & 0x1_FFFF) as usize
    } else {
        0
    };
    Some(Ok(SegmentHeader {
        len: n + 3,
        payload,
        uncompressed,
    }))
}

impl StreamDecoder {
    /// A decoder for a direction whose envelopes carry the direction bit `expect` (`None`: not
    /// known yet), accepting bodies up to `max_frame` bytes.
    pub fn new(expect: Option<frame::Direction>, max_frame: usize) -> Self {
        StreamDecoder {
            buf: Vec::new(),
            start: 0,
            base: 0,
            resync: false,
            expect,
            max_frame,
            compression: Compression::Unknown,
            segments: None,
            envelopes: Vec::new(),
            envelopes_base: 0,
            scratch: Vec::new(),
        }
    }

    /// Sets the direction bit the envelopes must carry.
    pub fn expect(&mut self, direction: frame::Direction) {
        self.expect = Some(direction);
    }

    /// Sets the body compression (learnt from a STARTUP).
    pub fn set_compression(&mut self, compression: Compression) {
        self.compression = compression;
    }

    /// Switches to v5 segments (after a v5 STARTUP, READY or AUTHENTICATE), LZ4 ones when the
    /// STARTUP asked for lz4.
    pub fn start_segments(&mut self) {
        self.segments = Some(self.compression == Compression::Lz4);
    }

    /// Whether the decoder reads v5 segments.
    pub fn in_segments(&self) -> bool {
        self.segments.is_some()
    }

    /// Bytes received and not yet made into envelopes.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start + self.envelopes.len()
    }

    /// Stream offset of the next byte expected.
    pub fn end(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Appends the bytes found at `offset` of the stream.
    pub fn push(&mut self, offset: u64, bytes: &[u8]) {
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        if offset != self.end() {
            self.skip_to(offset);
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes before `offset` were lost (a TCP gap): what is buffered is dropped and decoding
    /// resynchronises after it. Returns the problem to report when buffered bytes were dropped.
    pub fn gap(&mut self, offset: u64, missing: u64) -> Output {
        let pending = self.buf.len() - self.start;
        self.skip_to(offset + missing);
        Output::Problem {
            offset,
            message: format!(
                "{missing} bytes never captured (TCP gap){}; resynchronising",
                if pending > 0 {
                    format!(", the {pending} bytes before it dropped")
                } else {
                    String::new()
                }
            ),
        }
    }

    /// Drops everything buffered and resumes at `offset`, searching for a header.
    fn skip_to(&mut self, offset: u64) {
        self.buf.clear();
        self.start = 0;
        self.base = offset;
        self.resync = true;
        self.envelopes.clear();
    }

    /// Stream offset of `buf[start]`.
    fn here(&self) -> u64 {
        self.base + self.start as u64
    }

    /// The next envelope or problem, `None` when more bytes are needed.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Output> {
        if self.segments.is_some() {
            loop {
                if let Some(out) = self.next_in_envelopes() {
                    return Some(out);
                }
                match self.next_segment()? {
                    Ok(()) => continue,
                    Err(problem) => return Some(problem),
                }
            }
        }
        self.next_frame()
    }

    /// Whether `bytes` start with a header this decoder would accept.
    fn plausible(&self, bytes: &[u8]) -> bool {
        let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
            return false;
        };
        match FrameHeader::parse(header, 0, MAX_VERSION) {
            Ok(h) => {
                h.opcode.is_known()
                    && h.opcode.goes(h.direction)
                    && self.expect.is_none_or(|d| d == h.direction)
                    && (h.length as usize) <= self.max_frame
                    && h.flags.0 & 0xE0 == 0
            }
            Err(_) => false,
        }
    }

    /// A v3/v4 frame (or a v5 unframed envelope) from the TCP bytes.
    fn next_frame(&mut self) -> Option<Output> {
        if self.resync {
            let rest = &self.buf[self.start..];
            match (0..rest.len().saturating_sub(HEADER_LEN - 1))
                .find(|&i| self.plausible(&rest[i..]))
            {
                Some(i) => {
                    self.start += i;
                    self.resync = false;
                }
                None => {
                    self.start = self
                        .buf
                        .len()
                        .saturating_sub(HEADER_LEN - 1)
                        .max(self.start);
                    return None;
                }
            }
        }
        let rest = &self.buf[self.start..];
        let header = rest.first_chunk::<HEADER_LEN>()?;
        let offset = self.here();
        let problem = match FrameHeader::parse(header, offset, MAX_VERSION) {
            Err(e) => e.to_string(),
            Ok(h) if !self.plausible(rest) => {
                if (h.length as usize) > self.max_frame {
                    format!(
                        "frame header at byte {offset} (stream {}) declares a {}-byte body, \
                             over the {}-byte limit (--max-frame)",
                        h.stream, h.length, self.max_frame
                    )
                } else {
                    format!(
                        "implausible frame header at byte {offset}: {}",
                        crate::hex::encode(header)
                    )
                }
            }
            Ok(h) => {
                let end = HEADER_LEN + h.length as usize;
                if rest.len() < end {
                    return None;
                }
                let body = rest[HEADER_LEN..end].to_vec();
                self.start += end;
                return Some(self.envelope(offset, false, h, body));
            }
        };
        self.resync = true;
        self.start += 1;
        Some(Output::Problem {
            offset,
            message: format!("{problem}; resynchronising"),
        })
    }

    /// Reads one v5 segment into `envelopes`: `None` when more bytes are needed.
    fn next_segment(&mut self) -> Option<Result<(), Output>> {
        let lz4 = self.segments.unwrap_or(false);
        loop {
            let rest = &self.buf[self.start..];
            let offset = self.here();
            let header = match segment_header(rest, lz4)? {
                Ok(header) => header,
                Err(crc) => {
                    if self.resync {
                        self.start += 1;
                        continue;
                    }
                    self.resync = true;
                    self.start += 1;
                    self.envelopes.clear();
                    return Some(Err(Output::Problem {
                        offset,
                        message: format!(
                            "v5 segment header at byte {offset}: CRC24 0x{crc:06x} does not \
                             match its bytes; resynchronising"
                        ),
                    }));
                }
            };
            let total = header.len + header.payload + 4;
            if rest.len() < total {
                return None;
            }
            let payload = &rest[header.len..header.len + header.payload];
            let stored = u32::from_le_bytes(rest[total - 4..total].try_into().ok()?);
            if crc32(payload) != stored {
                self.start += total;
                self.envelopes.clear();
                self.resync = true;
                return Some(Err(Output::Problem {
                    offset,
                    message: format!(
                        "v5 segment at byte {offset}: payload CRC32 0x{stored:08x} does not match \
                         its {} bytes; its envelopes are dropped",
                        header.payload
                    ),
                }));
            }
            if self.envelopes.is_empty() {
                self.envelopes_base = offset;
            }
            let result = if header.uncompressed > 0 {
                lz4::decompress_block_into(
                    payload,
                    header.uncompressed,
                    MAX_SEGMENT_PAYLOAD,
                    &mut self.scratch,
                )
                .map(|()| self.envelopes.extend_from_slice(&self.scratch))
                .map_err(|e| format!("v5 LZ4 segment at byte {offset}: {e}"))
            } else {
                self.envelopes.extend_from_slice(payload);
                Ok(())
            };
            self.start += total;
            self.resync = false;
            return Some(result.map_err(|message| Output::Problem { offset, message }));
        }
    }

    /// A complete envelope from the gathered segment payloads.
    fn next_in_envelopes(&mut self) -> Option<Output> {
        let header = self.envelopes.first_chunk::<HEADER_LEN>()?;
        let offset = self.envelopes_base;
        match FrameHeader::parse(header, offset, MAX_VERSION) {
            Ok(h) if (h.length as usize) <= self.max_frame => {
                let end = HEADER_LEN + h.length as usize;
                if self.envelopes.len() < end {
                    return None;
                }
                let body = self.envelopes[HEADER_LEN..end].to_vec();
                self.envelopes.drain(..end);
                self.envelopes_base += end as u64;
                Some(self.envelope(offset, true, h, body))
            }
            other => {
                let why = match other {
                    Err(e) => e.to_string(),
                    Ok(h) => format!(
                        "envelope at byte {offset} (stream {}) declares a {}-byte body, over the \
                         {}-byte limit (--max-frame)",
                        h.stream, h.length, self.max_frame
                    ),
                };
                self.envelopes.clear();
                Some(Output::Problem {
                    offset,
                    message: format!("{why} (in v5 segments); dropped up to the next segment"),
                })
            }
        }
    }

    /// The envelope, its body decompressed when flagged (v3/v4 frames only).
    fn envelope(
        &mut self,
        offset: u64,
        in_segments: bool,
        header: FrameHeader,
        body: Vec<u8>,
    ) -> Output {
        if !header.is_compressed() || in_segments || header.version >= 5 {
            return Output::Envelope(Envelope {
                offset,
                in_segments,
                header,
                body,
            });
        }
        let lz4 = |body: &[u8], out: &mut Vec<u8>, max| {
            lz4::decompress_body_into(body, max, out).map_err(|e| format!("LZ4 body: {e}"))
        };
        let snappy = |body: &[u8], out: &mut Vec<u8>, max| {
            let len = snap::raw::decompress_len(body).map_err(|e| format!("Snappy body: {e}"))?;
            if len > max {
                return Err(format!("Snappy body declares {len} bytes, over the limit"));
            }
            out.resize(len, 0);
            snap::raw::Decoder::new()
                .decompress(body, out)
                .map(|n| out.truncate(n))
                .map_err(|e| format!("Snappy body: {e}"))
        };
        let max = self.max_frame;
        let mut out = std::mem::take(&mut self.scratch);
        let result = match self.compression {
            Compression::Lz4 => lz4(&body, &mut out, max),
            Compression::Snappy => snappy(&body, &mut out, max),
            Compression::None => Err("compression flag set but the STARTUP chose none".into()),
            Compression::Unknown => lz4(&body, &mut out, max).or_else(|_| {
                snappy(&body, &mut out, max).map_err(|_| {
                    "compressed body is neither LZ4 nor Snappy (no STARTUP seen)".to_string()
                })
            }),
        };
        let body = match result {
            Ok(()) => {
                let decompressed = out.clone();
                self.scratch = out;
                decompressed
            }
            Err(why) => {
                self.scratch = out;
                return Output::Problem {
                    offset,
                    message: format!(
                        "frame at byte {offset} (stream {}, {}): {why}",
                        header.stream,
                        header.opcode.name().unwrap_or("unknown opcode")
                    ),
                };
            }
        };
        Output::Envelope(Envelope {
            offset,
            in_segments,
            header,
            body,
        })
    }
}
