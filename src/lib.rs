//! cqlwire: the bytes of the Cassandra/ScyllaDB native protocol (CQL).
//!
//! The library holds everything the `cqlwire` binary does: the CQL type grammar ([`types`]), the value
//! codec and its text forms ([`value`], [`vint`]), the embedding readers ([`input`]), the vector
//! conversion kernel ([`vector`]) and its writers ([`output`]), LZ4 bodies ([`lz4`]) and frames
//! ([`frame`]), hex text ([`hex`]), text shown to a person ([`display`]), the file handling shared by
//! every command ([`files`]) and the bounds-checked reader shared by the decoders ([`cursor`]).

pub mod cursor;
pub mod display;
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
