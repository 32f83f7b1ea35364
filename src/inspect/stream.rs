//! One direction of a CQL connection, bytes in, envelopes out: v3/v4 frames (and v5's unframed
//! exchange before READY), then v5 segments ([`crate::protocol::segment`]: CRC24 and CRC32
//! checked, LZ4 or not) carrying envelopes; v3/v4 bodies decompressed
//! ([`crate::protocol::compression`]) when their flag says so.
//!
//! Bytes are pushed as they arrive ([`StreamDecoder::push`]) and envelopes pulled one at a time
//! ([`StreamDecoder::next`]), so the caller can switch the decoder to segments or set the
//! compression between two envelopes (after a STARTUP, a READY). Malformed bytes are reported as
//! [`Output::Problem`] and the decoder resynchronises on the next plausible frame header or v5
//! segment header; memory stays bounded by `max_frame` plus one push.

use crate::protocol::compression::{self, Compression};
use crate::protocol::frame::{self, FrameHeader, HEADER_LEN, MAX_VERSION};
use crate::protocol::segment::{self, AssemblyError, EnvelopeAssembler, SegmentFormat};
use std::collections::VecDeque;

/// One envelope of a direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Offset in the direction's TCP stream of its header (a frame), or of the v5 segment where
    /// it starts.
    pub offset: u64,
    /// For a v5 envelope in segments: where its header is in that segment's (decompressed)
    /// payload.
    pub in_segment: Option<usize>,
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
    /// Body compression from the STARTUP (`None`: not seen, or none; a flagged body is then
    /// tried as LZ4 and as Snappy).
    compression: Option<Compression>,
    /// v5: the segment layout once the connection switched to segments.
    segments: Option<SegmentFormat>,
    /// v5: envelopes spread over several segments.
    assembler: EnvelopeAssembler,
    /// What the last segment produced, not yet pulled.
    ready: VecDeque<Output>,
    /// Scratch buffer for decompression.
    scratch: Vec<u8>,
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
            compression: None,
            segments: None,
            assembler: EnvelopeAssembler::new(max_frame.saturating_add(HEADER_LEN)),
            ready: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    /// Sets the direction bit the envelopes must carry.
    pub fn expect(&mut self, direction: frame::Direction) {
        self.expect = Some(direction);
    }

    /// Sets the body compression (learnt from a STARTUP).
    pub fn set_compression(&mut self, compression: Option<Compression>) {
        self.compression = compression;
    }

    /// Switches to v5 segments (after a v5 STARTUP, READY or AUTHENTICATE), LZ4 ones when the
    /// STARTUP asked for lz4.
    pub fn start_segments(&mut self) {
        self.segments = Some(match self.compression {
            Some(Compression::Lz4) => SegmentFormat::Lz4,
            _ => SegmentFormat::Uncompressed,
        });
    }

    /// Bytes received and not yet made into envelopes.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
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

    /// Bytes before `offset + missing` were lost (a TCP gap): what is buffered is dropped and
    /// decoding resynchronises after it. Returns the problem to report.
    pub fn gap(&mut self, offset: u64, missing: u64) -> Output {
        let pending = self.buffered();
        self.skip_to(offset + missing);
        let dropped = if pending > 0 {
            format!(", the {pending} bytes before it dropped")
        } else {
            String::new()
        };
        Output::Problem {
            offset,
            message: format!("{missing} bytes never captured (TCP gap){dropped}; resynchronising"),
        }
    }

    /// Drops everything buffered and resumes at `offset`, searching for a header.
    fn skip_to(&mut self, offset: u64) {
        self.buf.clear();
        self.start = 0;
        self.base = offset;
        self.resync = true;
        self.assembler.reset();
    }

    /// Stream offset of `buf[start]`.
    fn here(&self) -> u64 {
        self.base + self.start as u64
    }

    /// The next envelope or problem, `None` when more bytes are needed.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Output> {
        let Some(format) = self.segments else {
            return self.next_frame();
        };
        loop {
            if let Some(out) = self.ready.pop_front() {
                return Some(out);
            }
            self.next_segment(format)?;
        }
    }

    /// Whether `bytes` start with a frame header this decoder would accept.
    fn plausible(&self, bytes: &[u8]) -> bool {
        let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
            return false;
        };
        FrameHeader::parse(header, 0, MAX_VERSION).is_ok_and(|h| {
            h.opcode.is_known()
                && h.opcode.goes(h.direction)
                && self.expect.is_none_or(|d| d == h.direction)
                && (h.length as usize) <= self.max_frame
                && h.flags.0 & 0xE0 == 0
        })
    }

    /// A v3/v4 frame (or a v5 unframed envelope) from the TCP bytes.
    fn next_frame(&mut self) -> Option<Output> {
        if self.resync {
            let rest = &self.buf[self.start..];
            let found = (0..rest.len().saturating_sub(HEADER_LEN - 1))
                .find(|&i| self.plausible(&rest[i..]));
            match found {
                Some(i) => {
                    self.start += i;
                    self.resync = false;
                }
                None => {
                    let keep = self.buf.len().saturating_sub(HEADER_LEN - 1);
                    self.start = keep.max(self.start);
                    return None;
                }
            }
        }
        let rest = &self.buf[self.start..];
        let header = rest.first_chunk::<HEADER_LEN>()?;
        let offset = self.here();
        let problem = match FrameHeader::parse(header, offset, MAX_VERSION) {
            Err(e) => e.to_string(),
            Ok(h) if (h.length as usize) > self.max_frame => format!(
                "frame header at byte {offset} (stream {}) declares a {}-byte body, over the \
                 {}-byte limit (--max-frame)",
                h.stream, h.length, self.max_frame
            ),
            Ok(_) if !self.plausible(rest) => format!(
                "implausible frame header at byte {offset}: {}",
                crate::hex::encode(header)
            ),
            Ok(h) => {
                let end = HEADER_LEN + h.length as usize;
                if rest.len() < end {
                    return None;
                }
                let body = rest[HEADER_LEN..end].to_vec();
                self.start += end;
                return Some(self.frame(offset, h, body));
            }
        };
        self.resync = true;
        self.start += 1;
        Some(Output::Problem {
            offset,
            message: format!("{problem}; resynchronising"),
        })
    }

    /// Reads one v5 segment, queueing its envelopes and problems: `None` when more bytes are
    /// needed.
    fn next_segment(&mut self, format: SegmentFormat) -> Option<()> {
        let offset = self.here();
        let rest = &self.buf[self.start..];
        let header = segment::SegmentHeader::parse(rest, format)?;
        if !header.crc_ok {
            // Search byte by byte for a header whose CRC24 matches; report once.
            if !self.resync {
                self.resync = true;
                self.assembler.reset();
                self.ready.push_back(Output::Problem {
                    offset,
                    message: format!(
                        "v5 segment header at byte {offset}: CRC24 does not match its bytes; \
                         resynchronising"
                    ),
                });
            }
            self.start += 1;
            return Some(());
        }
        let (segment, _) = segment::split_segment(rest, offset, format)?;
        let total = header.segment_len();
        if !segment.payload_crc_ok {
            self.ready.push_back(Output::Problem {
                offset,
                message: format!(
                    "v5 segment at byte {offset}: payload CRC32 does not match its {} bytes; its \
                     envelopes are dropped",
                    header.payload_len
                ),
            });
            self.assembler.reset();
            self.resync = true;
            self.start += total;
            return Some(());
        }
        let resyncing = std::mem::replace(&mut self.resync, false);
        let mut content = std::mem::take(&mut self.scratch);
        match segment.content_into(&mut content) {
            Err(e) => self.ready.push_back(Output::Problem {
                offset,
                message: format!("v5 LZ4 segment at byte {offset}: {e}"),
            }),
            // After a fault, envelopes resume with the next self-contained segment.
            Ok(()) if resyncing && !header.self_contained => {}
            Ok(()) => {
                let ready = &mut self.ready;
                let mut problems = Vec::new();
                self.assembler.push(
                    offset,
                    header.self_contained,
                    &content,
                    |e| {
                        ready.push_back(Output::Envelope(Envelope {
                            offset: e.segment_offset,
                            in_segment: Some(e.offset_in_segment),
                            header: e.header,
                            body: e.body,
                        }))
                    },
                    |e: AssemblyError| problems.push(e.to_string()),
                );
                for message in problems {
                    self.ready.push_back(Output::Problem { offset, message });
                }
            }
        }
        self.scratch = content;
        self.start += total;
        Some(())
    }

    /// The frame, its body decompressed when flagged (v3/v4).
    fn frame(&mut self, offset: u64, header: FrameHeader, body: Vec<u8>) -> Output {
        if !header.is_compressed() || header.version >= 5 {
            return Output::Envelope(Envelope {
                offset,
                in_segment: None,
                header,
                body,
            });
        }
        let mut out = std::mem::take(&mut self.scratch);
        let result =
            compression::decompress_body(&body, self.compression, self.max_frame, &mut out);
        let output = match result {
            Ok(_) => Output::Envelope(Envelope {
                offset,
                in_segment: None,
                header,
                body: out.clone(),
            }),
            Err(why) => Output::Problem {
                offset,
                message: format!(
                    "frame at byte {offset} (stream {}, {}): {why}",
                    header.stream,
                    header.opcode.name().unwrap_or("unknown opcode")
                ),
            },
        };
        self.scratch = out;
        output
    }
}
