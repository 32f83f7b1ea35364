//! Tests of the LZ4 bodies and blocks against the C library (the reference).

use super::*;
use proptest::prelude::*;

/// A body as the C library (the reference) makes it: big-endian length, then its raw block.
fn reference_body(payload: &[u8]) -> Vec<u8> {
    let block = ::lz4::block::compress(payload, None, false).unwrap();
    let mut body = (payload.len() as u32).to_be_bytes().to_vec();
    body.extend_from_slice(&block);
    body
}

/// The driver's body (the reference for compression): python-lz4's C calls, a fresh stream
/// (`LZ4_createStream` zeroes it, as `LZ4_resetStream` does) and `LZ4_compress_continue`
/// (`LZ4_compress_fast_continue` into a buffer of `LZ4_compressBound`, acceleration 1).
fn driver_body(payload: &[u8]) -> Vec<u8> {
    use ::lz4::liblz4::{
        LZ4_compressBound, LZ4_compress_continue, LZ4_createStream, LZ4_freeStream,
    };
    let len = i32::try_from(payload.len()).unwrap();
    let mut body = (len as u32).to_be_bytes().to_vec();
    // SAFETY: a fresh stream, a source of `len` bytes and a destination of the bound the C
    // library guarantees for `len`; the stream is freed once.
    unsafe {
        let bound = LZ4_compressBound(len);
        body.resize(LENGTH_PREFIX + bound as usize, 0);
        let stream = LZ4_createStream();
        assert!(!stream.is_null());
        let written = LZ4_compress_continue(
            stream,
            payload.as_ptr().cast(),
            body[LENGTH_PREFIX..].as_mut_ptr().cast(),
            len,
        );
        LZ4_freeStream(stream);
        body.truncate(LENGTH_PREFIX + usize::try_from(written).unwrap());
    }
    body
}

/// Both equalities with the C library: `compress_body` is the driver's body, and lz4_flex's
/// block `compress` is `LZ4_compress_default`'s block.
fn assert_compresses_like_c(payload: &[u8]) {
    assert!(
        compress_body(payload).unwrap() == driver_body(payload),
        "length {}: not the driver's body",
        payload.len()
    );
    assert!(
        lz4_flex::block::compress(payload) == ::lz4::block::compress(payload, None, false).unwrap(),
        "length {}: not LZ4_compress_default's block",
        payload.len()
    );
}

/// Decompresses with the C library (the reference), given the expected size.
fn reference_decompress(body: &[u8], size: usize) -> Vec<u8> {
    ::lz4::block::decompress(&body[4..], Some(size as i32)).unwrap()
}

fn text_like(len: usize) -> Vec<u8> {
    let words = [
        "SELECT", "keyspace", "vector", "token", "where", "id", "=", "?", "\n",
    ];
    let mut text = Vec::new();
    let mut i = 7usize;
    while text.len() < len {
        i = i.wrapping_mul(2654435761).wrapping_add(12345) % 1_000_003;
        text.extend_from_slice(words[i % words.len()].as_bytes());
        text.push(b' ');
    }
    text.truncate(len);
    text
}

fn err_of(body: &[u8]) -> Lz4Error {
    decompress_body(body, DEFAULT_MAX_SIZE).unwrap_err()
}

#[test]
fn empty_payload_is_the_empty_block() {
    let body = compress_body(b"").unwrap();
    assert_eq!(body, reference_body(b""));
    assert_eq!(decompress_body(&body, 0).unwrap(), b"");
}

#[test]
fn length_prefix_is_big_endian_and_c_reads_our_blocks() {
    for len in [1, 100, 1024, 70_000, 1 << 20] {
        let payload = text_like(len);
        let body = compress_body(&payload).unwrap();
        assert_eq!(body[..4], (len as u32).to_be_bytes());
        assert_eq!(reference_decompress(&body, len), payload);
        assert_eq!(
            decompress_body(&reference_body(&payload), len).unwrap(),
            payload
        );
    }
}

#[test]
fn the_c_oracle_is_at_least_the_drivers_liblz4() {
    // python-lz4 4.4.5 (the pinned driver's) bundles liblz4 1.9.4, the lz4 crate 1.10.0; their
    // fast compressors differ only in form (fixtures/lz4ref holds python-lz4's own bodies).
    let version = ::lz4::version();
    println!("C liblz4 of the lz4 crate: {version}");
    assert!(version >= 10904, "liblz4 {version}");
}

#[test]
fn bodies_are_the_c_librarys_around_every_size_switch() {
    // Sizes 0-20 (13 is the shortest input with a match), and both sides of LZ4_64Klimit
    // (64 KiB + 11), where LZ4_compress_default changes its hash table.
    let limit = (64 << 10) + 11;
    let sizes = (0..=20).chain(limit - 40..limit + 40).chain([1 << 20]);
    for len in sizes {
        let noise: Vec<u8> = (0..len as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        let mixed: Vec<u8> = text_like(len)
            .iter()
            .zip(&noise)
            .map(|(&t, &n)| if n < 24 { n } else { t })
            .collect();
        let payloads = [
            text_like(len),
            vec![0; len],
            b"ab".repeat(len),
            noise,
            mixed,
        ];
        for mut payload in payloads {
            payload.truncate(len);
            assert_compresses_like_c(&payload);
        }
    }
}

/// Bytes no LZ4 compressor finds a match in (a xorshift stream).
fn incompressible(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ len as u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

#[test]
fn literal_runs_are_copied_without_the_decoder() {
    for len in 0..=LITERAL_RUN_MAX + 300 {
        let payload = incompressible(len);
        let body = reference_body(&payload);
        let block = &body[LENGTH_PREFIX..];
        let mut out = vec![0xAA; len];
        let taken = copied_literal_run(block, &mut out);
        assert_eq!(taken, (15..=LITERAL_RUN_MAX).contains(&len), "length {len}");
        if taken {
            assert!(out == payload, "length {len}: the copy is not the payload");
        }
        // In place (a buffer already large enough) and fresh, through the public call.
        let mut reused = vec![0xAA; len + 7];
        decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut reused).unwrap();
        assert!(reused == payload, "length {len}: reused buffer");
        assert!(decompress_body(&body, DEFAULT_MAX_SIZE).unwrap() == payload);
    }
}

#[test]
fn into_variants_reuse_buffers_across_sizes() {
    let mut body = Vec::new();
    let mut payload = Vec::new();
    for len in [5000, 10, 0, 3000, 1] {
        let input = text_like(len);
        compress_body_into(&input, &mut body).unwrap();
        decompress_body_into(&body, len, &mut payload).unwrap();
        assert_eq!(payload, input);
    }
}

#[test]
fn short_bodies_and_the_limit() {
    assert_eq!(
        err_of(&[0, 0, 1]),
        Lz4Error::new(0, Lz4ErrorKind::MissingLengthPrefix { len: 3 })
    );
    let body = reference_body(&text_like(1000));
    assert_eq!(
        decompress_body(&body, 999).unwrap_err(),
        Lz4Error::new(
            0,
            Lz4ErrorKind::OverLimit {
                declared: 1000,
                limit: 999
            }
        )
    );
    assert_eq!(
        err_of(&[0x80, 0, 0, 0, 0x10, 0x61]).kind,
        Lz4ErrorKind::OverLimit {
            declared: 1 << 31,
            limit: DEFAULT_MAX_SIZE
        }
    );
    assert_eq!(
        err_of(&[0, 0, 2, 0, 0x10, 0x61]).kind,
        Lz4ErrorKind::ImpossibleExpansion {
            declared: 512,
            block_len: 2
        }
    );
}

#[test]
fn declared_zero_needs_the_empty_block() {
    assert_eq!(
        err_of(&[0, 0, 0, 0]),
        Lz4Error::new(4, Lz4ErrorKind::EmptyBlock)
    );
    assert_eq!(
        err_of(&[0, 0, 0, 0, 0x10, 0x61]),
        Lz4Error::new(
            4,
            Lz4ErrorKind::NonEmptyBlockForEmptyPayload { block_len: 2 }
        )
    );
}

#[test]
fn length_mismatches_are_located() {
    let payload = text_like(1000);
    let mut body = reference_body(&payload);
    body[2..4].copy_from_slice(&1001u16.to_be_bytes());
    assert_eq!(
        err_of(&body),
        Lz4Error::new(
            body.len(),
            Lz4ErrorKind::ShorterThanDeclared {
                declared: 1001,
                actual: 1000
            }
        )
    );
    body[2..4].copy_from_slice(&999u16.to_be_bytes());
    let error = err_of(&body);
    assert_eq!(
        error.kind,
        Lz4ErrorKind::LongerThanDeclared { declared: 999 }
    );
    assert!(error.offset > 4 && error.offset < body.len());
}

#[test]
fn large_bodies_are_walked_before_allocating() {
    let payload = text_like(PREFLIGHT_ABOVE + 1000);
    let body = compress_body(&payload).unwrap();
    assert_eq!(decompress_body(&body, DEFAULT_MAX_SIZE).unwrap(), payload);
    let mut longer = body.clone();
    longer[..4].copy_from_slice(&(payload.len() as u32 + 1).to_be_bytes());
    assert_eq!(
        err_of(&longer),
        Lz4Error::new(
            body.len(),
            Lz4ErrorKind::ShorterThanDeclared {
                declared: payload.len() + 1,
                actual: payload.len()
            }
        )
    );
    let mut garbage = (100u32 << 20).to_be_bytes().to_vec();
    garbage.push(0xf0);
    garbage.resize(1 << 20, 0xff);
    let mut payload = Vec::new();
    let error = decompress_body_into(&garbage, DEFAULT_MAX_SIZE, &mut payload).unwrap_err();
    assert_eq!(error, Lz4Error::new(1 << 20, Lz4ErrorKind::LengthCutOff));
    assert_eq!(payload.capacity(), 0);
}

#[test]
fn corrupt_blocks_are_located() {
    // 1 literal 'a', then a match with offset 2 while 1 byte is decoded.
    let body = [0, 0, 0, 9, 0x10, b'a', 2, 0, 0x10, b'b'];
    assert_eq!(
        err_of(&body),
        Lz4Error::new(
            6,
            Lz4ErrorKind::MatchOffsetTooFar {
                offset: 2,
                decoded: 1
            }
        )
    );
    let body = [0, 0, 0, 9, 0x10, b'a', 0, 0, 0x10, b'b'];
    assert_eq!(
        err_of(&body),
        Lz4Error::new(6, Lz4ErrorKind::MatchOffsetZero)
    );
    let body = [0, 0, 0, 5, 0x50, b'a', b'b'];
    assert_eq!(
        err_of(&body),
        Lz4Error::new(5, Lz4ErrorKind::LiteralsPastEnd { wanted: 5, left: 2 })
    );
    let body = [0, 0, 0, 5, 0x10, b'a', 1];
    assert_eq!(
        err_of(&body),
        Lz4Error::new(6, Lz4ErrorKind::MatchOffsetCutOff)
    );
    let body = [0, 0, 0, 5, 0x10, b'a', 1, 0];
    assert_eq!(
        err_of(&body),
        Lz4Error::new(8, Lz4ErrorKind::EndsAfterMatch)
    );
    let body = [0, 0, 1, 0, 0xf0, 255, 255];
    assert_eq!(err_of(&body), Lz4Error::new(7, Lz4ErrorKind::LengthCutOff));
}

#[test]
fn truncated_reference_bodies_fail_cleanly() {
    let body = reference_body(&text_like(5000));
    for cut in 0..body.len() {
        assert!(
            decompress_body(&body[..cut], DEFAULT_MAX_SIZE).is_err(),
            "cut {cut}"
        );
    }
}

#[test]
fn messages_name_the_offset() {
    assert_eq!(
        err_of(&[0x80, 0, 0, 0, 0]).to_string(),
        "declared uncompressed length 2147483648 exceeds the limit of 268435456 bytes at byte 0"
    );
}

proptest! {
    #[test]
    fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..5000)) {
        let body = compress_body(&payload).unwrap();
        prop_assert_eq!(decompress_body(&body, payload.len()).unwrap(), payload);
    }

    #[test]
    fn round_trip_repetitive(seed in proptest::collection::vec(0u8..4, 1..50), len in 0usize..20_000) {
        let payload: Vec<u8> = seed.iter().cycle().take(len).copied().collect();
        let body = compress_body(&payload).unwrap();
        prop_assert_eq!(reference_decompress(&body, len), payload.clone());
        prop_assert_eq!(decompress_body(&body, len).unwrap(), payload);
    }

    #[test]
    fn random_payloads_compress_like_c(payload in proptest::collection::vec(any::<u8>(), 0..5000)) {
        assert_compresses_like_c(&payload);
    }

    /// Repeats of short random periods with sparse byte flips, cut at any length: long matches,
    /// immediate follow-on matches and matches that end at the input's last bytes.
    #[test]
    fn structured_payloads_compress_like_c(
        period in proptest::collection::vec(0u8..6, 1..300),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..40),
        len in 0usize..70_000,
    ) {
        let mut payload: Vec<u8> = period.iter().cycle().take(len).copied().collect();
        for (at, byte) in flips {
            if !payload.is_empty() {
                let i = at.index(payload.len());
                payload[i] = byte;
            }
        }
        assert_compresses_like_c(&payload);
    }

    #[test]
    fn random_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decompress_body(&body, 1 << 16);
    }

    #[test]
    fn random_blocks_with_plausible_lengths_never_panic(
        declared in 0u32..4096,
        block in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut body = declared.to_be_bytes().to_vec();
        body.extend_from_slice(&block);
        match decompress_body(&body, 1 << 16) {
            Ok(payload) => prop_assert_eq!(payload.len(), declared as usize),
            Err(error) => {
                prop_assert!(error.offset <= body.len());
                prop_assert!(!matches!(error.kind, Lz4ErrorKind::Corrupt { .. }), "{}", error);
            }
        }
    }

    #[test]
    fn mutated_bodies_never_panic(
        payload in proptest::collection::vec(0u8..8, 0..3000),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut body = compress_body(&payload).unwrap();
        let i = at.index(body.len());
        body[i] = byte;
        match decompress_body(&body, 1 << 16) {
            Ok(out) => prop_assert_eq!(out.len() as u32, u32::from_be_bytes(body[..4].try_into().unwrap())),
            // The diagnostic walk finds every fault the decoder finds.
            Err(error) => prop_assert!(!matches!(error.kind, Lz4ErrorKind::Corrupt { .. }), "{}", error),
        }
    }
}

proptest! {
    /// The in-place path (a buffer already large enough) gives what the checked path gives a
    /// fresh buffer: the same payload, or the same error at the same offset, for bodies and
    /// blocks, valid, mutated or with any declared length, under any limit.
    #[test]
    fn reused_buffers_give_the_results_of_fresh_ones(
        payload in proptest::collection::vec(0u8..8, 0..3000),
        mutation in proptest::option::of((any::<prop::sample::Index>(), any::<u8>())),
        declared in proptest::option::of(0u32..4000),
        max_size in prop_oneof![Just(1usize << 20), 0usize..4000],
    ) {
        let mut body = compress_body(&payload).unwrap();
        if let Some((at, byte)) = mutation {
            let i = at.index(body.len());
            body[i] = byte;
        }
        if let Some(declared) = declared {
            body[..LENGTH_PREFIX].copy_from_slice(&declared.to_be_bytes());
        }
        // (result, buffer after) of a call into `out`.
        let run = |mut out: Vec<u8>, call: &dyn Fn(&mut Vec<u8>) -> Result<(), Lz4Error>| {
            (call(&mut out), out)
        };
        let body_call = |out: &mut Vec<u8>| decompress_body_into(&body, max_size, out);
        prop_assert_eq!(run(vec![0xAA; 8000], &body_call), run(Vec::new(), &body_call));
        let len = u32::from_be_bytes(body[..LENGTH_PREFIX].try_into().unwrap()) as usize;
        let block_call =
            |out: &mut Vec<u8>| decompress_block_into(&body[LENGTH_PREFIX..], len, max_size, out);
        prop_assert_eq!(run(vec![0xAA; 8000], &block_call), run(Vec::new(), &block_call));
    }
}

proptest! {
    /// A literal run whose token, length bytes, length prefix or block length are changed
    /// gives in place (where whole runs are copied without the decoder) what the decoder
    /// gives a fresh buffer: the same payload, or the same error at the same offset.
    #[test]
    fn altered_literal_runs_give_the_decoders_results(
        len in 0usize..LITERAL_RUN_MAX + 100,
        // A byte from the last of the length prefix to past the run's length bytes, and what
        // is added to it: ±1 (a length byte), ±16 (the token's literal nibble), or anything.
        mutation in proptest::option::of((
            LENGTH_PREFIX - 1..LENGTH_PREFIX + 12,
            prop_oneof![Just(1u8), Just(0xFF), Just(0x10), Just(0xF0), any::<u8>()],
        )),
        resize in -2isize..=2,
    ) {
        let mut body = reference_body(&incompressible(len));
        if let Some((at, delta)) = mutation {
            let i = at.min(body.len() - 1);
            body[i] = body[i].wrapping_add(delta);
        }
        let new_len = (body.len() as isize + resize).max(0) as usize;
        body.resize(new_len, 0x5A);
        let mut reused = vec![0xAA; LITERAL_RUN_MAX + 200];
        let in_place = decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut reused);
        let mut fresh = Vec::new();
        let checked = decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut fresh);
        prop_assert_eq!((in_place, reused), (checked, fresh));
    }
}

#[test]
fn blocks_are_bodies_without_their_prefix() {
    let payload = b"hello hello hello hello".repeat(20);
    let mut block = Vec::new();
    compress_block_into(&payload, &mut block).unwrap();
    assert_eq!(block, compress_body(&payload).unwrap()[LENGTH_PREFIX..]);
    let mut out = Vec::new();
    decompress_block_into(&block, payload.len(), 1 << 20, &mut out).unwrap();
    assert_eq!(out, payload);
    let error = decompress_block_into(&block, payload.len() + 1, 1 << 20, &mut out);
    assert!(matches!(
        error.unwrap_err().kind,
        Lz4ErrorKind::ShorterThanDeclared { .. }
    ));
    let error = decompress_block_into(&block, payload.len(), 100, &mut out).unwrap_err();
    assert_eq!(error.offset, 0);
    let mut bad = block.clone();
    bad[0] = 0xff;
    let error = decompress_block_into(&bad, payload.len(), 1 << 20, &mut out).unwrap_err();
    let body_error = decompress_body(
        &[&(payload.len() as u32).to_be_bytes()[..], &bad].concat(),
        1 << 20,
    )
    .unwrap_err();
    assert_eq!(error.offset + LENGTH_PREFIX, body_error.offset);
}
