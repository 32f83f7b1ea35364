//! v4 frame streams (none, LZ4, Snappy) and v5 segment streams the Python driver 3.30.1 wrote
//! (fixtures/segments/generate.py): every frame body decompressed, every segment header, CRC and
//! payload, and every envelope rebuilt from them, as the manifest the driver read back says.

use cqlwire_protocol::frame::FrameHeader;
use cqlwire_protocol::segment::{
    encode_segment, split_segment, AssemblyError, Envelope, EnvelopeAssembler, SegmentFormat,
};
use cqlwire_testkit::fixture;
use serde_json::Value;

const STREAMS: [(&str, SegmentFormat); 2] = [
    ("requests-v5-uncompressed", SegmentFormat::Uncompressed),
    ("requests-v5-lz4", SegmentFormat::Lz4),
];

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixture("segments/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A manifest entry: the offset under `key`, the header's fields, the body's CRC32.
fn entry(key: &str, offset: u64, header: &FrameHeader, body: &[u8]) -> Value {
    serde_json::json!({
        key: offset,
        "version": header.version_byte(),
        "flags": header.flags.0,
        "stream": header.stream,
        "opcode": header.opcode.to_byte(),
        "length": header.length,
        "crc32": crc32fast::hash(body),
    })
}

/// Splits a whole stream into segments and envelopes; also returns the problems met.
fn decode(stream: &[u8], format: SegmentFormat) -> (Vec<Value>, Vec<Envelope>, Vec<String>) {
    let mut segments = Vec::new();
    let mut envelopes = Vec::new();
    let mut problems = Vec::new();
    let mut assembler = EnvelopeAssembler::new(256 << 20);
    let mut rest = stream;
    let mut content = Vec::new();
    while !rest.is_empty() {
        let offset = (stream.len() - rest.len()) as u64;
        let Some((segment, after)) = split_segment(rest, offset, format) else {
            problems.push(format!("truncated segment at byte {offset}"));
            break;
        };
        if !segment.header.crc_ok || !segment.payload_crc_ok {
            problems.push(format!("CRC mismatch in the segment at byte {offset}"));
        }
        segments.push(serde_json::json!({
            "offset": offset,
            "payload_len": segment.header.payload_len,
            "uncompressed_len": segment.header.uncompressed_len,
            "self_contained": segment.header.self_contained,
        }));
        match segment.content_into(&mut content) {
            Ok(()) => assembler.push(
                offset,
                segment.header.self_contained,
                &content,
                |e| envelopes.push(e),
                |p: AssemblyError| problems.push(p.to_string()),
            ),
            Err(error) => problems.push(format!("{error} in the segment at byte {offset}")),
        }
        rest = after;
    }
    (segments, envelopes, problems)
}

#[test]
fn driver_streams_decode_to_the_driver_s_segments_and_envelopes() {
    let manifest = manifest();
    for (name, format) in STREAMS {
        let stream = std::fs::read(fixture(&format!("segments/{name}.bin"))).unwrap();
        let (segments, envelopes, problems) = decode(&stream, format);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        assert_eq!(Value::from(segments), manifest[name]["segments"], "{name}");
        let expected = manifest[name]["envelopes"].as_array().unwrap();
        assert_eq!(envelopes.len(), expected.len(), "{name}");
        for (envelope, expected) in envelopes.iter().zip(expected) {
            let found = entry(
                "segment_offset",
                envelope.segment_offset,
                &envelope.header,
                &envelope.body,
            );
            assert_eq!(&found, expected, "{name}");
        }
        assert_eq!(SegmentFormat::detect(&stream), Some(format), "{name}");
    }
}

#[test]
fn uncompressed_segments_re_encode_to_the_driver_s_bytes() {
    let (name, format) = STREAMS[0];
    let stream = std::fs::read(fixture(&format!("segments/{name}.bin"))).unwrap();
    let mut rest = &stream[..];
    let mut encoded = Vec::new();
    let mut content = Vec::new();
    while let Some((segment, after)) = split_segment(rest, 0, format) {
        segment.content_into(&mut content).unwrap();
        encode_segment(
            &content,
            segment.header.self_contained,
            format,
            &mut encoded,
        );
        rest = after;
    }
    assert_eq!(encoded, stream);
}

#[test]
fn corrupt_bytes_are_reported_not_fatal() {
    for (name, format) in STREAMS {
        let stream = std::fs::read(fixture(&format!("segments/{name}.bin"))).unwrap();
        // Flip one byte in each of the first segments' header, CRC24, payload and CRC32.
        for at in [0, 4, 20, 57, 300, 1000, stream.len() - 1] {
            let mut corrupt = stream.clone();
            corrupt[at] ^= 0x40;
            let (_, envelopes, problems) = decode(&corrupt, format);
            assert!(!problems.is_empty(), "{name}: flip at {at} not reported");
            assert!(envelopes.len() <= 7);
        }
    }
}

#[test]
fn v4_streams_decompress_with_the_named_and_the_guessed_algorithm() {
    use cqlwire_protocol::compression::{decompress_body, Compression};
    use cqlwire_protocol::frame::Frames;
    let manifest = manifest();
    for (name, algorithm) in [
        ("none", None),
        ("lz4", Some(Compression::Lz4)),
        ("snappy", Some(Compression::Snappy)),
    ] {
        let name = format!("requests-v4-{name}");
        let stream = std::fs::read(fixture(&format!("segments/{name}.bin"))).unwrap();
        let expected = manifest[&name]["frames"].as_array().unwrap();
        let frames: Vec<_> = Frames::new(&stream).map(Result::unwrap).collect();
        assert_eq!(frames.len(), expected.len(), "{name}");
        for (frame, expected) in frames.iter().zip(expected) {
            let mut body = frame.body.to_vec();
            if frame.header.is_compressed() {
                for given in [algorithm, None] {
                    let used = decompress_body(frame.body, given, 1 << 20, &mut body).unwrap();
                    assert_eq!(Some(used), algorithm, "{name}");
                }
            }
            let found = entry("offset", frame.offset, &frame.header, &body);
            assert_eq!(&found, expected, "{name}");
        }
    }
}
