//! cqlwire: the bytes of the Cassandra/ScyllaDB native protocol (CQL).
//!
//! The library holds everything the `cqlwire` binary does, one module per part:
//! - [`types`]: the CQL type grammar (CQL syntax and Java class names);
//! - [`value`], [`vint`]: the value codec and its text forms (CQL literals, JSON, explain);
//! - [`cursor`]: the bounds-checked reader shared by the decoders;
//! - [`input`]: the embedding readers (npy, Parquet, Arrow, ANN formats);
//! - [`vector`]: the vector conversion kernel;
//! - [`output`]: the writers of converted values;
//! - [`convert`]: the pipeline joining readers, kernel and writers;
//! - [`lz4`]: CQL LZ4 bodies;
//! - [`protocol`]: the native protocol's frames;
//! - [`hex`]: hex text;
//! - [`display`]: text shown to a person (control characters made visible, long lines elided);
//! - [`files`]: the file handling shared by every command;
//! - [`capture`]: packet captures read down to reassembled TCP streams;
//! - [`inspect`]: captured CQL conversations decoded message by message.

#![warn(missing_docs)]
pub mod capture;
pub mod convert;
pub mod cursor;
pub mod display;
pub mod files;
pub mod hex;
pub mod input;
pub mod inspect;
pub mod lz4;
pub mod output;
pub mod protocol;
pub mod types;
pub mod value;
pub mod vector;
pub mod vint;
