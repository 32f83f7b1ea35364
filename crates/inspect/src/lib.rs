//! Captured CQL conversations: packet captures read down to reassembled TCP streams
//! ([`capture`]), and whole conversations decoded message by message on the wire protocol of
//! [`cqlwire_protocol`], shown plain, masked or redacted.
//!
//! An [`Inspector`] takes the events of a capture in order. It keeps the connections that carry
//! CQL (on one of [`Options::ports`], or whose first bytes are a CQL frame header), tells client
//! from server (the SYN, the port, or the direction bit of the frames), feeds each direction to a
//! [`StreamDecoder`](cqlwire_protocol::stream::StreamDecoder), decodes the bodies with the
//! connection's prepared [`Registry`](cqlwire_protocol::message::Registry) (compression learnt
//! from the STARTUP, guessed when the capture starts mid-connection), pairs responses with
//! requests by stream id and reports [`Record`]s in capture order: messages with their latency,
//! and problems with their offsets. Nothing stops a run: each problem is reported and decoding
//! goes on. Memory holds what the open connections have buffered (at most about one frame per
//! direction), the gist of their pending requests (bounded, see [`PENDING_MAX_BYTES_PER_CONN`])
//! and their bounded registries of prepared statements.
//!
//! Raw byte streams without a capture around them go through [`Inspector::raw`]. Connections that
//! start with a TLS record are named, and decrypted with a key log ([`KeyLog`]).
//!
//! What a record shows of the captured data is its [`ValueForm`]: plain, masked (passwords) or
//! redacted (everything but the conversation's shape, under a [`KeyedHash`]). [`RenderMessage`]
//! writes a message as JSON or as a one-line gist, [`Printer`] writes records as text lines,
//! explain trees or JSON lines, [`Filter`] selects them, and [`Stats`] sums them up.
//!
//! The modules: `capture/` (pcap and pcapng, link layers, TCP reassembly), `inspector/` (the
//! engine: [`Inspector`] and its [`Options`] in `mod.rs`, one connection in `conn.rs`, requests
//! awaiting their response in `pending.rs`, TLS in `tls.rs`, raw streams in `raw.rs`),
//! `record.rs` (what it reports), `redaction/` (what is shown of the captured data), `render.rs`,
//! `printer.rs` and `stats.rs`.

#![warn(missing_docs)]
pub mod capture;
mod inspector;
mod printer;
mod record;
mod redaction;
mod render;
mod stats;

pub use crate::inspector::pending::{KEPT_TEXT, PENDING_MAX_BYTES, PENDING_MAX_BYTES_PER_CONN};
pub use crate::inspector::tls::{looks_like_tls, read_key_logs, KeyLog};
pub use crate::inspector::{Inspector, Options, DEFAULT_MAX_FRAME, SCYLLA_SHARD_AWARE_PORT};
pub use crate::printer::{Filter, Format, Printer};
pub use crate::record::{
    ExplainContext, MessageRecord, Problem, Record, RequestInfo, Side, TlsRecord,
};
pub use crate::redaction::{
    KeyError, KeyedHash, ValueForm, MAX_KEY_BYTES, MIN_KEY_BYTES, TAG_HEX_DIGITS,
};
pub use crate::render::RenderMessage;
pub use crate::stats::{More, Statement, Stats, MAX_MORE_COUNTED, MAX_STATEMENTS};

/// What the fuzz targets (`fuzz/`) check on its own, below the inspector: the CQL lexer and the
/// redaction of query and server text. Not part of the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::redaction::cql_lexer::{tokens, Token, TokenKind, Tokens};
    pub use crate::redaction::secrets::{redact_query, redact_server_text};
}
