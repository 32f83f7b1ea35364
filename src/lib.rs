//! cqlwire: the bytes of the Cassandra/ScyllaDB native protocol (CQL).
//!
//! The library holds everything the `cqlwire` binary does: the CQL type grammar ([`types`]), the value
//! codec ([`value`], [`vint`]), hex text ([`hex`]) and file handling shared by every command ([`files`]).

pub mod files;
pub mod frame;
pub mod hex;
pub mod input;
pub mod lz4;
pub mod output;
pub mod types;
pub mod value;
pub mod vector;
pub mod vint;

/// cqlsh-style CQL literals of values (lives with the codec in `src/value/`).
#[path = "value/cql.rs"]
pub mod cql;

/// Lossless JSON of values (lives with the codec in `src/value/`).
#[path = "value/json.rs"]
pub mod json;
