//! The CQL native protocol, v3 to v5, one module per layer:
//! - [`frame`]: frame headers and frame streams;
//! - [`compression`]: v3/v4 body compression, LZ4 or Snappy;
//! - [`recompress`]: the frame-by-frame LZ4 recompression of `compress/decompress --frames`;
//! - [`segment`]: v5 segments and the envelopes they carry;
//! - [`stream`]: the decoder of one direction of a connection that puts them together;
//! - [`message`]: the message bodies, above the value codec.

pub mod compression;
pub mod frame;
pub mod message;
pub mod recompress;
pub mod segment;
pub mod stream;
