//! Why a compressed body cannot be made or read.

use std::fmt;

/// A compressed body that cannot be made or read, and the byte of the body where that shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
#[non_exhaustive]
pub struct Lz4Error {
    /// Offset in the compressed body (the length prefix is bytes 0–3, the block starts at byte 4).
    pub offset: usize,
    /// What is wrong.
    pub kind: Lz4ErrorKind,
}

/// What is wrong with a compressed body (or with a payload to compress).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lz4ErrorKind {
    /// The body is shorter than its 4-byte length prefix.
    MissingLengthPrefix {
        /// The body's size in bytes.
        len: usize,
    },
    /// The declared uncompressed length is above the caller's limit.
    OverLimit {
        /// The declared uncompressed length.
        declared: u32,
        /// The limit in bytes.
        limit: usize,
    },
    /// The declared uncompressed length is more than the block could ever produce.
    ImpossibleExpansion {
        /// The declared uncompressed length.
        declared: u32,
        /// The size of the LZ4 block in bytes.
        block_len: usize,
    },
    /// The block is longer than any block of the declared length could be.
    BlockTooLong {
        /// The declared uncompressed length.
        declared: usize,
        /// The size of the LZ4 block in bytes.
        block_len: usize,
    },
    /// The declared length is 0 but the block is not the one-byte empty block `00`.
    NonEmptyBlockForEmptyPayload {
        /// The size of the LZ4 block in bytes.
        block_len: usize,
    },
    /// Nothing follows the length prefix; every LZ4 block holds at least one token.
    EmptyBlock,
    /// The block ends right after a match; an LZ4 block must end with a literals-only sequence.
    EndsAfterMatch,
    /// A length extension (bytes of 255 then a smaller one) runs past the end of the block.
    LengthCutOff,
    /// A literal run is longer than the bytes left in the block.
    LiteralsPastEnd {
        /// The literal run's length.
        wanted: usize,
        /// Bytes left in the block.
        left: usize,
    },
    /// The block ends inside a 2-byte match offset.
    MatchOffsetCutOff,
    /// A match offset of 0, which LZ4 forbids.
    MatchOffsetZero,
    /// A match offset reaching before the start of the output.
    MatchOffsetTooFar {
        /// The match offset.
        offset: u16,
        /// Bytes decompressed so far.
        decoded: usize,
    },
    /// The block decompresses to more bytes than declared.
    LongerThanDeclared {
        /// The declared uncompressed length.
        declared: usize,
    },
    /// The block decompresses to fewer bytes than declared.
    ShorterThanDeclared {
        /// The declared uncompressed length.
        declared: usize,
        /// What the block decompresses to.
        actual: usize,
    },
    /// The decoder refused a block that the diagnostic walk found no fault in.
    Corrupt {
        /// The decoder's message.
        reason: String,
    },
    /// The output buffer for the declared length could not be allocated.
    OutOfMemory {
        /// The declared uncompressed length.
        declared: usize,
    },
    /// A payload too large for the 4-byte length prefix (at most `i32::MAX` bytes).
    PayloadTooLarge {
        /// The payload's size in bytes.
        len: usize,
    },
}

impl fmt::Display for Lz4ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Lz4ErrorKind::*;
        match self {
            MissingLengthPrefix { len } => write!(
                f,
                "compressed body of {len} bytes is shorter than its 4-byte length prefix"
            ),
            OverLimit { declared, limit } => write!(
                f,
                "declared uncompressed length {declared} exceeds the limit of {limit} bytes"
            ),
            ImpossibleExpansion {
                declared,
                block_len,
            } => write!(
                f,
                "declared uncompressed length {declared} is more than an LZ4 block of {block_len} \
                 bytes can hold (at most 255 bytes per block byte)"
            ),
            BlockTooLong {
                declared,
                block_len,
            } => write!(
                f,
                "an LZ4 block of {block_len} bytes is too long to decompress to the declared \
                 {declared} bytes"
            ),
            NonEmptyBlockForEmptyPayload { block_len } => write!(
                f,
                "declared uncompressed length 0 but the LZ4 block is {block_len} bytes, not the \
                 1-byte empty block 00"
            ),
            EmptyBlock => f.write_str("LZ4 block is missing after the length prefix"),
            EndsAfterMatch => f.write_str(
                "LZ4 block ends after a match (the last sequence must be literals only)",
            ),
            LengthCutOff => f.write_str("LZ4 length extension runs past the end of the block"),
            LiteralsPastEnd { wanted, left } => write!(
                f,
                "LZ4 literal run of {wanted} bytes exceeds the {left} bytes left in the block"
            ),
            MatchOffsetCutOff => f.write_str("LZ4 block ends inside a match offset"),
            MatchOffsetZero => f.write_str("LZ4 match offset 0 is invalid"),
            MatchOffsetTooFar { offset, decoded } => write!(
                f,
                "LZ4 match offset {offset} reaches before the start of the output \
                 ({decoded} bytes decoded)"
            ),
            LongerThanDeclared { declared } => write!(
                f,
                "LZ4 block decompresses to more than the declared {declared} bytes"
            ),
            ShorterThanDeclared { declared, actual } => write!(
                f,
                "LZ4 block decompresses to {actual} bytes, fewer than the declared {declared}"
            ),
            Corrupt { reason } => write!(f, "corrupt LZ4 block: {reason}"),
            OutOfMemory { declared } => write!(
                f,
                "cannot allocate {declared} bytes for the declared uncompressed length"
            ),
            PayloadTooLarge { len } => write!(
                f,
                "payload of {len} bytes is too large for a compressed body (at most {} bytes)",
                i32::MAX
            ),
        }
    }
}

impl Lz4Error {
    pub(super) fn new(offset: usize, kind: Lz4ErrorKind) -> Self {
        Lz4Error { offset, kind }
    }
}
