//! Every integration test in one crate (one binary to link instead of one per file): each module is
//! one area — the CLI commands run as built binaries on files in fixtures/, the library against the
//! golden fixtures, and property tests. `tests/fuzz_regressions.rs` stays its own binary because
//! it installs the fuzz targets' allocation-capping global allocator.

mod bench_cli;
mod common;
mod compress_cli;
mod convert_cli;
mod convert_contract;
mod convert_damaged_text;
mod convert_empty;
mod convert_hdf5;
mod convert_memory;
mod convert_spool;
mod decode_cli;
mod doc_examples;
mod encode_json;
mod frames_memory;
mod generate_cli;
mod hostile;
mod inspect_capture;
mod inspect_cli;
mod inspect_secrets;
mod inspect_shapes;
mod inspect_tls;
mod limits;
mod load_cli;
mod lz4_reference;
mod search_cli;
mod unload_cli;
mod values_cli;
