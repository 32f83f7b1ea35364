//! The CQL native protocol, v3 to v5: frame headers and frame streams ([`frame`]), v3/v4 body
//! compression, LZ4 or Snappy ([`compression`]), the
//! frame-by-frame LZ4 recompression of `compress/decompress --frames` ([`recompress`]), v5
//! segments with the envelopes they carry ([`segment`]), and the decoder of one direction of a
//! connection that puts them together ([`stream`]).

pub mod compression;
pub mod frame;
pub mod recompress;
pub mod segment;
pub mod stream;
