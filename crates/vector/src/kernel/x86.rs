//! The x86-64 builds of the byte-order loops: the portable loop compiled with AVX2, the byte
//! reversal with non-temporal AVX2 stores, and the SSSE3 shuffles of 3-, 5- and 9-byte records.
//!
//! Each is `#[inline]`, so that its instances are compiled in the codegen unit of their caller (as
//! when they shared its module): there LLVM specialises them for their call sites, e.g. for a
//! single destination, and the generated loops are those of a single-module kernel.

use super::byte_order::{convert_all_portable, convert_loop, destination_runs};

/// How the SSSE3 record kernel builds 16 records of `n` bytes from 16 values of `size` bytes
/// (little-endian): output chunk `c` (bytes `16 c .. 16 c + 16` of the `16 n`) is a byte shuffle
/// of the 16 input bytes at `loads[c]`, ORed with the length bytes `lengths[c]`.
pub(super) struct RecordLayout {
    /// Whether every chunk's bytes lie within one 16-byte load inside the 16 values (if not, the
    /// kernel is not used for this pair of sizes).
    pub(super) fits: bool,
    /// Where each chunk's 16 input bytes start, at most `16 size - 16`.
    pub(super) loads: [usize; 9],
    /// Each chunk's shuffle: the input byte of each output byte, or -128 for a zero.
    pub(super) shuffles: [[i8; 16]; 9],
    /// Each chunk's length bytes (`n - 1`), zero elsewhere.
    pub(super) lengths: [[i8; 16]; 9],
}

/// The [`RecordLayout`] of `n`-byte records (2 to 9) from `size`-byte values (1 to 8).
pub(super) const fn record_layout(size: usize, n: usize) -> RecordLayout {
    let mut layout = RecordLayout {
        fits: n >= 2 && n <= 9 && size >= 1 && size <= 8,
        loads: [0; 9],
        shuffles: [[-128; 16]; 9],
        lengths: [[0; 16]; 9],
    };
    if !layout.fits {
        return layout;
    }
    let mut chunk = 0;
    while chunk < n {
        // The first and last input byte the chunk needs.
        let (mut first, mut last) = (usize::MAX, 0);
        let mut j = 0;
        while j < 16 {
            let (record, byte) = ((16 * chunk + j) / n, (16 * chunk + j) % n);
            // Byte `byte` of the record is value byte `n - 1 - byte` (little-endian) after the length.
            if byte > 0 && n - 1 - byte < size {
                let at = size * record + n - 1 - byte;
                if at < first {
                    first = at;
                }
                if at > last {
                    last = at;
                }
            }
            j += 1;
        }
        let load = if first == usize::MAX || first + 16 > 16 * size {
            16 * size - 16
        } else {
            first
        };
        if first != usize::MAX && (first < load || last >= load + 16) {
            layout.fits = false;
            return layout;
        }
        layout.loads[chunk] = load;
        let mut j = 0;
        while j < 16 {
            let (record, byte) = ((16 * chunk + j) / n, (16 * chunk + j) % n);
            if byte == 0 {
                layout.lengths[chunk][j] = (n - 1) as i8;
            } else if n - 1 - byte < size {
                layout.shuffles[chunk][j] = (size * record + n - 1 - byte - load) as i8;
            }
            j += 1;
        }
        chunk += 1;
    }
    layout
}

/// The [`RecordLayout`] of `N`-byte records from values of type `S`, computed at compile time.
pub(super) struct RecordsOf<S, const N: usize>(std::marker::PhantomData<S>);

impl<S, const N: usize> RecordsOf<S, N> {
    pub(super) const RECORDS: RecordLayout = record_layout(std::mem::size_of::<S>(), N);
}

/// The SSSE3 part of [`write_records`]: whole groups of 16 values; returns how many values it wrote. Each
/// group reads only its own `16 × size` input bytes and writes only its own `16 × N` output bytes.
/// Only called when the layout fits.
#[inline]
#[target_feature(enable = "ssse3")]
pub(super) fn write_records_ssse3<S: Copy, const N: usize>(src: &[S], dst: &mut [u8]) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_or_si128, _mm_shuffle_epi8, _mm_storeu_si128,
    };
    let layout = &RecordsOf::<S, N>::RECORDS;
    let groups = src.len().min(dst.len() / N) / 16;
    for (values, out) in src
        .chunks_exact(16)
        .zip(dst.chunks_exact_mut(16 * N))
        .take(groups)
    {
        for chunk in 0..N {
            // SAFETY: `values` is 16 × size bytes and each load reads 16 of them from
            // `loads[chunk]` ≤ 16 × size - 16 (record_layout); `out` is 16 × N bytes and each store
            // writes bytes 16 × chunk .. 16 × chunk + 16; the masks are 16-byte arrays (unaligned
            // loads).
            unsafe {
                let input = _mm_loadu_si128(
                    values
                        .as_ptr()
                        .cast::<u8>()
                        .add(layout.loads[chunk])
                        .cast::<__m128i>(),
                );
                let shuffle = _mm_loadu_si128(layout.shuffles[chunk].as_ptr().cast::<__m128i>());
                let lengths = _mm_loadu_si128(layout.lengths[chunk].as_ptr().cast::<__m128i>());
                let records = _mm_or_si128(_mm_shuffle_epi8(input, shuffle), lengths);
                _mm_storeu_si128(out.as_mut_ptr().add(16 * chunk).cast::<__m128i>(), records);
            }
        }
    }
    groups * 16
}

/// [`convert_all_portable`] for [`reverse_all`] with non-temporal stores: each destination's 64-byte-aligned
/// middle is written with `vpshufb` and `vmovntdq` (whole cache lines, so no line is read first),
/// its unaligned ends by [`convert_loop`]; a destination whose aligned middle does not start on a
/// value boundary goes through [`convert_loop`] whole. Ends with a store fence, so the bytes are
/// in memory before anything published after this call.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn reverse_all_non_temporal_avx2<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm256_shuffle_epi8, _mm256_stream_si256, _mm_sfence,
    };
    const { assert!(std::mem::size_of::<S>() == N && (N == 4 || N == 8)) };
    // Byte i of each 16-byte lane comes from byte (i / N) × N + N - 1 - i % N.
    let order: [u8; 32] = std::array::from_fn(|i| {
        let i = i % 16;
        ((i / N) * N + N - 1 - i % N) as u8
    });
    // SAFETY: `order` is 32 bytes (an unaligned load).
    let order = unsafe { _mm256_loadu_si256(order.as_ptr().cast::<__m256i>()) };
    for (_, src, dst) in destination_runs::<S, N>(src, dst) {
        let dst = &mut dst[..src.len() * N];
        let head = dst.as_ptr().align_offset(64).min(dst.len());
        if head % N != 0 {
            convert_loop(src, dst, convert);
            continue;
        }
        let middle = (dst.len() - head) / 64 * 64;
        let (head_dst, rest) = dst.split_at_mut(head);
        let (middle_dst, tail_dst) = rest.split_at_mut(middle);
        let (head_src, rest) = src.split_at(head / N);
        let (middle_src, tail_src) = rest.split_at(middle / N);
        convert_loop(head_src, head_dst, convert);
        let (from, to) = (middle_src.as_ptr().cast::<u8>(), middle_dst.as_mut_ptr());
        for offset in (0..middle).step_by(64) {
            // SAFETY: `middle_src` and `middle_dst` are both `middle` bytes (`middle / N` values
            // of N bytes), so bytes `offset .. offset + 64` are inside each; `to + offset` is
            // 64-byte aligned (`head` aligned `dst`), as the streaming store needs 32.
            unsafe {
                let low = _mm256_loadu_si256(from.add(offset).cast::<__m256i>());
                let high = _mm256_loadu_si256(from.add(offset + 32).cast::<__m256i>());
                let out = to.add(offset).cast::<__m256i>();
                _mm256_stream_si256(out, _mm256_shuffle_epi8(low, order));
                _mm256_stream_si256(out.add(1), _mm256_shuffle_epi8(high, order));
            }
        }
        convert_loop(tail_src, tail_dst, convert);
    }
    // Unsafe in Rust 1.89 (the workspace's rust-version), safe in later releases.
    #[allow(unused_unsafe)]
    // SAFETY: a store fence has no precondition; SSE is part of every x86-64 CPU.
    unsafe {
        _mm_sfence()
    };
}

/// [`convert_all_portable`] compiled with AVX2, so byte swaps become `vpshufb` over 32-byte registers.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn convert_all_avx2<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    convert_all_portable(src, dst, convert)
}
