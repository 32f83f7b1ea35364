//! Fuzz targets for cqlwire. The properties live in [`checks`], which `tests/fuzz_regressions.rs`
//! also includes to replay the inputs the fuzzers found.

pub mod capture;
pub mod checks;
