//! `columnar_readers`: see [`cqlwire_fuzz::checks::columnar_readers`].
#![no_main]

#[global_allocator]
static ALLOCATOR: cqlwire_fuzz::checks::CappedAllocator = cqlwire_fuzz::checks::CappedAllocator;

libfuzzer_sys::fuzz_target!(|data: &[u8]| cqlwire_fuzz::checks::columnar_readers(data));
