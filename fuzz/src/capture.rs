//! The `capture` target's property: any bytes read as a capture file (pcap, pcapng, or refused)
//! never panic, allocate at most a bounded step at once (the target's `CappedAllocator`), and give
//! a consistent event stream ([`Invariants`]). `tests/integration/capture.rs` includes this file to check the
//! same invariants on every fixture.

use std::collections::HashMap;

use cqlwire_protocol::capture::{Capture, Direction, Event, Limits};

/// Checks an event stream: per connection and direction, data and gaps follow each other without
/// overlap or hole, from offset 0; no event names a connection before it opened or after it
/// closed; problems point inside the input.
#[derive(Debug)]
pub struct Invariants {
    /// Next expected stream offset per direction of each connection; `None` once closed.
    open: HashMap<u64, Option<[u64; 2]>>,
    input_len: u64,
}

impl Invariants {
    /// A checker for the events of an input of `input_len` bytes.
    pub fn new(input_len: u64) -> Self {
        Invariants {
            open: HashMap::new(),
            input_len,
        }
    }

    fn next_offset(&mut self, conn: u64, direction: Direction) -> &mut u64 {
        let state = self
            .open
            .get_mut(&conn)
            .expect("event for an unopened connection");
        let offsets = state.as_mut().expect("event after Closed");
        &mut offsets[usize::from(direction == Direction::FromResponder)]
    }

    /// Checks one event (panics on a violation).
    pub fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Opened { conn, .. } => {
                assert!(
                    self.open.insert(conn.id, Some([0, 0])).is_none(),
                    "opened twice"
                );
            }
            Event::Data {
                conn,
                direction,
                offset,
                bytes,
                ..
            } => {
                let next = self.next_offset(conn, direction);
                assert_eq!(offset, *next, "data not contiguous");
                assert!(!bytes.is_empty(), "empty data event");
                *next += bytes.len() as u64;
            }
            Event::Gap {
                conn,
                direction,
                offset,
                missing,
                ..
            } => {
                let next = self.next_offset(conn, direction);
                assert_eq!(offset, *next, "gap not contiguous");
                assert!(missing > 0, "empty gap");
                *next += missing;
            }
            Event::Closed { conn, .. } => {
                let state = self
                    .open
                    .get_mut(&conn)
                    .expect("closing an unopened connection");
                assert!(state.take().is_some(), "closed twice");
            }
            Event::Problem(ref problem) => {
                assert!(problem.offset <= self.input_len, "problem beyond the input");
            }
        }
    }

    /// Checks the end of a run: every connection closed.
    pub fn finish(&self) {
        assert!(
            self.open.values().all(Option::is_none),
            "a connection never closed"
        );
    }
}

/// The check. The first byte picks tight or default reassembly limits; the rest is the file.
pub fn capture(data: &[u8]) {
    let Some((&choice, file)) = data.split_first() else {
        return;
    };
    let limits = if choice & 1 == 1 {
        Limits {
            per_direction: 64,
            total: 128,
            connections: 3,
        }
    } else {
        Limits::default()
    };
    let Ok(mut capture) = Capture::with_limits(file, limits) else {
        return;
    };
    let mut invariants = Invariants::new(file.len() as u64);
    if capture.run(&mut |event| invariants.event(&event)).is_ok() {
        invariants.finish();
    }
}
