//! LZ4 bodies: cqlwire (lz4_flex block API + the CQL big-endian length) side by side with the C
//! library's block API (`lz4` crate, raw blocks without its little-endian size prefix) on the
//! driver-made payload fixtures, plus a stream of 10,000 compressed frames split and decompressed.
//! Compression has two C rows: `LZ4_compress_default` ("C lz4") and the driver's own call, which
//! makes cqlwire's exact bytes ("C lz4, driver's call"; see `src/lz4.rs`).
//!
//! Run: `cargo bench --bench lz4`.
//!
//! `cargo bench --bench lz4 -- --interleaved [ROUNDS]` instead times the cqlwire and C calls of each
//! body in turn, round after round (default 300 rounds), and prints tab-separated lines
//! `op kind size side median_ns min_ns ratio` where ratio is the median over rounds of that side's time /
//! cqlwire's time in the same round: on a shared, noisy machine a slow moment then hits every side
//! of a round alike, where criterion's groups run one side after the other
//! (`benches/compare/run.py` reports these ratios). With `LZ4_BENCH_SHIFT=N` in the environment,
//! N bytes are allocated before the buffers and N more between each body and its output buffer,
//! which all sides share: the placement of the buffers (their alignment, and how far apart source
//! and destination are modulo 4 KiB) moves a 1-8 KiB call by up to 2 × on its own, so
//! `run.py` runs its processes with different shifts and reports the median.

use cqlwire_protocol::frame::{Direction, Flags, FrameHeader, FrameReader, Frames, Opcode};
use cqlwire_protocol::lz4::{compress_body, compress_body_into, decompress_body_into};
use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

const SIZES: [usize; 3] = [1024, 8192, 65536];
const KINDS: [&str; 2] = ["text", "random"];
const FRAMES: usize = 10_000;

fn payload(kind: &str, size: usize) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lz4/payloads")
        .join(format!("{kind}-{size}.bin"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn c_block(payload: &[u8]) -> Vec<u8> {
    lz4::block::compress(payload, None, false).unwrap()
}

/// `LZ4_compress_default` of `input` into `buffer` (at least its compress bound).
fn c_compress(input: &[u8], buffer: &mut [u8]) -> usize {
    lz4::block::compress_to_buffer(input, None, false, buffer).unwrap()
}

/// lz4_flex's block decoder called as a function (as cqlwire and the C library are), not inlined
/// into the timing loop.
#[inline(never)]
fn lz4_flex_call(block: &[u8], out: &mut [u8]) -> Result<usize, lz4_flex::block::DecompressError> {
    lz4_flex::block::decompress_into(block, out)
}

/// `body`, hidden from the optimiser: every decompression side of a body starts from this, so all
/// pay the same to reach its bytes. (`black_box(&body[..])` would not do: LLVM stores the slice's
/// pointer and length with one 16-byte move and reads them back with two 8-byte loads, and on AMD
/// Zen 5 the load of the upper half stalls, no store-to-load forwarding: 3–4 ns per call, 36–44 %
/// of perf's samples of cqlwire's timing loop, which the sides given `black_box(&body[4..])`, two
/// 8-byte stores, did not pay.)
fn opaque_body(body: &Vec<u8>) -> &Vec<u8> {
    black_box(body)
}

/// The CQL job done with another decoder: the body's big-endian length, then `decode` of its block
/// into exactly that many bytes of `out` (at least as long).
fn body_job<E>(body: &[u8], out: &mut [u8], decode: impl FnOnce(&[u8], &mut [u8]) -> E) -> E {
    let (prefix, block) = body.split_first_chunk::<4>().unwrap();
    decode(block, &mut out[..u32::from_be_bytes(*prefix) as usize])
}

/// `LZ4_decompress_safe` of `block` into all of `payload`.
fn c_decompress(block: &[u8], payload: &mut [u8]) -> usize {
    lz4::block::decompress_to_buffer(block, Some(payload.len() as i32), payload).unwrap()
}

/// A body of the C library's block of `input`: the work every decompression side does, from the
/// same bytes (see [`decompress`]).
fn c_body(input: &[u8]) -> Vec<u8> {
    let mut body = (input.len() as u32).to_be_bytes().to_vec();
    body.extend_from_slice(&c_block(input));
    body
}

extern "C" {
    // In the C library the lz4 crate links (lz4-sys), not re-exported by it.
    fn LZ4_resetStream(stream: *mut lz4::liblz4::LZ4StreamEncode);
    fn LZ4_compress_fast_continue(
        stream: *mut lz4::liblz4::LZ4StreamEncode,
        source: *const std::ffi::c_char,
        dest: *mut std::ffi::c_char,
        source_size: i32,
        dest_capacity: i32,
        acceleration: i32,
    ) -> i32;
}

/// A C `LZ4_stream_t` used the way python-lz4's `lz4.block.compress` (the Python driver's
/// compressor) uses one: reset, then `LZ4_compress_fast_continue` with acceleration 1.
struct DriverStream(*mut lz4::liblz4::LZ4StreamEncode);

impl DriverStream {
    fn new() -> Self {
        // SAFETY: allocates a stream; checked for null.
        let stream = unsafe { lz4::liblz4::LZ4_createStream() };
        assert!(!stream.is_null());
        DriverStream(stream)
    }

    fn compress(&self, input: &[u8], out: &mut [u8]) -> i32 {
        // SAFETY: a valid stream, a source of `input.len()` bytes and a destination of
        // `out.len()` bytes (the compress bound of the input).
        let written = unsafe {
            LZ4_resetStream(self.0);
            LZ4_compress_fast_continue(
                self.0,
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                input.len() as i32,
                out.len() as i32,
                1,
            )
        };
        assert!(written > 0);
        written
    }
}

impl Drop for DriverStream {
    fn drop(&mut self) {
        // SAFETY: the stream was created by LZ4_createStream and is freed once.
        unsafe { lz4::liblz4::LZ4_freeStream(self.0) };
    }
}

fn configure<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200));
    group
}

fn compress(c: &mut Criterion) {
    let mut group = configure(c, "lz4 compress");
    for kind in KINDS {
        for size in SIZES {
            let input = payload(kind, size);
            let label = format!("{kind}/{size}");
            group.throughput(Throughput::Bytes(size as u64));
            let mut body = Vec::new();
            group.bench_with_input(BenchmarkId::new("cqlwire", &label), &input, |b, input| {
                b.iter(|| compress_body_into(black_box(input), &mut body).unwrap())
            });
            // LZ4_compress_default: below 64 KiB + 11 bytes its 16-bit table makes other blocks
            // than the driver's (and cqlwire's), so it is not quite the same work.
            let mut buffer = vec![0u8; lz4::block::compress_bound(size).unwrap()];
            group.bench_with_input(BenchmarkId::new("C lz4", &label), &input, |b, input| {
                b.iter(|| c_compress(black_box(input), &mut buffer))
            });
            // The driver's call, cqlwire's exact bytes: a reset stream (its 16 KiB table
            // cleared) and LZ4_compress_fast_continue; the stream is allocated once.
            let stream = DriverStream::new();
            group.bench_with_input(
                BenchmarkId::new("C lz4, driver's call", &label),
                &input,
                |b, input| b.iter(|| stream.compress(black_box(input), &mut buffer)),
            );
        }
    }
    group.finish();
}

fn decompress(c: &mut Criterion) {
    let mut group = configure(c, "lz4 decompress");
    for kind in KINDS {
        for size in SIZES {
            let input = payload(kind, size);
            let label = format!("{kind}/{size}");
            // Each side decompresses the C library's block, so all do the same work, from the same
            // bytes (the block 4 bytes into the body, whose length prefix cqlwire, C and lz4_flex
            // alike read for the output size, see `body_job`) into the same output buffer: how far
            // apart source and destination sit modulo 4 KiB changes the time of long literal copies
            // by up to 2 × (4K aliasing), which is the buffers' placement, not the code. glibc's
            // memcpy, which C lz4 calls for long literal runs, is much slower on this CPU for the
            // misaligned source of a block inside a body, so C also runs on its own copy of the
            // block ("C lz4, own buffer").
            let body = c_body(&input);
            let block = body[4..].to_vec();
            group.throughput(Throughput::Bytes(size as u64));
            let mut payload = vec![0u8; size];
            group.bench_with_input(BenchmarkId::new("cqlwire", &label), &body, |b, body| {
                b.iter(|| decompress_body_into(opaque_body(body), size, &mut payload).unwrap())
            });
            group.bench_with_input(
                BenchmarkId::new("lz4_flex raw", &label),
                &body,
                |b, body| {
                    b.iter(|| body_job(opaque_body(body), &mut payload, lz4_flex_call).unwrap())
                },
            );
            group.bench_with_input(
                BenchmarkId::new("C lz4, own buffer", &label),
                &block,
                |b, block| b.iter(|| c_decompress(black_box(block), &mut payload)),
            );
            group.bench_with_input(BenchmarkId::new("C lz4", &label), &body, |b, body| {
                b.iter(|| body_job(opaque_body(body), &mut payload, c_decompress))
            });
        }
    }
    group.finish();
}

/// A stream of `FRAMES` compressed v4 RESULT frames with text bodies of 64 B to 16 KiB; returns the
/// stream and the total decompressed body size.
fn frame_stream() -> (Vec<u8>, u64) {
    let text = payload("text", 65536);
    let mut stream = Vec::new();
    let mut total = 0u64;
    for i in 0..FRAMES {
        let len = 64 + (i * 7919) % (16 << 10);
        let start = (i * 104_729) % (text.len() - len);
        let body = compress_body(&text[start..start + len]).unwrap();
        let header = FrameHeader {
            version: 4,
            direction: Direction::Response,
            flags: Flags(Flags::COMPRESSION),
            stream: (i % 32_768) as i16,
            opcode: Opcode::Result.into(),
            length: body.len() as u32,
        };
        stream.extend_from_slice(&header.to_bytes());
        stream.extend_from_slice(&body);
        total += len as u64;
    }
    (stream, total)
}

fn frames(c: &mut Criterion) {
    let (stream, total) = frame_stream();
    let mut group = configure(c, "lz4 frame stream");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(total));
    let mut payload = Vec::new();
    group.bench_function("slice iterator + decompress, 10000 frames", |b| {
        b.iter(|| {
            for frame in Frames::new(black_box(&stream)) {
                let frame = frame.unwrap();
                decompress_body_into(frame.body, 1 << 20, &mut payload).unwrap();
            }
        })
    });
    group.bench_function("streaming reader + decompress, 10000 frames", |b| {
        let mut body = Vec::new();
        b.iter(|| {
            let mut reader = FrameReader::new(black_box(&stream[..]));
            while let Some((_, _header)) = reader.next_frame(&mut body).unwrap() {
                decompress_body_into(&body, 1 << 20, &mut payload).unwrap();
            }
        })
    });
    group.finish();
}

/// One side of [`interleave`]: a name, and the call to make a given number of times, with the
/// output buffer all sides share (so that its placement is the same for each).
type Side<'a> = (&'a str, &'a mut dyn FnMut(usize, &mut Vec<u8>));

/// Times `sides` (cqlwire first) in turn for `rounds` rounds of about 50 µs of work each, each
/// writing into `out`, and prints one line per side (see the module comment); nothing when the
/// row's `op kind size` (e.g. `decompress random 1024`) does not contain `filter`.
fn interleave(
    (what, size, filter): (&str, usize, &str),
    rounds: usize,
    out: &mut Vec<u8>,
    sides: &mut [Side<'_>],
) {
    if !format!("{} {size}", what.replace('\t', " ")).contains(filter) {
        return;
    }
    let calls = (256 << 10) / size.max(1) + 4;
    let mut times = vec![Vec::with_capacity(rounds); sides.len()];
    for round in 0..=rounds {
        for (side, (_, run)) in sides.iter_mut().enumerate() {
            let start = Instant::now();
            run(calls, out);
            let ns = start.elapsed().as_secs_f64() * 1e9 / calls as f64;
            if round > 0 {
                times[side].push(ns); // round 0 warms up
            }
        }
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    for (side, (name, _)) in sides.iter().enumerate() {
        let ratios = times[side]
            .iter()
            .zip(&times[0])
            .map(|(t, ours)| t / ours)
            .collect();
        let low = times[side].iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{what}\t{size}\t{name}\t{:.1}\t{low:.1}\t{:.3}",
            median(times[side].clone()),
            median(ratios)
        );
    }
}

/// `--interleaved [ROUNDS [FILTER]]`: compression and decompression of every payload (or the rows
/// matching FILTER), cqlwire and C side by side.
fn interleaved(rounds: usize, filter: &str) {
    let shift = std::env::var("LZ4_BENCH_SHIFT").map_or(0, |shift| {
        shift
            .parse()
            .unwrap_or_else(|_| panic!("LZ4_BENCH_SHIFT={shift:?}: not a byte count"))
    });
    let _heap_start = black_box(vec![0u8; shift]);
    for kind in KINDS {
        for size in SIZES {
            let input = payload(kind, size);
            let mut body = Vec::new();
            let mut buffer = vec![0u8; lz4::block::compress_bound(size).unwrap()];
            let stream = DriverStream::new();
            interleave(
                (&format!("compress\t{kind}"), size, filter),
                rounds,
                &mut buffer,
                &mut [
                    ("cqlwire", &mut |n, _| {
                        (0..n)
                            .for_each(|_| compress_body_into(black_box(&input), &mut body).unwrap())
                    }),
                    ("C lz4", &mut |n, out| {
                        (0..n).for_each(|_| {
                            c_compress(black_box(&input), out);
                        })
                    }),
                    ("C lz4, driver's call", &mut |n, out| {
                        (0..n).for_each(|_| {
                            stream.compress(black_box(&input), out);
                        })
                    }),
                ],
            );
            let body = c_body(&input);
            let block = body[4..].to_vec();
            let _gap = black_box(vec![0u8; shift]);
            let mut payload = vec![0u8; size];
            interleave(
                (&format!("decompress\t{kind}"), size, filter),
                rounds,
                &mut payload,
                &mut [
                    ("cqlwire", &mut |n, out| {
                        (0..n).for_each(|_| {
                            decompress_body_into(opaque_body(&body), size, out).unwrap()
                        })
                    }),
                    ("C lz4", &mut |n, out| {
                        (0..n).for_each(|_| {
                            body_job(opaque_body(&body), out, c_decompress);
                        })
                    }),
                    ("C lz4, own buffer", &mut |n, out| {
                        (0..n).for_each(|_| {
                            c_decompress(black_box(&block), out);
                        })
                    }),
                    ("lz4_flex raw", &mut |n, out| {
                        (0..n).for_each(|_| {
                            body_job(opaque_body(&body), out, lz4_flex_call).unwrap();
                        })
                    }),
                ],
            );
        }
    }
}

criterion_group!(benches, compress, decompress, frames);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == "--interleaved") {
        let rounds = args.get(at + 1).and_then(|r| r.parse().ok()).unwrap_or(300);
        // cargo adds `--bench` after the arguments it passes on: a flag is not a filter.
        let filter = args.get(at + 2).filter(|arg| !arg.starts_with("--"));
        interleaved(rounds, filter.map_or("", String::as_str));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
