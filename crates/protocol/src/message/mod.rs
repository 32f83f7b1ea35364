//! CQL message bodies of protocol v3, v4 and v5: every opcode decoded from the envelope's version,
//! flags and opcode and the (decompressed) body bytes, with the body prefixes (tracing id, warnings,
//! custom payload) in order, row and bound values decoded through the value codec, and the
//! per-connection [`Registry`] of prepared statements that gives EXECUTE and BATCH values their names
//! and types.
//!
//! ```
//! use cqlwire_protocol::message::{consistency_name, Body, DecodeContext, Message, Registry};
//! // A v4 QUERY "SELECT 1" at consistency ONE, no flags.
//! let body = [0, 0, 0, 8, b'S', b'E', b'L', b'E', b'C', b'T', b' ', b'1', 0, 1, 0];
//! let registry = Registry::new();
//! let query = DecodeContext {
//!     version: 4,
//!     flags: 0,
//!     opcode: 0x07,
//!     registry: &registry,
//!     request: None,
//! };
//! let message = Message::decode(&query, &body).unwrap();
//! let Body::Query(query) = &message.body else { panic!("a QUERY") };
//! assert_eq!(query.query, "SELECT 1");
//! assert_eq!(consistency_name(query.parameters.consistency), "ONE");
//! ```
//!
//! A malformed body is a [`DecodeError`] with the offset into the body and the path of the faulty
//! item (`row 2 / column 1`); counts are checked against the bytes left before anything is sized by
//! them. Bytes after a complete body are not an error (the specification asks clients to ignore
//! them): [`Message::trailing`] counts them.

mod mask;
mod reader;
mod requests;
mod reread;
mod responses;
mod results;
mod types;

pub use mask::{Captured, Mask};
pub use reader::consistency_name;
pub use requests::{
    Batch, BatchStatement, Execute, Prepare, Query, QueryParameters, BATCH_REPEATED_QUERY_MAX,
    QUERY_FLAG_NAMES,
};
pub use responses::{ErrorBody, ErrorDetails, Event, FailureReasons, Failures};
pub use results::{Prepared, ResultBody, Rows, RowsMetadata, SchemaChange, METADATA_FLAG_NAMES};
pub use types::{
    BoundValue, BoundValues, Cell, Column, ColumnRef, ColumnType, Columns, StringMultimap,
};

use super::frame::{Direction, Flags, FrameHeader, Opcode};
use crate::cursor::DecodeError;
use crate::value::ExplainLine;
use reader::Reader;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

/// The header flags' names in capitals (`TRACING`, `WARNING`, …), made once.
fn header_flag_names() -> &'static [(u32, &'static str)] {
    static NAMES: OnceLock<Vec<(u32, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        Flags::NAMED
            .iter()
            .map(|&(bit, name)| {
                let upper: &'static str = Box::leak(name.to_ascii_uppercase().into_boxed_str());
                (u32::from(bit), upper)
            })
            .collect()
    })
}

/// Hands `each` the names of the header flags set in `flags` (`TRACING`, `WARNING`, …; an unknown
/// bit as hex).
pub fn each_flag_name(flags: u8, each: impl FnMut(&str)) {
    each_bit_name(u32::from(flags), header_flag_names(), each);
}

/// The names of the bits of `flags` found in `names`, then each other set bit as `0x…`.
pub(crate) fn bit_names(flags: u32, names: &[(u32, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    each_bit_name(flags, names, |name| out.push(name.to_string()));
    out
}

/// Hands `each` the names of the bits of `flags` found in `names`, then each other set bit as
/// `0x…`, in order, without collecting them.
pub fn each_bit_name(flags: u32, names: &[(u32, &str)], mut each: impl FnMut(&str)) {
    let mut known = 0;
    for &(bit, name) in names {
        if flags & bit != 0 {
            each(name);
        }
        known |= bit;
    }
    let unknown = flags & !known;
    for shift in 0..32 {
        let bit = 1u32 << shift;
        if unknown & bit != 0 {
            each(&format!("0x{bit:x}"));
        }
    }
}

/// One decoded message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The protocol version (3, 4 or 5; the direction bit removed).
    pub version: u8,
    /// The header flags.
    pub flags: u8,
    /// The opcode.
    pub opcode: Opcode,
    /// The tracing id that starts a response body with the tracing flag.
    pub tracing_id: Option<uuid::Uuid>,
    /// The warnings of a response with the warning flag (v4+).
    pub warnings: Option<Vec<String>>,
    /// The custom payload of a message with the custom payload flag (v4+): keys and values (a
    /// null value is `None`).
    pub custom_payload: Option<Vec<(String, Option<Vec<u8>>)>>,
    /// The body proper.
    pub body: Body,
    /// Bytes after the body (ignored, as the specification asks).
    pub trailing: usize,
    /// The (decompressed) body bytes it was decoded from: its [`Cell`]s are ranges of them.
    pub bytes: Arc<Vec<u8>>,
}

/// The body of a message, by opcode.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// ERROR: a code, a message and the code's extra fields.
    Error(ErrorBody),
    /// STARTUP: the options (`CQL_VERSION`, `COMPRESSION`, …) in wire order.
    Startup(Vec<(String, String)>),
    /// READY.
    Ready,
    /// AUTHENTICATE: the authenticator's class name.
    Authenticate(String),
    /// OPTIONS.
    Options,
    /// SUPPORTED: each option with its values (ScyllaDB's extensions included), in wire order.
    Supported(StringMultimap),
    /// QUERY.
    Query(Query),
    /// RESULT.
    Result(ResultBody),
    /// PREPARE.
    Prepare(Prepare),
    /// EXECUTE.
    Execute(Execute),
    /// REGISTER: the event types.
    Register(Vec<String>),
    /// EVENT.
    Event(Event),
    /// BATCH.
    Batch(Batch),
    /// AUTH_CHALLENGE: the token (`None` when null).
    AuthChallenge(Option<Vec<u8>>),
    /// AUTH_RESPONSE: the token (`None` when null).
    AuthResponse(Option<Vec<u8>>),
    /// AUTH_SUCCESS: the token (`None` when null).
    AuthSuccess(Option<Vec<u8>>),
}

/// A statement prepared on a connection, as its PREPARE and PREPARED result described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedStatement {
    /// The query text of the PREPARE, when it was seen (shared with the EXECUTE and BATCH messages
    /// that run the statement).
    pub query: Option<Arc<str>>,
    /// The bound variables: names and types of the values of an EXECUTE.
    pub variables: Columns,
    /// The result columns (empty when the statement returns no rows or the server sent none).
    pub columns: Columns,
    /// The result metadata id (v5).
    pub result_metadata_id: Option<Vec<u8>>,
}

/// Most statements a [`Registry`] keeps; learning one more forgets the oldest.
pub const REGISTRY_MAX_STATEMENTS: usize = 1024;

/// Most bytes of statement metadata (ids, query texts, names and types of variables and columns)
/// a [`Registry`] keeps; learning more forgets the oldest statements (the newest always stays).
pub const REGISTRY_MAX_BYTES: usize = 1 << 20;

/// The prepared statements seen on one connection, keyed by prepared id. Bounded by
/// [`REGISTRY_MAX_STATEMENTS`] and [`REGISTRY_MAX_BYTES`]: the oldest statements are forgotten
/// first, and an EXECUTE of a forgotten statement decodes as one whose PREPARE was not seen.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Statements by prepared id.
    prepared: HashMap<Vec<u8>, PreparedStatement, foldhash::fast::RandomState>,
    /// Their ids, oldest first.
    order: VecDeque<Vec<u8>>,
    /// Their metadata bytes ([`footprint`]).
    bytes: usize,
}

/// The metadata bytes of a statement, as [`REGISTRY_MAX_BYTES`] counts them.
fn footprint(id: &[u8], statement: &PreparedStatement) -> usize {
    id.len()
        + statement.query.as_ref().map_or(0, |q| q.len())
        + statement.result_metadata_id.as_ref().map_or(0, Vec::len)
        + statement.variables.footprint()
        + statement.columns.footprint()
}

impl Registry {
    /// An empty registry (a new connection).
    pub fn new() -> Self {
        Registry::default()
    }

    /// The statement prepared with `id`, when its PREPARED result was seen (and not forgotten).
    pub fn get(&self, id: &[u8]) -> Option<&PreparedStatement> {
        self.prepared.get(id)
    }

    /// The number of statements known.
    pub fn len(&self) -> usize {
        self.prepared.len()
    }

    /// Whether no statement is known.
    pub fn is_empty(&self) -> bool {
        self.prepared.is_empty()
    }

    /// A registry of the statements among `ids` that this one knows (what decoding a message
    /// that refers to them needs).
    pub fn subset<'a>(&self, ids: impl IntoIterator<Item = &'a [u8]>) -> Registry {
        let mut subset = Registry::new();
        for id in ids {
            if let Some(statement) = self.prepared.get(id) {
                if !subset.prepared.contains_key(id) {
                    subset.bytes += footprint(id, statement);
                    subset.order.push_back(id.to_vec());
                    subset.prepared.insert(id.to_vec(), statement.clone());
                }
            }
        }
        subset
    }

    /// Forgets the statement `id`.
    fn forget(&mut self, id: &[u8]) {
        if let Some(statement) = self.prepared.remove(id) {
            self.bytes -= footprint(id, &statement);
            self.order.retain(|known| known != id);
        }
    }

    /// Forgets the oldest statements beyond the bounds (never the newest); returns how many.
    fn trim(&mut self) -> usize {
        let mut forgotten = 0;
        while self.order.len() > 1
            && (self.order.len() > REGISTRY_MAX_STATEMENTS || self.bytes > REGISTRY_MAX_BYTES)
        {
            if let Some(oldest) = self.order.pop_front() {
                if let Some(statement) = self.prepared.remove(&oldest) {
                    self.bytes -= footprint(&oldest, &statement);
                }
                forgotten += 1;
            }
        }
        forgotten
    }

    /// Learns from a response and the request it answers (paired by stream id): a PREPARED result
    /// records its statement (with the PREPARE's query text), and a v5 Rows result whose metadata
    /// changed updates the result columns of the executed statement. Returns how many older
    /// statements were forgotten to stay within the bounds.
    pub fn learn(&mut self, request: Option<&Message>, response: &Message) -> usize {
        match &response.body {
            Body::Result(ResultBody::Prepared(prepared)) => {
                let query = match request.map(|r| &r.body) {
                    Some(Body::Prepare(prepare)) => Some(prepare.query.as_str().into()),
                    _ => None,
                };
                let statement = PreparedStatement {
                    query,
                    variables: prepared.variables.clone(),
                    columns: prepared.result.columns.clone(),
                    result_metadata_id: prepared.result_metadata_id.clone(),
                };
                self.forget(&prepared.id);
                self.bytes += footprint(&prepared.id, &statement);
                self.order.push_back(prepared.id.clone());
                self.prepared.insert(prepared.id.clone(), statement);
                self.trim()
            }
            Body::Result(ResultBody::Rows(rows)) => {
                let (Some(new_id), Some(Body::Execute(execute))) =
                    (&rows.metadata.new_metadata_id, request.map(|r| &r.body))
                else {
                    return 0;
                };
                let Some(statement) = self.prepared.get_mut(&execute.id) else {
                    return 0;
                };
                let before = footprint(&execute.id, statement);
                statement.result_metadata_id = Some(new_id.clone());
                statement.columns = rows.metadata.columns.clone();
                self.bytes = self.bytes - before + footprint(&execute.id, statement);
                self.trim()
            }
            Body::Result(
                ResultBody::Void | ResultBody::SetKeyspace(_) | ResultBody::SchemaChange(_),
            )
            | Body::Error(_)
            | Body::Startup(_)
            | Body::Ready
            | Body::Authenticate(_)
            | Body::Options
            | Body::Supported(_)
            | Body::Query(_)
            | Body::Prepare(_)
            | Body::Execute(_)
            | Body::Register(_)
            | Body::Event(_)
            | Body::Batch(_)
            | Body::AuthChallenge(_)
            | Body::AuthResponse(_)
            | Body::AuthSuccess(_) => 0,
        }
    }
}

/// The explain lines of one message body and the outcome: the message, or the error that stopped
/// decoding after the last line.
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    /// One line per wire item, offsets into the body.
    pub lines: Vec<ExplainLine>,
    /// The message, or the fault.
    pub result: Result<Message, DecodeError>,
}

impl Explained {
    /// Writes the lines (`offset  bytes  meaning [path]`), offsets shifted by `base` (where the body
    /// starts in the stream) and indented `depth` levels; the error, if any, is left to the caller.
    pub fn write<W: Write>(
        &self,
        out: &mut W,
        body: &[u8],
        base: usize,
        depth: usize,
    ) -> io::Result<()> {
        crate::value::explain::write_lines(out, &self.lines, body, base, depth)
    }
}

/// What decoding a body needs besides its bytes: the header fields it depends on, the prepared
/// statements of its connection and, for a response, the request it answers.
#[derive(Debug, Clone, Copy)]
pub struct DecodeContext<'a> {
    /// The header's version byte (the direction bit may be set).
    pub version: u8,
    /// The header's flags byte (tracing, warning, custom payload).
    pub flags: u8,
    /// The header's opcode byte.
    pub opcode: u8,
    /// The connection's prepared statements, which give EXECUTE and BATCH values their names and
    /// types.
    pub registry: &'a Registry,
    /// The request a response answers (paired by stream id), which gives a Rows result without
    /// metadata the result columns of the EXECUTE's statement.
    pub request: Option<&'a Message>,
}

impl<'a> DecodeContext<'a> {
    /// The context of the body that follows `header`.
    pub fn of(header: &FrameHeader, registry: &'a Registry, request: Option<&'a Message>) -> Self {
        DecodeContext {
            version: header.version_byte(),
            flags: header.flags.0,
            opcode: header.opcode.to_byte(),
            registry,
            request,
        }
    }
}

impl Message {
    /// Decodes the body of one envelope in its `context`.
    pub fn decode(context: &DecodeContext<'_>, body: &[u8]) -> Result<Message, DecodeError> {
        let body = Arc::new(body.to_vec());
        Message::decode_shared(context, &body)
    }

    /// Decodes like [`Message::decode`] a body the message then shares (no copy of it).
    pub fn decode_shared(
        context: &DecodeContext<'_>,
        body: &Arc<Vec<u8>>,
    ) -> Result<Message, DecodeError> {
        let mut reader = Reader::new(body, None);
        decode_with(&mut reader, body, context)
    }

    /// Decodes like [`Message::decode`], recording one explain line per wire item (values as their
    /// CQL literals, then their own wire items) up to the end or the fault.
    pub fn explain(context: &DecodeContext<'_>, body: &[u8]) -> Explained {
        let body = Arc::new(body.to_vec());
        let mut lines = Vec::new();
        let mut each = |line| lines.push(line);
        let mut reader = Reader::new(&body, Some(&mut each));
        let result = decode_with(&mut reader, &body, context);
        drop(reader);
        Explained { lines, result }
    }

    /// Decodes like [`Message::explain`], handing each explain line to `each` as it is read
    /// instead of gathering them (a body of millions of items needs memory for one line), as
    /// `mask` shows it: the lines inside captured data it hides are left out, and the first line
    /// of each says what it was, masked or redacted. The message shares `body`.
    pub fn explain_each(
        context: &DecodeContext<'_>,
        body: &Arc<Vec<u8>>,
        mask: &dyn Mask,
        each: &mut dyn FnMut(ExplainLine),
    ) -> Result<Message, DecodeError> {
        let mut reader = Reader::new(body, Some(each));
        reader.hide = Opcode::from_byte(context.opcode).map(|opcode| (mask, opcode));
        decode_with(&mut reader, body, context)
    }

    /// The opcode's name (`QUERY`).
    pub fn opcode_name(&self) -> &'static str {
        self.opcode.name()
    }

    /// Whether the server sent it.
    pub fn is_response(&self) -> bool {
        self.opcode.goes(Direction::Response)
    }

    /// The bytes of a row or bound value (`None` for null and unset).
    pub fn cell_bytes(&self, cell: &Cell) -> Option<&[u8]> {
        match cell {
            Cell::Null | Cell::Unset => None,
            Cell::Value(range) | Cell::Bytes(range) => self.bytes.get(range.clone()),
        }
    }
}

/// Decodes the prefixes and the body from `reader`.
fn decode_with(
    reader: &mut Reader<'_>,
    bytes: &Arc<Vec<u8>>,
    context: &DecodeContext<'_>,
) -> Result<Message, DecodeError> {
    let &DecodeContext {
        version,
        flags,
        opcode,
        registry,
        request,
    } = context;
    let version = version & 0x7f;
    if !(3..=5).contains(&version) {
        return Err(reader.error(0, format!("unsupported protocol version {version}")));
    }
    let Some(opcode) = Opcode::from_byte(opcode) else {
        return Err(reader.error(0, format!("unknown opcode 0x{opcode:02x}")));
    };
    let name = opcode.name();
    let response = opcode.goes(Direction::Response);
    let tracing_id = if response && Flags(flags).contains(Flags::TRACING) {
        Some(reader.uuid("tracing id")?)
    } else {
        None
    };
    let warnings = if version >= 4 && response && Flags(flags).contains(Flags::WARNING) {
        Some(reader.server_text_list("warnings")?)
    } else {
        None
    };
    let custom_payload = if version >= 4 && Flags(flags).contains(Flags::CUSTOM_PAYLOAD) {
        Some(reader.bytes_map("custom payload")?)
    } else {
        None
    };
    let start = reader.cursor.pos();
    reader.line_at(start, 0, || name.to_string());
    reader.indent += 1;
    let body = decode_body(reader, version, opcode, registry, request);
    reader.indent -= 1;
    let body = body?;
    let trailing = reader.cursor.left();
    if trailing > 0 {
        let at = reader.cursor.pos();
        reader.line_at(at, trailing, || {
            format!("{} (ignored)", crate::cursor::trailing(trailing))
        });
    }
    Ok(Message {
        version,
        flags,
        opcode,
        tracing_id,
        warnings,
        custom_payload,
        body,
        trailing,
        bytes: Arc::clone(bytes),
    })
}

/// Decodes the body proper of `opcode`.
fn decode_body(
    r: &mut Reader<'_>,
    version: u8,
    opcode: Opcode,
    registry: &Registry,
    request: Option<&Message>,
) -> Result<Body, DecodeError> {
    let token = |r: &mut Reader<'_>| r.bytes("token").map(|t| t.map(<[u8]>::to_vec));
    Ok(match opcode {
        Opcode::Error => Body::Error(responses::error(r, version)?),
        Opcode::Startup => Body::Startup(r.string_map("options")?),
        Opcode::Ready => Body::Ready,
        Opcode::Authenticate => Body::Authenticate(r.string("authenticator")?),
        Opcode::Options => Body::Options,
        Opcode::Supported => Body::Supported(r.string_multimap("options")?),
        Opcode::Query => Body::Query(requests::query(r, version)?),
        Opcode::Result => Body::Result(results::result(r, version, registry, request)?),
        Opcode::Prepare => Body::Prepare(requests::prepare(r, version)?),
        Opcode::Execute => Body::Execute(requests::execute(r, version, registry)?),
        Opcode::Register => Body::Register(r.string_list("events")?),
        Opcode::Event => Body::Event(responses::event(r)?),
        Opcode::Batch => Body::Batch(requests::batch(r, version, registry)?),
        Opcode::AuthChallenge => Body::AuthChallenge(token(r)?),
        Opcode::AuthResponse => Body::AuthResponse(token(r)?),
        Opcode::AuthSuccess => Body::AuthSuccess(token(r)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PREPARED result for `id` whose PREPARE had `query`.
    fn prepared(id: u32, query_len: usize) -> (Message, Message) {
        let message = |opcode, body| Message {
            version: 4,
            flags: 0,
            opcode,
            tracing_id: None,
            warnings: None,
            custom_payload: None,
            body,
            trailing: 0,
            bytes: Arc::default(),
        };
        let prepare = message(
            Opcode::Prepare,
            Body::Prepare(Prepare {
                query: "x".repeat(query_len),
                flags: None,
                keyspace: None,
            }),
        );
        let result = message(
            Opcode::Result,
            Body::Result(ResultBody::Prepared(Prepared {
                id: id.to_be_bytes().to_vec(),
                result_metadata_id: None,
                flags: 0,
                pk_indices: vec![],
                variables: Columns::new(),
                result: RowsMetadata::default(),
            })),
        );
        (prepare, result)
    }

    #[test]
    fn the_registry_forgets_the_oldest_statements_beyond_its_bounds() {
        let mut registry = Registry::new();
        let mut forgotten = 0;
        for id in 0..REGISTRY_MAX_STATEMENTS as u32 + 10 {
            let (prepare, result) = prepared(id, 10);
            forgotten += registry.learn(Some(&prepare), &result);
        }
        assert_eq!(forgotten, 10);
        assert_eq!(registry.len(), REGISTRY_MAX_STATEMENTS);
        assert!(registry.get(&9u32.to_be_bytes()).is_none());
        assert!(registry.get(&10u32.to_be_bytes()).is_some());
        // Preparing a known id again replaces it, and it becomes the newest.
        let (prepare, result) = prepared(10, 10);
        assert_eq!(registry.learn(Some(&prepare), &result), 0);
        let (prepare, result) = prepared(5000, 10);
        assert_eq!(registry.learn(Some(&prepare), &result), 1);
        assert!(registry.get(&10u32.to_be_bytes()).is_some());
        assert!(registry.get(&11u32.to_be_bytes()).is_none());

        // Metadata bytes: big query texts evict by size; the newest always stays.
        let mut registry = Registry::new();
        let big = REGISTRY_MAX_BYTES / 4;
        for id in 0..6 {
            let (prepare, result) = prepared(id, big);
            registry.learn(Some(&prepare), &result);
        }
        assert_eq!(registry.len(), 3);
        assert!(registry.get(&5u32.to_be_bytes()).is_some());
        let (prepare, result) = prepared(6, 2 * REGISTRY_MAX_BYTES);
        assert_eq!(registry.learn(Some(&prepare), &result), 3);
        assert_eq!(registry.len(), 1);
        assert!(registry.get(&6u32.to_be_bytes()).is_some());
    }
}
