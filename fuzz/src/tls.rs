//! The `tls` target's property, kept apart from `checks/` because it needs only `cqlwire-tls`:
//! `crates/tls/tests/fuzz_regressions.rs` includes this file to replay the inputs found.
//!
//! Input: byte 0 bit 0 set: the rest is a key log, read with `KeyLog::from_reader`. Otherwise bytes
//! 1–2 (little-endian) are the length of a key log that follows, then chunks of one connection:
//! a byte whose bit 7 picks the direction (set: server to client) and whose low 7 bits are the
//! chunk's length, 0 meaning a gap (bytes lost) in that direction, then the chunk's bytes.
//!
//! Invariants beyond "never panics": the connection fed the chunks as given and fed them with
//! consecutive chunks of one direction merged gives the same plaintext and the same events (the
//! record layer does not depend on where the input was split); no direction yields more plaintext
//! than it was fed; every event prints.

use std::sync::Arc;

use cqlwire_tls::{Direction, KeyLog, TlsConnection, TlsEvent};

/// One piece of a connection's input.
#[derive(Clone, Copy, Debug)]
enum Chunk<'a> {
    Data(Direction, &'a [u8]),
    Gap(Direction),
}

/// What a connection gave back.
#[derive(Debug, PartialEq)]
struct Run {
    plaintext: [Vec<u8>; 2],
    events: Vec<TlsEvent>,
}

/// Checks the input (see the module's doc); returns the plaintext bytes decrypted.
pub fn tls(data: &[u8]) -> usize {
    let Some((&flags, rest)) = data.split_first() else {
        return 0;
    };
    if flags & 1 == 1 {
        if let Ok(log) = KeyLog::from_reader(rest) {
            assert!(
                log.skipped_lines() <= log.lines() && log.len() as u64 <= log.lines(),
                "{log:?}"
            );
        }
        return 0;
    }
    let (key_log, chunks) = split_input(rest);
    let key_log = KeyLog::from_reader(key_log).ok().map(Arc::new);
    let as_given = run(&key_log, &chunks);
    let merged = run(&key_log, &merge(&chunks));
    assert_eq!(as_given, merged, "splitting the input changed the result");
    for direction in [Direction::ClientToServer, Direction::ServerToClient] {
        let fed: usize = chunks
            .iter()
            .map(|c| {
                if let Chunk::Data(d, b) = c {
                    if *d == direction {
                        b.len()
                    } else {
                        0
                    }
                } else {
                    0
                }
            })
            .sum();
        assert!(
            as_given.plaintext[index(direction)].len() <= fed,
            "more plaintext than input"
        );
    }
    for event in &as_given.events {
        let _ = format!("{event:?}");
        if let TlsEvent::Problem(problem) = event {
            let _ = problem.to_string();
        }
    }
    as_given.plaintext.iter().map(Vec::len).sum()
}

/// Builds an input of this target from a key log and a connection's chunks (each cut to 127 bytes).
pub fn encode(key_log: &[u8], chunks: &[(Direction, &[u8])]) -> Vec<u8> {
    let mut out = vec![0u8];
    out.extend_from_slice(&(key_log.len() as u16).to_le_bytes());
    out.extend_from_slice(key_log);
    for (direction, bytes) in chunks {
        for piece in bytes.chunks(127) {
            let bit = if *direction == Direction::ServerToClient {
                0x80
            } else {
                0
            };
            out.push(bit | piece.len() as u8);
            out.extend_from_slice(piece);
        }
    }
    out
}

fn index(direction: Direction) -> usize {
    match direction {
        Direction::ClientToServer => 0,
        Direction::ServerToClient => 1,
    }
}

fn split_input(rest: &[u8]) -> (&[u8], Vec<Chunk<'_>>) {
    let key_len = rest
        .get(..2)
        .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
    let rest = rest.get(2..).unwrap_or_default();
    let (key_log, mut stream) = rest.split_at(key_len.min(rest.len()));
    let mut chunks = Vec::new();
    while let Some((&head, tail)) = stream.split_first() {
        let direction = if head & 0x80 != 0 {
            Direction::ServerToClient
        } else {
            Direction::ClientToServer
        };
        let len = usize::from(head & 0x7f);
        if len == 0 {
            chunks.push(Chunk::Gap(direction));
            stream = tail;
        } else {
            let (bytes, after) = tail.split_at(len.min(tail.len()));
            chunks.push(Chunk::Data(direction, bytes));
            stream = after;
        }
    }
    (key_log, chunks)
}

/// The chunks with consecutive data of one direction joined.
fn merge<'a>(chunks: &[Chunk<'a>]) -> Vec<(Option<Direction>, Direction, Vec<u8>)> {
    let mut merged: Vec<(Option<Direction>, Direction, Vec<u8>)> = Vec::new();
    for chunk in chunks {
        match *chunk {
            Chunk::Data(direction, bytes) => match merged.last_mut() {
                Some((None, last, joined)) if *last == direction => joined.extend_from_slice(bytes),
                _ => merged.push((None, direction, bytes.to_vec())),
            },
            Chunk::Gap(direction) => merged.push((Some(direction), direction, Vec::new())),
        }
    }
    merged
}

/// Feeds chunks given as (gap direction, data direction, bytes) or as [`Chunk`]s.
trait Feed {
    fn feed(&self, connection: &mut TlsConnection, plaintext: &mut [Vec<u8>; 2]);
}

impl Feed for Chunk<'_> {
    fn feed(&self, connection: &mut TlsConnection, plaintext: &mut [Vec<u8>; 2]) {
        match *self {
            Chunk::Data(direction, bytes) => {
                connection.feed(direction, bytes, &mut plaintext[index(direction)])
            }
            Chunk::Gap(direction) => connection.gap(direction),
        }
    }
}

impl Feed for (Option<Direction>, Direction, Vec<u8>) {
    fn feed(&self, connection: &mut TlsConnection, plaintext: &mut [Vec<u8>; 2]) {
        match self {
            (Some(gap), _, _) => connection.gap(*gap),
            (None, direction, bytes) => {
                connection.feed(*direction, bytes, &mut plaintext[index(*direction)])
            }
        }
    }
}

fn run<C: Feed>(key_log: &Option<Arc<KeyLog>>, chunks: &[C]) -> Run {
    let mut connection = TlsConnection::new(key_log.clone());
    let mut plaintext = [Vec::new(), Vec::new()];
    let mut events = Vec::new();
    for chunk in chunks {
        chunk.feed(&mut connection, &mut plaintext);
        events.extend(connection.take_events());
    }
    connection.finish();
    events.extend(connection.take_events());
    let _ = connection.summary().to_string();
    Run { plaintext, events }
}
