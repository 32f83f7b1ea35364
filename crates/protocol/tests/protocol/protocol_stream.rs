//! The per-direction stream decoder on the driver-written streams of fixtures/segments: fed in
//! random chunks it yields the driver's envelopes (v4 none/LZ4/Snappy, v5 handshake then
//! uncompressed or LZ4 segments); garbage and gaps are reported and decoding resumes.

use cqlwire_protocol::frame::Direction;
use cqlwire_protocol::stream::{StreamDecoder, StreamEvent, DEFAULT_MAX_FRAME};
use cqlwire_testkit::fixture;
use proptest::prelude::*;
use serde_json::{json, Value};

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixture("segments/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("segments/{name}.bin"))).unwrap()
}

/// Envelopes as manifest entries (offset key named as in the manifest) and problem messages.
fn decode(stream: &[u8], cuts: &[usize], offset_key: &str) -> (Vec<Value>, Vec<String>) {
    let events = feed_in_chunks(stream, cuts, DEFAULT_MAX_FRAME);
    let mut envelopes = Vec::new();
    let mut problems = Vec::new();
    for event in events {
        match event {
            StreamEvent::Envelope(e) => {
                let h = e.header;
                envelopes.push(json!({
                    offset_key: e.offset,
                    "version": h.version_byte(),
                    "flags": h.flags.0,
                    "stream": h.stream,
                    "opcode": h.opcode.to_byte(),
                    "length": h.length,
                    "crc32": crc32fast::hash(&e.body.unwrap()),
                }))
            }
            StreamEvent::Problem(p) => problems.push(format!("{} @ {}", p.message, p.offset)),
        }
    }
    (envelopes, problems)
}

/// Feeds `stream` to a client-side decoder cut at `cuts` (taken modulo its length), then ends it.
fn feed_in_chunks(stream: &[u8], cuts: &[usize], max_frame: usize) -> Vec<StreamEvent> {
    let mut decoder = StreamDecoder::new(Direction::Request, max_frame);
    let mut events = Vec::new();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut start = 0;
    for cut in cuts.into_iter().chain([stream.len()]) {
        decoder.feed(&stream[start..cut], &mut events);
        start = cut;
    }
    decoder.finish(&mut events);
    events
}

/// (stream name, expected envelopes with offsets in "offset") for every fixture stream.
fn cases() -> Vec<(Vec<u8>, Vec<Value>)> {
    let manifest = manifest();
    let mut cases = Vec::new();
    for name in ["none", "lz4", "snappy"] {
        let name = format!("requests-v4-{name}");
        let frames = manifest[&name]["frames"].as_array().unwrap().clone();
        cases.push((read(&name), frames));
    }
    for name in ["uncompressed", "lz4"] {
        let session = &manifest[format!("session-v5-{name}").as_str()];
        let skip = session["handshake_len"].as_u64().unwrap();
        let mut expected = session["handshake"].as_array().unwrap().clone();
        for envelope in manifest[format!("requests-v5-{name}").as_str()]["envelopes"]
            .as_array()
            .unwrap()
        {
            let mut envelope = envelope.clone();
            let offset = envelope["segment_offset"].as_u64().unwrap() + skip;
            let map = envelope.as_object_mut().unwrap();
            map.remove("segment_offset");
            map.insert("offset".into(), offset.into());
            expected.push(envelope);
        }
        cases.push((read(&format!("session-v5-{name}")), expected));
    }
    cases
}

#[test]
fn whole_streams_give_the_driver_s_envelopes() {
    for (stream, expected) in cases() {
        let (envelopes, problems) = decode(&stream, &[], "offset");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(envelopes, expected);
    }
}

#[test]
fn a_v5_stream_joined_mid_connection_is_found_by_its_crc24() {
    for name in ["uncompressed", "lz4"] {
        let stream = read(&format!("requests-v5-{name}"));
        let manifest = manifest();
        let expected = &manifest[format!("requests-v5-{name}").as_str()]["envelopes"];
        let (envelopes, problems) = decode(&stream, &[1, 2, 7, 100, 5000], "segment_offset");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(&Value::from(envelopes), expected);
    }
}

#[test]
fn garbage_and_gaps_are_reported_and_decoding_resumes() {
    let cases = cases();
    for (stream, expected) in &cases {
        // Garbage in front: reported once, then every envelope.
        let mut dirty = vec![0xee; 37];
        dirty.extend_from_slice(stream);
        let mut decoder = StreamDecoder::new(Direction::Request, DEFAULT_MAX_FRAME);
        let mut events = Vec::new();
        decoder.feed(&dirty, &mut events);
        decoder.finish(&mut events);
        let problems: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Problem(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].offset, 0);
        assert!(problems[0]
            .message
            .contains("37 bytes skipped, resynchronised at byte 37"));
        let found = events.len() - 1;
        assert_eq!(found, expected.len());

        // A gap inside the STARTUP: reported, and the envelopes after it still come (the
        // compression guessed, the v5 segments found by their CRC24).
        let cut = expected[1]["offset"].as_u64().unwrap() as usize + 3;
        let mut decoder = StreamDecoder::new(Direction::Request, DEFAULT_MAX_FRAME);
        let mut events = Vec::new();
        decoder.feed(&stream[..cut], &mut events);
        decoder.gap(10, &mut events);
        decoder.feed(&stream[cut + 10..], &mut events);
        decoder.finish(&mut events);
        let gap = events.iter().any(
            |e| matches!(e, StreamEvent::Problem(p) if p.message.starts_with("gap of 10 bytes")),
        );
        assert!(gap, "{events:?}");
        let last = events.iter().rev().find_map(|e| match e {
            StreamEvent::Envelope(e) => Some(e.header.stream),
            _ => None,
        });
        assert_eq!(
            last,
            expected.last().unwrap()["stream"]
                .as_i64()
                .map(|s| s as i16)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_chunks_give_the_same_envelopes(
        which in 0usize..5,
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let (stream, expected) = cases().swap_remove(which);
        let (envelopes, problems) = decode(&stream, &cuts, "offset");
        prop_assert!(problems.is_empty(), "{:?}", problems);
        prop_assert_eq!(envelopes, expected);
    }

    #[test]
    fn corrupt_bytes_never_panic(
        which in 0usize..5,
        flips in proptest::collection::vec((any::<usize>(), 1u8..=255), 1..4),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let (mut stream, _) = cases().swap_remove(which);
        for (at, mask) in flips {
            let at = at % stream.len();
            stream[at] ^= mask;
        }
        feed_in_chunks(&stream, &cuts, 1 << 20);
    }
}
