//! `tls`: see [`cqlwire_fuzz::tls::tls`].
#![no_main]

#[global_allocator]
static ALLOCATOR: cqlwire_fuzz::checks::CappedAllocator = cqlwire_fuzz::checks::CappedAllocator;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cqlwire_fuzz::tls::tls(data);
});
