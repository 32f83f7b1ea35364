//! The CQL native protocol, v3 to v5, one module per layer:
//! - [`frame`]: frame headers and frame streams;
//! - [`recompress`]: the frame-by-frame LZ4 recompression of `compress/decompress --frames`;
//! - [`segment`]: v5 segments and the envelopes they carry;
//! - [`message`]: the message bodies, above the value codec.

pub mod frame;
pub mod message;
pub mod recompress;
pub mod segment;
