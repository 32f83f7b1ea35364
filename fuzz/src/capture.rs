//! The `capture` target's property: any bytes read as a capture file (pcap, pcapng, or refused)
//! never panic, allocate at most a bounded step at once (the target's `CappedAllocator`), and give
//! a consistent event stream ([`Invariants`]). `crates/inspect/tests/inspect/capture.rs` includes this file to check the
//! same invariants on every fixture.

use std::collections::HashMap;

use cqlwire_inspect::capture::{Capture, Direction, Event, Limits};

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

/// The files of a rotated capture in one input: each but the last behind its 2-byte little-endian
/// length, the last taking the rest (shared with the `inspect` target).
pub fn split_files(mut rest: &[u8]) -> Vec<&[u8]> {
    let mut files = Vec::new();
    while let [a, b, tail @ ..] = rest {
        let (file, tail) = tail.split_at(usize::from(u16::from_le_bytes([*a, *b])).min(tail.len()));
        files.push(file);
        rest = tail;
    }
    if !rest.is_empty() || files.is_empty() {
        files.push(rest);
    }
    files
}

/// The check. The first byte picks tight (bit 0) or default reassembly limits, and whether the
/// rest is one file or (bit 1) the files of a rotated capture ([`split_files`]), read in order as
/// one capture (`Capture::continue_with`), as `inspect A B …` reads them; a file that is no
/// capture ends the run there.
pub fn capture(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else {
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
    let files = if choice & 2 != 0 {
        split_files(rest)
    } else {
        vec![rest]
    };
    let Ok(mut capture) = Capture::with_limits(files[0], limits) else {
        return;
    };
    let mut invariants = Invariants::new(rest.len() as u64);
    let mut sink = |event: Event<'_>| invariants.event(&event);
    if read_files(&mut capture, &files, &mut sink) {
        capture.finish(&mut sink);
        invariants.finish();
    }
}

/// Reads `files` in order into `capture` (opened on the first) as one capture, as `inspect A B …`
/// does (`Capture::continue_with`), up to a file that is no capture; false on a read error.
pub fn read_files<'r>(
    capture: &mut Capture<'r>,
    files: &[&'r [u8]],
    sink: &mut dyn FnMut(Event<'_>),
) -> bool {
    for (i, file) in files.iter().enumerate() {
        if i > 0 && capture.continue_with(*file).is_err() {
            break;
        }
        if capture.read_file(sink).is_err() {
            return false;
        }
    }
    true
}
