//! The `capture` target's property: any bytes read as a capture file (pcap, pcapng, or refused)
//! never panic, allocate at most a bounded step at once (the target's `CappedAllocator`), and give
//! a consistent event stream: per connection and direction the data and gaps follow each other
//! without overlap or hole, nothing names a connection after it closed, every opened connection
//! closes, and problems point inside the input.

use std::collections::HashMap;

use cqlwire::capture::{Capture, Direction, Event, Limits};

/// The next expected stream offset of an open connection's direction.
fn next_offset(
    open: &mut HashMap<u64, Option<[u64; 2]>>,
    conn: u64,
    direction: Direction,
) -> &mut u64 {
    let state = open
        .get_mut(&conn)
        .expect("event for an unopened connection");
    let offsets = state.as_mut().expect("event after Closed");
    &mut offsets[usize::from(direction == Direction::FromResponder)]
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
    // Next expected stream offset per (connection, direction); `None` once closed.
    let mut open: HashMap<u64, Option<[u64; 2]>> = HashMap::new();
    let mut sink = |event: Event<'_>| match event {
        Event::Opened { conn, .. } => {
            assert!(open.insert(conn.id, Some([0, 0])).is_none(), "opened twice");
        }
        Event::Data {
            conn,
            direction,
            offset,
            bytes,
            ..
        } => {
            let next = next_offset(&mut open, conn, direction);
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
            let next = next_offset(&mut open, conn, direction);
            assert_eq!(offset, *next, "gap not contiguous");
            assert!(missing > 0, "empty gap");
            *next += missing;
        }
        Event::Closed { conn, .. } => {
            let state = open.get_mut(&conn).expect("closing an unopened connection");
            assert!(state.take().is_some(), "closed twice");
        }
        Event::Problem(problem) => {
            assert!(
                problem.offset <= file.len() as u64,
                "problem beyond the input"
            );
        }
    };
    if capture.run(&mut sink).is_err() {
        return;
    }
    assert!(
        open.values().all(Option::is_none),
        "a connection never closed"
    );
}
