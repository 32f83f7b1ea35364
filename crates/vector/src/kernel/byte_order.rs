//! The loops that write elements as big-endian records into one destination or several (e.g. one
//! per row), each chosen once per call: the portable loop, its AVX2 build, the non-temporal AVX2
//! byte reversal, and the SSSE3 records of the vint-prefixed types.

#[cfg(target_arch = "x86_64")]
use super::x86::{convert_all_avx2, reverse_all_non_temporal_avx2, write_records_ssse3, RecordsOf};

/// Outputs of at least this many bytes are written with non-temporal stores where the conversion
/// is a plain byte swap ([`StoreMode::NonTemporal`]): half the 32 MiB last-level cache of this project's
/// machine, so that the output and the input it is read from do not stay cached for whoever reads
/// them next anyway, and storing through the cache only adds a read of every destination line
/// (measured on 10,000 × 768 floats into separate rows: 12–14 % less time, 1 and 2 threads).
pub(super) const NON_TEMPORAL_BYTES: usize = 16 << 20;

/// How a conversion writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StoreMode {
    /// Through the cache, for output read again soon (e.g. a batch about to be written out).
    Cached,
    /// Byte swaps of same-width values bypass the cache with non-temporal stores (see
    /// [`NON_TEMPORAL_BYTES`]).
    NonTemporal,
}

impl StoreMode {
    /// The stores for an output of `bytes` bytes in all.
    pub(super) fn for_output(bytes: usize) -> StoreMode {
        if bytes >= NON_TEMPORAL_BYTES {
            StoreMode::NonTemporal
        } else {
            StoreMode::Cached
        }
    }
}

/// Writes `N`-byte vint-prefixed records of `src` into `dst` (exactly `N` bytes per value): the
/// length `N - 1`, then the value's low `N - 1` bytes big-endian, as `encode` does one at a time.
/// Records of 3, 5 and 9 bytes straddle vector lanes, which the compiler does not vectorise: with
/// SSSE3 (checked at run time), and when [`record_layout`] fits, 16 values become `16 × N` bytes in
/// `N` byte shuffles. The rest, and 2-byte records (`tinyint`, which [`convert_all`]'s AVX2 loop already
/// builds a lane at a time), go through [`convert_all`].
///
/// The shuffles fill the bytes above a value's own with zeros, so `zero_fill` says whether that is
/// exact for every value here: true for unsigned values, for values already checked to be
/// non-negative, and whenever `N - 1` is at most the value's size (no byte above it is written).
#[inline(always)]
pub(super) fn write_records<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [u8],
    zero_fill: bool,
    encode: impl Fn(S) -> [u8; N] + Copy,
) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let exact = zero_fill || N - 1 <= std::mem::size_of::<S>();
        let straddles = !N.is_power_of_two();
        if straddles
            && exact
            && RecordsOf::<S, N>::RECORDS.fits
            && std::arch::is_x86_feature_detected!("ssse3")
        {
            // SAFETY: the processor supports SSSE3, checked just above.
            done = unsafe { write_records_ssse3::<S, N>(src, dst) };
        }
    }
    convert_all(
        src.get(done..).unwrap_or_default(),
        &mut [dst.get_mut(done * N..).unwrap_or_default()],
        encode,
    );
}

/// Each destination of `dst` with the run of `src` whose `N`-byte records fill it, and the index
/// of the run's first element (a destination past the end of `src` gets a shorter run).
#[inline(always)]
pub(super) fn destination_runs<'s, 'd, 'v: 'd, S, const N: usize>(
    src: &'s [S],
    dst: &'d mut [&'v mut [u8]],
) -> impl Iterator<Item = (usize, &'s [S], &'d mut [u8])> + use<'s, 'd, 'v, S, N> {
    let (mut rest, mut first) = (src, 0);
    dst.iter_mut().map(move |dst| {
        let (run, after) = rest.split_at((dst.len() / N).min(rest.len()));
        let start = first;
        (rest, first) = (after, first + run.len());
        (start, run, &mut **dst)
    })
}

/// Converts every element of `src` with `convert` into consecutive `N`-byte records of the
/// destinations `dst` (see [`destination_runs`]), with the AVX2 build of the loop when the processor has it,
/// chosen once for all destinations.
#[inline(always)]
pub(super) fn convert_all<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2, checked just above.
            unsafe { convert_all_avx2(src, dst, convert) };
            return;
        }
    }
    convert_all_portable(src, dst, convert);
}

/// [`convert_all`] for values that `convert` writes as their own `N` bytes in reverse order (a float, int,
/// double or bigint made big-endian): with [`StoreMode::NonTemporal`] and AVX2, the bytes bypass the
/// cache ([`reverse_all_non_temporal_avx2`]).
#[inline(always)]
pub(super) fn reverse_all<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    stores: StoreMode,
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if stores == StoreMode::NonTemporal && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2, checked just above.
            unsafe { reverse_all_non_temporal_avx2(src, dst, convert) };
            return;
        }
    }
    convert_all(src, dst, convert)
}

/// [`convert_loop`] over each destination of `dst` and its run of `src` (see [`destination_runs`]).
#[inline(always)]
pub(super) fn convert_all_portable<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    for (_, src, dst) in destination_runs::<S, N>(src, dst) {
        convert_loop(src, dst, convert);
    }
}

/// The conversion loop: each element to its `N` bytes, written into a preallocated slice so the
/// compiler can vectorise it (a byte shuffle per vector register).
#[inline(always)]
pub(super) fn convert_loop<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [u8],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    for (out, &x) in dst.chunks_exact_mut(N).zip(src) {
        out.copy_from_slice(&convert(x));
    }
}
