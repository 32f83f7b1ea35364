//! `bench_readers`: see [`cqlwire_fuzz::checks::bench_readers`].
#![no_main]

#[global_allocator]
static ALLOCATOR: cqlwire_fuzz::checks::CappedAllocator = cqlwire_fuzz::checks::CappedAllocator;

libfuzzer_sys::fuzz_target!(|data: &[u8]| cqlwire_fuzz::checks::bench_readers(data));
