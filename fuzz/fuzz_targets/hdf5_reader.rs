//! `hdf5_reader`: see [`cqlwire_fuzz::checks::hdf5_reader`].
#![no_main]

#[global_allocator]
static ALLOCATOR: cqlwire_fuzz::checks::CappedAllocator = cqlwire_fuzz::checks::CappedAllocator;

libfuzzer_sys::fuzz_target!(|data: &[u8]| cqlwire_fuzz::checks::hdf5_reader(data));
