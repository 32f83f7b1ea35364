//! The capture layer (pcap/pcapng, link types, TCP reassembly) against real captures made by
//! tcpdump (fixtures/capture/real, with the bytes each side of the exchange sent) and against the
//! misbehaving variants and expected streams of fixtures/capture/generate.py; plus property tests
//! of the reassembler on random segmentations, reorderings and duplications.

#[path = "../../../../fuzz/src/capture.rs"]
mod fuzz_capture;

use std::collections::BTreeMap;
use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;

use cqlwire_inspect::capture::{
    Capture, CloseReason, Cut, Direction, Event, Limits, Reassembler, Segment, Stats, Timestamp,
};
use proptest::prelude::*;
use serde_json::Value;

/// What one connection delivered.
#[derive(Debug, Default)]
struct Stream {
    initiator: String,
    responder: String,
    c2s: Vec<u8>,
    s2c: Vec<u8>,
    /// (direction, offset, missing)
    gaps: Vec<(&'static str, u64, u64)>,
    closed: Option<CloseReason>,
}

#[derive(Debug)]
struct Collected {
    conns: BTreeMap<u64, Stream>,
    problems: Vec<(u64, String)>,
    stats: Stats,
    /// The fuzz target's checks of the event stream (contiguous offsets, nothing after Closed).
    invariants: fuzz_capture::Invariants,
}

impl Default for Collected {
    fn default() -> Self {
        Collected {
            conns: BTreeMap::new(),
            problems: Vec::new(),
            stats: Stats::default(),
            invariants: fuzz_capture::Invariants::new(u64::MAX),
        }
    }
}

fn name(direction: Direction) -> &'static str {
    match direction {
        Direction::FromInitiator => "c2s",
        Direction::FromResponder => "s2c",
    }
}

impl Collected {
    /// Records one event.
    fn event(&mut self, event: Event<'_>) {
        self.invariants.event(&event);
        match event {
            Event::Opened { conn, .. } => {
                let stream = Stream {
                    initiator: conn.initiator.to_string(),
                    responder: conn.responder.to_string(),
                    ..Default::default()
                };
                self.conns.insert(conn.id, stream);
            }
            Event::Data {
                conn,
                direction,
                bytes,
                ..
            } => {
                let s = self.conns.get_mut(&conn).unwrap();
                let buf = match direction {
                    Direction::FromInitiator => &mut s.c2s,
                    Direction::FromResponder => &mut s.s2c,
                };
                buf.extend_from_slice(bytes);
            }
            Event::Gap {
                conn,
                direction,
                offset,
                missing,
                ..
            } => {
                let s = self.conns.get_mut(&conn).unwrap();
                s.gaps.push((name(direction), offset, missing));
            }
            Event::Closed { conn, reason, .. } => {
                self.conns.get_mut(&conn).unwrap().closed = Some(reason);
            }
            Event::Problem(p) => self.problems.push((p.offset, p.message)),
        }
    }
}

fn collect(reader: impl Read) -> Collected {
    let mut capture = Capture::new(reader).expect("a capture");
    let mut out = Collected::default();
    capture
        .run(&mut |event| out.event(event))
        .expect("readable");
    out.stats = capture.stats();
    out.invariants.finish();
    out
}

fn collect_file(path: &Path) -> Collected {
    collect(std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).expect("json")
}

/// A reader that hands out at most a few bytes per call, as a pipe may.
struct Trickle<R>(R, usize);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.1 = self.1 % 7 + 1;
        let n = buf.len().min(self.1);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn real_captures_deliver_the_bytes_each_side_sent() {
    let dir = cqlwire_testkit::fixture("capture/real");
    let manifest = json(&dir.join("manifest.json"));
    let entries = manifest.as_array().unwrap();
    assert_eq!(entries.len(), 10);
    for entry in entries {
        let file = entry["file"].as_str().unwrap();
        let got = collect_file(&dir.join(file));
        assert!(got.problems.is_empty(), "{file}: {:?}", got.problems);
        let expected = entry["connections"].as_array().unwrap();
        assert_eq!(got.conns.len(), expected.len(), "{file}");
        for (stream, want) in got.conns.values().zip(expected) {
            let port = entry["port"].as_u64().unwrap();
            assert!(stream.responder.ends_with(&format!(":{port}")), "{file}");
            assert_eq!(
                stream.c2s,
                read(&dir.join(want["c2s"].as_str().unwrap())),
                "{file}"
            );
            assert_eq!(
                stream.s2c,
                read(&dir.join(want["s2c"].as_str().unwrap())),
                "{file}"
            );
            assert!(stream.gaps.is_empty(), "{file}");
            assert_eq!(stream.closed, Some(CloseReason::Finished), "{file}");
        }
        assert_eq!(got.stats.not_tcp + got.stats.unsupported_link, 0, "{file}");
    }
}

#[test]
fn generated_misbehaviour_matches_the_model() {
    let dir = cqlwire_testkit::fixture("capture/generated");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".expected.json"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for case in cases {
        let expected = json(&case);
        let pcap = case.to_string_lossy().replace(".expected.json", ".pcap");
        let got = collect_file(Path::new(&pcap));
        let label = case.file_name().unwrap().to_string_lossy().into_owned();
        let want_conns = expected["connections"].as_array().unwrap();
        assert_eq!(got.conns.len(), want_conns.len(), "{label}");
        for (stream, want) in got.conns.values().zip(want_conns) {
            assert_eq!(stream.initiator, want["initiator"], "{label}");
            assert_eq!(stream.responder, want["responder"], "{label}");
            assert_eq!(
                stream.c2s,
                read(&dir.join(want["c2s"].as_str().unwrap())),
                "{label} c2s"
            );
            assert_eq!(
                stream.s2c,
                read(&dir.join(want["s2c"].as_str().unwrap())),
                "{label} s2c"
            );
            let gaps: Vec<(String, u64, u64)> = want["gaps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    (
                        g["dir"].as_str().unwrap().to_string(),
                        g["offset"].as_u64().unwrap(),
                        g["missing"].as_u64().unwrap(),
                    )
                })
                .collect();
            let mut got_gaps: Vec<(String, u64, u64)> = stream
                .gaps
                .iter()
                .map(|g| (g.0.to_string(), g.1, g.2))
                .collect();
            got_gaps.sort();
            assert_eq!(got_gaps, gaps, "{label} gaps");
        }
        let problems: Vec<u64> = got.problems.iter().map(|p| p.0).collect();
        let want_problems: Vec<u64> = expected["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(problems, want_problems, "{label}: {:?}", got.problems);
        assert_eq!(
            got.stats.not_tcp,
            expected["not_tcp"].as_u64().unwrap(),
            "{label}"
        );
    }
}

#[test]
fn a_pipe_that_trickles_gives_the_same_events() {
    for file in [
        "real/ipv4-lo.pcapng",
        "generated/ipv6-mixed.pcap",
        "generated/ipv4-truncated.pcap",
    ] {
        let path = cqlwire_testkit::fixture(&format!("capture/{file}"));
        let whole = collect_file(&path);
        let trickled = collect(Trickle(std::fs::File::open(&path).unwrap(), 0));
        assert_eq!(
            format!("{:?}", whole.conns),
            format!("{:?}", trickled.conns),
            "{file}"
        );
        assert_eq!(whole.problems, trickled.problems, "{file}");
    }
}

#[test]
fn the_truncated_last_record_is_reported_at_its_offset() {
    let got = collect_file(&cqlwire_testkit::fixture(
        "capture/generated/ipv4-truncated.pcap",
    ));
    assert_eq!(got.problems.len(), 1);
    assert!(
        got.problems[0].1.contains("truncated last record"),
        "{:?}",
        got.problems
    );
}

#[test]
fn what_is_not_a_capture_is_refused() {
    for (input, message) in [
        (&b""[..], "too short"),
        (&b"\x0a\x0d"[..], "too short"),
        (
            &b"hello world, not a pcap"[..],
            "not a pcap or pcapng capture (magic 68656c6c)",
        ),
        (&b"\xd4\xc3\xb2\xa1\x02\x00"[..], "bad pcap file header"),
    ] {
        let err = Capture::new(input).expect_err("refused");
        assert!(err.to_string().contains(message), "{err}");
    }
}

// ----- the reassembler alone -------------------------------------------------------------------

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

struct Feed {
    reassembler: Reassembler,
    out: Collected,
}

impl Feed {
    fn new(limits: Limits) -> Self {
        Feed {
            reassembler: Reassembler::new(limits),
            out: Collected::default(),
        }
    }

    fn send(&mut self, seq: u32, flags: &str, payload: &[u8]) {
        let (src, dst) = if flags.contains('<') {
            (addr("10.0.0.2:9042"), addr("10.0.0.1:5000"))
        } else {
            (addr("10.0.0.1:5000"), addr("10.0.0.2:9042"))
        };
        let seg = Segment {
            src,
            dst,
            seq,
            syn: flags.contains('S'),
            ack: flags.contains('A'),
            fin: flags.contains('F'),
            rst: flags.contains('R'),
            payload,
            cut: None,
        };
        let out = &mut self.out;
        self.reassembler
            .segment(&seg, Timestamp(0), &mut |e| out.event(e));
    }

    fn finish(mut self) -> Collected {
        let out = &mut self.out;
        self.reassembler.finish(Timestamp(1), &mut |e| out.event(e));
        self.out.invariants.finish();
        self.out
    }
}

#[test]
fn a_hole_over_the_direction_limit_is_reported_once_and_delivery_goes_on() {
    let limits = Limits {
        per_direction: 100,
        ..Limits::default()
    };
    let mut feed = Feed::new(limits);
    feed.send(999, "S", b"");
    feed.send(1000, "A", &[1; 10]);
    // 20 bytes lost at offset 10; then 150 bytes in pieces of 50 arrive ahead of the hole.
    for i in 0..3u32 {
        feed.send(1030 + 50 * i, "A", &[2; 50]);
    }
    feed.send(1180, "A", &[3; 5]);
    let got = feed.finish();
    let s = &got.conns[&1];
    assert_eq!(s.gaps, vec![("c2s", 10, 20)]);
    assert_eq!(s.c2s.len(), 10 + 150 + 5);
    assert_eq!(s.closed, Some(CloseReason::EndOfCapture));
}

#[test]
fn a_syn_with_a_new_isn_on_a_known_tuple_starts_a_new_connection() {
    let mut feed = Feed::new(Limits::default());
    feed.send(100, "S", b"");
    feed.send(101, "A", b"one");
    feed.send(100, "S", b""); // retransmitted SYN: same connection
    feed.send(104, "A", b"two");
    feed.send(5000, "S", b"");
    feed.send(5001, "A", b"three");
    feed.send(7000, "<R", b"");
    feed.send(5006, "A", b"late");
    let got = feed.finish();
    assert_eq!(got.conns.len(), 2);
    assert_eq!(got.conns[&1].c2s, b"onetwo");
    assert_eq!(got.conns[&1].closed, Some(CloseReason::Reused));
    assert_eq!(got.conns[&2].c2s, b"three");
    assert_eq!(got.conns[&2].closed, Some(CloseReason::Reset));
}

#[test]
fn retransmissions_with_other_bytes_lose_to_the_first_copy() {
    let mut feed = Feed::new(Limits::default());
    feed.send(u32::MAX - 2, "S", b""); // stream offset 0 is sequence number 2^32 - 1
    feed.send(u32::MAX - 1, "A", b"abcd"); // offsets 0..4, sequence numbers wrap
    feed.send(6, "A", b"ghij"); // offsets 8..12, ahead of a hole at 4..8
    feed.send(u32::MAX, "A", b"XXXXYYYY"); // offsets 1..9: only 4..8 are new
    feed.send(4, "A", b"ZZ"); // offsets 6..8 again: already delivered
    let got = feed.finish();
    assert_eq!(got.conns[&1].c2s, b"abcdXYYYghij");
    assert!(got.conns[&1].gaps.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Any segmentation of a stream, delivered in any order with duplicates, reassembles to it.
    #[test]
    fn any_segmentation_order_and_duplication_gives_the_stream_back(
        stream in proptest::collection::vec(any::<u8>(), 1..3000),
        cuts in proptest::collection::vec(0usize..3000, 0..40),
        order in proptest::collection::vec(any::<u32>(), 0..80),
        dups in proptest::collection::vec((any::<u16>(), 0usize..3000, 1usize..200), 0..10),
        isn in any::<u32>(),
    ) {
        let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c % stream.len()).collect();
        bounds.push(0);
        bounds.push(stream.len());
        bounds.sort_unstable();
        bounds.dedup();
        let mut pieces: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        for (_, start, len) in &dups {
            let start = start % stream.len();
            pieces.push((start, (start + len).min(stream.len())));
        }
        // A random permutation from `order`.
        for (i, r) in order.iter().enumerate() {
            let n = pieces.len();
            pieces.swap(i % n, *r as usize % n);
        }
        let mut feed = Feed::new(Limits::default());
        feed.send(isn, "S", b"");
        for (a, b) in pieces {
            feed.send(isn.wrapping_add(1).wrapping_add(a as u32), "A", &stream[a..b]);
        }
        let got = feed.finish();
        prop_assert_eq!(&got.conns[&1].c2s, &stream);
        prop_assert!(got.conns[&1].gaps.is_empty());
    }
}

#[test]
fn a_record_claiming_more_than_the_input_holds_is_a_truncated_record() {
    // A real capture's header and first record header, with the record's length raised to 100 MB.
    let real = read(&cqlwire_testkit::fixture("capture/real/ipv4-lo.pcap"));
    let mut input = real[..24 + 16 + 40].to_vec();
    input[32..36].copy_from_slice(&100_000_000u32.to_le_bytes());
    let got = collect(&input[..]);
    assert_eq!(got.problems.len(), 1, "{:?}", got.problems);
    assert_eq!(got.problems[0].0, 24);
    assert!(got.problems[0].1.contains("truncated last record"));
}

#[test]
fn every_fixture_passes_the_fuzz_check_with_default_and_tight_limits() {
    let mut files = Vec::new();
    for dir in ["capture/real", "capture/generated"] {
        for entry in std::fs::read_dir(cqlwire_testkit::fixture(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().contains(".pcap") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 40);
    for path in files {
        for choice in [0u8, 1] {
            let mut input = vec![choice];
            input.extend(read(&path));
            fuzz_capture::capture(&input);
        }
    }
}

#[test]
fn inputs_the_fuzzer_found_pass_its_check() {
    // fixtures/capture/fuzz: a pcapng block length below 12 made pcap-parser 0.17 overflow.
    for entry in std::fs::read_dir(cqlwire_testkit::fixture("capture/fuzz")).unwrap() {
        fuzz_capture::capture(&read(&entry.unwrap().path()));
    }
}

#[test]
fn over_the_connection_limit_the_least_recently_active_is_evicted() {
    let mut reassembler = Reassembler::new(Limits {
        connections: 64,
        ..Limits::default()
    });
    let mut closed = Vec::new();
    let mut send = |reassembler: &mut Reassembler, port: u16, seq: u32, syn: bool| {
        let seg = Segment {
            src: SocketAddr::new([10, 0, 0, 1].into(), port),
            dst: addr("10.0.0.2:9042"),
            seq,
            syn,
            ack: !syn,
            fin: false,
            rst: false,
            payload: if syn { b"" } else { b"x" },
            cut: None,
        };
        reassembler.segment(&seg, Timestamp(0), &mut |e| {
            if let Event::Closed { conn, reason, .. } = e {
                closed.push((conn, reason));
            }
        });
    };
    // 64 connections (ids 1 to 64), then each sends a byte except the fifth: it is the least
    // recently active when a 65th opens, and the only one evicted (a sixty-fourth of 64).
    for port in 0..64 {
        send(&mut reassembler, 5000 + port, 0, true);
    }
    for port in (0..64).filter(|&p| p != 4) {
        send(&mut reassembler, 5000 + port, 1, false);
    }
    send(&mut reassembler, 6000, 0, true);
    assert_eq!(closed, vec![(5, CloseReason::Evicted)]);
    assert_eq!(reassembler.stats().evicted, 1);
}

#[test]
fn bytes_cut_off_by_the_snapshot_length_are_gaps_in_stream_order() {
    // Three 10-byte segments captured to their first 4 payload bytes (58-byte packets), the second
    // arriving last: each cut-off tail is a gap, told as such, in its place in the stream.
    let mut reassembler = Reassembler::new(Limits::default());
    let mut events = Vec::new();
    let mut invariants = fuzz_capture::Invariants::new(0);
    let mut sink = |event: Event<'_>| {
        invariants.event(&event);
        events.push(match event {
            Event::Opened { .. } => "opened".to_string(),
            Event::Data { offset, bytes, .. } => {
                format!("data {offset} {}", String::from_utf8_lossy(bytes))
            }
            Event::Gap {
                offset,
                missing,
                snapshot_len,
                ..
            } => format!("gap {offset} {missing} {snapshot_len:?}"),
            Event::Closed { reason, .. } => format!("closed {reason:?}"),
            Event::Problem(p) => p.message,
        })
    };
    for (seq, payload) in [(1000, b"abcd"), (1020, b"ijkl"), (1010, b"efgh")] {
        let segment = Segment {
            src: addr("10.0.0.1:5000"),
            dst: addr("10.0.0.2:9042"),
            seq,
            syn: false,
            ack: true,
            fin: false,
            rst: false,
            payload,
            cut: Some(Cut {
                captured: 58,
                missing: 6,
            }),
        };
        reassembler.segment(&segment, Timestamp(0), &mut sink);
    }
    reassembler.finish(Timestamp(1), &mut sink);
    invariants.finish();
    assert_eq!(
        events,
        [
            "opened",
            "data 0 abcd",
            "gap 4 6 Some(58)",
            "data 10 efgh",
            "gap 14 6 Some(58)",
            "data 20 ijkl",
            "gap 24 6 Some(58)",
            "closed EndOfCapture"
        ]
    );
}
