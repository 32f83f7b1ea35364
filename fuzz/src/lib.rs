//! Fuzz targets for cqlwire. The properties live in [`checks`], which `tests/fuzz_regressions.rs`
//! also includes to replay the inputs the fuzzers found; the TLS target's in [`tls`], which
//! `crates/tls/tests/fuzz_regressions.rs` includes.

pub mod capture;
pub mod checks;
pub mod tls;
