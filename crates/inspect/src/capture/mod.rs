//! Packet captures in, reassembled TCP byte streams out. This layer knows nothing of CQL.
//!
//! [`Capture`] reads a pcap or pcapng file as a stream ([`PacketReader`]), cuts each packet down to its
//! TCP segment ([`tcp_segment`]) and reassembles the streams of every connection ([`Reassembler`]), reporting
//! [`Event`]s to a callback: connections opening and closing, stream bytes in order (borrowed from
//! the packet when they arrive in order), gaps that could not be filled, and problems with the
//! file offset of the record they concern. Packets that are not TCP, IP fragments, or of a link
//! type this reader does not know, are skipped and counted in [`Stats`]. A packet the capture cut
//! short (its snapshot length) gives its captured bytes and a gap for the rest.
//!
//! ```no_run
//! use cqlwire_inspect::capture::{Capture, Event};
//! let file = std::fs::File::open("session.pcap").unwrap();
//! let mut capture = Capture::new(std::io::BufReader::new(file)).unwrap();
//! capture
//!     .run(&mut |event| {
//!         if let Event::Data { conn, direction, bytes, .. } = event {
//!             println!("{conn} {direction:?} {} bytes", bytes.len());
//!         }
//!     })
//!     .unwrap();
//! ```

mod file;
mod link;
mod tcp;

use std::io::Read;
use std::net::SocketAddr;

pub use file::{FileError, Format, Packet, PacketReader, Record, MAX_RECORD};
pub use link::{tcp_segment, Cut, NotTcp, Segment};
pub use tcp::{Limits, Reassembler, TcpStats};

/// A capture time, in nanoseconds since the Unix epoch (negative before 1970): the years 1677 to
/// 2262.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The time `nanos` nanoseconds from the epoch, clamped to the years [`Timestamp`] holds.
    pub fn clamped(nanos: i128) -> Self {
        Timestamp(nanos.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    }
}

/// One TCP connection, by its two endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    /// Number of the connection in the capture, from 1 in order of appearance.
    pub id: u64,
    /// The endpoint that sent the SYN; when no SYN was seen, the sender of the first segment.
    pub initiator: SocketAddr,
    /// The other endpoint.
    pub responder: SocketAddr,
    /// Whether the SYN (or SYN+ACK) was captured, so `initiator` is certain.
    pub syn_seen: bool,
}

/// Which way bytes travel on a [`Connection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the initiator to the responder.
    FromInitiator,
    /// From the responder to the initiator.
    FromResponder,
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// Both directions delivered up to their FIN.
    Finished,
    /// An RST was seen.
    Reset,
    /// A new connection (a SYN with another initial sequence number) took its 4-tuple.
    Reused,
    /// Too many connections were tracked; this one had been idle longest.
    Evicted,
    /// The capture ended while it was open.
    EndOfCapture,
}

/// A broken record or packet: where in the file, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Offset of the record (pcap) or block (pcapng) in the file.
    pub offset: u64,
    /// What is wrong, one line.
    pub message: String,
}

/// What the reassembly reports, in capture order. Exhaustive on purpose: a consumer must decide
/// what to do with a kind added later (none may be dropped unseen), so adding one is a breaking change.
#[derive(Debug)]
pub enum Event<'a> {
    /// A connection was seen for the first time.
    Opened {
        /// The connection.
        conn: &'a Connection,
        /// Time of its first segment.
        timestamp: Timestamp,
    },
    /// The next bytes of one direction's stream.
    Data {
        /// [`Connection::id`].
        conn: u64,
        /// Which way the bytes went.
        direction: Direction,
        /// Capture time of the segment that carried them.
        timestamp: Timestamp,
        /// Offset of `bytes[0]` in the direction's stream (gaps included).
        offset: u64,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// Bytes of a direction's stream that were never captured; delivery goes on after them.
    Gap {
        /// [`Connection::id`].
        conn: u64,
        /// Which way the missing bytes went.
        direction: Direction,
        /// Time at which the gap was given up.
        timestamp: Timestamp,
        /// Offset of the first missing byte in the direction's stream.
        offset: u64,
        /// Number of missing bytes.
        missing: u64,
        /// When the bytes are the end of a packet the capture cut short (its snapshot length): the
        /// bytes captured of that packet; `None` when the bytes were never seen.
        snapshot_len: Option<u32>,
    },
    /// The connection ended; no event names it again.
    Closed {
        /// [`Connection::id`].
        conn: u64,
        /// Time of the segment that closed it (or of the last packet, at the end).
        timestamp: Timestamp,
        /// Why.
        reason: CloseReason,
    },
    /// A broken record or packet; the run goes on.
    Problem(Problem),
}

/// Counters of a [`Capture`] run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets read from the file.
    pub packets: u64,
    /// Packets that were TCP segments.
    pub tcp: u64,
    /// Packets skipped because they are IP but not TCP, or not IP at all.
    pub not_tcp: u64,
    /// Packets skipped because they are fragments of an IP datagram (not reassembled).
    pub ip_fragments: u64,
    /// Packets skipped because of their link type.
    pub unsupported_link: u64,
    /// Broken records and packets reported as [`Event::Problem`].
    pub problems: u64,
    /// The reassembler's counters.
    pub reassembly: TcpStats,
}

/// A capture being read: file format, link layers and TCP reassembly together.
#[derive(Debug)]
pub struct Capture<'r> {
    reader: PacketReader<'r>,
    reassembler: Reassembler,
    stats: Stats,
    /// Time of the latest packet read, once one was.
    last_time: Option<Timestamp>,
    /// Link types already reported as unsupported (reported once each).
    unsupported: Vec<i32>,
}

impl<'r> Capture<'r> {
    /// Opens a capture with the default [`Limits`]; fails when `reader` is not pcap or pcapng.
    pub fn new<R: Read + 'r>(reader: R) -> Result<Self, FileError> {
        Self::with_limits(reader, Limits::default())
    }

    /// Opens a capture with the given reassembly limits.
    pub fn with_limits<R: Read + 'r>(reader: R, limits: Limits) -> Result<Self, FileError> {
        Ok(Capture {
            reader: PacketReader::new(reader)?,
            reassembler: Reassembler::new(limits),
            stats: Stats::default(),
            last_time: None,
            unsupported: Vec::new(),
        })
    }

    /// Goes on with the next file of the same capture (rotated files, `tcpdump -C`, given in
    /// order): the connections and their streams continue across the boundary, a frame split
    /// between two files included; fails when `reader` is not pcap or pcapng.
    pub fn continue_with<R: Read + 'r>(&mut self, reader: R) -> Result<(), FileError> {
        self.reader = PacketReader::new(reader)?;
        Ok(())
    }

    /// Reads the current file to its end ([`Capture::step`] until it returns false), without
    /// ending the capture: call [`Capture::continue_with`] for a next file, or
    /// [`Capture::finish`].
    pub fn read_file(&mut self, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), FileError> {
        while self.step(sink)? {}
        Ok(())
    }

    /// The container format of the file.
    pub fn format(&self) -> Format {
        self.reader.format()
    }

    /// What was counted so far.
    pub fn stats(&self) -> Stats {
        Stats {
            reassembly: self.reassembler.stats(),
            ..self.stats
        }
    }

    /// Reads one record and reports what it completes; false once the file has ended (call
    /// [`Capture::finish`] then). An `Err` is a read error of the input.
    pub fn step(&mut self, sink: &mut dyn FnMut(Event<'_>)) -> Result<bool, FileError> {
        let packet = match self.reader.next_record()? {
            None => return Ok(false),
            Some(Record::Other) => return Ok(true),
            Some(Record::Problem(problem)) => {
                self.stats.problems += 1;
                sink(Event::Problem(problem));
                return Ok(true);
            }
            Some(Record::Packet(packet)) => packet,
        };
        self.stats.packets += 1;
        self.last_time = self.last_time.max(Some(packet.timestamp));
        match tcp_segment(packet.linktype, packet.data, packet.wire_len) {
            Ok(segment) => {
                self.stats.tcp += 1;
                let before = self.reassembler.stats();
                self.reassembler.segment(&segment, packet.timestamp, sink);
                let after = self.reassembler.stats();
                if after.lost_after_close > before.lost_after_close {
                    self.stats.problems += 1;
                    sink(Event::Problem(Problem {
                        offset: packet.offset,
                        message: format!(
                            "data from {} to {} after its connection was closed (by an RST or \
                             FIN) not decoded: the connection's later messages are lost",
                            segment.src, segment.dst
                        ),
                    }));
                }
                if after.ignored_resets > before.ignored_resets {
                    self.stats.problems += 1;
                    sink(Event::Problem(Problem {
                        offset: packet.offset,
                        message: format!(
                            "RST from {} to {} with sequence number {} outside its stream \
                             ignored (not the next byte it owes: a TCP stack ignores it too)",
                            segment.src, segment.dst, segment.seq
                        ),
                    }));
                }
            }
            Err(NotTcp::NotIp | NotTcp::NotTcp) => self.stats.not_tcp += 1,
            Err(NotTcp::Fragment) => self.stats.ip_fragments += 1,
            Err(NotTcp::UnsupportedLink(linktype)) => {
                self.stats.unsupported_link += 1;
                if !self.unsupported.contains(&linktype) {
                    self.unsupported.push(linktype);
                    self.stats.problems += 1;
                    sink(Event::Problem(Problem {
                        offset: packet.offset,
                        message: format!(
                            "link type {linktype} is not supported: its packets are skipped"
                        ),
                    }));
                }
            }
            Err(NotTcp::Malformed(why)) => {
                self.stats.problems += 1;
                let cut = if (packet.data.len() as u64) < u64::from(packet.wire_len) {
                    format!(
                        " (captured {} of {} bytes)",
                        packet.data.len(),
                        packet.wire_len
                    )
                } else {
                    String::new()
                };
                sink(Event::Problem(Problem {
                    offset: packet.offset,
                    message: format!("malformed packet: {why}{cut}"),
                }));
            }
        }
        Ok(true)
    }

    /// Ends the run: delivers what is still buffered, reporting its gaps, and closes every open
    /// connection ([`CloseReason::EndOfCapture`]).
    pub fn finish(&mut self, sink: &mut dyn FnMut(Event<'_>)) {
        self.reassembler
            .finish(self.last_time.unwrap_or_default(), sink);
    }

    /// Reads the whole capture ([`Capture::step`] until the end, then [`Capture::finish`]).
    pub fn run(&mut self, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), FileError> {
        self.read_file(sink)?;
        self.finish(sink);
        Ok(())
    }
}
