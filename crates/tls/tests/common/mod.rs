//! What the integration tests share: fixture files, hex, and feeding a connection.

#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;

use cqlwire_tls::{Direction, TlsConnection, TlsEvent, TlsProblem, TlsProblemKind};

/// A file under the repository's `fixtures/tls/`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/tls")
        .join(name)
}

/// A JSON fixture.
pub fn read_json(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Bytes of a hex string.
pub fn hex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex length");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A JSON string field as bytes from hex.
pub fn hex_field(value: &serde_json::Value, field: &str) -> Vec<u8> {
    hex(value[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {value}")))
}

/// What a connection gave back.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub client_plaintext: Vec<u8>,
    pub server_plaintext: Vec<u8>,
    pub events: Vec<TlsEvent>,
}

impl Outcome {
    /// The kinds of the problems reported, in order.
    pub fn problems(&self) -> Vec<&TlsProblemKind> {
        reports(&self.events).into_iter().map(|p| &p.kind).collect()
    }
}

/// Feeds `chunks` in order, each cut into pieces of at most `piece` bytes, then finishes.
pub fn feed_all(
    connection: &mut TlsConnection,
    chunks: &[(Direction, &[u8])],
    piece: usize,
) -> Outcome {
    let mut outcome = Outcome::default();
    for (direction, bytes) in chunks {
        for part in bytes.chunks(piece.max(1)) {
            let out = match direction {
                Direction::ClientToServer => &mut outcome.client_plaintext,
                Direction::ServerToClient => &mut outcome.server_plaintext,
            };
            connection.feed(*direction, part, out);
            outcome.events.extend(connection.take_events());
        }
    }
    connection.finish();
    outcome.events.extend(connection.take_events());
    outcome
}

/// The problems among `events`, in order.
pub fn reports(events: &[TlsEvent]) -> Vec<&TlsProblem> {
    events
        .iter()
        .filter_map(|e| match e {
            TlsEvent::Problem(p) => Some(p),
            _ => None,
        })
        .collect()
}
