//! Requests waiting for their response. A pending request keeps only what its response line and
//! decoding need: its opcode and time, its statement (query text cut to [`KEPT_TEXT`]) and, for
//! PREPARE and EXECUTE, the query text or prepared id that pairs the PREPARED result with its
//! statement and gives a Rows result its columns — never its body or bound values. The requests
//! of one connection keep at most [`PENDING_MAX_BYTES_PER_CONN`], those of all connections
//! [`PENDING_MAX_BYTES`]: beyond, the oldest are forgotten (their responses show no latency).

use crate::capture::Timestamp;
use cqlwire_protocol::frame::HeaderOpcode;
use cqlwire_protocol::message::{Body, Execute, Message, Prepare, QueryParameters, Registry};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Longest statement or query text a pending request keeps, in bytes; a longer one is cut and
/// marked with its length and a hash of the whole text (`… [40000 bytes, #1f2e3d4c5b6a7980]`), so
/// distinct long statements keep distinct keys in `--stats`.
pub const KEPT_TEXT: usize = 16 << 10;

/// Most bytes the pending requests of one connection keep; beyond, its oldest are forgotten.
pub const PENDING_MAX_BYTES_PER_CONN: usize = 4 << 20;

/// Most bytes the pending requests of all connections keep together; beyond, the oldest of all
/// are forgotten.
pub const PENDING_MAX_BYTES: usize = 32 << 20;

/// Bytes a pending request costs besides its texts: the entry (64 bytes), its slots in the
/// connection's map and order and in the order of all connections, and the maps' spare room
/// (measured: about 300 bytes each for 4,000 to 16,000 pending OPTIONS).
const ENTRY_COST: usize = 320;

/// `text` when it is at most [`KEPT_TEXT`] bytes, else its first bytes (at a character boundary)
/// marked with its length and a hash of the whole.
pub(crate) fn kept_text(text: &str) -> String {
    if text.len() <= KEPT_TEXT {
        return text.to_string();
    }
    let mut end = KEPT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let hash = foldhash::fast::FixedState::default().hash_one(text);
    let mut kept = format!("{}… [{} bytes, #{hash:016x}]", &text[..end], text.len());
    // `format!` grows by doubling: a kept text would otherwise hold up to twice what it counts.
    kept.shrink_to_fit();
    kept
}

/// One request waiting for its response.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Its place in the order of all pending requests (oldest first).
    seq: u64,
    /// Capture time of the request.
    pub time: Timestamp,
    /// Its opcode.
    pub opcode: HeaderOpcode,
    /// The statement of a QUERY or BATCH, known from the request alone.
    statement: Option<String>,
    /// For PREPARE and EXECUTE: a message with only what decoding the response needs (boxed: a
    /// `Message` is 280 bytes, which every entry of the map would take).
    pub request: Option<Box<Message>>,
    /// What it counts against the bounds.
    cost: usize,
}

impl Pending {
    /// What a request decoded as `message` (or undecodable: `None`) keeps.
    pub fn new(message: Option<&Message>, time: Timestamp, opcode: HeaderOpcode) -> Self {
        let registry = Registry::new();
        let (statement, request) = match message.map(|m| (m, &m.body)) {
            Some((m, Body::Prepare(p))) => {
                let body = Body::Prepare(Prepare {
                    query: kept_text(&p.query),
                    flags: None,
                    keyspace: None,
                });
                (None, Some(Box::new(bare(m, body))))
            }
            Some((m, Body::Execute(e))) => {
                let body = Body::Execute(Execute {
                    id: e.id.clone(),
                    result_metadata_id: e.result_metadata_id.clone(),
                    query: e.query.as_deref().map(|q| kept_text(q).into()),
                    parameters: QueryParameters::default(),
                });
                (None, Some(Box::new(bare(m, body))))
            }
            // Not through `statement`, which would copy a long text whole first.
            Some((_, Body::Query(q))) => (Some(kept_text(&q.query)), None),
            Some((m, _)) => (statement(m, &registry).map(|s| kept_text(&s)), None),
            None => (None, None),
        };
        let texts = statement.as_ref().map_or(0, String::len)
            + request.as_ref().map_or(0, |m| match &m.body {
                Body::Prepare(p) => p.query.len(),
                Body::Execute(e) => {
                    e.id.len()
                        + e.result_metadata_id.as_ref().map_or(0, Vec::len)
                        + e.query.as_ref().map_or(0, |q| q.len())
                }
                Body::Error(_)
                | Body::Startup(_)
                | Body::Ready
                | Body::Authenticate(_)
                | Body::Options
                | Body::Supported(_)
                | Body::Query(_)
                | Body::Result(_)
                | Body::Register(_)
                | Body::Event(_)
                | Body::Batch(_)
                | Body::AuthChallenge(_)
                | Body::AuthResponse(_)
                | Body::AuthSuccess(_) => 0,
            });
        Pending {
            seq: 0,
            time,
            opcode,
            statement,
            request,
            cost: ENTRY_COST + texts,
        }
    }

    /// The statement the request ran (for PREPARE and EXECUTE as `registry` knows it now).
    pub fn statement(&self, registry: &Registry) -> Option<String> {
        match &self.request {
            Some(m) => statement(m, registry).map(|s| kept_text(&s)),
            None => self.statement.clone(),
        }
    }
}

/// `body` in a message with `m`'s version, flags and opcode and nothing else.
fn bare(m: &Message, body: Body) -> Message {
    Message {
        version: m.version,
        flags: m.flags,
        opcode: m.opcode,
        tracing_id: None,
        warnings: None,
        custom_payload: None,
        body,
        trailing: 0,
        bytes: Default::default(),
    }
}

/// The order and bytes of the pending requests of all connections.
#[derive(Debug, Default)]
pub(crate) struct PendingTotals {
    /// Connection id and stream of each pending request, by its place in the order.
    order: BTreeMap<u64, (u64, i16)>,
    /// Their bytes.
    bytes: usize,
    next_seq: u64,
}

impl PendingTotals {
    /// The oldest pending request of all, once the total is over [`PENDING_MAX_BYTES`]: its
    /// connection id and stream.
    pub fn over_limit(&self) -> Option<(u64, i16)> {
        if self.bytes <= PENDING_MAX_BYTES {
            return None;
        }
        self.order.first_key_value().map(|(_, &at)| at)
    }
}

/// The requests of one connection waiting for their response, by stream id.
#[derive(Debug, Default)]
pub(crate) struct PendingSet {
    by_stream: HashMap<i16, Pending, foldhash::fast::RandomState>,
    /// Stream of each, by its place in the order.
    order: BTreeMap<u64, i16>,
    bytes: usize,
    /// Requests forgotten unanswered over a bound.
    pub forgotten: u64,
}

impl PendingSet {
    /// Whether a request on `stream` waits for its response.
    pub fn contains(&self, stream: i16) -> bool {
        self.by_stream.contains_key(&stream)
    }

    /// The request on `stream`, no longer pending.
    pub fn take(&mut self, stream: i16, totals: &mut PendingTotals) -> Option<Pending> {
        let pending = self.by_stream.remove(&stream)?;
        self.order.remove(&pending.seq);
        totals.order.remove(&pending.seq);
        self.bytes -= pending.cost;
        totals.bytes -= pending.cost;
        Some(pending)
    }

    /// Adds a request of connection `conn` on `stream` (one still pending there is replaced: the
    /// client reused the stream id, so no response to it is coming), then forgets the oldest of
    /// this connection while it keeps more than [`PENDING_MAX_BYTES_PER_CONN`]. Returns how many
    /// were forgotten over that bound.
    pub fn insert(
        &mut self,
        conn: u64,
        stream: i16,
        mut pending: Pending,
        totals: &mut PendingTotals,
    ) -> u64 {
        let before = self.forgotten;
        self.take(stream, totals);
        pending.seq = totals.next_seq;
        totals.next_seq += 1;
        self.bytes += pending.cost;
        totals.bytes += pending.cost;
        self.order.insert(pending.seq, stream);
        totals.order.insert(pending.seq, (conn, stream));
        self.by_stream.insert(stream, pending);
        while self.bytes > PENDING_MAX_BYTES_PER_CONN && self.by_stream.len() > 1 {
            let Some((_, &oldest)) = self.order.first_key_value() else {
                break;
            };
            self.forget(oldest, totals);
        }
        self.forgotten - before
    }

    /// Forgets the request on `stream`.
    pub fn forget(&mut self, stream: i16, totals: &mut PendingTotals) {
        if self.take(stream, totals).is_some() {
            self.forgotten += 1;
        }
    }

    /// Forgets every request (the connection ended); returns how many were pending.
    pub fn clear(&mut self, totals: &mut PendingTotals) -> usize {
        let count = self.by_stream.len();
        for (_, pending) in self.by_stream.drain() {
            totals.order.remove(&pending.seq);
            totals.bytes -= pending.cost;
        }
        self.order.clear();
        self.bytes = 0;
        count
    }
}

/// The statement a request runs, for statistics.
pub(crate) fn statement(message: &Message, registry: &Registry) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use cqlwire_protocol::frame::Opcode;

    #[test]
    fn long_texts_are_cut_with_their_length_and_a_hash() {
        let short = "SELECT 1";
        assert_eq!(kept_text(short), short);
        let a = format!("SELECT '{}'", "é".repeat(KEPT_TEXT));
        let b = format!("SELECT '{}' ", "é".repeat(KEPT_TEXT));
        let (ka, kb) = (kept_text(&a), kept_text(&b));
        assert!(ka.len() < KEPT_TEXT + 64, "{}", ka.len());
        assert!(ka.starts_with(&a[..KEPT_TEXT - 2]));
        assert!(
            ka.contains(&format!("… [{} bytes, #", a.len())),
            "{}",
            &ka[KEPT_TEXT - 8..]
        );
        assert_ne!(ka, kb);
    }

    #[test]
    fn the_oldest_are_forgotten_over_the_bounds() {
        let mut totals = PendingTotals::default();
        let mut set = PendingSet::default();
        let per = ENTRY_COST;
        let fits = PENDING_MAX_BYTES_PER_CONN / per;
        for stream in 0..fits as i16 + 10 {
            set.insert(
                1,
                stream,
                Pending::new(None, Timestamp(0), Opcode::Options.into()),
                &mut totals,
            );
        }
        assert_eq!(set.forgotten, 10);
        assert!(!set.contains(9) && set.contains(10));
        assert!(totals.over_limit().is_none());
        assert_eq!(set.clear(&mut totals), fits);
        assert_eq!((totals.bytes, totals.order.len()), (0, 0));
    }

    #[test]
    fn a_request_on_a_reused_stream_replaces_the_pending_one_without_forgetting() {
        let mut totals = PendingTotals::default();
        let mut set = PendingSet::default();
        for opcode in [Opcode::Options, Opcode::Startup] {
            let pending = Pending::new(None, Timestamp(0), opcode.into());
            let forgotten = set.insert(1, 0, pending, &mut totals);
            assert_eq!(forgotten, 0);
        }
        assert_eq!(set.forgotten, 0);
        assert_eq!(
            set.take(0, &mut totals).map(|p| p.opcode),
            Some(Opcode::Startup.into())
        );
        assert_eq!((totals.bytes, totals.order.len()), (0, 0));
    }
}
