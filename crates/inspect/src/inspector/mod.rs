//! The conversation decoder: an [`Inspector`] takes the events of a capture in order. It keeps
//! the connections that carry CQL (on one of [`Options::ports`], or whose first bytes are a CQL
//! frame header), tells client from server (the SYN, the port, or the direction bit of the frames)
//! and hands each connection's bytes to its [`Conn`] (`conn.rs`: the two stream decoders, the
//! prepared registry, pairing by stream id), through its TLS layer when it has one (`tls.rs`).
//! Requests waiting for their response are in `pending.rs`; raw byte streams without a capture
//! around them go through [`Inspector::raw`] (`raw.rs`).

mod conn;
pub(crate) mod pending;
mod raw;
pub(crate) mod tls;

use crate::capture::{CloseReason, Connection, Direction, Event, Limits, Timestamp};
use crate::record::{Problem, Record, Side};
use conn::Conn;
use cqlwire_protocol::frame::{self, FrameHeader};
use pending::PendingTotals;
use std::collections::HashMap;
use std::sync::Arc;

/// ScyllaDB's shard-aware CQL port, watched by default beside 9042.
pub const SCYLLA_SHARD_AWARE_PORT: u16 = 19042;

/// The largest frame or envelope body decoded by default: the protocol's 256 MiB, so every frame a
/// server may send decodes. A frame is held whole (its bytes as they arrive, then its body) while it
/// is decoded, but not its values, so memory peaks at about twice the largest frame plus 8 MiB.
pub const DEFAULT_MAX_FRAME: usize = cqlwire_protocol::stream::DEFAULT_MAX_FRAME;

/// What an [`Inspector`] looks for and keeps.
#[derive(Debug, Clone)]
pub struct Options {
    /// Ports on which a connection is CQL (server side); other connections are CQL when their
    /// first bytes are a frame header.
    pub ports: Vec<u16>,
    /// Largest body accepted; a header declaring more is reported and skipped.
    pub max_frame: usize,
    /// Whether each message also carries what explaining it needs
    /// ([`MessageRecord::explain`](crate::MessageRecord::explain)).
    pub explain: bool,
    /// The NSS key log that decrypts TLS connections ([`KeyLog`](tls::KeyLog)); none: they are
    /// only named.
    pub tls_key_log: Option<Arc<tls::KeyLog>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ports: vec![9042, SCYLLA_SHARD_AWARE_PORT],
            max_frame: DEFAULT_MAX_FRAME,
            explain: false,
            tls_key_log: None,
        }
    }
}

/// A connection not (yet) known to be CQL.
#[derive(Debug)]
enum Tracked {
    /// Not yet decided: waiting for its first bytes.
    Undecided(Connection),
    /// CQL.
    Cql(Box<Conn>),
    /// Not CQL: ignored, its bytes counted for its likely server port.
    Ignored(u16),
}

/// Joins capture events into CQL messages; see the crate documentation.
#[derive(Debug)]
pub struct Inspector {
    options: Options,
    conns: HashMap<u64, Tracked, foldhash::fast::RandomState>,
    /// The pending requests of all connections, oldest first.
    pending: PendingTotals,
    /// Whether dropping a connection over the capture's limit was reported (once).
    evicted: bool,
    /// TCP payload bytes of the connections not taken for CQL, by likely server port.
    other_ports: HashMap<u16, u64, foldhash::fast::RandomState>,
    /// TCP payload bytes of the connections taken for CQL.
    cql_bytes: u64,
}

/// The decoder of `direction`: 0 from the initiator, 1 from the responder.
fn index(direction: Direction) -> usize {
    match direction {
        Direction::FromInitiator => 0,
        Direction::FromResponder => 1,
    }
}

impl Inspector {
    /// An inspector with the given options.
    pub fn new(options: Options) -> Self {
        Inspector {
            options,
            conns: HashMap::default(),
            pending: PendingTotals::default(),
            evicted: false,
            other_ports: HashMap::default(),
            cql_bytes: 0,
        }
    }

    /// TCP payload bytes of the connections taken for CQL (TLS ones included) so far.
    pub fn cql_bytes(&self) -> u64 {
        self.cql_bytes
    }

    /// The TCP traffic of the connections not taken for CQL: payload bytes by likely server port
    /// (the port the SYN went to, else the lower of the two), most bytes first. A capture whose
    /// CQL runs on a port not in [`Options::ports`] and that starts mid-connection shows here.
    pub fn other_ports(&self) -> Vec<(u16, u64)> {
        let mut ports: Vec<(u16, u64)> = self.other_ports.iter().map(|(&p, &n)| (p, n)).collect();
        ports.sort_unstable_by_key(|&(port, bytes)| (std::cmp::Reverse(bytes), port));
        ports
    }

    /// Takes one capture event and reports what it completes.
    pub fn event(&mut self, event: Event<'_>, sink: &mut dyn FnMut(Record)) {
        match event {
            Event::Opened { conn, .. } => self.opened(*conn),
            Event::Data {
                conn,
                direction,
                timestamp,
                offset,
                bytes,
            } => self.data(conn, direction, timestamp, offset, bytes, sink),
            Event::Gap {
                conn,
                direction,
                timestamp,
                offset,
                missing,
                snapshot_len,
            } => {
                if let Some(Tracked::Cql(c)) = self.conns.get_mut(&conn) {
                    let i = index(direction);
                    if let Some(captured) = snapshot_len {
                        c.note_cut(i, captured, timestamp, offset);
                    }
                    let not_captured = snapshot_len.is_some();
                    c.lost(i, missing, not_captured, timestamp, &mut self.pending, sink);
                }
            }
            Event::Closed {
                conn,
                timestamp,
                reason,
            } => self.closed(conn, timestamp, reason, sink),
            Event::Problem(problem) => sink(Record::Problem(Problem {
                conn: None,
                side: None,
                time: Timestamp(0),
                offset: problem.offset,
                message: problem.message,
            })),
        }
    }

    /// Tracks a new connection: CQL when one of its ports is, else decided by its first bytes.
    fn opened(&mut self, connection: Connection) {
        let ports = &self.options.ports;
        let tracked = if ports.contains(&connection.responder.port())
            || ports.contains(&connection.initiator.port())
        {
            Tracked::Cql(Box::new(Conn::new(connection, None, &self.options)))
        } else {
            Tracked::Undecided(connection)
        };
        self.conns.insert(connection.id, tracked);
    }

    /// Takes bytes of one direction of connection `conn`: decides on its first bytes whether it
    /// carries CQL (or TLS), counts them, and decodes those of a CQL connection.
    fn data(
        &mut self,
        conn: u64,
        direction: Direction,
        time: Timestamp,
        offset: u64,
        bytes: &[u8],
        sink: &mut dyn FnMut(Record),
    ) {
        let Some(tracked) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Tracked::Undecided(connection) = tracked {
            *tracked = decide(*connection, direction, offset, bytes, &self.options);
        }
        match tracked {
            Tracked::Undecided(_) => {}
            Tracked::Ignored(port) => {
                *self.other_ports.entry(*port).or_default() += bytes.len() as u64;
            }
            Tracked::Cql(c) => {
                self.cql_bytes += bytes.len() as u64;
                if !c.started && tls::starts_tls(offset, bytes) {
                    **c = tls::tls_conn(c.connection, direction, bytes, &self.options);
                }
                c.started = true;
                let i = index(direction);
                if c.tls.is_some() {
                    c.feed_tls(i, bytes, time, &mut self.pending, sink);
                } else {
                    c.feed_and_drain(i, bytes, time, &mut self.pending, sink);
                }
            }
        }
        self.forget_over_total(time, sink);
    }

    /// Ends connection `conn`: reports what it still holds and, once a run, that the capture's
    /// connection table dropped one.
    fn closed(
        &mut self,
        conn: u64,
        time: Timestamp,
        reason: CloseReason,
        sink: &mut dyn FnMut(Record),
    ) {
        let Some(Tracked::Cql(c)) = self.conns.remove(&conn) else {
            return;
        };
        if reason == CloseReason::Evicted && !self.evicted {
            // Said once a run: the reassembler's connection table is bounded.
            self.evicted = true;
            let message = format!(
                "connection dropped: more than {} open (the least recently active are dropped; \
                 their later bytes start anew, mid-stream)",
                Limits::default().connections
            );
            let client = usize::from(!c.initiator_is_client);
            c.report(client, time, c.decoders[client].offset(), message, sink);
        }
        c.close(time, &mut self.pending, sink);
    }

    /// Ends the run: reports what the open connections still hold.
    pub fn finish(&mut self, sink: &mut dyn FnMut(Record)) {
        let mut ids: Vec<u64> = self.conns.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(Tracked::Cql(c)) = self.conns.remove(&id) {
                c.close(Timestamp(0), &mut self.pending, sink);
            }
        }
    }

    /// Forgets the oldest pending requests of all connections while they keep more than
    /// [`PENDING_MAX_BYTES`] together.
    fn forget_over_total(&mut self, time: Timestamp, sink: &mut dyn FnMut(Record)) {
        while let Some((conn, stream)) = self.pending.over_limit() {
            // Every pending request belongs to an open connection (closing one clears its own).
            let Some(Tracked::Cql(c)) = self.conns.get_mut(&conn) else {
                break;
            };
            c.pending.forget(stream, &mut self.pending);
            c.report_forgotten_pending(time, sink);
        }
    }
}

/// What a connection is, from its first bytes (`bytes`, at `offset` of `direction`): CQL over TLS
/// when they start a TLS record, CQL when they start the stream with a frame header, else ignored.
fn decide(
    connection: Connection,
    direction: Direction,
    offset: u64,
    bytes: &[u8],
    options: &Options,
) -> Tracked {
    match cql_side(bytes) {
        _ if tls::starts_tls(offset, bytes) => Tracked::Cql(Box::new(tls::tls_conn(
            connection, direction, bytes, options,
        ))),
        Some(side) if offset == 0 => {
            let from_initiator = direction == Direction::FromInitiator;
            let initiator_is_client = (side == Side::Client) == from_initiator;
            let conn = Conn::new(connection, Some(initiator_is_client), options);
            Tracked::Cql(Box::new(conn))
        }
        _ => Tracked::Ignored(server_port(&connection)),
    }
}

/// The likely server port of a connection: the one its SYN went to, else the lower one (clients
/// take high ephemeral ports).
fn server_port(connection: &Connection) -> u16 {
    let (initiator, responder) = (connection.initiator.port(), connection.responder.port());
    if connection.syn_seen {
        responder
    } else {
        initiator.min(responder)
    }
}

/// Which side sends the CQL frame header that `bytes` start with, when they start with one.
fn cql_side(bytes: &[u8]) -> Option<Side> {
    let header = bytes.first_chunk::<{ frame::HEADER_LEN }>()?;
    let h = FrameHeader::parse(header, 0, frame::MAX_VERSION).ok()?;
    if !h.opcode.is_known() || !h.opcode.goes(h.direction) || h.flags.0 & 0xE0 != 0 {
        return None;
    }
    Some(match h.direction {
        frame::Direction::Request => Side::Client,
        frame::Direction::Response => Side::Server,
    })
}
