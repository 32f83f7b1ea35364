//! What an [`Inspector`](crate::Inspector) reports: [`Record`]s in capture order, each a message
//! ([`MessageRecord`], with the request it answers), a problem ([`Problem`]) or a TLS connection
//! named once ([`TlsRecord`]).

use crate::capture::Timestamp;
use crate::redaction::ValueForm;
use cqlwire_codec::cursor::DecodeError;
use cqlwire_codec::value::ExplainLine;
use cqlwire_protocol::frame::{FrameHeader, HeaderOpcode};
use cqlwire_protocol::message::{DecodeContext, Explained, Message, Registry};
use cqlwire_tls::TlsSummary;
use std::sync::Arc;

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
    pub message: Result<Message, DecodeError>,
    /// What explaining it again needs, when [`Options::explain`](crate::Options::explain) is set.
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
    /// unless [`Options::explain`](crate::Options::explain) was set. Returns the outcome, whose
    /// error is the fault after the last line.
    pub fn explain_each(
        &self,
        form: ValueForm<'_>,
        each: &mut dyn FnMut(ExplainLine),
    ) -> Option<Result<Message, DecodeError>> {
        self.decode_again(|context, body| Message::explain_each(context, body, &form, each))
    }

    /// Decodes the message again, gathering its explain lines (as [`ValueForm::Plain`] shows
    /// them); `None` unless [`Options::explain`](crate::Options::explain) was set.
    pub fn explained(&self) -> Option<Explained> {
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

/// What an [`Inspector`](crate::Inspector) reports, in capture order. Exhaustive on purpose:
/// whoever prints records must decide how to show a kind added later, so adding one is a breaking
/// change.
#[derive(Debug, Clone)]
pub enum Record {
    /// A message.
    Message(Box<MessageRecord>),
    /// A problem.
    Problem(Problem),
    /// A TLS connection, named once ([`TlsRecord`]).
    Tls(TlsRecord),
}

/// A TLS connection, reported once, before any message decrypted from it.
#[derive(Debug, Clone)]
pub struct TlsRecord {
    /// Connection number in the capture (from 1).
    pub conn_id: u64,
    /// `<client ip:port>-<server ip:port>`.
    pub conn: String,
    /// Capture time of the segment that decided what is reported.
    pub time: Timestamp,
    /// What the hellos showed in the clear (versions, server name, cipher suite).
    pub summary: TlsSummary,
    /// Whether its application data is being decrypted.
    pub decrypted: bool,
}
