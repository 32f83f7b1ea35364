//! The CQL native protocol, v3 to v5: frame headers and frame streams ([`frame`]), the
//! frame-by-frame LZ4 recompression of `compress/decompress --frames` ([`recompress`]), and the
//! message bodies above the value codec ([`message`]).

pub mod frame;
pub mod message;
pub mod recompress;
