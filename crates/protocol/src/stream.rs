//! One direction of a CQL connection decoded from its bytes as they arrive.
//!
//! [`StreamDecoder`] is fed bytes in chunks of any size (as TCP reassembly delivers them) and
//! "gap of N bytes" events, and yields [`StreamEvent`]s: envelopes (v3/v4 frames with their body
//! decompressed, v5 envelopes from the unframed handshake or rebuilt from segments) and problems,
//! each with its offset in the stream. It handles:
//! - v3/v4 frame streams, bodies compressed with LZ4 or Snappy (the algorithm the client's STARTUP
//!   names, seen by the client-side decoder or given with [`StreamDecoder::set_compression`];
//!   guessed when unknown);
//! - v5: envelopes sent whole until the client's STARTUP (client side) or the server's READY or
//!   AUTHENTICATE (server side), segments afterwards; the segment layout (uncompressed or LZ4) is
//!   recognised by which header CRC24 matches;
//! - a stream that starts mid-connection, garbage and gaps: decoding resynchronises on the next
//!   plausible frame header (version 3 to 5 with this direction's bit, an opcode of this
//!   direction, flags of v3-v5, a length within the limit) or v5 segment header (CRC24 valid);
//! - bytes the capture did not keep (packets cut to its snapshot length,
//!   [`StreamDecoder::not_captured`]): a frame whose header was captured is given with its header
//!   and [`BodyError::NotCaptured`]; of a v5 segment whose header was captured, the envelopes its
//!   captured bytes finish are given whole and the one they cut short by its header (the rest of an
//!   envelope spread over segments is skipped in the segments that follow); decoding goes on at
//!   their end without a problem for each (they are counted, see [`CutCounts`]).
//!
//! Memory stays at one frame (at most `max_frame` bytes) plus the chunk being fed.

use super::compression::{self, BodyError, Compression};
use super::frame::{split_frame, Direction, FrameHeader, Opcode, HEADER_LEN, MAX_VERSION};
use super::segment::{split_segment, EnvelopeAssembler, SegmentFormat, SegmentHeader};
use crate::cursor::{Cursor, DecodeError};

/// Default largest frame or envelope: 256 MiB, the largest frame Cassandra accepts.
pub const DEFAULT_MAX_FRAME: usize = 256 << 20;

/// Buffer room a decoder keeps after a frame; more is given back once the frame is handed out.
const KEPT_BUFFER: usize = 1 << 20;

/// An envelope (a v3/v4 frame or a v5 envelope) found in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedEnvelope {
    /// Stream offset of the frame header, or, for an envelope carried by segments, of the segment
    /// it starts in.
    pub offset: u64,
    /// For an envelope carried by segments: where it starts in that segment's (decompressed)
    /// payload.
    pub in_segment: Option<usize>,
    /// The header as on the wire (the compression flag is kept even though the body is given
    /// decompressed).
    pub header: FrameHeader,
    /// The body, decompressed when the frame is compressed, or why it could not be.
    pub body: Result<Vec<u8>, BodyError>,
}

/// Something wrong in the stream, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Stream offset where it shows.
    pub offset: u64,
    /// What is wrong (one line).
    pub message: String,
}

/// What a [`StreamDecoder`] yields. Exhaustive on purpose: a consumer must decide
/// what to do with a kind added later (none may be dropped unseen), so adding one is a breaking change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// A whole envelope.
    Envelope(DecodedEnvelope),
    /// A problem; decoding goes on.
    Problem(Problem),
}

/// What the decoder expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing seen yet (or lost after a gap): a frame header or a segment header.
    Unknown,
    /// Whole frames (v3/v4, or v5 before the switch to segments).
    Frames,
    /// v5 segments, in this layout once known.
    Segments(Option<SegmentFormat>),
}

/// A frame or v5 segment whose header was captured and whose remaining bytes are skipped
/// because some of them were not captured.
#[derive(Debug, Clone)]
struct CutShort {
    /// What was cut short.
    what: Cut,
    /// Stream offset of the byte after it.
    end: u64,
    /// Body bytes captured before the first missing one.
    captured: usize,
    /// Bytes not captured so far.
    missing: u64,
}

/// A frame or v5 segment cut short.
#[derive(Debug, Clone)]
enum Cut {
    /// A frame: its header, and where it starts.
    Frame(FrameHeader, u64),
    /// A v5 segment: its header, where it starts, and the start of its content as far as the
    /// captured bytes give it.
    Segment(SegmentHeader, u64, Vec<u8>),
}

/// What a [`StreamDecoder`] could not decode because the capture did not keep all of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutCounts {
    /// Bytes not captured.
    pub bytes: u64,
    /// Frames given with their header only.
    pub frames: u64,
    /// v5 segments whose captured bytes end before an envelope header (that envelope and the
    /// ones after it in the segment are lost).
    pub segments: u64,
    /// Captured bytes skipped because they follow bytes not captured and no header started them.
    pub skipped: u64,
}

/// The decoder of one direction of one connection (see the module documentation).
#[derive(Debug)]
pub struct StreamDecoder {
    direction: Direction,
    max_frame: usize,
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    base: u64,
    phase: Phase,
    compression: Option<Compression>,
    assembler: EnvelopeAssembler,
    /// Out of sync since this offset, for this reason, having skipped this many bytes.
    lost: Option<(u64, String, u64)>,
    /// The length of the frame whose bytes are awaited (0: none), set by the last step.
    awaited: usize,
    /// The frame or segment being skipped to its end since bytes of it were not captured.
    cut: Option<CutShort>,
    /// Whether the decoder is out of sync because of bytes not captured (its skipped bytes are
    /// counted, not reported).
    lost_to_cut: bool,
    /// What bytes not captured cost.
    cut_counts: CutCounts,
    /// Content bytes still to come, in the segments that follow, of an envelope given by its
    /// header because a segment of it was cut short: skipped.
    cut_envelope_rest: u64,
}

impl StreamDecoder {
    /// A decoder for the bytes going in `direction`, refusing frames and envelopes longer than
    /// `max_frame` bytes (see [`DEFAULT_MAX_FRAME`]).
    pub fn new(direction: Direction, max_frame: usize) -> Self {
        StreamDecoder {
            direction,
            max_frame,
            buf: Vec::new(),
            base: 0,
            phase: Phase::Unknown,
            compression: None,
            assembler: EnvelopeAssembler::new(max_frame),
            lost: None,
            awaited: 0,
            cut: None,
            lost_to_cut: false,
            cut_counts: CutCounts::default(),
            cut_envelope_rest: 0,
        }
    }

    /// What bytes not captured cost so far ([`StreamDecoder::not_captured`]).
    pub fn cut_counts(&self) -> CutCounts {
        self.cut_counts
    }

    /// Sets the body compression of v3/v4 frames, as the client's STARTUP named it (`None`: not
    /// known, both algorithms are tried). The client-side decoder sets it itself when it sees the
    /// STARTUP; the inspector passes it on to the server-side decoder.
    pub fn set_compression(&mut self, compression: Option<Compression>) {
        self.compression = compression;
    }

    /// The body compression in use, as set or learnt from a STARTUP.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// The stream offset of the next byte to be fed.
    pub fn offset(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Feeds the next bytes of the stream; appends what they complete to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamEvent>) {
        let bytes = match &self.cut {
            // The rest of a frame or segment cut short: skipped up to its end.
            Some(cut) => {
                let skip = (cut.end - self.base).min(bytes.len() as u64) as usize;
                self.base += skip as u64;
                self.end_cut(out);
                &bytes[skip..]
            }
            None => bytes,
        };
        if bytes.is_empty() {
            return;
        }
        if self.buf.is_empty() {
            // The common case: whole frames in the bytes given, decoded from them in place; only
            // what they leave unfinished is copied.
            let used = self.process(bytes, out);
            self.reserve_awaited();
            self.buf.extend_from_slice(&bytes[used..]);
        } else {
            self.buf.extend_from_slice(bytes);
            // Out of `self` while the steps borrow it.
            let mut buf = std::mem::take(&mut self.buf);
            let used = self.process(&buf, out);
            buf.drain(..used);
            // A long frame just handed out: its room is given back before its body is decoded.
            if buf.capacity() > KEPT_BUFFER && buf.len() < buf.capacity() / 4 {
                buf.shrink_to_fit();
            }
            self.buf = buf;
            self.reserve_awaited();
        }
    }

    /// Makes room for the whole frame being waited for at once (growing by doubling would leave
    /// up to a frame's size unused).
    fn reserve_awaited(&mut self) {
        if let Some(missing) = self.awaited.checked_sub(self.buf.len()) {
            self.buf.reserve_exact(missing);
        }
        self.awaited = 0;
    }

    /// Says `len` bytes of the stream are missing here: what is buffered is dropped (reported),
    /// and decoding resynchronises on what follows.
    pub fn gap(&mut self, mut len: u64, out: &mut Vec<StreamEvent>) {
        if let Some(cut) = self.cut.as_mut() {
            // Inside a frame or segment already cut short: its missing bytes, up to its end.
            let inside = len.min(cut.end - self.base);
            cut.missing += inside;
            self.base += inside;
            self.end_cut(out);
            len -= inside;
            if len == 0 {
                return;
            }
        }
        let at = self.base + self.buf.len() as u64;
        let pending = self.buf.len() as u64 + self.assembler.reset() as u64;
        self.report_lost(out, "before a gap");
        self.cut_envelope_rest = 0;
        let mut message = format!("gap of {len} bytes in the stream");
        if pending > 0 {
            message += &format!(" ({pending} bytes of an unfinished frame or segment dropped)");
        }
        out.push(problem(at, message));
        self.base = at + len;
        self.buf.clear();
        if self.phase == Phase::Frames {
            self.phase = Phase::Unknown;
        }
        self.lost = Some((
            self.base,
            "no frame or segment header after the gap".into(),
            0,
        ));
    }

    /// Says the next `len` bytes of the stream were not captured (the capture cut its packets to
    /// its snapshot length). A frame whose header was captured is skipped to its end and given
    /// with [`BodyError::NotCaptured`]; a v5 segment whose header was captured is skipped to its
    /// end, and the envelopes its captured bytes hold are given (see the module documentation);
    /// else what is buffered is dropped and decoding resynchronises on what follows. Nothing is
    /// reported: it is counted ([`StreamDecoder::cut_counts`]).
    pub fn not_captured(&mut self, len: u64, out: &mut Vec<StreamEvent>) {
        let at = self.offset();
        self.cut_counts.bytes += len;
        if self.cut.is_none() && self.lost.is_none() {
            self.cut = self.cut_short();
            if self.cut.is_some() {
                self.base = at;
                self.buf.clear();
            }
        }
        let Some(cut) = self.cut.as_mut() else {
            return self.lose_to_cut(at, len, out);
        };
        let inside = len.min(cut.end - at);
        cut.missing += inside;
        self.base = at + inside;
        self.end_cut(out);
        if inside < len {
            self.lose_to_cut(at + inside, len - inside, out);
        }
    }

    /// The frame or segment whose header starts the buffered bytes and that they do not finish.
    fn cut_short(&self) -> Option<CutShort> {
        match self.phase {
            Phase::Frames => {
                let bytes = self.buf.first_chunk::<HEADER_LEN>()?;
                let header = FrameHeader::parse(bytes, self.base, MAX_VERSION).ok()?;
                self.plausible_frame(&self.buf).then_some(CutShort {
                    what: Cut::Frame(header, self.base),
                    end: self.base + (HEADER_LEN + header.length as usize) as u64,
                    captured: self.buf.len() - HEADER_LEN,
                    missing: 0,
                })
            }
            Phase::Segments(Some(format)) => {
                let header = SegmentHeader::parse(&self.buf, format).filter(|h| h.crc_ok)?;
                let payload = self.buf.get(format.header_with_crc_len()..);
                let payload = payload.unwrap_or_default();
                let payload = &payload[..payload.len().min(header.payload_len)];
                let content = match header.uncompressed_len {
                    0 => payload.to_vec(),
                    len => crate::lz4::decompress_prefix(payload, len),
                };
                Some(CutShort {
                    what: Cut::Segment(header, self.base, content),
                    end: self.base + header.segment_len() as u64,
                    captured: self.buf.len(),
                    missing: 0,
                })
            }
            _ => None,
        }
    }

    /// Gives the frame cut short once the stream reached its end.
    fn end_cut(&mut self, out: &mut Vec<StreamEvent>) {
        let Some(cut) = self.cut.take_if(|cut| self.base >= cut.end) else {
            return;
        };
        match cut.what {
            Cut::Frame(header, offset) => {
                self.cut_counts.frames += 1;
                out.push(StreamEvent::Envelope(DecodedEnvelope {
                    offset,
                    in_segment: None,
                    header,
                    body: Err(BodyError::NotCaptured {
                        length: header.length,
                        captured: cut.captured,
                        missing: cut.missing,
                    }),
                }));
            }
            Cut::Segment(header, offset, content) => {
                self.cut_segment(header, offset, &content, out)
            }
        }
    }

    /// Gives what the captured start `content` of the v5 segment at `offset` holds: the envelopes
    /// it finishes, whole, and the one it cuts short by its header (whose rest in the segments
    /// that follow is then skipped); or, when the segment goes on an envelope started before, that
    /// envelope by its header.
    fn cut_segment(
        &mut self,
        header: SegmentHeader,
        offset: u64,
        content: &[u8],
        out: &mut Vec<StreamEvent>,
    ) {
        let total = header.content_len();
        let rest = std::mem::take(&mut self.cut_envelope_rest);
        if rest > 0 && !header.self_contained {
            // More of an envelope already given by its header.
            self.cut_envelope_rest = rest.saturating_sub(total as u64);
            return;
        }
        if let Some((start, in_segment, mut bytes)) = self.assembler.take_unfinished() {
            let before = bytes.len();
            bytes.extend_from_slice(content);
            if !self.give_cut_envelope(start, in_segment, &bytes, before + total, out) {
                self.cut_counts.segments += 1;
            }
            return;
        }
        let mut at = 0;
        while at < total {
            let Some(rest) = content.get(at..) else {
                break;
            };
            match split_frame(rest, at as u64, MAX_VERSION) {
                Ok((frame, _)) => {
                    out.push(StreamEvent::Envelope(DecodedEnvelope {
                        offset,
                        in_segment: Some(at),
                        header: frame.header,
                        body: Ok(frame.body.to_vec()),
                    }));
                    at += HEADER_LEN + frame.body.len();
                }
                Err(_) => {
                    if !self.give_cut_envelope(offset, at, rest, total - at, out) {
                        self.cut_counts.segments += 1;
                    }
                    if header.self_contained {
                        self.cut_envelope_rest = 0;
                    }
                    return;
                }
            }
        }
    }

    /// Gives the envelope starting `bytes` (the captured ones of `len` in its segments so far) by
    /// its header, with [`BodyError::NotCaptured`], and remembers how much of it the following
    /// segments hold; `false` when its header was not captured or is not one.
    fn give_cut_envelope(
        &mut self,
        offset: u64,
        in_segment: usize,
        bytes: &[u8],
        len: usize,
        out: &mut Vec<StreamEvent>,
    ) -> bool {
        let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
            return false;
        };
        let Ok(header) = FrameHeader::parse(header, 0, MAX_VERSION) else {
            return false;
        };
        let length = u64::from(header.length);
        let captured = (bytes.len() - HEADER_LEN).min(header.length as usize);
        self.cut_envelope_rest = (HEADER_LEN as u64 + length).saturating_sub(len as u64);
        self.cut_counts.frames += 1;
        out.push(StreamEvent::Envelope(DecodedEnvelope {
            offset,
            in_segment: Some(in_segment),
            header,
            body: Err(BodyError::NotCaptured {
                length: header.length,
                captured,
                missing: length - captured as u64,
            }),
        }));
        true
    }

    /// Drops what is buffered and resynchronises after `len` bytes from `at` that were not
    /// captured, counting what is skipped (bytes skipped for another reason are reported).
    fn lose_to_cut(&mut self, at: u64, len: u64, out: &mut Vec<StreamEvent>) {
        let dropped = self.assembler.reset() as u64;
        if !self.report_lost(out, "before bytes not captured") {
            self.cut_counts.skipped += self.buf.len() as u64;
        }
        self.cut_counts.skipped += dropped;
        self.cut_envelope_rest = 0;
        self.base = at + len;
        self.buf.clear();
        if self.phase == Phase::Frames {
            self.phase = Phase::Unknown;
        }
        self.lost = Some((self.base, String::new(), 0));
        self.lost_to_cut = true;
    }

    /// Ends the stream: reports bytes left inside an unfinished frame or segment.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(cut) = self.cut.as_mut() {
            // A frame cut short that the stream does not finish: its header is all there is.
            cut.missing += cut.end - self.base;
            self.base = cut.end;
            self.end_cut(out);
        }
        if !self.report_lost(out, "to the end of the stream") && !self.buf.is_empty() {
            out.push(problem(
                self.base,
                format!(
                    "stream ends inside a frame or segment: {} bytes left over",
                    self.buf.len()
                ),
            ));
        }
        let dropped = self.assembler.reset();
        if dropped > 0 {
            out.push(problem(
                self.base + self.buf.len() as u64,
                format!(
                    "stream ends inside an envelope spread over segments: {dropped} bytes dropped"
                ),
            ));
        }
        self.base += self.buf.len() as u64;
        self.buf.clear();
    }

    /// Decodes what `buf` (the buffered bytes, at `self.base`) completes; returns how many of its
    /// bytes were used (or skipped).
    fn process(&mut self, buf: &[u8], out: &mut Vec<StreamEvent>) -> usize {
        let mut pos = 0;
        loop {
            let rest = &buf[pos..];
            let at = self.base + pos as u64;
            if self.lost.is_some() {
                match (0..rest.len()).find(|&i| self.plausible_start(&rest[i..])) {
                    Some(skip) => {
                        pos += skip;
                        if let Some((from, reason, skipped)) = self.lost.take() {
                            let skipped = skipped + skip as u64;
                            if std::mem::take(&mut self.lost_to_cut) {
                                self.cut_counts.skipped += skipped;
                            } else if skipped > 0 {
                                out.push(problem(
                                    from,
                                    format!(
                                        "{reason}: {skipped} bytes skipped, resynchronised at \
                                         byte {}",
                                        self.base + pos as u64
                                    ),
                                ));
                            }
                        }
                        continue;
                    }
                    None => {
                        // Keep the last bytes: a header may start there.
                        let keep = rest.len().min(HEADER_LEN - 1);
                        let skip = rest.len() - keep;
                        if let Some(lost) = self.lost.as_mut() {
                            lost.2 += skip as u64;
                        }
                        pos += skip;
                        break;
                    }
                }
            }
            let step = match self.phase {
                Phase::Unknown => {
                    if rest.len() < HEADER_LEN {
                        break;
                    }
                    // A matching CRC24 is the stronger evidence.
                    if let Some(format) = SegmentFormat::detect(rest) {
                        self.phase = Phase::Segments(Some(format));
                    } else if self.plausible_frame(rest) {
                        self.phase = Phase::Frames;
                    } else {
                        self.lose(at, "no frame or segment header");
                    }
                    continue;
                }
                Phase::Frames => self.frame_step(rest, at, out),
                Phase::Segments(format) => self.segment_step(rest, at, format, out),
            };
            match step {
                Step::Consumed(n) => pos += n,
                Step::NeedMore => break,
                Step::Lost(reason) => self.lose(at, &reason),
            }
        }
        self.base += pos as u64;
        pos
    }

    fn lose(&mut self, at: u64, reason: &str) {
        self.lost = Some((at, format!("{reason} at byte {at}"), 0));
        self.lost_to_cut = false;
        if self.phase == Phase::Frames {
            self.phase = Phase::Unknown;
        }
        if let Phase::Segments(_) = self.phase {
            self.assembler.reset();
            self.cut_envelope_rest = 0;
        }
    }

    /// Reports the bytes skipped while out of sync, the buffered ones included, up to `until`
    /// (a gap, the end); returns whether the decoder was out of sync.
    fn report_lost(&mut self, out: &mut Vec<StreamEvent>, until: &str) -> bool {
        let Some((at, reason, skipped)) = self.lost.take() else {
            return false;
        };
        let skipped = skipped + self.buf.len() as u64;
        if std::mem::take(&mut self.lost_to_cut) {
            self.cut_counts.skipped += skipped;
        } else if skipped > 0 {
            out.push(problem(
                at,
                format!("{reason}: {skipped} bytes skipped {until}"),
            ));
        }
        true
    }

    /// Whether a frame header (in frame phases) or a segment header (in the segment phase) that
    /// makes sense starts `bytes`.
    fn plausible_start(&self, bytes: &[u8]) -> bool {
        match self.phase {
            Phase::Segments(Some(format)) => {
                matches!(SegmentHeader::parse(bytes, format), Some(h) if h.crc_ok)
            }
            Phase::Segments(None) => SegmentFormat::detect(bytes).is_some(),
            Phase::Frames | Phase::Unknown => {
                self.plausible_frame(bytes) || SegmentFormat::detect(bytes).is_some()
            }
        }
    }

    fn plausible_frame(&self, bytes: &[u8]) -> bool {
        let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
            return false;
        };
        match FrameHeader::parse(header, 0, MAX_VERSION) {
            Ok(h) => {
                h.direction == self.direction
                    && h.opcode.goes(self.direction)
                    && h.flags.0 & 0xe0 == 0
                    && h.length as usize <= self.max_frame
            }
            Err(_) => false,
        }
    }

    fn frame_step(&mut self, rest: &[u8], at: u64, out: &mut Vec<StreamEvent>) -> Step {
        let Some(header_bytes) = rest.first_chunk::<HEADER_LEN>() else {
            return Step::NeedMore;
        };
        if !self.plausible_frame(rest) {
            let reason = match FrameHeader::parse(header_bytes, at, MAX_VERSION) {
                Err(error) => error.to_string(),
                Ok(h) if h.length as usize > self.max_frame => format!(
                    "frame of {} bytes over the limit of {} bytes",
                    h.length, self.max_frame
                ),
                Ok(h) => format!(
                    "implausible frame header (version byte 0x{:02x}, flags 0x{:02x}, opcode {})",
                    h.version_byte(),
                    h.flags.0,
                    h.opcode
                ),
            };
            return Step::Lost(reason);
        }
        let Ok(header) = FrameHeader::parse(header_bytes, at, MAX_VERSION) else {
            return Step::Lost("bad frame header".into());
        };
        let len = HEADER_LEN + header.length as usize;
        let Some(body) = rest.get(HEADER_LEN..len) else {
            self.awaited = len;
            return Step::NeedMore;
        };
        let body = if header.is_compressed() && header.version < 5 {
            let mut plain = Vec::new();
            compression::decompress_body(body, self.compression, self.max_frame, &mut plain).map(
                |used| {
                    if self.compression.is_none() {
                        self.compression = Some(used);
                    }
                    plain
                },
            )
        } else {
            Ok(body.to_vec())
        };
        if let (Some(Opcode::Startup), Ok(body)) = (header.opcode.known(), &body) {
            match startup_compression(body) {
                Ok(named) => self.compression = named.as_deref().and_then(Compression::from_name),
                Err(error) => out.push(problem(
                    at + HEADER_LEN as u64 + error.offset as u64,
                    format!("STARTUP body: {error}"),
                )),
            }
        }
        let switches = header.version == 5
            && match self.direction {
                Direction::Request => header.opcode == Opcode::Startup,
                Direction::Response => {
                    matches!(
                        header.opcode.known(),
                        Some(Opcode::Ready | Opcode::Authenticate)
                    )
                }
            };
        if switches {
            self.phase = Phase::Segments(None);
        }
        out.push(StreamEvent::Envelope(DecodedEnvelope {
            offset: at,
            in_segment: None,
            header,
            body,
        }));
        Step::Consumed(len)
    }

    fn segment_step(
        &mut self,
        rest: &[u8],
        at: u64,
        format: Option<SegmentFormat>,
        out: &mut Vec<StreamEvent>,
    ) -> Step {
        let format = match format.or_else(|| SegmentFormat::detect(rest)) {
            Some(format) => format,
            None if rest.len() < SegmentFormat::Lz4.header_with_crc_len() => return Step::NeedMore,
            None => return Step::Lost("no segment header with a valid CRC24".into()),
        };
        self.phase = Phase::Segments(Some(format));
        match SegmentHeader::parse(rest, format) {
            None => return Step::NeedMore,
            Some(header) if !header.crc_ok => {
                return Step::Lost("segment header CRC24 mismatch".into())
            }
            Some(_) => {}
        }
        let Some((segment, _)) = split_segment(rest, at, format) else {
            return Step::NeedMore;
        };
        let len = segment.header.segment_len();
        if !segment.payload_crc_ok {
            out.push(problem(
                segment.payload_offset(),
                format!("segment payload CRC32 mismatch (segment at byte {at})"),
            ));
        }
        let mut content = Vec::new();
        if let Err(error) = segment.content_into(&mut content) {
            out.push(problem(
                segment.payload_offset() + error.offset as u64,
                format!("LZ4 segment payload: {} (segment at byte {at})", error.kind),
            ));
            self.assembler.reset();
            return Step::Consumed(len);
        }
        let self_contained = segment.header.self_contained;
        if self.cut_envelope_rest > 0 {
            // The rest of an envelope given by its header when a segment of it was cut short.
            let rest = std::mem::take(&mut self.cut_envelope_rest);
            if !self_contained {
                self.cut_envelope_rest = rest.saturating_sub(content.len() as u64);
                return Step::Consumed(len);
            }
        }
        let mut problems = Vec::new();
        self.assembler.push(
            at,
            self_contained,
            &content,
            |envelope| {
                out.push(StreamEvent::Envelope(DecodedEnvelope {
                    offset: envelope.segment_offset,
                    in_segment: Some(envelope.offset_in_segment),
                    header: envelope.header,
                    body: Ok(envelope.body),
                }))
            },
            |error| problems.push(problem(at, error.to_string())),
        );
        out.extend(problems);
        Step::Consumed(len)
    }
}

/// What one step of decoding did.
enum Step {
    Consumed(usize),
    NeedMore,
    Lost(String),
}

fn problem(offset: u64, message: String) -> StreamEvent {
    StreamEvent::Problem(Problem { offset, message })
}

/// The `COMPRESSION` value of a STARTUP body (a `[string map]`), if any.
pub fn startup_compression(body: &[u8]) -> Result<Option<String>, DecodeError> {
    let mut cursor = Cursor::<&str>::new(body);
    let count = cursor.u16("string map count")?;
    let mut found = None;
    for _ in 0..count {
        let len = cursor.u16("key length")?;
        let key = cursor.take(usize::from(len), "key")?;
        let len = cursor.u16("value length")?;
        let value = cursor.take(usize::from(len), "value")?;
        if key.eq_ignore_ascii_case(b"COMPRESSION") {
            found = Some(String::from_utf8_lossy(value).into_owned());
        }
    }
    Ok(found)
}
