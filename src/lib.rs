//! cqlwire: the bytes of the Cassandra/ScyllaDB native protocol (CQL).
//!
//! The library holds everything the `cqlwire` binary does: the CQL type grammar ([`types`]), the value
//! codec and its text forms ([`value`], [`vint`]), the embedding readers ([`input`]), the vector
//! conversion kernel ([`vector`]) and its writers ([`output`]), LZ4 bodies ([`lz4`]), the native
//! protocol's frames ([`protocol`]), hex text ([`hex`]), the file handling shared by every command
//! ([`files`]) and the bounds-checked reader shared by the decoders ([`cursor`]).

pub mod cursor;
pub mod files;
pub mod hex;
pub mod input;
pub mod lz4;
pub mod output;
pub mod protocol;
pub mod types;
pub mod value;
pub mod vector;
pub mod vint;
