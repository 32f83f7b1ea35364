//! The wire protocol's tests in one binary: frame streams and their compression (protocol_stream)
//! and v5 segments (segments), against what the Python driver wrote and read.

mod protocol_stream;
mod segments;
