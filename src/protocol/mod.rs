//! The CQL native protocol, v3 to v5: frame headers and frame streams ([`frame`]), and the
//! frame-by-frame LZ4 recompression of `compress/decompress --frames` ([`recompress`]).

pub mod frame;
pub mod recompress;
