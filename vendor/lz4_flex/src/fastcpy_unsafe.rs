//! # FastCpy
//!
//! The Rust Compiler calls `memcpy` for slices of unknown length.
//! This crate provides a faster implementation of `memcpy` for slices up to 32bytes (64bytes with `avx`).
//! If you know most of you copy operations are not too big you can use `fastcpy` to speed up your program.
//!
//! `fastcpy` is designed to contain not too much assembly, so the overhead is low.
//!
//! As fall back the standard `memcpy` is called
//!
//! ## Double Copy Trick
//! `fastcpy` employs a double copy trick to copy slices of length 4-32bytes (64bytes with `avx`).
//! E.g. Slice of length 6 can be copied with two uncoditional copy operations.
//!
//! /// [1, 2, 3, 4, 5, 6]
//! /// [1, 2, 3, 4]
//! ///       [3, 4, 5, 6]
//!

#[inline]
pub fn slice_copy(src: *const u8, dst: *mut u8, num_bytes: usize) {
    if num_bytes < 4 {
        short_copy(src, dst, num_bytes);
        return;
    }

    if num_bytes < 8 {
        double_copy_trick::<4>(src, dst, num_bytes);
        return;
    }

    if num_bytes <= 16 {
        double_copy_trick::<8>(src, dst, num_bytes);
        return;
    }

    if num_bytes <= 32 {
        double_copy_trick::<16>(src, dst, num_bytes);
        return;
    }

    if num_bytes <= 64 {
        double_copy_trick::<32>(src, dst, num_bytes);
        return;
    }

    // /// The code will use the vmovdqu instruction to copy 32 bytes at a time.
    //#[cfg(target_feature = "avx")]
    //{
    //if num_bytes <= 64 {
    //double_copy_trick::<32>(src, dst, num_bytes);
    //return;
    //}
    //}

    // For larger sizes we use the default, which calls memcpy
    // memcpy does some virtual memory tricks to copy large chunks of memory.
    //
    // The theory should be that the checks above don't cost much relative to the copy call for
    // larger copies.
    // The bounds checks in `copy_from_slice` are elided.

    //unsafe { core::ptr::copy_nonoverlapping(src, dst, num_bytes) }
    //
    // Up to 2 KiB, memcpy: its straight-line vector moves beat the loop below (a 1 KiB literal run,
    // e.g. a small incompressible body, took 20 ns in the loop and 15 ns in glibc's memcpy with
    // AVX-512), and glibc only turns to `rep movsb` above 2 KiB (its smallest default threshold).
    if num_bytes <= 2048 {
        // SAFETY: the caller guarantees that `num_bytes` bytes can be read from `src` and written
        // to `dst`, and that the ranges do not overlap.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, num_bytes) };
        return;
    }

    // Above 2 KiB glibc's memcpy turns to `rep movsb`. On AMD CPUs (Zen 3 to Zen 5 measured) that
    // is slow when source and destination are misaligned relative to each other, as a literal run
    // 4 bytes into a CQL body usually is (twice the time of the loops below for an 8 KiB run);
    // glibc itself avoids it on AMD from 2.39. Elsewhere (Intel measured: the loops ran at 0.77 x
    // the C library for an incompressible 8 KiB block) memcpy is what the C library's decoder
    // calls, so it is used there. The CPU's vendor, read once with CPUID, decides.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        if !rep_movsb_slow_when_misaligned() {
            // SAFETY: the caller guarantees that `num_bytes` bytes can be read from `src` and
            // written to `dst`, and that the ranges do not overlap.
            unsafe { core::ptr::copy_nonoverlapping(src, dst, num_bytes) };
            return;
        }
        // From 2 KiB to 24 KiB, with AVX-512 (detected at run time, like AVX2 below): 128-byte
        // steps of two 64-byte moves, a whole cache line per store. On AMD Zen 5 an incompressible
        // 8 KiB block decodes in 0.91 x the C library's time with the AVX2 loop and 1.09 x with
        // this one (median over 5 buffer placements). From 32 KiB, source and destination no
        // longer fit in L1 together and the two loops are alike.
        if num_bytes <= 24 << 10 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present; `num_bytes` > 2048 and the caller guarantees that
            // `num_bytes` bytes can be read from `src` and written to `dst`.
            unsafe { copy_long_avx512(src, dst, num_bytes) };
            return;
        }
        // Longer copies move 64 bytes a step; with AVX2 (detected at run time) a step is two
        // 32-byte moves instead of four 16-byte ones: twice the bytes per store.
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present; `num_bytes` > 64 and the caller guarantees that
            // `num_bytes` bytes can be read from `src` and written to `dst`.
            unsafe { copy_long_avx2(src, dst, num_bytes) };
            return;
        }
    }
    wild_copy_from_src::<64>(src, dst, num_bytes)
}

/// Whether the CPU is one whose `rep movsb` (glibc's memcpy above about 2 KiB) is slow for a
/// source and destination misaligned relative to each other: AMD's (and Hygon's, the same cores),
/// by the vendor string of CPUID leaf 0. Read once and cached.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn rep_movsb_slow_when_misaligned() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering};
    const UNKNOWN: u8 = 0;
    const SLOW: u8 = 1;
    const FAST: u8 = 2;
    static VENDOR: AtomicU8 = AtomicU8::new(UNKNOWN);
    match VENDOR.load(Ordering::Relaxed) {
        SLOW => true,
        FAST => false,
        _ => {
            #[allow(unused_unsafe)]
            // SAFETY: CPUID is available on every x86_64 CPU; leaf 0 only reports the vendor.
            let leaf = unsafe { core::arch::x86_64::__cpuid(0) };
            let mut vendor = [0u8; 12];
            vendor[..4].copy_from_slice(&leaf.ebx.to_le_bytes());
            vendor[4..8].copy_from_slice(&leaf.edx.to_le_bytes());
            vendor[8..].copy_from_slice(&leaf.ecx.to_le_bytes());
            let slow = &vendor == b"AuthenticAMD" || &vendor == b"HygonGenuine";
            VENDOR.store(if slow { SLOW } else { FAST }, Ordering::Relaxed);
            slow
        }
    }
}

/// Copies `num_bytes` (at least 128) non-overlapping bytes in 128-byte steps of two 64-byte
/// AVX-512 moves; the last step ends exactly at the end (overlapping the one before), so nothing
/// outside `src[..num_bytes]` is read nor outside `dst[..num_bytes]` written.
///
/// # Safety
/// The CPU must support AVX-512F, `num_bytes >= 128`, and the ranges must be valid and not
/// overlap.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f")]
unsafe fn copy_long_avx512(src: *const u8, dst: *mut u8, num_bytes: usize) {
    use core::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_storeu_si512};
    debug_assert!(num_bytes >= 128);
    let mut at = 0;
    loop {
        // The last step starts at `num_bytes - 128`, overlapping the one before.
        let step = at.min(num_bytes - 128);
        let a = _mm512_loadu_si512(src.add(step) as *const __m512i);
        let b = _mm512_loadu_si512(src.add(step + 64) as *const __m512i);
        _mm512_storeu_si512(dst.add(step) as *mut __m512i, a);
        _mm512_storeu_si512(dst.add(step + 64) as *mut __m512i, b);
        at += 128;
        if at >= num_bytes {
            break;
        }
    }
}

/// Copies `num_bytes` (at least 64) non-overlapping bytes in 64-byte steps of two 32-byte AVX2
/// moves; the last step ends exactly at the end (overlapping the one before), so nothing outside
/// `src[..num_bytes]` is read nor outside `dst[..num_bytes]` written.
///
/// # Safety
/// The CPU must support AVX2, `num_bytes >= 64`, and the ranges must be valid and not overlap.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn copy_long_avx2(src: *const u8, dst: *mut u8, num_bytes: usize) {
    use core::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
    debug_assert!(num_bytes >= 64);
    let mut at = 0;
    loop {
        // The last step starts at `num_bytes - 64`, overlapping the one before.
        let step = at.min(num_bytes - 64);
        let a = _mm256_loadu_si256(src.add(step) as *const __m256i);
        let b = _mm256_loadu_si256(src.add(step + 32) as *const __m256i);
        _mm256_storeu_si256(dst.add(step) as *mut __m256i, a);
        _mm256_storeu_si256(dst.add(step + 32) as *mut __m256i, b);
        at += 64;
        if at >= num_bytes {
            break;
        }
    }
}

// Inline never because otherwise we get a call to memcpy -.-
#[inline]
fn wild_copy_from_src<const SIZE: usize>(
    mut source: *const u8,
    mut dst: *mut u8,
    num_bytes: usize,
) {
    // Note: if the compiler auto-vectorizes this it'll hurt performance!
    // It's not the case for 16 bytes stepsize, but for 8 bytes.
    let l_last = unsafe { source.add(num_bytes - SIZE) };
    let r_last = unsafe { dst.add(num_bytes - SIZE) };
    let num_bytes = (num_bytes / SIZE) * SIZE;

    unsafe {
        let dst_ptr_end = dst.add(num_bytes);
        loop {
            core::ptr::copy_nonoverlapping(source, dst, SIZE);
            source = source.add(SIZE);
            dst = dst.add(SIZE);
            if dst >= dst_ptr_end {
                break;
            }
        }
    }

    unsafe {
        core::ptr::copy_nonoverlapping(l_last, r_last, SIZE);
    }
}

#[inline]
fn short_copy(src: *const u8, dst: *mut u8, len: usize) {
    unsafe {
        *dst = *src;
    }
    if len >= 2 {
        double_copy_trick::<2>(src, dst, len);
    }
}

#[inline(always)]
/// [1, 2, 3, 4, 5, 6]
/// [1, 2, 3, 4]
///       [3, 4, 5, 6]
fn double_copy_trick<const SIZE: usize>(src: *const u8, dst: *mut u8, len: usize) {
    let l_end = unsafe { src.add(len - SIZE) };
    let r_end = unsafe { dst.add(len - SIZE) };

    unsafe {
        core::ptr::copy_nonoverlapping(src, dst, SIZE);
        core::ptr::copy_nonoverlapping(l_end, r_end, SIZE);
    }
}

#[cfg(test)]
mod tests {
    use super::slice_copy;
    use alloc::vec::Vec;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn test_fast_short_slice_copy(left: Vec<u8>) {
            if left.is_empty() {
                return Ok(());
            }
            let mut right = vec![0u8; left.len()];
            slice_copy(left.as_ptr(), right.as_mut_ptr(), left.len());
            prop_assert_eq!(&left, &right);
        }
    }

    #[test]
    fn test_fast_short_slice_copy_edge_cases() {
        for len in 1..(512 * 2) {
            let left = (0..len).map(|i| i as u8).collect::<Vec<_>>();
            let mut right = vec![0u8; len];
            slice_copy(left.as_ptr(), right.as_mut_ptr(), left.len());
            assert_eq!(left, right);
        }
    }

    #[test]
    fn long_copies_write_exactly_their_range_at_every_alignment() {
        // Lengths around the thresholds and the 64-byte steps, at every destination and source
        // offset within a cache line: the bytes copied, and nothing around them touched.
        let lengths = (60..200)
            .chain(2000..2200)
            .chain([4095, 4096, 4097, 8192, 65536]);
        for len in lengths {
            let left = (0..len + 64).map(|i| (i * 7 + 3) as u8).collect::<Vec<_>>();
            for offset in 0..64 {
                let src_offset = (offset * 5) % 64;
                let mut right = vec![0xEEu8; len + 128];
                slice_copy(
                    left[src_offset..].as_ptr(),
                    right[offset..].as_mut_ptr(),
                    len,
                );
                assert_eq!(
                    &right[offset..offset + len],
                    &left[src_offset..src_offset + len]
                );
                assert!(right[..offset].iter().all(|&b| b == 0xEE), "{len} {offset}");
                assert!(
                    right[offset + len..].iter().all(|&b| b == 0xEE),
                    "{len} {offset}"
                );
            }
        }
    }

    #[test]
    fn test_fail2() {
        let left = vec![
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27, 28, 29, 30, 31, 32,
        ];
        let mut right = vec![0u8; left.len()];
        slice_copy(left.as_ptr(), right.as_mut_ptr(), left.len());
        assert_eq!(left, right);
    }

    #[test]
    fn test_fail() {
        let left = vec![
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let mut right = vec![0u8; left.len()];
        slice_copy(left.as_ptr(), right.as_mut_ptr(), left.len());
        assert_eq!(left, right);
    }
}
