//! The protocol's targets: `lz4_body`, `frame_stream`, `message_body` and `protocol_stream`.

use super::memory::{bounded, MemoryBound, LZ4_RATIO};
use cqlwire_protocol::frame::{FrameHeader, FrameReader, Frames, HEADER_LEN};
use cqlwire_protocol::lz4;
use std::cell::RefCell;
use std::io::Cursor;

// ---------------------------------------------------------------------------------------------------
// lz4_body and frame_stream
// ---------------------------------------------------------------------------------------------------

/// The `--max-size` the LZ4 targets use: small, so garbage cannot make big outputs, yet above the
/// 4 MiB where bodies are walked before the output is allocated.
const LZ4_MAX_SIZE: usize = 8 << 20;

thread_local! {
    /// The output buffer of [`lz4_body`]'s second decompression, kept from input to input as a
    /// caller that reuses its buffer keeps it: grown to the largest declared length seen, and
    /// holding whatever the inputs before left in it.
    static REUSED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Decompresses the input as a CQL v4 LZ4 body. The C lz4 library must agree on every body whose
/// declared length passes the checks, and an accepted payload must compress and decompress back.
/// The input itself and every accepted payload must compress to the C library's bytes, and the
/// input compressed must decompress back in place.
/// Decompressing into a reused buffer that already holds the declared length (the in-place path)
/// must give what a fresh buffer gives: the same payload, or the same error and an empty buffer.
/// All under [`LZ4_BODY_BOUND`].
pub fn lz4_body(data: &[u8]) {
    bounded(data, LZ4_BODY_BOUND, check_lz4_body);
}

/// What `lz4_body` may hold: the output is allocated only for a declared length the block can
/// make (at most [`LZ4_RATIO`] × the block, `docs/limits.md`), and the check holds up to about
/// eight payloads' worth at once (cqlwire's, the kept buffer grown to it, the C library's, and the
/// payload compressed three ways into buffers of its worst-case size), plus the input compressed
/// and decompressed in place.
pub const LZ4_BODY_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 64 << 10,
    decompressed_per_input_byte: 10 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`lz4_body`]'s checks, without the memory bound.
fn check_lz4_body(data: &[u8]) {
    compresses_like_c(data);
    round_trips_in_place(data);
    let ours = lz4::decompress_body(data, LZ4_MAX_SIZE);
    let declared = lz4::declared_length(data, LZ4_MAX_SIZE);
    REUSED.with_borrow_mut(|out| {
        if let Ok(declared) = declared {
            if out.len() < declared {
                out.resize(declared, 0xAA);
            }
        }
        match (lz4::decompress_body_into(data, LZ4_MAX_SIZE, out), &ours) {
            (Ok(()), Ok(payload)) => assert!(out == payload, "a reused buffer decodes differently"),
            (Err(e), Err(expected)) => {
                assert_eq!(&e, expected, "a reused buffer fails differently");
                assert!(out.is_empty(), "an error leaves the reused buffer filled");
            }
            (result, expected) => panic!("reused buffer: {result:?}, fresh: {expected:?}"),
        }
    });
    if let Ok(declared) = declared {
        let block = data.get(lz4::LENGTH_PREFIX..).unwrap_or_default();
        if declared > 0 {
            let size = i32::try_from(declared).expect("the limit fits in an i32");
            let reference = ::lz4::block::decompress(block, Some(size))
                .ok()
                .filter(|payload| payload.len() == declared);
            match (&ours, &reference) {
                (Ok(a), Some(b)) => assert!(a == b, "cqlwire and C lz4 decompress differently"),
                // The LZ4 format's end-of-block rules bind compressors; the C decoder enforces
                // them, lz4_flex (and so cqlwire) does not.
                (Ok(_), None) if breaks_end_of_block_rules(block) => {}
                (Ok(_), None) => panic!("cqlwire accepts a body C lz4 refuses"),
                // The LZ4 block format forbids offset 0; the C decoder lets it through.
                (Err(e), Some(_)) if e.kind == lz4::Lz4ErrorKind::MatchOffsetZero => {}
                (Err(e), Some(_)) => panic!("C lz4 accepts a body cqlwire refuses: {e}"),
                (Err(_), None) => {}
            }
        }
    }
    let Ok(payload) = ours else {
        return;
    };
    compresses_like_c(&payload);
    let body = lz4::compress_body(&payload).expect("an accepted payload compresses");
    assert!(
        lz4::decompress_body(&body, LZ4_MAX_SIZE).as_ref() == Ok(&payload),
        "compress/decompress changes the payload"
    );
}

/// `lz4::compress_body` makes the Python driver's body (python-lz4: liblz4's
/// `LZ4_compress_fast_continue` on a fresh stream), and lz4_flex's block `compress` makes
/// `LZ4_compress_default`'s block.
fn compresses_like_c(payload: &[u8]) {
    use ::lz4::liblz4::{LZ4_compress_continue, LZ4_createStream, LZ4_freeStream};
    let body = lz4::compress_body(payload).expect("the fuzzer's inputs are small");
    let len = i32::try_from(payload.len()).expect("the fuzzer's inputs are small");
    let mut stream_block = vec![0u8; lz4_flex::block::get_maximum_output_size(payload.len())];
    // SAFETY: a fresh stream, `len` bytes of source, a destination of at least LZ4_compressBound
    // (`LZ4_compress_continue` assumes it); the stream is freed once.
    let written = unsafe {
        let stream = LZ4_createStream();
        assert!(!stream.is_null());
        let written = LZ4_compress_continue(
            stream,
            payload.as_ptr().cast(),
            stream_block.as_mut_ptr().cast(),
            len,
        );
        LZ4_freeStream(stream);
        written
    };
    stream_block.truncate(usize::try_from(written).expect("C lz4 compresses"));
    assert!(
        body[lz4::LENGTH_PREFIX..] == stream_block[..],
        "cqlwire's body is not the driver's (LZ4_compress_fast_continue)"
    );
    let default_block = ::lz4::block::compress(payload, None, false).expect("C lz4 compresses");
    assert!(
        lz4_flex::block::compress(payload) == default_block,
        "lz4_flex's block is not LZ4_compress_default's"
    );
}

/// `payload` compressed comes back decompressed into a buffer already large enough (the in-place
/// path, which copies a block that is one literal run without the decoder).
fn round_trips_in_place(payload: &[u8]) {
    let body = lz4::compress_body(payload).expect("the fuzzer's inputs are small");
    REUSED.with_borrow_mut(|out| {
        if out.len() < payload.len() {
            out.resize(payload.len(), 0xAA);
        }
        lz4::decompress_body_into(&body, LZ4_MAX_SIZE, out).expect("our own body decompresses");
        assert!(
            out == payload,
            "a body decompressed in place is not its payload"
        );
    });
}

/// Whether a well-formed LZ4 block breaks the format's end-of-block rules: the last 5 bytes of output
/// are literals, and the last match starts at least 12 bytes before the end of the output.
fn breaks_end_of_block_rules(block: &[u8]) -> bool {
    let mut at = 0;
    let mut out = 0usize;
    let mut last_match_start = None;
    let length = |at: &mut usize, nibble: usize| {
        let mut total = nibble;
        if nibble == 15 {
            while let Some(&extra) = block.get(*at) {
                *at += 1;
                total += usize::from(extra);
                if extra != 255 {
                    break;
                }
            }
        }
        total
    };
    while let Some(&token) = block.get(at) {
        at += 1;
        let literals = length(&mut at, usize::from(token >> 4));
        at += literals;
        out += literals;
        if at >= block.len() {
            return literals < 5 || last_match_start.is_some_and(|start: usize| start + 12 > out);
        }
        at += 2;
        last_match_start = Some(out);
        out += 4 + length(&mut at, usize::from(token & 15));
    }
    true
}

/// Splits the input into v3/v4 frames with the slice iterator and the streaming reader, which must
/// agree frame by frame and on the error; headers must print back to their bytes; compressed bodies
/// are decompressed (as `decompress --frames` does) without panicking. All under
/// [`FRAME_STREAM_BOUND`].
pub fn frame_stream(data: &[u8]) {
    bounded(data, FRAME_STREAM_BOUND, check_frame_stream);
}

/// What `frame_stream` may hold: the streaming reader reads a body in steps of 1 MiB, so its
/// memory follows the bytes that arrive, never the length a header claims (`docs/limits.md`);
/// one body decompressed at a time, at most [`LZ4_RATIO`] × its block.
pub const FRAME_STREAM_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 4,
    constant: (1 << 20) + (64 << 10),
    decompressed_per_input_byte: 2 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`frame_stream`]'s checks, without the memory bound.
fn check_frame_stream(data: &[u8]) {
    let mut reader = FrameReader::new(Cursor::new(data));
    let mut body = Vec::new();
    let mut next_offset = 0u64;
    for sliced in Frames::new(data) {
        let streamed = reader.next_frame(&mut body);
        let frame = match (sliced, streamed) {
            (Ok(frame), Ok(Some((offset, header)))) => {
                assert_eq!((frame.offset, frame.header), (offset, header));
                assert_eq!(
                    frame.body,
                    body.as_slice(),
                    "bodies differ at byte {offset}"
                );
                frame
            }
            (Err(sliced), Err(streamed)) => {
                assert_eq!(sliced.to_string(), streamed.to_string());
                return;
            }
            (sliced, streamed) => panic!("slice and stream disagree: {sliced:?} / {streamed:?}"),
        };
        assert_eq!(frame.offset, next_offset, "frames are not contiguous");
        let start = usize::try_from(frame.offset).expect("offsets fit the input");
        let header_bytes = data.get(start..start + HEADER_LEN);
        assert_eq!(Some(&frame.header.to_bytes()[..]), header_bytes);
        next_offset = frame.body_offset() + frame.body.len() as u64;
        if frame.header.is_compressed() {
            if let Ok(payload) = lz4::decompress_body(frame.body, LZ4_MAX_SIZE) {
                let rewritten: Result<FrameHeader, _> =
                    frame.header.with_body(false, payload.len());
                assert!(
                    rewritten.is_ok(),
                    "a decompressed body under the limit fits a frame"
                );
            }
        }
    }
    assert!(
        matches!(reader.next_frame(&mut body), Ok(None)),
        "the stream reader finds more than the slice iterator"
    );
}

/// A string as the protocol's `[string]`.
fn short_string(text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(text.len() as u16).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// The body of a PREPARED result for prepared id `0xab`: bound variables `a int`, `b text`,
/// `c list<int>`, `d vector<float, 2>` (a custom class name), result columns `x int` and
/// `y tuple<int, text>`.
fn prepared_body(version: u8) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 4, 0, 1, 0xab];
    if version >= 5 {
        body.extend_from_slice(&[0, 1, 0xcd]);
    }
    body.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 4]);
    if version >= 4 {
        body.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
    }
    short_string("k", &mut body);
    short_string("t", &mut body);
    for (name, option) in [
        ("a", &[0u8, 9][..]),
        ("b", &[0, 0x0d]),
        ("c", &[0, 0x20, 0, 9]),
    ] {
        short_string(name, &mut body);
        body.extend_from_slice(option);
    }
    short_string("d", &mut body);
    body.extend_from_slice(&[0, 0]);
    short_string(
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 2)",
        &mut body,
    );
    body.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2]);
    short_string("k", &mut body);
    short_string("t", &mut body);
    short_string("x", &mut body);
    body.extend_from_slice(&[0, 9]);
    short_string("y", &mut body);
    body.extend_from_slice(&[0, 0x31, 0, 2, 0, 9, 0, 0x0d]);
    body
}

/// `message_body`: byte 0 picks the protocol version (3, 4 or 5) and, with its top bit, a registry
/// that knows prepared id `0xab` (so EXECUTE and BATCH values get types, and a RESULT is decoded as
/// the answer to an EXECUTE of it); byte 1 is the header flags, byte 2 the opcode (low 5 bits, so
/// unknown opcodes too); the rest is the body. Invariants: `explain` agrees with `decode`, its lines
/// stay inside the body in byte order, and a decoded message renders as JSON, gist and explain text.
pub fn message_body(data: &[u8]) {
    use cqlwire_inspect::RenderMessage;
    use cqlwire_protocol::message::{DecodeContext, Message, Registry};
    let [selector, flags, opcode, body @ ..] = data else {
        return;
    };
    let version = 3 + (selector & 0x7f) % 3;
    let opcode = opcode & 0x1f;
    let mut registry = Registry::new();
    let mut request = None;
    if selector & 0x80 != 0 {
        let prepared = Message::decode(
            &DecodeContext {
                version,
                flags: 0,
                opcode: 0x08,
                registry: &registry,
                request: None,
            },
            &prepared_body(version),
        )
        .expect("the fuzz registry's PREPARED result decodes");
        registry.learn(None, &prepared);
        assert_eq!(registry.len(), 1);
        let mut execute = vec![0, 1, 0xab];
        if version >= 5 {
            execute.extend_from_slice(&[0, 1, 0xcd]);
        }
        execute.extend_from_slice(&[0, 1, 0]);
        if version >= 5 {
            execute.extend_from_slice(&[0, 0, 0]);
        }
        request = Some(
            Message::decode(
                &DecodeContext {
                    version,
                    flags: 0,
                    opcode: 0x0a,
                    registry: &registry,
                    request: None,
                },
                &execute,
            )
            .expect("the fuzz EXECUTE decodes"),
        );
    }
    let context = DecodeContext {
        version,
        flags: *flags,
        opcode,
        registry: &registry,
        request: request.as_ref(),
    };
    let decoded = Message::decode(&context, body);
    let explained = Message::explain(&context, body);
    assert_eq!(decoded, explained.result, "explain and decode disagree");
    let mut last = 0;
    for line in &explained.lines {
        assert!(line.offset >= last, "explain lines go backwards: {line:?}");
        assert!(
            line.offset + line.len <= body.len(),
            "explain line past the body: {line:?}"
        );
        last = line.offset;
    }
    let mut text = Vec::new();
    explained
        .write(&mut text, body, 1000, 1)
        .expect("writing to memory");
    if let Ok(message) = decoded {
        let json = message.to_json();
        assert!(json["body"].is_object(), "{json}");
        let _ = message.gist();
        registry.learn(request.as_ref(), &message);
    }
}

/// Feeds a stream to the per-direction protocol decoder. The first byte steers: bit 0 the
/// direction, bit 1 wraps the rest into valid v5 segments (bit 2: LZ4, bits 3-7 the segment size,
/// one in three segments not self-contained) so the fuzzer reaches the envelope reassembly, bits
/// 4-7 the chunk size. Fed in chunks or whole, the decoder must yield the same events; with every
/// eighth chunk replaced by a gap it must not panic either. All under [`PROTOCOL_STREAM_BOUND`].
pub fn protocol_stream(data: &[u8]) {
    bounded(data, PROTOCOL_STREAM_BOUND, check_protocol_stream);
}

/// What `protocol_stream` may hold: a decoder keeps one frame as its bytes arrive (never the length
/// a header claims) plus the chunk fed, and the check keeps every event of its three runs, bodies
/// decompressed (at most [`LZ4_RATIO`] × their blocks, or segments').
pub const PROTOCOL_STREAM_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 256 << 10,
    decompressed_per_input_byte: 4 * LZ4_RATIO,
    retained_per_connection: None,
};

/// [`protocol_stream`]'s checks, without the memory bound.
fn check_protocol_stream(data: &[u8]) {
    use cqlwire_protocol::frame::Direction;
    use cqlwire_protocol::segment::{encode_segment, SegmentFormat, MAX_PAYLOAD_LEN};
    use cqlwire_protocol::stream::StreamDecoder;
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let direction = if control & 1 == 0 {
        Direction::Request
    } else {
        Direction::Response
    };
    let stream = if control & 2 != 0 {
        let format = if control & 4 != 0 {
            SegmentFormat::Lz4
        } else {
            SegmentFormat::Uncompressed
        };
        let size = (1 + usize::from(control >> 3) * 97).min(MAX_PAYLOAD_LEN);
        let mut out = Vec::new();
        for (i, chunk) in rest.chunks(size).enumerate() {
            encode_segment(chunk, i % 3 != 2, format, &mut out);
        }
        out
    } else {
        rest.to_vec()
    };
    let max_frame = 16 << 20;
    let mut whole = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    decoder.feed(&stream, &mut whole);
    decoder.finish(&mut whole);
    let step = 1 + usize::from(control >> 4);
    let mut chunked = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    for chunk in stream.chunks(step) {
        decoder.feed(chunk, &mut chunked);
    }
    decoder.finish(&mut chunked);
    assert_eq!(whole, chunked, "chunking changed what the decoder found");
    let mut gapped = Vec::new();
    let mut decoder = StreamDecoder::new(direction, max_frame);
    for (i, chunk) in stream.chunks(step).enumerate() {
        if i % 8 == 7 {
            decoder.gap(chunk.len() as u64, &mut gapped);
        } else {
            decoder.feed(chunk, &mut gapped);
        }
    }
    decoder.finish(&mut gapped);
}
