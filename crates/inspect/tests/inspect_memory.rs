//! The inspector holds the decompressed frames of one small piece of its input at a time, not
//! every frame that a capture record or a read of raw bytes inflates to. Measured with a
//! counting allocator (this test binary's), on a chunk of small LZ4 frames that each inflate to
//! 255 KiB: held all at once, they take 16 MiB.

use cqlwire_inspect::capture::{Connection, Direction, Event, Timestamp};
use cqlwire_inspect::{Inspector, Options, Record};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Heap bytes allocated and not freed, and their peak since [`measure`] reset it.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their peak.
struct Counting;

// SAFETY: every call is forwarded unchanged to `System`; only the counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests measure one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The peak of live heap bytes above those live before, while `run` runs.
fn measure(run: impl FnOnce()) -> usize {
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    run();
    PEAK.load(Ordering::Relaxed) - before
}

/// 64 v4 OPTIONS requests whose LZ4 bodies (about 1 KiB each) inflate to 255 KiB of zeros:
/// 66 KiB of stream, 16 MiB decompressed.
fn inflating_frames() -> Vec<u8> {
    let payload = vec![0u8; 255 << 10];
    let block = lz4::block::compress(&payload, None, false).expect("compresses");
    let mut body = (payload.len() as u32).to_be_bytes().to_vec();
    body.extend(&block);
    let mut stream = Vec::new();
    for i in 0..64i16 {
        stream.extend([4, 1]);
        stream.extend(i.to_be_bytes());
        stream.push(0x05);
        stream.extend((body.len() as u32).to_be_bytes());
        stream.extend(&body);
    }
    stream
}

/// A sink counting the messages.
fn counting(messages: &mut usize) -> impl FnMut(Record) + '_ {
    move |record| {
        if let Record::Message(_) = record {
            *messages += 1;
        }
    }
}

#[test]
fn a_capture_record_of_inflating_frames_is_decoded_a_piece_at_a_time() {
    let stream = inflating_frames();
    let conn = Connection {
        id: 1,
        initiator: ([10, 0, 0, 1], 40000).into(),
        responder: ([10, 0, 0, 2], 9042).into(),
        syn_seen: true,
    };
    let mut messages = 0;
    let peak = measure(|| {
        let mut inspector = Inspector::new(Options::default());
        let mut sink = counting(&mut messages);
        let timestamp = Timestamp(0);
        inspector.event(
            Event::Opened {
                conn: &conn,
                timestamp,
            },
            &mut sink,
        );
        let data = Event::Data {
            conn: 1,
            direction: Direction::FromInitiator,
            timestamp,
            offset: 0,
            bytes: &stream,
        };
        inspector.event(data, &mut sink);
        inspector.finish(&mut sink);
    });
    assert_eq!(messages, 64);
    assert!(peak < 4 << 20, "peak of {peak} bytes");
}

#[test]
fn raw_bytes_of_inflating_frames_are_decoded_a_piece_at_a_time() {
    let stream = inflating_frames();
    let mut messages = 0;
    let peak = measure(|| {
        let mut inspector = Inspector::new(Options::default());
        let mut client = &stream[..];
        inspector
            .raw("raw", Some(&mut client), None, &mut counting(&mut messages))
            .expect("reading memory");
    });
    assert_eq!(messages, 64);
    assert!(peak < 4 << 20, "peak of {peak} bytes");
}

/// A v4 request frame on `stream`.
fn request(stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut frame = vec![4, 0];
    frame.extend(stream.to_be_bytes());
    frame.push(opcode);
    frame.extend((body.len() as u32).to_be_bytes());
    frame.extend(body);
    frame
}

/// Runs the raw client `stream` (no response) and returns the peak of the live heap.
fn unanswered(stream: &[u8]) -> usize {
    measure(|| {
        let mut inspector = Inspector::new(Options::default());
        let mut client = stream;
        let mut sink = |_: Record| {};
        inspector
            .raw("raw", Some(&mut client), None, &mut sink)
            .expect("reading memory");
    })
}

#[test]
fn unanswered_requests_take_about_what_they_count_against_their_cap() {
    // 32,767 OPTIONS: over the 4 MiB a connection's pending requests may count, at 320 bytes
    // each, the oldest are forgotten. Each entry once took 650 bytes (17 MiB in all).
    let options: Vec<u8> = (0..i16::MAX).flat_map(|i| request(i, 0x05, &[])).collect();
    let peak = unanswered(&options);
    assert!(peak < 6 << 20, "OPTIONS: peak of {peak} bytes");
    // 300 QUERYs of 20 kB, each kept cut to 16 KiB: a cut text held twice its length (8 MiB).
    let queries: Vec<u8> = (0..300i16)
        .flat_map(|i| {
            let text = format!("SELECT {i} -- {}", "x".repeat(20_000));
            let mut body = (text.len() as u32).to_be_bytes().to_vec();
            body.extend(text.as_bytes());
            body.extend([0, 1, 0]);
            request(i, 0x07, &body)
        })
        .collect();
    let peak = unanswered(&queries);
    assert!(peak < 6 << 20, "QUERY: peak of {peak} bytes");
}
