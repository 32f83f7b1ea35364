//! The inspector's targets: `query_redaction`, `inspect` and `capture`.

use super::memory::{bounded, note_connections, unmeasured, MemoryBound, LZ4_RATIO};

/// `a` (a text redacted under one key) with its placeholders (`?kind:<tag>`, `?:<tag>`) and
/// password masks (`<password: N bytes>`) blanked with spaces, so what is left is what the
/// redaction kept. The same text redacted under another key, `b`, tells the tags (where they
/// differ) from kept text that only looks like one (a bind marker `:abcdef12`).
fn blank_placeholders(a: &str, b: &str) -> String {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    assert_eq!(x.len(), y.len(), "two keys, two shapes: {a:?} {b:?}");
    let mut out = x.to_vec();
    let mut i = 0;
    while i < x.len() {
        if x[i] != y[i] {
            // A tag: its `:` is at most 8 bytes before, its kind and `?` before that.
            let colon = (i.saturating_sub(8)..i).rev().find(|&j| x[j] == b':');
            let colon = colon.expect("a tag follows a colon");
            let mut start = colon;
            while start > 0 && x[start - 1].is_ascii_lowercase() {
                start -= 1;
            }
            assert_eq!(
                x[start.saturating_sub(1)],
                b'?',
                "a placeholder starts with ?: {a:?}"
            );
            let end = colon + 9;
            out[start - 1..end].fill(b' ');
            i = end;
        } else if x[i..].starts_with(b"<password: ") {
            let end = a[i..].find(" bytes>").map_or(i + 1, |e| i + e + 7);
            out[i..end].fill(b' ');
            i = end;
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `query_redaction`: the input (as lossy UTF-8) as a query text and as a server's text. Its
/// tokens cover it in order; redacted, lexed again without its placeholders, it holds no literal
/// and no comment; as a server's text redacted, no ASCII digit is left outside a placeholder.
pub fn query_redaction(data: &[u8]) {
    use cqlwire_inspect::fuzzing::{redact_query, redact_server_text};
    use cqlwire_inspect::fuzzing::{tokens, TokenKind};
    use cqlwire_inspect::KeyedHash;
    let text = String::from_utf8_lossy(data);
    let mut at = 0;
    for token in tokens(&text) {
        assert!(
            token.range.start == at && token.range.end > at,
            "{token:?} at {at}"
        );
        at = token.range.end;
    }
    assert_eq!(at, text.len());
    let key = KeyedHash::from_key(&[7; 32]).expect("32 bytes are a key");
    let other = KeyedHash::from_key(&[8; 32]).expect("32 bytes are a key");
    let redacted = redact_query(&text, Some(&key));
    let kept = blank_placeholders(&redacted, &redact_query(&text, Some(&other)));
    for token in tokens(&kept) {
        assert!(
            !token.kind.is_literal() && token.kind != TokenKind::Comment,
            "{:?} {:?} left in {redacted:?}",
            token.kind,
            &kept[token.range]
        );
    }
    let server = redact_server_text(&text, &key);
    let kept = blank_placeholders(&server, &redact_server_text(&text, &other));
    assert!(
        !kept.contains(|c: char| c.is_ascii_digit()),
        "a digit left in {server:?}"
    );
}

/// The key logs of the two CQL connections of `fixtures/tls/captures/` and of the TLS captures of
/// `fixtures/inspect/`, so that captures seeded from `fixtures/tls/pcaps/` and
/// `fixtures/inspect/tls*.pcap` decrypt.
const INSPECT_KEY_LOG: &str = concat!(
    include_str!("../../../fixtures/tls/captures/tls12-aes128gcm-cql/keylog"),
    include_str!("../../../fixtures/tls/captures/tls13-aes256gcm-cql/keylog"),
    include_str!("../../../fixtures/inspect/tls12-chacha20-v5-none.keylog"),
    include_str!("../../../fixtures/inspect/tls12-v4-lz4.keylog"),
    include_str!("../../../fixtures/inspect/tls13-v5-lz4.keylog"),
    include_str!("../../../fixtures/inspect/tls13-v5-none.keylog"),
);

/// `--max-frame` of the `inspect` target: larger than most frames of the seeds (so they decode),
/// small enough that one frame in flight is a small constant of [`INSPECT_BOUND`], and large
/// enough that an LZ4 body reaches nearly its full ratio (16 KiB from a 70-byte block).
pub const INSPECT_MAX_FRAME: usize = 16 << 10;

/// The reassembly limits of `inspect`'s bit 4: a hole of 256 bytes in one direction, 1 KiB in all,
/// 4 connections tracked at once, so their buffering, gaps and evictions show on small inputs.
pub const TIGHT_LIMITS: cqlwire_inspect::capture::Limits = cqlwire_inspect::capture::Limits {
    per_direction: 256,
    total: 1024,
    connections: 4,
};

/// What `inspect` may hold, for the promise of `docs/inspect.md` ("Memory and limits"): the open
/// connections' unfinished frames, the gist of their pending requests and their registries of
/// prepared statements, one frame held a few times while it is decoded, never the whole capture.
/// - per input byte, 32: the reassembler's segments and connections (about 3 KiB per CQL
///   connection of two packets, 120 bytes), a pending request's own bookkeeping (about 180 bytes
///   for a 9-byte frame), problems;
/// - constant: the 256 KiB read buffer of a capture and one frame of [`INSPECT_MAX_FRAME`] as it
///   arrives, its body, its decoding with explain lines gathered (masked and redacted forms hide
///   data in them: about 120 bytes per wire item, so up to 120 times the frame) and its JSON text;
/// - what is kept of decompressed bytes (query texts, names and types of prepared statements,
///   stored compactly, at most twice their wire bytes) and the frames one piece fed to a decoder
///   completes: `2 × LZ4_RATIO` per input byte, but never more than the caps of each open
///   connection (4 MiB of pending requests, 1 MiB of registry, and 1 MiB for their entries' own
///   bookkeeping and the frames of one piece).
pub const INSPECT_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 32,
    constant: (256 << 10) + 160 * INSPECT_MAX_FRAME,
    decompressed_per_input_byte: 2 * LZ4_RATIO,
    retained_per_connection: Some(
        cqlwire_inspect::PENDING_MAX_BYTES_PER_CONN
            + cqlwire_protocol::message::REGISTRY_MAX_BYTES
            + (1 << 20),
    ),
};

/// The inputs `inspect` gives the inspector.
enum InspectInput<'a> {
    /// One connection's raw directions.
    Raw { client: &'a [u8], server: &'a [u8] },
    /// A capture in one or more files (rotated), in order.
    Capture {
        files: Vec<&'a [u8]>,
        limits: cqlwire_inspect::capture::Limits,
    },
}

impl<'a> InspectInput<'a> {
    /// Reads `inspect`'s input after its control byte (see [`inspect`]).
    fn parse(control: u8, rest: &'a [u8]) -> Self {
        let length = |bytes: &[u8]| usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
        if control & 1 == 0 {
            let (split, streams) = match rest {
                [_, _, streams @ ..] => (length(rest), streams),
                _ => (0, rest),
            };
            let (client, server) = streams.split_at(split.min(streams.len()));
            return InspectInput::Raw { client, server };
        }
        let files = if control & 8 != 0 {
            crate::capture::split_files(rest)
        } else {
            vec![rest]
        };
        let limits = if control & 16 != 0 {
            TIGHT_LIMITS
        } else {
            cqlwire_inspect::capture::Limits::default()
        };
        InspectInput::Capture { files, limits }
    }
}

/// The whole inspector on hostile input. The first byte steers:
/// - bit 0 clear: the rest is one connection's two raw directions, split at the position the next
///   two bytes give (little-endian);
/// - bit 0 set: the rest is a capture (pcap or pcapng); with bit 3, several files of one rotated
///   capture, each but the last behind its 2-byte little-endian length, given in order as
///   `inspect A B …` gives them (a file that is no capture ends the run there); bit 4: the
///   [`TIGHT_LIMITS`] of reassembly, else the defaults;
/// - bit 1: port 9042 is CQL (else connections are recognised by their first frame);
/// - bit 2: TLS connections are decrypted with [`INSPECT_KEY_LOG`].
///
/// The inspector runs twice, with `--max-frame` [`INSPECT_MAX_FRAME`]: without explain lines,
/// counting every record in the statistics; then with them, under [`INSPECT_BOUND`], rendering
/// every message in JSON and gist, plain, masked and redacted (`--redact`), and explained. Both
/// runs must give the same records.
pub fn inspect(data: &[u8]) {
    use cqlwire_inspect::Stats;
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let input = InspectInput::parse(control, rest);
    let key_log = (control & 4 != 0).then(|| {
        let log = cqlwire_inspect::KeyLog::from_reader(INSPECT_KEY_LOG.as_bytes());
        std::sync::Arc::new(log.expect("reading memory"))
    });
    let options = cqlwire_inspect::Options {
        ports: if control & 2 == 0 { vec![] } else { vec![9042] },
        max_frame: INSPECT_MAX_FRAME,
        explain: false,
        tls_key_log: key_log,
    };
    let mut stats = Stats::default();
    let mut plain = Vec::new();
    run_inspector(&input, options.clone(), &mut |record| {
        stats.add(&record);
        plain.push(record_hash(&record));
    });
    stats.finish();
    let mut seen = 0;
    let explaining = cqlwire_inspect::Options {
        explain: true,
        ..options
    };
    bounded(data, INSPECT_BOUND, |_| {
        run_inspector(&input, explaining, &mut |record| {
            render(&record);
            unmeasured(|| {
                assert_eq!(
                    plain.get(seen),
                    Some(&record_hash(&record)),
                    "explain changed what was decoded (record {seen}: {record:?})"
                );
            });
            seen += 1;
        });
    });
    assert_eq!(seen, plain.len(), "explain changed the number of records");
}

/// Runs an inspector with `options` over `input`, telling [`bounded`] how many connections are
/// open at once.
fn run_inspector(
    input: &InspectInput<'_>,
    options: cqlwire_inspect::Options,
    sink: &mut dyn FnMut(cqlwire_inspect::Record),
) {
    use cqlwire_inspect::capture::{Capture, Event};
    use cqlwire_inspect::Inspector;
    let mut inspector = Inspector::new(options);
    match input {
        InspectInput::Raw { client, server } => {
            note_connections(1);
            let (mut client, mut server) = (*client, *server);
            inspector
                .raw("fuzz", Some(&mut client), Some(&mut server), sink)
                .expect("reading memory");
        }
        InspectInput::Capture { files, limits } => {
            let Ok(mut capture) = Capture::with_limits(files[0], *limits) else {
                return;
            };
            let mut open = 0;
            let mut on_event = |event: Event<'_>| {
                match event {
                    Event::Opened { .. } => {
                        open += 1;
                        note_connections(open);
                    }
                    Event::Closed { .. } => open -= 1,
                    _ => {}
                }
                inspector.event(event, sink);
            };
            crate::capture::read_files(&mut capture, files, &mut on_event);
            capture.finish(&mut on_event);
            inspector.finish(sink);
        }
    }
}

/// A hash of what a record says, to compare two runs: its fields, a message's body bytes hashed
/// as bytes (their `Debug` text, a list of numbers, would take most of the check's time).
fn record_hash(record: &cqlwire_inspect::Record) -> u64 {
    use cqlwire_inspect::Record;
    use cqlwire_protocol::message::Message;
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    match record {
        Record::Message(m) => {
            (m.offset, format!("{:?}", m.header), &m.body[..]).hash(&mut hasher);
            match &m.message {
                Ok(message) => {
                    let Message {
                        version,
                        flags,
                        opcode,
                        tracing_id,
                        warnings,
                        custom_payload,
                        body,
                        trailing,
                        bytes,
                    } = message;
                    let fields = (version, flags, opcode, tracing_id, warnings, custom_payload);
                    format!("{fields:?} {body:?} {trailing}").hash(&mut hasher);
                    bytes[..].hash(&mut hasher);
                }
                Err(e) => format!("{e:?}").hash(&mut hasher),
            }
        }
        Record::Problem(p) => format!("{} {}", p.offset, p.message).hash(&mut hasher),
        Record::Tls(t) => format!("{} {} {}", t.conn, t.summary, t.decrypted).hash(&mut hasher),
    }
    hasher.finish()
}

/// Renders a message record as `inspect` prints it: JSON fields and gist in the plain, masked and
/// redacted forms, and its explain lines. The JSON must parse, and `to_json` must not panic (both
/// checks are not what the command does, so they are left out of the memory bound).
fn render(record: &cqlwire_inspect::Record) {
    use cqlwire_codec::value::json::JsonWriter;
    use cqlwire_inspect::KeyedHash;
    use cqlwire_inspect::Record;
    use cqlwire_inspect::{RenderMessage, ValueForm};
    let Record::Message(m) = record else {
        return;
    };
    let Ok(message) = &m.message else {
        return;
    };
    unmeasured(|| {
        let _ = message.to_json();
    });
    let key = KeyedHash::from_key(&[7; 32]).expect("32 bytes are a key");
    for form in [
        ValueForm::Plain,
        ValueForm::Masked,
        ValueForm::Redacted(&key),
    ] {
        let mut shown = JsonWriter::new();
        shown.begin_object();
        message.write_json_fields(&mut shown, form);
        shown.end_object();
        unmeasured(|| {
            serde_json::from_slice::<serde_json::Value>(&shown.buf).expect("the JSON is valid")
        });
        let _ = message.gist_in(form);
        let _ = m.explain_each(form, &mut |_| {});
    }
}

/// The `capture` target ([`crate::capture::capture`]) under [`CAPTURE_BOUND`].
pub fn capture(data: &[u8]) {
    bounded(data, CAPTURE_BOUND, crate::capture::capture);
}

/// What `capture` may hold: the 256 KiB read buffer (grown only for bytes that arrived, up to the
/// 16 MiB record limit), the segments buffered ahead of holes (their bytes and bookkeeping) and
/// the tracked connections (about 300 bytes each, each of at least one 56-byte packet).
pub const CAPTURE_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 512 << 10,
    decompressed_per_input_byte: 0,
    retained_per_connection: None,
};
