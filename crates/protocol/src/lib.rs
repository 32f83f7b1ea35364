//! The CQL native protocol, v3 to v5, one module per layer (captured conversations are
//! `cqlwire-inspect`'s, above this crate):
//! - [`lz4`]: CQL LZ4 bodies (the 4-byte big-endian length, then an LZ4 block);
//! - [`frame`]: frame headers and frame streams;
//! - [`compression`]: v3/v4 body compression, LZ4 or Snappy;
//! - [`recompress`]: the frame-by-frame LZ4 recompression of `compress/decompress --frames`;
//! - [`segment`]: v5 segments and the envelopes they carry;
//! - [`stream`]: the decoder of one direction of a connection that puts them together;
//! - [`message`]: the message bodies, above the value codec.

#![warn(missing_docs)]
pub mod compression;
pub mod frame;
pub mod lz4;
pub mod message;
pub mod recompress;
pub mod segment;
pub mod stream;

use cqlwire_codec::{cursor, hex, types, value};
