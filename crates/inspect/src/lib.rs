//! Captured CQL conversations: packet captures read down to reassembled TCP streams
//! ([`capture`]), and whole conversations decoded message by message on the wire protocol of
//! [`cqlwire_protocol`], shown plain, masked or redacted.
//!
//! Whole captured CQL conversations: capture events ([`capture`]) in, decoded messages out.
//!
//! An [`Inspector`] takes the events of a capture in order. It keeps the connections that carry
//! CQL (on one of [`Options::ports`], or whose first bytes are a CQL frame header), tells client
//! from server (the SYN, the port, or the direction bit of the frames), feeds each direction to a
//! [`StreamDecoder`] ([`cqlwire_protocol::stream`]), decodes the bodies with the connection's prepared [`Registry`] (compression
//! learnt from the STARTUP, guessed when the capture starts mid-connection), pairs responses with
//! requests by stream id and reports [`Record`]s in capture order: messages with their latency,
//! and problems with their offsets. Nothing stops a run: each problem is reported and decoding
//! goes on. Memory holds what the open connections have buffered (at most about one frame per
//! direction), the gist of their pending requests (bounded, see [`PENDING_MAX_BYTES_PER_CONN`]) and their bounded
//! registries of prepared statements.
//!
//! Raw byte streams without a capture around them go through [`Inspector::raw`]. Connections that
//! start with a TLS record are named, and decrypted with a key log ([`KeyLog`]).

#![warn(missing_docs)]
pub mod capture;
mod cql_lexer;
mod keyed_hash;
mod pending;
pub mod printer;
pub(crate) mod redact;
mod render;
pub(crate) mod secrets;
mod server_words;
mod stats;
mod tls;

pub use cql_lexer::{tokens, Token, TokenKind, Tokens};
pub use keyed_hash::{KeyError, KeyedHash, MAX_KEY_BYTES, MIN_KEY_BYTES, TAG_HEX_DIGITS};
pub use render::RenderMessage;
pub use secrets::{redact_query, redact_server_text, ValueForm};
pub use stats::{side_name, More, Statement, Stats, MAX_MORE_COUNTED, MAX_STATEMENTS};
pub use tls::{looks_like_tls, read_key_logs, KeyLog, TlsRecord};

use crate::capture::{CloseReason, Connection, Direction, Event, Limits, Timestamp};
use cqlwire_codec::cursor::{DecodeError, DecodeErrorKind};
use cqlwire_codec::value::ExplainLine;
use cqlwire_protocol::compression::{BodyError, Compression};
use cqlwire_protocol::frame::{self, FrameHeader, HeaderOpcode};
use cqlwire_protocol::message::{
    Body, DecodeContext, Message, Registry, REGISTRY_MAX_BYTES, REGISTRY_MAX_STATEMENTS,
};
use cqlwire_protocol::stream::{DecodedEnvelope, StreamDecoder, StreamEvent};
pub use pending::{kept_text, KEPT_TEXT, PENDING_MAX_BYTES, PENDING_MAX_BYTES_PER_CONN};
use pending::{Pending, PendingSet, PendingTotals};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::sync::Arc;

/// ScyllaDB's shard-aware CQL port, watched by default beside 9042.
pub const SCYLLA_SHARD_AWARE_PORT: u16 = 19042;

/// The largest frame or envelope body decoded by default: the protocol's 256 MiB, so every frame a
/// server may send decodes. A frame is held whole (its bytes as they arrive, then its body) while it
/// is decoded, but not its values, so memory peaks at about twice the largest frame plus 8 MiB.
pub const DEFAULT_MAX_FRAME: usize = cqlwire_protocol::stream::DEFAULT_MAX_FRAME;

/// Most bytes fed to a decoder before what they complete is reported: a piece full of small LZ4
/// frames inflates to at most 255 times its size (1 MiB), where a whole capture record or read
/// (64 KiB, up to 16 MiB) would be held decompressed at once.
const FEED_PIECE: usize = 4 << 10;

/// Bytes read from the start of a raw stream to tell a TLS record from a CQL frame.
const TLS_PROBE: usize = 16;

/// What an [`Inspector`] looks for and keeps.
#[derive(Debug, Clone)]
pub struct Options {
    /// Ports on which a connection is CQL (server side); other connections are CQL when their
    /// first bytes are a frame header.
    pub ports: Vec<u16>,
    /// Largest body accepted; a header declaring more is reported and skipped.
    pub max_frame: usize,
    /// Whether each message also carries what explaining it needs ([`MessageRecord::explain`]).
    pub explain: bool,
    /// The NSS key log that decrypts TLS connections ([`KeyLog`]); none: they are only named.
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

/// Which side sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The client (requests).
    Client,
    /// The server (responses and events).
    Server,
}

/// One decoded (or undecodable) message.
#[derive(Debug, Clone)]
pub struct MessageRecord {
    /// Connection number in the capture (from 1).
    pub conn_id: u64,
    /// `<client ip:port>-<server ip:port>`.
    pub conn: String,
    /// Who sent it.
    pub side: Side,
    /// Capture time of the segment that completed it (0 for raw streams).
    pub time: Timestamp,
    /// Offset in its direction's TCP stream of its header, or of the v5 segment it starts in.
    pub offset: u64,
    /// For a v5 envelope in segments: where its header is in that segment's payload.
    pub in_segment: Option<usize>,
    /// Its header.
    pub header: FrameHeader,
    /// Its body, decompressed (shared with the message decoded from it).
    pub body: Arc<Vec<u8>>,
    /// The message, or why its body could not be decoded (offsets into the body).
    pub message: Result<Message, cqlwire_codec::cursor::DecodeError>,
    /// What explaining it again needs, when [`Options::explain`] is set.
    pub explain: Option<ExplainContext>,
    /// For a response: the request it answers, when seen.
    pub request: Option<RequestInfo>,
}

/// What explaining a message again needs: the prepared statements of its connection its
/// decoding looks up, and the request it answers.
#[derive(Debug, Clone)]
pub struct ExplainContext {
    /// The statements the message refers to (all of them when it did not decode).
    pub registry: Registry,
    /// What is kept of the request it answers.
    pub request: Option<Message>,
}

impl MessageRecord {
    /// Decodes the message again, handing each explain line to `each` as it is read (offsets
    /// into [`MessageRecord::body`]) as `form` shows it (see [`Message::explain_each`]); `None`
    /// unless [`Options::explain`] was set. Returns the outcome, whose error is the fault after
    /// the last line.
    pub fn explain_each(
        &self,
        form: ValueForm<'_>,
        each: &mut dyn FnMut(ExplainLine),
    ) -> Option<Result<Message, cqlwire_codec::cursor::DecodeError>> {
        self.decode_again(|context, body| Message::explain_each(context, body, &form, each))
    }

    /// Decodes the message again, gathering its explain lines (as [`ValueForm::Plain`] shows
    /// them); `None` unless [`Options::explain`] was set.
    pub fn explained(&self) -> Option<cqlwire_protocol::message::Explained> {
        self.decode_again(|context, body| Message::explain(context, body))
    }

    /// Runs `decode` on this message's body in the context of its header and its
    /// [`ExplainContext`], when kept.
    fn decode_again<T>(
        &self,
        decode: impl FnOnce(&DecodeContext<'_>, &Arc<Vec<u8>>) -> T,
    ) -> Option<T> {
        let kept = self.explain.as_ref()?;
        let context = DecodeContext::of(&self.header, &kept.registry, kept.request.as_ref());
        Some(decode(&context, &self.body))
    }
}

/// The prepared ids decoding `message` (answering `request`) looks up.
fn referenced_ids<'a>(message: &'a Message, request: Option<&'a Message>) -> Vec<&'a [u8]> {
    match (&message.body, request.map(|r| &r.body)) {
        (Body::Execute(e), _) | (_, Some(Body::Execute(e))) => vec![&e.id],
        (Body::Batch(b), _) => b
            .statements
            .iter()
            .filter_map(|s| s.id.as_deref())
            .collect(),
        (
            Body::Error(_)
            | Body::Startup(_)
            | Body::Ready
            | Body::Authenticate(_)
            | Body::Options
            | Body::Supported(_)
            | Body::Query(_)
            | Body::Result(_)
            | Body::Prepare(_)
            | Body::Register(_)
            | Body::Event(_)
            | Body::AuthChallenge(_)
            | Body::AuthResponse(_)
            | Body::AuthSuccess(_),
            _,
        ) => Vec::new(),
    }
}

/// What a response remembers of its request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestInfo {
    /// The request's opcode.
    pub opcode: HeaderOpcode,
    /// The statement (query text, `EXECUTE 0x<id>` when its PREPARE was not seen, `BATCH …`),
    /// for QUERY, PREPARE, EXECUTE and BATCH.
    pub statement: Option<String>,
    /// Time between the request and the response, in nanoseconds.
    pub latency: u64,
}

/// A problem found in the input; the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The connection, when the problem is in one of its streams.
    pub conn: Option<(u64, String)>,
    /// The direction, when in a stream.
    pub side: Option<Side>,
    /// Capture time (0 when unknown).
    pub time: Timestamp,
    /// Offset: in the direction's stream, or in the capture file for file problems.
    pub offset: u64,
    /// One line.
    pub message: String,
}

/// What an [`Inspector`] reports, in capture order. Exhaustive on purpose: whoever prints records
/// must decide how to show a kind added later, so adding one is a breaking change.
#[derive(Debug, Clone)]
pub enum Record {
    /// A message.
    Message(Box<MessageRecord>),
    /// A problem.
    Problem(Problem),
    /// A TLS connection, named once ([`TlsRecord`]).
    Tls(tls::TlsRecord),
}

/// What is known of one CQL connection.
#[derive(Debug)]
struct Conn {
    label: String,
    /// Whether the initiator is the client.
    initiator_is_client: bool,
    /// Decoders: from the initiator, from the responder.
    decoders: [StreamDecoder; 2],
    /// What each decoder produced and was not reported yet.
    queues: [VecDeque<StreamEvent>; 2],
    registry: Registry,
    /// Whether the registry forgot a statement (reported once).
    forgot: bool,
    /// Requests waiting for their response.
    pending: PendingSet,
    /// Whether forgetting pending requests was reported (once).
    forgot_pending: bool,
    /// The compression the client's STARTUP named, as passed on to the server's decoder.
    compression: Option<Compression>,
    connection: Connection,
    /// For a connection that started with a TLS record: its TLS side, which decrypts its bytes.
    tls: Option<Box<tls::TlsLayer>>,
    /// Whether bytes of it were read (a TLS record is looked for before any).
    started: bool,
    /// Where the capture first cut its packets short, when it did (reported once, at the end).
    cut: Option<CutNote>,
}

/// Where a connection first lost bytes to the capture's snapshot length, and the largest
/// snapshot length seen.
#[derive(Debug, Clone, Copy)]
struct CutNote {
    snapshot_len: u32,
    /// The decoder of the direction.
    side: usize,
    time: Timestamp,
    offset: u64,
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

/// Joins capture events into CQL messages; see the module documentation.
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
            Event::Opened { conn, .. } => {
                let tracked = if self.options.ports.contains(&conn.responder.port())
                    || self.options.ports.contains(&conn.initiator.port())
                {
                    Tracked::Cql(Box::new(self.conn(*conn, None)))
                } else {
                    Tracked::Undecided(*conn)
                };
                self.conns.insert(conn.id, tracked);
            }
            Event::Data {
                conn,
                direction,
                timestamp,
                offset,
                bytes,
            } => {
                let Some(tracked) = self.conns.get_mut(&conn) else {
                    return;
                };
                if let Tracked::Undecided(connection) = tracked {
                    let connection = *connection;
                    *tracked = match cql_side(bytes) {
                        _ if tls::starts_tls(offset, bytes) => Tracked::Cql(Box::new(
                            tls::tls_conn(connection, direction, bytes, &self.options),
                        )),
                        Some(side) if offset == 0 => {
                            let from_initiator = direction == Direction::FromInitiator;
                            let initiator_is_client = (side == Side::Client) == from_initiator;
                            let options = &self.options;
                            Tracked::Cql(Box::new(Conn::new(
                                connection,
                                Some(initiator_is_client),
                                options,
                            )))
                        }
                        _ => Tracked::Ignored(server_port(&connection)),
                    };
                }
                if let Tracked::Ignored(port) = tracked {
                    *self.other_ports.entry(*port).or_default() += bytes.len() as u64;
                }
                if let Tracked::Cql(c) = tracked {
                    self.cql_bytes += bytes.len() as u64;
                    if !c.started && tls::starts_tls(offset, bytes) {
                        **c = tls::tls_conn(c.connection, direction, bytes, &self.options);
                    }
                    c.started = true;
                    let i = index(direction);
                    if c.tls.is_some() {
                        c.feed_tls(
                            i,
                            bytes,
                            timestamp,
                            self.options.explain,
                            &mut self.pending,
                            sink,
                        );
                    } else {
                        let explain = self.options.explain;
                        c.feed_and_drain(i, bytes, timestamp, explain, &mut self.pending, sink);
                    }
                }
                self.forget_over_total(timestamp, sink);
            }
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
                        let first = c.cut.get_or_insert(CutNote {
                            snapshot_len: captured,
                            side: i,
                            time: timestamp,
                            offset,
                        });
                        first.snapshot_len = first.snapshot_len.max(captured);
                    }
                    if c.tls.is_some() {
                        return c.gap_tls(i, timestamp, sink);
                    }
                    let mut out = Vec::new();
                    match snapshot_len {
                        Some(_) => c.decoders[i].not_captured(missing, &mut out),
                        None => c.decoders[i].gap(missing, &mut out),
                    }
                    c.queues[i].extend(out);
                    c.drain(i, timestamp, self.options.explain, &mut self.pending, sink);
                }
            }
            Event::Closed {
                conn,
                timestamp,
                reason,
            } => {
                if let Some(Tracked::Cql(c)) = self.conns.remove(&conn) {
                    if reason == CloseReason::Evicted && !self.evicted {
                        // Said once a run: the reassembler's connection table is bounded.
                        self.evicted = true;
                        let message = format!(
                            "connection dropped: more than {} open (the least recently active \
                             are dropped; their later bytes start anew, mid-stream)",
                            Limits::default().connections
                        );
                        let client = usize::from(!c.initiator_is_client);
                        c.report(
                            client,
                            timestamp,
                            c.decoders[client].offset(),
                            message,
                            sink,
                        );
                    }
                    c.close(timestamp, &mut self.pending, sink);
                }
            }
            Event::Problem(problem) => sink(Record::Problem(Problem {
                conn: None,
                side: None,
                time: Timestamp(0),
                offset: problem.offset,
                message: problem.message,
            })),
        }
    }

    /// A CQL connection whose client is the initiator when `initiator_is_client`, else decided
    /// by the ports.
    fn conn(&self, connection: Connection, initiator_is_client: Option<bool>) -> Conn {
        Conn::new(connection, initiator_is_client, &self.options)
    }

    /// Decodes one connection given as its two raw byte streams (either may be absent), reading
    /// them in turns so each response is decoded after the request it answers. `label` names the
    /// connection. Read errors stop the run; malformed bytes are reported and skipped; streams
    /// that start with a TLS record are a connection over TLS: named ([`TlsRecord`]) and, with a key
    /// log, decrypted, their records read one at a time.
    pub fn raw<'a>(
        &mut self,
        label: &str,
        client: Option<&'a mut dyn Read>,
        server: Option<&'a mut dyn Read>,
        sink: &mut dyn FnMut(Record),
    ) -> io::Result<()> {
        let any: std::net::SocketAddr = ([0, 0, 0, 0], 0).into();
        let connection = Connection {
            id: 1,
            initiator: any,
            responder: any,
            syn_seen: true,
        };
        let mut c = Conn::new(connection, Some(true), &self.options);
        c.label = label.to_string();
        let mut inputs = [client, server];
        let mut heads = [Vec::new(), Vec::new()];
        for (input, head) in inputs.iter_mut().zip(&mut heads) {
            if let Some(reader) = input.as_mut() {
                reader.take(TLS_PROBE as u64).read_to_end(head)?;
            }
        }
        // A stream that starts with a TLS record is CQL over TLS: named as a packet capture of the
        // same bytes names it (version, SNI, cipher), and decrypted with a key log. Its records
        // are read one at a time, each side's decrypted messages queued like plaintext ones.
        let tls = heads.iter().any(|head| looks_like_tls(head));
        let mut streams: Vec<Option<Box<dyn Read + '_>>> = inputs
            .into_iter()
            .zip(heads)
            .map(|(input, head)| {
                input.map(|input| Box::new(io::Cursor::new(head).chain(input)) as Box<dyn Read>)
            })
            .collect();
        if tls {
            let mut layer = tls::TlsLayer::new(&self.options, false);
            layer.queue_only = true;
            c.tls = Some(layer);
        }
        let explain = self.options.explain;
        let totals = &mut self.pending;
        let mut buf = vec![0u8; FEED_PIECE];
        // Reads the next piece of side `i` (a TLS record, or up to FEED_PIECE bytes) into the
        // connection; false at its end (then the side's decoder is finished).
        let mut read = |c: &mut Conn,
                        i: usize,
                        totals: &mut PendingTotals,
                        sink: &mut dyn FnMut(Record)|
         -> io::Result<bool> {
            let Some(input) = streams[i].as_mut() else {
                return Ok(false);
            };
            let n = if tls {
                next_record(input, &mut buf)?;
                buf.len()
            } else {
                buf.resize(FEED_PIECE, 0);
                input.read(&mut buf)?
            };
            if n == 0 {
                streams[i] = None;
                let mut out = Vec::new();
                c.decoders[i].finish(&mut out);
                c.queues[i].extend(out);
                return Ok(false);
            }
            if tls {
                c.feed_tls(i, &buf[..n], Timestamp(0), explain, totals, sink);
            } else {
                c.feed(i, &buf[..n]);
            }
            Ok(true)
        };
        // The handshake: one record each in turns, the client's first (each side's flight before
        // the other's next records), until a message is decrypted.
        if tls {
            let mut more = [true, true];
            while more.iter().any(|&m| m) && c.queues.iter().all(|q| q.is_empty()) {
                for (i, m) in more.iter_mut().enumerate() {
                    if *m && c.queues.iter().all(|q| q.is_empty()) {
                        *m = read(&mut c, i, totals, sink)?;
                    }
                }
            }
        }
        // Makes sure side `i` has something queued, reading more of its input; false at its end.
        let mut fill = |c: &mut Conn,
                        i: usize,
                        totals: &mut PendingTotals,
                        sink: &mut dyn FnMut(Record)|
         -> io::Result<bool> {
            while c.queues[i].is_empty() {
                if !read(c, i, totals, sink)? {
                    return Ok(!c.queues[i].is_empty());
                }
            }
            Ok(true)
        };
        loop {
            // The server's next message goes first when it answers a pending request (or is an
            // event or a problem); else the client's next request.
            let server_next = fill(&mut c, 1, totals, sink)?
                && match c.queues[1].front() {
                    Some(StreamEvent::Envelope(e)) => {
                        e.header.stream < 0 || c.pending.contains(e.header.stream)
                    }
                    _ => true,
                };
            if server_next {
                c.drain_one(1, Timestamp(0), explain, totals, sink);
            } else if fill(&mut c, 0, totals, sink)? {
                c.drain_one(0, Timestamp(0), explain, totals, sink);
            } else if !c.drain_one(1, Timestamp(0), explain, totals, sink) {
                break;
            }
        }
        c.close(Timestamp(0), totals, sink);
        Ok(())
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

/// Reads the next TLS record of `stream` (its 5-byte header and the length it declares, at most
/// 64 KiB) into `record`: fewer bytes at the stream's end, none after it.
fn next_record(stream: &mut dyn Read, record: &mut Vec<u8>) -> io::Result<()> {
    record.clear();
    stream
        .take(cqlwire_tls::HEADER_LEN as u64)
        .read_to_end(record)?;
    if let [_, _, _, high, low] = record[..] {
        let length = u16::from_be_bytes([high, low]);
        stream.take(u64::from(length)).read_to_end(record)?;
    }
    Ok(())
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

impl Conn {
    fn new(connection: Connection, initiator_is_client: Option<bool>, options: &Options) -> Self {
        let initiator_is_client = initiator_is_client.unwrap_or(
            connection.syn_seen
                || options.ports.contains(&connection.responder.port())
                || !options.ports.contains(&connection.initiator.port()),
        );
        let (client, server) = if initiator_is_client {
            (connection.initiator, connection.responder)
        } else {
            (connection.responder, connection.initiator)
        };
        let directions = if initiator_is_client {
            (frame::Direction::Request, frame::Direction::Response)
        } else {
            (frame::Direction::Response, frame::Direction::Request)
        };
        Conn {
            label: format!("{client}-{server}"),
            initiator_is_client,
            decoders: [
                StreamDecoder::new(directions.0, options.max_frame),
                StreamDecoder::new(directions.1, options.max_frame),
            ],
            queues: [VecDeque::new(), VecDeque::new()],
            registry: Registry::new(),
            forgot: false,
            pending: PendingSet::default(),
            forgot_pending: false,
            compression: None,
            connection,
            tls: None,
            started: false,
            cut: None,
        }
    }

    /// The side of decoder `i`.
    fn side(&self, i: usize) -> Side {
        if (i == 0) == self.initiator_is_client {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// Feeds bytes to decoder `i`; the compression a client decoder learnt from its STARTUP is
    /// passed on to the server's.
    pub(crate) fn feed(&mut self, i: usize, bytes: &[u8]) {
        let mut out = Vec::new();
        self.decoders[i].feed(bytes, &mut out);
        self.queues[i].extend(out);
        if self.side(i) == Side::Client {
            let learnt = self.decoders[i].compression();
            if learnt.is_some() && learnt != self.compression {
                self.compression = learnt;
                self.decoders[1 - i].set_compression(learnt);
            }
        }
    }

    /// Feeds bytes to decoder `i` in pieces of [`FEED_PIECE`], reporting what each piece completes
    /// before the next is fed, so that its decompressed frames are not all held at once.
    fn feed_and_drain(
        &mut self,
        i: usize,
        bytes: &[u8],
        time: Timestamp,
        explain: bool,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        for piece in bytes.chunks(FEED_PIECE) {
            self.feed(i, piece);
            self.drain(i, time, explain, totals, sink);
        }
    }

    /// Reports everything decoder `i` produced.
    fn drain(
        &mut self,
        i: usize,
        time: Timestamp,
        explain: bool,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        while self.drain_one(i, time, explain, totals, sink) {}
    }

    /// Reports the next envelope or problem of decoder `i`; false when it has none.
    fn drain_one(
        &mut self,
        i: usize,
        time: Timestamp,
        explain: bool,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) -> bool {
        match self.queues[i].pop_front() {
            None => false,
            Some(StreamEvent::Envelope(envelope)) => {
                self.message(i, time, envelope, explain, totals, sink);
                true
            }
            Some(StreamEvent::Problem(p)) => {
                self.report(i, time, p.offset, p.message, sink);
                true
            }
        }
    }

    /// Reports a problem of decoder `i`.
    fn report(
        &self,
        i: usize,
        time: Timestamp,
        offset: u64,
        message: String,
        sink: &mut dyn FnMut(Record),
    ) {
        sink(Record::Problem(Problem {
            conn: Some((self.connection.id, self.label.clone())),
            side: Some(self.side(i)),
            time,
            offset,
            message,
        }));
    }

    /// Decodes an envelope of decoder `i`, pairs it and reports it.
    fn message(
        &mut self,
        i: usize,
        time: Timestamp,
        envelope: DecodedEnvelope,
        explain: bool,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        let header = envelope.header;
        let body = match envelope.body {
            Ok(body) => Ok(Arc::new(body)),
            // Paired and shown by its header: its body cannot be decoded.
            Err(e @ BodyError::NotCaptured { captured, .. }) => Err(DecodeError::new(
                DecodeErrorKind::Truncated,
                e.to_string(),
                captured,
                "",
            )),
            Err(e) => {
                let message = format!(
                    "frame at byte {} (stream {}, {}): {e}",
                    envelope.offset,
                    header.stream,
                    header.opcode.name().unwrap_or("unknown opcode")
                );
                return self.report(i, time, envelope.offset, message, sink);
            }
        };
        let side = self.side(i);
        let pending = match side {
            Side::Server if header.stream >= 0 => self.pending.take(header.stream, totals),
            _ => None,
        };
        let request = pending.as_ref().and_then(|p| p.request.as_deref());
        // A frame cut short shows its header only, not explained.
        let explain = explain && body.is_ok();
        let (body, message) = match body {
            Ok(body) => {
                let context = DecodeContext::of(&header, &self.registry, request);
                let message = Message::decode_shared(&context, &body);
                (body, message)
            }
            Err(e) => (Arc::default(), Err(e)),
        };
        let explain = explain.then(|| ExplainContext {
            registry: match &message {
                Ok(m) => self.registry.subset(referenced_ids(m, request)),
                Err(_) => self.registry.clone(),
            },
            request: request.cloned(),
        });
        if let Ok(m) = &message {
            if side == Side::Server && self.registry.learn(request, m) > 0 && !self.forgot {
                // Said once per connection: the registry is bounded.
                self.forgot = true;
                let note = format!(
                    "more prepared statements than this connection's registry keeps ({} \
                     statements, {} KiB of metadata): the oldest are forgotten, and an EXECUTE of \
                     one shows its values as bytes",
                    REGISTRY_MAX_STATEMENTS,
                    REGISTRY_MAX_BYTES >> 10
                );
                self.report(i, time, envelope.offset, note, sink);
            }
        }
        let request = pending.map(|p| RequestInfo {
            opcode: p.opcode,
            statement: p.statement(&self.registry),
            latency: time.0.saturating_sub(p.time.0).max(0) as u64,
        });
        if side == Side::Client && header.stream >= 0 {
            let pending = Pending::new(message.as_ref().ok(), time, header.opcode);
            let id = self.connection.id;
            if self.pending.insert(id, header.stream, pending, totals) > 0 {
                self.report_forgotten_pending(time, sink);
            }
        }
        sink(Record::Message(Box::new(MessageRecord {
            conn_id: self.connection.id,
            conn: self.label.clone(),
            side,
            time,
            offset: envelope.offset,
            in_segment: envelope.in_segment,
            header,
            body,
            message,
            explain,
            request,
        })));
    }

    /// Reports what the decoders still hold.
    fn close(mut self, time: Timestamp, totals: &mut PendingTotals, sink: &mut dyn FnMut(Record)) {
        self.close_tls(time, sink);
        for i in 0..2 {
            let mut out = Vec::new();
            self.decoders[i].finish(&mut out);
            self.queues[i].extend(out);
            self.drain(i, time, false, totals, sink);
        }
        if let Some(cut) = self.cut {
            let message = self.cut_message(cut.snapshot_len);
            self.report(cut.side, cut.time, cut.offset, message, sink);
        }
        self.pending.clear(totals);
        if self.pending.forgotten > 0 {
            let client = usize::from(!self.initiator_is_client);
            let n = self.pending.forgotten;
            let message = format!(
                "{n} request{} forgotten while waiting for a response (their responses, if any, \
                 show no latency)",
                if n == 1 { " was" } else { "s were" }
            );
            self.report(client, time, self.decoders[client].offset(), message, sink);
        }
    }

    /// What the capture's snapshot length cost this connection, one line.
    fn cut_message(&self, snapshot_len: u32) -> String {
        let [a, b] = [0, 1].map(|i| self.decoders[i].cut_counts());
        let mut message = format!(
            "capture truncated to {snapshot_len} bytes per packet (snapshot length): {} bytes \
             not captured",
            a.bytes + b.bytes
        );
        let parts = [
            (a.frames + b.frames, "frames shown by their header only"),
            (
                a.segments + b.segments,
                "v5 segments cut before an envelope header",
            ),
            (
                a.skipped + b.skipped,
                "captured bytes skipped to the next header",
            ),
        ];
        for (count, what) in parts.into_iter().filter(|(count, _)| *count > 0) {
            message += &format!(", {count} {what}");
        }
        message
    }

    /// Says once that this connection forgets requests waiting for their response.
    fn report_forgotten_pending(&mut self, time: Timestamp, sink: &mut dyn FnMut(Record)) {
        if self.forgot_pending {
            return;
        }
        self.forgot_pending = true;
        let client = usize::from(!self.initiator_is_client);
        let message = format!(
            "more requests waiting for a response than kept ({} MiB per connection, {} MiB in \
             all): the oldest are forgotten",
            PENDING_MAX_BYTES_PER_CONN >> 20,
            PENDING_MAX_BYTES >> 20
        );
        self.report(client, time, self.decoders[client].offset(), message, sink);
    }
}

/// The statement a request runs, for statistics.
pub fn statement(message: &Message, registry: &Registry) -> Option<String> {
    match &message.body {
        Body::Query(q) => Some(q.query.clone()),
        Body::Prepare(p) => Some(format!("PREPARE {}", p.query)),
        Body::Execute(e) => Some(
            e.query
                .as_deref()
                .or_else(|| registry.get(&e.id).and_then(|s| s.query.as_deref()))
                .map_or_else(
                    || format!("EXECUTE 0x{}", cqlwire_codec::hex::encode(&e.id)),
                    str::to_string,
                ),
        ),
        Body::Batch(b) => Some(format!(
            "BATCH {} ({} statements)",
            b.kind_name(),
            b.statements.len()
        )),
        Body::Error(_)
        | Body::Startup(_)
        | Body::Ready
        | Body::Authenticate(_)
        | Body::Options
        | Body::Supported(_)
        | Body::Result(_)
        | Body::Register(_)
        | Body::Event(_)
        | Body::AuthChallenge(_)
        | Body::AuthResponse(_)
        | Body::AuthSuccess(_) => None,
    }
}
