//! The CQL native protocol, v3 to v5: frame headers and frame streams ([`frame`]), the
//! frame-by-frame LZ4 recompression of `compress/decompress --frames` ([`recompress`]), and v5
//! segments with the envelopes they carry ([`segment`]).

pub mod frame;
pub mod recompress;
pub mod segment;
