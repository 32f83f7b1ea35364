//! One CQL connection: the stream decoders of its two directions, the prepared statements its
//! messages refer to, and the requests waiting for their response; it decodes each envelope,
//! pairs responses with requests by stream id and reports [`Record`]s.

use super::pending::{
    Pending, PendingSet, PendingTotals, PENDING_MAX_BYTES, PENDING_MAX_BYTES_PER_CONN,
};
use super::tls::TlsLayer;
use super::Options;
use crate::capture::{Connection, Timestamp};
use crate::record::{ExplainContext, MessageRecord, Problem, Record, RequestInfo, Side};
use cqlwire_codec::cursor::{DecodeError, DecodeErrorKind};
use cqlwire_protocol::compression::{BodyError, Compression};
use cqlwire_protocol::frame;
use cqlwire_protocol::message::{
    Body, DecodeContext, Message, Registry, REGISTRY_MAX_BYTES, REGISTRY_MAX_STATEMENTS,
};
use cqlwire_protocol::stream::{DecodedEnvelope, StreamDecoder, StreamEvent};
use std::collections::VecDeque;
use std::sync::Arc;

/// Most bytes fed to a decoder before what they complete is reported: a piece full of small LZ4
/// frames inflates to at most 255 times its size (1 MiB), where a whole capture record or read
/// (64 KiB, up to 16 MiB) would be held decompressed at once.
pub(super) const FEED_PIECE: usize = 4 << 10;

/// What is known of one CQL connection.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) label: String,
    /// Whether the initiator is the client.
    pub(super) initiator_is_client: bool,
    /// Decoders: from the initiator, from the responder.
    pub(super) decoders: [StreamDecoder; 2],
    /// What each decoder produced and was not reported yet.
    pub(super) queues: [VecDeque<StreamEvent>; 2],
    registry: Registry,
    /// Whether the registry forgot a statement (reported once).
    forgot: bool,
    /// Requests waiting for their response.
    pub(super) pending: PendingSet,
    /// Whether forgetting pending requests was reported (once).
    forgot_pending: bool,
    /// The compression the client's STARTUP named, as passed on to the server's decoder.
    compression: Option<Compression>,
    pub(super) connection: Connection,
    /// For a connection that started with a TLS record: its TLS side, which decrypts its bytes.
    pub(super) tls: Option<Box<TlsLayer>>,
    /// Whether bytes of it were read (a TLS record is looked for before any).
    pub(super) started: bool,
    /// Where the capture first cut its packets short, when it did (reported once, at the end).
    cut: Option<CutNote>,
    /// Whether its messages carry what explaining them needs ([`Options::explain`]).
    explain: bool,
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

impl Conn {
    pub(super) fn new(
        connection: Connection,
        initiator_is_client: Option<bool>,
        options: &Options,
    ) -> Self {
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
            explain: options.explain,
        }
    }

    /// The side of decoder `i`.
    pub(super) fn side(&self, i: usize) -> Side {
        if (i == 0) == self.initiator_is_client {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// Feeds bytes to decoder `i`; the compression a client decoder learnt from its STARTUP is
    /// passed on to the server's.
    pub(super) fn feed(&mut self, i: usize, bytes: &[u8]) {
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
    pub(super) fn feed_and_drain(
        &mut self,
        i: usize,
        bytes: &[u8],
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        for piece in bytes.chunks(FEED_PIECE) {
            self.feed(i, piece);
            self.drain(i, time, totals, sink);
        }
    }

    /// Reports everything decoder `i` produced.
    pub(super) fn drain(
        &mut self,
        i: usize,
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        while self.drain_one(i, time, totals, sink) {}
    }

    /// Reports the next envelope or problem of decoder `i`; false when it has none.
    pub(super) fn drain_one(
        &mut self,
        i: usize,
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) -> bool {
        match self.queues[i].pop_front() {
            None => false,
            Some(StreamEvent::Envelope(envelope)) => {
                self.message(i, time, envelope, totals, sink);
                true
            }
            Some(StreamEvent::Problem(p)) => {
                self.report(i, time, p.offset, p.message, sink);
                true
            }
        }
    }

    /// Reports a problem of decoder `i`.
    pub(super) fn report(
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
        let explain = self.explain && body.is_ok();
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
    pub(super) fn close(
        mut self,
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        self.close_tls(time, sink);
        // What the decoders still hold is reported unexplained.
        self.explain = false;
        for i in 0..2 {
            let mut out = Vec::new();
            self.decoders[i].finish(&mut out);
            self.queues[i].extend(out);
            self.drain(i, time, totals, sink);
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
    pub(super) fn report_forgotten_pending(
        &mut self,
        time: Timestamp,
        sink: &mut dyn FnMut(Record),
    ) {
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

    /// Notes that the capture cut packets of decoder `i`'s direction to `snapshot_len` bytes
    /// (where it first did, and the largest snapshot length), reported once at the end.
    pub(super) fn note_cut(&mut self, i: usize, snapshot_len: u32, time: Timestamp, offset: u64) {
        let first = self.cut.get_or_insert(CutNote {
            snapshot_len,
            side: i,
            time,
            offset,
        });
        first.snapshot_len = first.snapshot_len.max(snapshot_len);
    }

    /// Tells decoder `i` that `missing` bytes of its direction were lost (`not_captured`: cut by
    /// the snapshot length, else missing from the capture), and reports what that completes.
    pub(super) fn lost(
        &mut self,
        i: usize,
        missing: u64,
        not_captured: bool,
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        if self.tls.is_some() {
            return self.gap_tls(i, time, sink);
        }
        let mut out = Vec::new();
        if not_captured {
            self.decoders[i].not_captured(missing, &mut out);
        } else {
            self.decoders[i].gap(missing, &mut out);
        }
        self.queues[i].extend(out);
        self.drain(i, time, totals, sink);
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
