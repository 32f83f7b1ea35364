//! `tls`: see [`cqlwire_fuzz::tls::tls`], under [`TLS_BOUND`].
#![no_main]

use cqlwire_fuzz::checks::{bounded, CappedAllocator, MemoryBound};

#[global_allocator]
static ALLOCATOR: CappedAllocator = CappedAllocator;

/// What the check may hold: a connection keeps at most one record (16 KiB and its overhead) per
/// direction while it waits for its end, and the check keeps the plaintext (no more than the
/// input) of its two runs and the merged chunks.
const TLS_BOUND: MemoryBound = MemoryBound {
    per_input_byte: 16,
    constant: 256 << 10,
    decompressed_per_input_byte: 0,
    retained_per_connection: None,
};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bounded(data, TLS_BOUND, |data| {
        cqlwire_fuzz::tls::tls(data);
    });
});
