//! TCP reassembly per connection and direction.
//!
//! Each direction maps 32-bit sequence numbers (wrapping) to 64-bit offsets in its byte stream,
//! counted from the byte after the SYN, or from the first segment seen when the capture starts
//! mid-connection (earlier bytes arriving later are then dropped as old). Bytes are delivered in
//! stream order exactly once:
//!
//! - in-order segments are passed on straight from the packet (no copy);
//! - segments ahead of the next expected byte are copied into a per-direction buffer until the
//!   hole before them is filled;
//! - retransmitted and overlapping bytes: the **first copy seen wins** — bytes already delivered or
//!   buffered are never replaced, only the parts of a later segment not yet seen are used;
//! - the bytes of a segment the capture cut short (its snapshot length, see [`Segment::cut`]) are
//!   a known hole: reported as a [`Event::Gap`] with the packet's
//!   captured length as soon as the bytes before them are delivered, and delivery goes on;
//! - a hole that cannot be filled is reported once as a [`Event::Gap`] with its size, and delivery
//!   goes on after it. A hole is given up when the direction's buffer would exceed
//!   [`Limits::per_direction`] or all buffers together [`Limits::total`] (the largest buffer gives
//!   up its first hole), when the connection is reset or evicted, and at the end of the capture;
//! - a SYN without ACK on a known 4-tuple with another initial sequence number, or on a closed
//!   connection, starts a new connection (the old one is closed with [`CloseReason::Reused`]);
//! - a connection closes when both directions have delivered up to their FIN, or on an RST whose
//!   sequence number is the next byte its direction owes: from the next byte to deliver to the end
//!   of what the direction sent (its FIN included). Any other RST is ignored, as a TCP stack
//!   ignores one that is not exactly its next expected byte (RFC 5961), and counted; later
//!   segments of a closed connection are ignored, and the first one per connection that brings
//!   bytes never delivered is counted ([`TcpStats::lost_after_close`]). Beyond [`Limits::connections`] tracked
//!   connections the least recently active are evicted (closed ones, kept to recognise their late
//!   segments, first), a sixty-fourth of them at a time.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

use super::link::Segment;
use super::{CloseReason, Connection, Direction, Event, Timestamp};

/// Memory bounds of the reassembler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes buffered ahead of a hole in one direction (default 4 MiB).
    pub per_direction: usize,
    /// Bytes buffered in all directions together (default 32 MiB).
    pub total: usize,
    /// Connections tracked at once, closed ones included (default 65,536; a tracked connection
    /// costs about 300 bytes here).
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_direction: 4 << 20,
            total: 32 << 20,
            connections: 65_536,
        }
    }
}

/// Counters of what the reassembler saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Segments processed.
    pub segments: u64,
    /// Payload bytes seen again after a first copy (retransmissions, overlaps).
    pub duplicate_bytes: u64,
    /// Segments that arrived after their connection closed.
    pub after_close: u64,
    /// Connections evicted because of [`Limits::connections`].
    pub evicted: u64,
    /// RST segments ignored because their sequence number is not the next byte their direction
    /// owes (RFC 5961).
    pub ignored_resets: u64,
    /// Closed connections that later got segments bringing bytes never delivered (counted once
    /// per connection): their data after the close is not delivered.
    pub lost_after_close: u64,
}

/// What a buffered out-of-order piece of a stream holds.
#[derive(Debug)]
enum Content {
    /// Captured bytes.
    Bytes(Vec<u8>),
    /// This many bytes that the capture cut off packets of `snapshot_len` captured bytes.
    NotCaptured { len: u64, snapshot_len: u32 },
}

/// What buffering a [`Content::NotCaptured`] piece costs, counted against the limits.
const NOT_CAPTURED_COST: usize = 64;

/// A buffered out-of-order piece of a stream.
#[derive(Debug)]
struct Piece {
    timestamp: Timestamp,
    content: Content,
}

impl Piece {
    /// Stream bytes the piece covers.
    fn len(&self) -> u64 {
        match &self.content {
            Content::Bytes(bytes) => bytes.len() as u64,
            Content::NotCaptured { len, .. } => *len,
        }
    }

    /// Buffer bytes the piece costs.
    fn cost(&self) -> usize {
        match &self.content {
            Content::Bytes(bytes) => bytes.len(),
            Content::NotCaptured { .. } => NOT_CAPTURED_COST,
        }
    }
}

/// What a segment brings to be buffered: captured bytes, or bytes the capture cut off packets of
/// the given captured length.
#[derive(Debug, Clone, Copy)]
enum Incoming<'a> {
    Bytes(&'a [u8]),
    NotCaptured(u64, u32),
}

impl Incoming<'_> {
    fn len(&self) -> u64 {
        match self {
            Incoming::Bytes(bytes) => bytes.len() as u64,
            Incoming::NotCaptured(len, _) => *len,
        }
    }
}

/// One direction of a connection.
#[derive(Debug, Default)]
struct Half {
    started: bool,
    /// The direction's first byte came after a SYN (so `base` is its ISN + 1).
    from_syn: bool,
    /// Sequence number of stream offset 0.
    base: u32,
    /// Stream offset of the next byte to deliver.
    next: u64,
    /// Out-of-order pieces by stream offset; they never overlap each other nor precede `next`.
    pending: BTreeMap<u64, Piece>,
    /// What the pieces cost ([`Piece::cost`]).
    pending_bytes: usize,
    /// Stream offset of the FIN, once seen.
    fin: Option<u64>,
    /// Stream offset just past the last byte the direction was seen to send (its FIN counting as
    /// one): where an RST may place itself.
    high: u64,
}

impl Half {
    fn start(&mut self, seg: &Segment<'_>) {
        self.started = true;
        self.from_syn = seg.syn;
        self.base = if seg.syn {
            seg.seq.wrapping_add(1)
        } else {
            seg.seq
        };
    }

    /// Stream offset of sequence number `seq`: the one nearest to `next` (handles wrap-around).
    fn offset_of(&self, seq: u32) -> i64 {
        let expected = self.base.wrapping_add(self.next as u32);
        self.next as i64 + i64::from(seq.wrapping_sub(expected) as i32)
    }

    fn finished(&self) -> bool {
        self.fin.is_some_and(|fin| self.next >= fin)
    }

    /// Whether an RST with sequence number `seq` ends the connection: it is a byte the direction
    /// owes, from the next one to deliver to just past the last one it sent (RFC 5961 takes only
    /// the next expected byte; a capture may still miss or buffer some before it).
    fn resets_at(&self, seq: u32) -> bool {
        let offset = self.offset_of(seq);
        offset >= self.next as i64 && offset <= self.high.max(self.next) as i64
    }

    /// Whether a segment's bytes from stream offset `start` to `end` hold any not delivered yet.
    fn brings_new(&self, start: i64, end: i64) -> bool {
        end > start && (!self.started || end > self.next as i64)
    }
}

#[derive(Debug)]
struct Conn {
    info: Connection,
    halves: [Half; 2],
    closed: bool,
    /// Value of the reassembler's segment counter when this connection last saw a segment.
    last_seen: u64,
    /// Bytes after its close were counted in [`TcpStats::lost_after_close`].
    lost_counted: bool,
}

/// Key of a 4-tuple, the same for both directions.
type Key = (SocketAddr, SocketAddr);

fn key(a: SocketAddr, b: SocketAddr) -> Key {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Reassembles the TCP streams of a capture; feed it segments in capture order.
#[derive(Debug, Default)]
pub struct Reassembler {
    limits: Limits,
    conns: HashMap<Key, Conn, foldhash::fast::RandomState>,
    next_id: u64,
    total_pending: usize,
    stats: TcpStats,
}

fn direction_of(index: usize) -> Direction {
    if index == 0 {
        Direction::FromInitiator
    } else {
        Direction::FromResponder
    }
}

impl Reassembler {
    /// A reassembler with the given memory bounds.
    pub fn new(limits: Limits) -> Self {
        Reassembler {
            limits,
            next_id: 1,
            ..Default::default()
        }
    }

    /// What was counted so far.
    pub fn stats(&self) -> TcpStats {
        self.stats
    }

    /// Processes one segment captured at `timestamp`, reporting what it completes to `sink`.
    pub fn segment(
        &mut self,
        seg: &Segment<'_>,
        timestamp: Timestamp,
        sink: &mut dyn FnMut(Event<'_>),
    ) {
        self.stats.segments += 1;
        let clock = self.stats.segments;
        let k = key(seg.src, seg.dst);
        let opening = seg.syn && !seg.ack;
        let renew = match self.conns.get(&k) {
            None => true,
            Some(conn) => {
                let d = if seg.src == conn.info.initiator { 0 } else { 1 };
                let half = &conn.halves[d];
                if opening {
                    // A retransmitted SYN repeats the ISN; anything else is a new connection.
                    conn.closed || !(half.from_syn && half.base == seg.seq.wrapping_add(1))
                } else {
                    conn.closed
                        && seg.syn
                        && !(half.from_syn && half.base == seg.seq.wrapping_add(1))
                }
            }
        };
        if renew {
            if let Some(old) = self.conns.remove(&k) {
                self.close(old, timestamp, CloseReason::Reused, sink);
            } else if self.conns.len() >= self.limits.connections.max(1) {
                self.evict(timestamp, sink);
            }
            // SYN without ACK comes from the initiator, SYN+ACK from the responder; without a SYN
            // the first sender seen is taken as the initiator.
            let (initiator, responder) = if seg.syn && seg.ack {
                (seg.dst, seg.src)
            } else {
                (seg.src, seg.dst)
            };
            let conn = Conn {
                info: Connection {
                    id: self.next_id,
                    initiator,
                    responder,
                    syn_seen: seg.syn,
                },
                halves: Default::default(),
                closed: false,
                last_seen: clock,
                lost_counted: false,
            };
            self.next_id += 1;
            sink(Event::Opened {
                conn: &conn.info,
                timestamp,
            });
            self.conns.insert(k, conn);
        }
        let Some(conn) = self.conns.get_mut(&k) else {
            return;
        };
        if conn.closed {
            self.stats.after_close += 1;
            let half = &conn.halves[if seg.src == conn.info.initiator { 0 } else { 1 }];
            let start = half.offset_of(if seg.syn {
                seg.seq.wrapping_add(1)
            } else {
                seg.seq
            });
            let end = start + seg.payload.len() as i64;
            if !conn.lost_counted && half.brings_new(start, end) {
                conn.lost_counted = true;
                self.stats.lost_after_close += 1;
            }
            return;
        }
        conn.last_seen = clock;
        let d = if seg.src == conn.info.initiator { 0 } else { 1 };
        let id = conn.info.id;
        let half = &mut conn.halves[d];
        if !half.started {
            half.start(seg);
        }
        let data_seq = if seg.syn {
            seg.seq.wrapping_add(1)
        } else {
            seg.seq
        };
        let start = half.offset_of(data_seq);
        let captured_end = start + seg.payload.len() as i64;
        let missing = seg.cut.map_or(0, |cut| cut.missing);
        let end = captured_end + i64::from(missing);
        if seg.fin && half.fin.is_none() && end >= 0 {
            half.fin = Some(end as u64);
        }
        let sent_end = end + i64::from(seg.fin);
        if sent_end > half.high as i64 {
            half.high = sent_end as u64;
        }
        let mut payload = seg.payload;
        let mut start = start;
        if start < 0 {
            // Before the first byte this capture knows of: only the part from offset 0 counts.
            let skip = (-start).min(payload.len() as i64) as usize;
            payload = &payload[skip..];
            start = 0;
        }
        let start = start as u64;
        let direction = direction_of(d);
        if !payload.is_empty() {
            let end = start + payload.len() as u64;
            if end <= half.next {
                self.stats.duplicate_bytes += payload.len() as u64;
            } else if start <= half.next && half.pending.is_empty() {
                // The common case: in order, passed on without a copy.
                let skip = (half.next - start) as usize;
                self.stats.duplicate_bytes += skip as u64;
                sink(Event::Data {
                    conn: id,
                    direction,
                    timestamp,
                    offset: half.next,
                    bytes: &payload[skip..],
                });
                half.next = end;
            } else {
                self.buffer(k, d, start, Incoming::Bytes(payload), timestamp, sink);
            }
        }
        if let Some(cut) = seg.cut.filter(|_| missing > 0 && end > 0) {
            let from = captured_end.max(0) as u64;
            let missing = end as u64 - from;
            self.not_captured(k, d, from, missing, cut.captured, timestamp, sink);
        }
        let Some(conn) = self.conns.get_mut(&k) else {
            return;
        };
        let reset = seg.rst && {
            let owed = conn.halves[d].resets_at(seg.seq);
            if !owed {
                self.stats.ignored_resets += 1;
            }
            owed
        };
        if reset {
            let conn = self.conns.remove(&k).expect("looked up above");
            self.close(conn, timestamp, CloseReason::Reset, sink);
        } else if conn.halves.iter().all(Half::finished) {
            let conn = self.conns.remove(&k).expect("looked up above");
            self.close(conn, timestamp, CloseReason::Finished, sink);
        }
    }

    /// The `missing` bytes from stream offset `from` that the capture cut off a segment of
    /// `snapshot_len` captured bytes: reported as a gap once the bytes before them are delivered.
    #[allow(clippy::too_many_arguments)]
    fn not_captured(
        &mut self,
        k: Key,
        d: usize,
        from: u64,
        missing: u64,
        snapshot_len: u32,
        timestamp: Timestamp,
        sink: &mut dyn FnMut(Event<'_>),
    ) {
        let Some(conn) = self.conns.get_mut(&k) else {
            return;
        };
        let half = &mut conn.halves[d];
        let end = from + missing;
        if end <= half.next {
            return;
        }
        if from <= half.next && half.pending.is_empty() {
            sink(Event::Gap {
                conn: conn.info.id,
                direction: direction_of(d),
                timestamp,
                offset: half.next,
                missing: end - half.next,
                snapshot_len: Some(snapshot_len),
            });
            half.next = end;
        } else {
            let incoming = Incoming::NotCaptured(missing, snapshot_len);
            self.buffer(k, d, from, incoming, timestamp, sink);
        }
    }

    /// Puts the unseen parts of an out-of-order segment (its bytes, or bytes the capture cut off)
    /// into the direction's buffer, giving up holes when the limits require it, then delivers what
    /// became contiguous.
    fn buffer(
        &mut self,
        k: Key,
        d: usize,
        start: u64,
        incoming: Incoming<'_>,
        timestamp: Timestamp,
        sink: &mut dyn FnMut(Event<'_>),
    ) {
        let Some(conn) = self.conns.get_mut(&k) else {
            return;
        };
        let id = conn.info.id;
        let half = &mut conn.halves[d];
        // The parts of [start, end) not yet delivered nor buffered (first copy wins).
        let end = start + incoming.len();
        let mut fresh: Vec<(u64, u64)> = Vec::new();
        let mut at = start.max(half.next);
        if let Some((&k0, p)) = half.pending.range(..=at).next_back() {
            at = at.max(k0 + p.len());
        }
        if at < end {
            for (&k1, p) in half.pending.range(at..end) {
                if k1 > at {
                    fresh.push((at, k1));
                }
                at = at.max(k1 + p.len());
            }
            if at < end {
                fresh.push((at, end));
            }
        }
        if let Incoming::Bytes(payload) = incoming {
            let new_bytes: u64 = fresh.iter().map(|(a, b)| b - a).sum();
            self.stats.duplicate_bytes += payload.len() as u64 - new_bytes;
        }
        for (a, b) in fresh {
            let content = match incoming {
                Incoming::Bytes(payload) => {
                    Content::Bytes(payload[(a - start) as usize..(b - start) as usize].to_vec())
                }
                Incoming::NotCaptured(_, snapshot_len) => Content::NotCaptured {
                    len: b - a,
                    snapshot_len,
                },
            };
            let piece = Piece { timestamp, content };
            half.pending_bytes += piece.cost();
            self.total_pending += piece.cost();
            half.pending.insert(a, piece);
        }
        self.total_pending -= deliver_contiguous(id, d, half, sink);
        // Over a limit: this direction gives up holes first, then the largest buffer of all.
        loop {
            let conn = self.conns.get_mut(&k).expect("present");
            let half = &mut conn.halves[d];
            if half.pending_bytes > self.limits.per_direction {
                self.total_pending -= skip_hole(id, d, half, timestamp, sink);
            } else if self.total_pending > self.limits.total {
                self.relieve_largest(timestamp, sink);
            } else {
                break;
            }
        }
    }

    /// Gives up the first hole of the direction with the most buffered bytes.
    fn relieve_largest(&mut self, timestamp: Timestamp, sink: &mut dyn FnMut(Event<'_>)) {
        let victim = self
            .conns
            .iter()
            .flat_map(|(key, conn)| (0..2).map(move |i| (key, i, conn)))
            .max_by_key(|(_, i, conn)| {
                (
                    conn.halves[*i].pending_bytes,
                    std::cmp::Reverse((conn.info.id, *i)),
                )
            })
            .map(|(key, i, _)| (*key, i));
        if let Some((vk, vi)) = victim {
            let conn = self.conns.get_mut(&vk).expect("present");
            let id = conn.info.id;
            self.total_pending -= skip_hole(id, vi, &mut conn.halves[vi], timestamp, sink);
        }
    }

    /// Evicts the least recently active sixty-fourth of the tracked connections, closed ones
    /// first (a cyclic load just over the limit then loses few connections, not an eighth of
    /// them at each new one).
    fn evict(&mut self, timestamp: Timestamp, sink: &mut dyn FnMut(Event<'_>)) {
        let mut by_age: Vec<(bool, u64, u64, Key)> = self
            .conns
            .iter()
            .map(|(k, c)| (!c.closed, c.last_seen, c.info.id, *k))
            .collect();
        let count = (by_age.len() / 64).max(1);
        if count < by_age.len() {
            by_age.select_nth_unstable(count);
        }
        by_age.truncate(count);
        by_age.sort_unstable();
        for (_, _, _, k) in by_age {
            if let Some(conn) = self.conns.remove(&k) {
                if !conn.closed {
                    self.stats.evicted += 1;
                }
                self.close(conn, timestamp, CloseReason::Evicted, sink);
            }
        }
    }

    /// Ends a connection: delivers what is buffered (reporting its holes) and says why it ended.
    /// A connection already closed ends silently.
    fn close(
        &mut self,
        mut conn: Conn,
        timestamp: Timestamp,
        reason: CloseReason,
        sink: &mut dyn FnMut(Event<'_>),
    ) {
        if conn.closed {
            return;
        }
        let id = conn.info.id;
        for (d, half) in conn.halves.iter_mut().enumerate() {
            while !half.pending.is_empty() {
                self.total_pending -= skip_hole(id, d, half, timestamp, sink);
            }
            if let Some(fin) = half.fin {
                if fin > half.next {
                    sink(Event::Gap {
                        conn: id,
                        direction: direction_of(d),
                        timestamp,
                        offset: half.next,
                        missing: fin - half.next,
                        snapshot_len: None,
                    });
                    half.next = fin;
                }
            }
        }
        sink(Event::Closed {
            conn: id,
            timestamp,
            reason,
        });
        // Keep a closed connection known so its late segments are not taken for a new one.
        if reason != CloseReason::Evicted && reason != CloseReason::EndOfCapture {
            conn.closed = true;
            // What was delivered stays known (to tell new bytes from retransmitted ones); the
            // buffers were emptied above.
            for half in &mut conn.halves {
                half.pending = BTreeMap::new();
            }
            let k = key(conn.info.initiator, conn.info.responder);
            if reason != CloseReason::Reused {
                self.conns.insert(k, conn);
            }
        }
    }

    /// Ends the capture: every open connection delivers what it buffered and closes, in the order
    /// they opened.
    pub fn finish(&mut self, timestamp: Timestamp, sink: &mut dyn FnMut(Event<'_>)) {
        let mut conns: Vec<Conn> = self.conns.drain().map(|(_, c)| c).collect();
        conns.sort_unstable_by_key(|c| c.info.id);
        for conn in conns {
            self.close(conn, timestamp, CloseReason::EndOfCapture, sink);
        }
    }
}

/// Reports the hole before the first buffered piece as a gap, then delivers what follows it;
/// returns the number of buffered bytes released.
fn skip_hole(
    id: u64,
    d: usize,
    half: &mut Half,
    timestamp: Timestamp,
    sink: &mut dyn FnMut(Event<'_>),
) -> usize {
    if let Some((&first, _)) = half.pending.first_key_value() {
        if first > half.next {
            sink(Event::Gap {
                conn: id,
                direction: direction_of(d),
                timestamp,
                offset: half.next,
                missing: first - half.next,
                snapshot_len: None,
            });
            half.next = first;
        }
    }
    deliver_contiguous(id, d, half, sink)
}

/// Delivers the buffered pieces that start at the next expected byte; returns the bytes released.
fn deliver_contiguous(
    id: u64,
    d: usize,
    half: &mut Half,
    sink: &mut dyn FnMut(Event<'_>),
) -> usize {
    let mut released = 0;
    while let Some(entry) = half.pending.first_entry() {
        if *entry.key() > half.next {
            break;
        }
        let at = *entry.key();
        let piece = entry.remove();
        released += piece.cost();
        half.pending_bytes -= piece.cost();
        let end = at + piece.len();
        if end > half.next {
            let (direction, timestamp, offset) = (direction_of(d), piece.timestamp, half.next);
            sink(match &piece.content {
                Content::Bytes(bytes) => Event::Data {
                    conn: id,
                    direction,
                    timestamp,
                    offset,
                    bytes: &bytes[(half.next - at) as usize..],
                },
                Content::NotCaptured { snapshot_len, .. } => Event::Gap {
                    conn: id,
                    direction,
                    timestamp,
                    offset,
                    missing: end - half.next,
                    snapshot_len: Some(*snapshot_len),
                },
            });
            half.next = end;
        }
    }
    released
}
