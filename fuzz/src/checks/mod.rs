//! The properties the fuzz targets check, one function per target, shared by the libFuzzer targets
//! (`fuzz/fuzz_targets/`) and by the test that replays the inputs they found
//! (`tests/fuzz_regressions.rs`, which includes this file as a module). The checks live in one
//! module per family of targets (the value codec, the protocol, the vector readers, the inspector,
//! the vector conversion), beside the allocator they all run under ([`memory`]); this module
//! re-exports them.
//!
//! Each check takes arbitrary bytes, calls the library the way the commands do, and panics when an
//! invariant fails; the library itself must never panic. [`CappedAllocator`] turns any single
//! allocation above [`ALLOCATION_LIMIT`](memory::ALLOCATION_LIMIT) into an abort, so "garbage that
//! claims a huge size" is a finding too, and so is a live heap that outgrows a target's
//! [`MemoryBound`] ([`bounded`]).

mod inputs;
mod inspect;
mod memory;
mod protocol;
mod values;
mod vectors;

pub use inputs::{
    bench_readers, columnar_readers, hdf5_reader, neighbors, npy_header, vecs_readers,
};
pub use inspect::{capture, inspect, query_redaction};
pub use memory::{bounded, unmeasured, CappedAllocator, MemoryBound};
pub use protocol::{frame_stream, lz4_body, message_body, protocol_stream};
pub use values::{literal_parser, type_parser, value_decoder};
pub use vectors::{arrow_values, vector_kernel};

/// A target's check: panics when an invariant fails on the input.
pub type Check = fn(&[u8]);

/// The fuzz targets by name (also the folder names under `fixtures/fuzz-regressions/`).
pub const TARGETS: [(&str, Check); 18] = [
    ("type_parser", type_parser),
    ("value_decoder", value_decoder),
    ("literal_parser", literal_parser),
    ("lz4_body", lz4_body),
    ("frame_stream", frame_stream),
    ("npy_header", npy_header),
    ("vecs_readers", vecs_readers),
    ("neighbors", neighbors),
    ("hdf5_reader", hdf5_reader),
    ("message_body", message_body),
    ("protocol_stream", protocol_stream),
    ("inspect", inspect),
    ("capture", capture),
    ("vector_kernel", vector_kernel),
    ("query_redaction", query_redaction),
    ("arrow_values", arrow_values),
    ("columnar_readers", columnar_readers),
    ("bench_readers", bench_readers),
];
