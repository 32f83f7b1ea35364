//! LZ4 bodies of CQL native protocol v3/v4 frames, and the raw blocks of v5 LZ4 segments.
//!
//! A compressed body is `[4-byte big-endian uncompressed length][raw LZ4 block]`, the layout the
//! Python driver's `lz4_compress`/`lz4_decompress` and the servers use. (The length is big-endian:
//! `lz4_flex`'s `*_prepend_size` helpers and Python's `lz4.block` write it little-endian, so they are
//! not used here.) The empty payload compresses to `00 00 00 00 00`: length 0 and the one-byte block
//! holding a single token with no literals.
//!
//! Compression emits the driver's exact bytes. The driver's `lz4_compress` calls python-lz4's
//! `lz4.block.compress`, which runs the C library's streaming compressor on a fresh stream
//! (`LZ4_resetStream` + `LZ4_compress_fast_continue`, acceleration 1): the fast parse with the 4096
//! entry table of 32-bit positions at every input size. (`LZ4_compress_default`, the C block API,
//! switches to a 16-bit table below 64 KiB + 11 bytes, so its blocks of small inputs differ.) The
//! vendored lz4_flex (`vendor/lz4_flex/PATCH.md`) has the C library's parse, and
//! `compress_into_with_table` with a large table is that streaming call.
//!
//! Decompression checks the declared length against a caller-chosen limit and against the most an
//! LZ4 block of the given size can expand to (255 × its size) before allocating anything, writes into
//! a buffer of exactly the declared size, and insists the block fills it exactly. When a block is bad,
//! a second, allocation-free walk over its sequences finds the byte where it goes wrong; for bodies
//! declaring more than 4 MiB that walk runs first, so garbage claiming a large size allocates nothing.

use std::cell::RefCell;
use std::fmt;

/// Size of the big-endian uncompressed-length prefix of a compressed body.
pub const LENGTH_PREFIX: usize = 4;

/// Default limit on a declared uncompressed length: 256 MiB, the largest frame Cassandra accepts.
pub const DEFAULT_MAX_SIZE: usize = 256 << 20;

/// The most output one byte of an LZ4 block can produce: a match length extension byte of 255.
/// No valid block of `n` bytes decompresses to more than `255 × n` bytes.
const MAX_EXPANSION: u64 = 255;

/// Bodies declaring more than this many bytes have their block walked (cheaply, without output)
/// before the output is allocated, so garbage claiming a large size costs no memory.
const PREFLIGHT_ABOVE: usize = 4 << 20;

/// The LZ4 block of the empty payload: one token, no literals, no match.
const EMPTY_BLOCK: [u8; 1] = [0];

/// The shortest match an LZ4 sequence encodes (a match length nibble of 0 means 4 bytes).
const MIN_MATCH: usize = 4;

/// A nibble of 15 in a token means that length continues in extension bytes.
const NIBBLE_CONTINUES: usize = 15;

/// A compressed body that cannot be made or read, and the byte of the body where that shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
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
    fn new(offset: usize, kind: Lz4ErrorKind) -> Self {
        Lz4Error { offset, kind }
    }
}

/// Compresses `payload` into a new CQL v4 LZ4 body (see [`compress_body_into`]).
pub fn compress_body(payload: &[u8]) -> Result<Vec<u8>, Lz4Error> {
    let mut body = Vec::new();
    compress_body_into(payload, &mut body)?;
    Ok(body)
}

/// Compresses `payload` into `body` (replacing its content, reusing its allocation):
/// the 4-byte big-endian length of `payload`, then the raw LZ4 block.
///
/// Fails only for a payload longer than `i32::MAX` bytes, which the length prefix cannot describe.
pub fn compress_body_into(payload: &[u8], body: &mut Vec<u8>) -> Result<(), Lz4Error> {
    compress_after(payload, body, LENGTH_PREFIX)?;
    // `compress_after` checked that the length fits an i32.
    body[..LENGTH_PREFIX].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    Ok(())
}

thread_local! {
    /// The compressor's hash table: the large one (32-bit positions) at every size, as in the
    /// driver's streaming call (see the module docs); kept per thread so no call allocates one.
    static COMPRESS_TABLE: RefCell<lz4_flex::block::CompressTable> =
        RefCell::new(lz4_flex::block::CompressTable::large());
}

/// Compresses `payload` into a raw LZ4 block in `out` after its first `start` bytes (the rest of its
/// content replaced, its allocation reused; the first `start` bytes are left for the caller).
/// Fails only for a payload longer than `i32::MAX` bytes.
fn compress_after(payload: &[u8], out: &mut Vec<u8>, start: usize) -> Result<(), Lz4Error> {
    if i32::try_from(payload.len()).is_err() {
        return Err(Lz4Error::new(
            0,
            Lz4ErrorKind::PayloadTooLarge { len: payload.len() },
        ));
    }
    let capacity = start + lz4_flex::block::get_maximum_output_size(payload.len());
    // Growing only to `capacity` (never shrinking first) zero-fills just the bytes not yet
    // initialised by an earlier call.
    out.resize(capacity, 0);
    let written = COMPRESS_TABLE.with_borrow_mut(|table| {
        lz4_flex::block::compress_into_with_table(payload, &mut out[start..], table)
    });
    let written = written.map_err(|e| {
        // Unreachable: the block buffer has lz4_flex's own worst-case size.
        Lz4Error::new(
            start,
            Lz4ErrorKind::Corrupt {
                reason: e.to_string(),
            },
        )
    })?;
    out.truncate(start + written);
    Ok(())
}

/// Decompresses a CQL v4 LZ4 body into a new buffer (see [`decompress_body_into`]).
pub fn decompress_body(body: &[u8], max_size: usize) -> Result<Vec<u8>, Lz4Error> {
    let mut payload = Vec::new();
    decompress_body_into(body, max_size, &mut payload)?;
    Ok(payload)
}

/// Returns the uncompressed length a body declares, checked against `max_size` and against what its
/// block could possibly hold, without decompressing anything.
pub fn declared_length(body: &[u8], max_size: usize) -> Result<usize, Lz4Error> {
    let (prefix, block) = match body.split_first_chunk::<LENGTH_PREFIX>() {
        Some(parts) => parts,
        None => {
            return Err(Lz4Error::new(
                0,
                Lz4ErrorKind::MissingLengthPrefix { len: body.len() },
            ))
        }
    };
    checked_length(*prefix, block, max_size, LENGTH_PREFIX)
}

/// The checks of [`declared_length`] for a length `prefix` and the whole `block`, which starts at
/// offset `base` (errors about the block carry it; errors about the length, offset 0).
fn checked_length(
    prefix: [u8; LENGTH_PREFIX],
    block: &[u8],
    max_size: usize,
    base: usize,
) -> Result<usize, Lz4Error> {
    let declared = check_prefix(prefix, block.len(), max_size)?;
    if declared == 0 && block != EMPTY_BLOCK {
        let kind = if block.is_empty() {
            Lz4ErrorKind::EmptyBlock
        } else {
            Lz4ErrorKind::NonEmptyBlockForEmptyPayload {
                block_len: block.len(),
            }
        };
        return Err(Lz4Error::new(base, kind));
    }
    Ok(declared)
}

/// Checks a body's 4-byte length prefix before its block has arrived, knowing only the block's
/// size: the declared length must not exceed `max_size` nor 255 × `block_len`, 0 only with a
/// one-byte block, and the block must not be longer than any block of the declared length (at most
/// 2 × its length + 16 bytes: a literal byte costs at most 1 + 1/255 block bytes, a match less
/// than it yields). Returns the declared length. Errors carry the offset in the body.
pub fn check_declared(
    prefix: [u8; LENGTH_PREFIX],
    block_len: usize,
    max_size: usize,
) -> Result<usize, Lz4Error> {
    let declared = check_prefix(prefix, block_len, max_size)?;
    let kind = match block_len {
        0 => Lz4ErrorKind::EmptyBlock,
        _ if declared == 0 && block_len > 1 => {
            Lz4ErrorKind::NonEmptyBlockForEmptyPayload { block_len }
        }
        _ if block_len as u64 > 2 * declared as u64 + 16 => Lz4ErrorKind::BlockTooLong {
            declared,
            block_len,
        },
        _ => return Ok(declared),
    };
    Err(Lz4Error::new(LENGTH_PREFIX, kind))
}

/// The length prefix checks of [`declared_length`] and [`check_declared`].
fn check_prefix(
    prefix: [u8; LENGTH_PREFIX],
    block_len: usize,
    max_size: usize,
) -> Result<usize, Lz4Error> {
    let raw = u32::from_be_bytes(prefix);
    let declared = match usize::try_from(raw) {
        Ok(declared) if declared <= max_size => declared,
        _ => {
            return Err(Lz4Error::new(
                0,
                Lz4ErrorKind::OverLimit {
                    declared: raw,
                    limit: max_size,
                },
            ))
        }
    };
    if u64::from(raw) > MAX_EXPANSION.saturating_mul(block_len as u64) {
        return Err(Lz4Error::new(
            0,
            Lz4ErrorKind::ImpossibleExpansion {
                declared: raw,
                block_len,
            },
        ));
    }
    Ok(declared)
}

/// Decompresses a CQL v4 LZ4 body into `payload` (replacing its content, reusing its allocation).
///
/// The declared length is checked before any allocation: it must not exceed `max_size`, must be
/// reachable by the block (255 × the block size), and 0 only with the empty block `00`. The block
/// must then decompress to exactly the declared length. Errors carry the offset in `body`, and
/// leave `payload` empty.
#[inline]
pub fn decompress_body_into(
    body: &[u8],
    max_size: usize,
    payload: &mut Vec<u8>,
) -> Result<(), Lz4Error> {
    if let Some((prefix, block)) = body.split_first_chunk::<LENGTH_PREFIX>() {
        let declared = u32::from_be_bytes(*prefix) as usize;
        if decoded_in_place(block, declared, max_size, payload) {
            return Ok(());
        }
    }
    decompress_body_checked(body, max_size, payload)
}

/// The common case of a body or block: `payload` already holds at least the `declared` bytes,
/// which are within `max_size` and not 0, and the block decodes to exactly them. Decodes straight
/// into `payload` and returns true; false leaves the work, and the exact error if there is one, to
/// the checked path, which starts over. (Allocation is the only thing the checks before decoding
/// guard against; a block that cannot yield `declared` bytes fails to decode.)
#[inline(always)]
fn decoded_in_place(block: &[u8], declared: usize, max_size: usize, payload: &mut Vec<u8>) -> bool {
    if declared == 0 || declared > max_size || declared > payload.len() {
        return false;
    }
    let out = &mut payload[..declared];
    let done = copied_literal_run(block, out)
        || matches!(decode_block(block, out), Ok(n) if n == declared);
    if done {
        payload.truncate(declared);
    }
    done
}

/// [`decompress_body_into`] with every check made before decoding, and the exact error.
#[cold]
#[inline(never)]
fn decompress_body_checked(
    body: &[u8],
    max_size: usize,
    payload: &mut Vec<u8>,
) -> Result<(), Lz4Error> {
    let block = body.get(LENGTH_PREFIX..).unwrap_or_default();
    declared_length(body, max_size)
        .and_then(|declared| decompress_at(block, declared, payload, LENGTH_PREFIX))
        .inspect_err(|_| payload.clear())
}

/// Decompresses `block`, which starts at offset `base` of what the caller was given and must yield
/// exactly `declared` bytes (already checked against the limits), into `payload` (replacing its
/// content, reusing its allocation). Errors carry offsets from `base`; the callers empty `payload`
/// on any error.
fn decompress_at(
    block: &[u8],
    declared: usize,
    payload: &mut Vec<u8>,
    base: usize,
) -> Result<(), Lz4Error> {
    if declared > PREFLIGHT_ABOVE {
        if let Some(fault) = locate_fault(block, declared, base) {
            return Err(fault);
        }
    }
    if payload.len() < declared {
        grow(payload, declared)?;
    }
    payload.truncate(declared);
    match decode_block(block, payload) {
        Ok(written) if written == declared => Ok(()),
        result => Err(decode_failure(block, declared, base, result)),
    }
}

/// The longest block [`copied_literal_run`] takes: above it the copy is most of the work, and the
/// decoder's own copy loops beat memcpy there.
const LITERAL_RUN_MAX: usize = 2048;

/// A block that is one run of literals, all of `out` (what LZ4 makes of incompressible input,
/// 15 to [`LITERAL_RUN_MAX`] bytes), is copied into `out` without the decoder: the token's
/// literal length 15, its extension bytes (255s, then the rest), then exactly `out.len()` bytes.
/// The decoder would yield the same bytes; anything else returns false and is left to it.
#[inline(always)]
fn copied_literal_run(block: &[u8], out: &mut [u8]) -> bool {
    let len = out.len();
    if !(NIBBLE_CONTINUES..=LITERAL_RUN_MAX).contains(&len) {
        return false;
    }
    let extra = len - NIBBLE_CONTINUES;
    let full = extra / 255;
    let Some((head, literals)) = block.split_at_checked(full + 2) else {
        return false;
    };
    let run = usize::from(head[0] >> 4) == NIBBLE_CONTINUES
        && usize::from(head[full + 1]) == extra % 255
        && head[1..=full].iter().all(|&byte| byte == 255)
        && literals.len() == len;
    if run {
        out.copy_from_slice(literals);
    }
    run
}

/// lz4_flex's block decoder as a function of its own: inlined into [`decompress_at`] it ran 3–7 %
/// slower than lz4_flex called directly on text bodies of 1–64 KiB, on its own level with it
/// (`cargo bench --bench lz4 -- --interleaved`, side `lz4_flex raw`).
#[inline(never)]
fn decode_block(block: &[u8], out: &mut [u8]) -> Result<usize, lz4_flex::block::DecompressError> {
    lz4_flex::block::decompress_into(block, out)
}

/// Grows `payload` to `declared` bytes. Growing only (never shrinking first) zero-fills just the
/// bytes not yet initialised by an earlier call.
#[cold]
fn grow(payload: &mut Vec<u8>, declared: usize) -> Result<(), Lz4Error> {
    payload
        .try_reserve_exact(declared - payload.len())
        .map_err(|_| Lz4Error::new(0, Lz4ErrorKind::OutOfMemory { declared }))?;
    payload.resize(declared, 0);
    Ok(())
}

/// The error of a block that did not decode to `declared` bytes (the decoder's `result`), located
/// by [`locate_fault`] where it can be.
#[cold]
fn decode_failure(
    block: &[u8],
    declared: usize,
    base: usize,
    result: Result<usize, lz4_flex::block::DecompressError>,
) -> Lz4Error {
    match result {
        Ok(written) => Lz4Error::new(
            base + block.len(),
            Lz4ErrorKind::ShorterThanDeclared {
                declared,
                actual: written,
            },
        ),
        Err(error) => locate_fault(block, declared, base).unwrap_or_else(|| {
            Lz4Error::new(
                base,
                Lz4ErrorKind::Corrupt {
                    reason: error.to_string(),
                },
            )
        }),
    }
}

/// Walks the sequences of an LZ4 block that starts at offset `base` without producing output and
/// returns the first fault, with its offset (block offset + `base`), or `None` if the block decodes
/// to `declared` bytes.
#[cold]
fn locate_fault(block: &[u8], declared: usize, base: usize) -> Option<Lz4Error> {
    let fault = |at: usize, kind| Some(Lz4Error::new(base + at, kind));
    let mut walker = BlockWalker { block, pos: 0 };
    let mut decoded = 0usize;
    if block.is_empty() {
        return fault(0, Lz4ErrorKind::EmptyBlock);
    }
    loop {
        let sequence_start = walker.pos;
        let Some(token) = walker.byte() else {
            return fault(sequence_start, Lz4ErrorKind::EndsAfterMatch);
        };
        let Some(literals) = walker.length(usize::from(token >> 4)) else {
            return fault(walker.pos, Lz4ErrorKind::LengthCutOff);
        };
        let left = block.len().saturating_sub(walker.pos);
        if literals > left {
            return fault(
                walker.pos,
                Lz4ErrorKind::LiteralsPastEnd {
                    wanted: literals,
                    left,
                },
            );
        }
        walker.pos += literals;
        decoded = decoded.saturating_add(literals);
        if decoded > declared {
            return fault(
                sequence_start,
                Lz4ErrorKind::LongerThanDeclared { declared },
            );
        }
        if walker.pos == block.len() {
            return (decoded != declared).then(|| {
                Lz4Error::new(
                    base + block.len(),
                    Lz4ErrorKind::ShorterThanDeclared {
                        declared,
                        actual: decoded,
                    },
                )
            });
        }
        let offset_at = walker.pos;
        let (Some(low), Some(high)) = (walker.byte(), walker.byte()) else {
            return fault(offset_at, Lz4ErrorKind::MatchOffsetCutOff);
        };
        let offset = u16::from_le_bytes([low, high]);
        if offset == 0 {
            return fault(offset_at, Lz4ErrorKind::MatchOffsetZero);
        }
        if usize::from(offset) > decoded {
            return fault(
                offset_at,
                Lz4ErrorKind::MatchOffsetTooFar { offset, decoded },
            );
        }
        let Some(extra) = walker.length(usize::from(token & 0x0f)) else {
            return fault(walker.pos, Lz4ErrorKind::LengthCutOff);
        };
        decoded = decoded.saturating_add(MIN_MATCH).saturating_add(extra);
        if decoded > declared {
            return fault(
                sequence_start,
                Lz4ErrorKind::LongerThanDeclared { declared },
            );
        }
    }
}

/// A read position in an LZ4 block, for [`locate_fault`].
struct BlockWalker<'a> {
    block: &'a [u8],
    pos: usize,
}

impl BlockWalker<'_> {
    /// The next byte, or `None` at the end of the block.
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.block.get(self.pos)?;
        self.pos += 1;
        Some(byte)
    }

    /// A length from a token nibble plus, for a nibble of 15, its extension bytes (255 means more
    /// follow); `None` if the extension runs past the end of the block.
    fn length(&mut self, nibble: usize) -> Option<usize> {
        let mut length = nibble;
        if nibble == NIBBLE_CONTINUES {
            loop {
                let extra = self.byte()?;
                length = length.saturating_add(usize::from(extra));
                if extra != u8::MAX {
                    break;
                }
            }
        }
        Some(length)
    }
}

/// Compresses `payload` into a raw LZ4 block in `block` (replacing its content): no length
/// prefix, as v5 LZ4 segments carry it. Fails only for a payload longer than `i32::MAX` bytes.
pub fn compress_block_into(payload: &[u8], block: &mut Vec<u8>) -> Result<(), Lz4Error> {
    compress_after(payload, block, 0)
}

/// Decompresses a raw LZ4 block (no length prefix) that must yield exactly `len` bytes into `out`
/// (replacing its content), with the checks of [`decompress_body_into`]: `len` at most `max_size`
/// and reachable by the block, the block decompressing to exactly `len`. Errors carry the offset
/// in `block` (0 for a `len` over the limits), and leave `out` empty.
pub fn decompress_block_into(
    block: &[u8],
    len: usize,
    max_size: usize,
    out: &mut Vec<u8>,
) -> Result<(), Lz4Error> {
    let max_size = max_size.min(u32::MAX as usize);
    if decoded_in_place(block, len, max_size, out) {
        return Ok(());
    }
    let prefix = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    checked_length(prefix, block, max_size, 0)
        .and_then(|declared| decompress_at(block, declared, out, 0))
        .inspect_err(|_| out.clear())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A body as the C library (the reference) makes it: big-endian length, then its raw block.
    fn reference_body(payload: &[u8]) -> Vec<u8> {
        let block = ::lz4::block::compress(payload, None, false).unwrap();
        let mut body = (payload.len() as u32).to_be_bytes().to_vec();
        body.extend_from_slice(&block);
        body
    }

    /// The driver's body (the reference for compression): python-lz4's C calls, a fresh stream
    /// (`LZ4_createStream` zeroes it, as `LZ4_resetStream` does) and `LZ4_compress_continue`
    /// (`LZ4_compress_fast_continue` into a buffer of `LZ4_compressBound`, acceleration 1).
    fn driver_body(payload: &[u8]) -> Vec<u8> {
        use ::lz4::liblz4::{
            LZ4_compressBound, LZ4_compress_continue, LZ4_createStream, LZ4_freeStream,
        };
        let len = i32::try_from(payload.len()).unwrap();
        let mut body = (len as u32).to_be_bytes().to_vec();
        // SAFETY: a fresh stream, a source of `len` bytes and a destination of the bound the C
        // library guarantees for `len`; the stream is freed once.
        unsafe {
            let bound = LZ4_compressBound(len);
            body.resize(LENGTH_PREFIX + bound as usize, 0);
            let stream = LZ4_createStream();
            assert!(!stream.is_null());
            let written = LZ4_compress_continue(
                stream,
                payload.as_ptr().cast(),
                body[LENGTH_PREFIX..].as_mut_ptr().cast(),
                len,
            );
            LZ4_freeStream(stream);
            body.truncate(LENGTH_PREFIX + usize::try_from(written).unwrap());
        }
        body
    }

    /// Both equalities with the C library: `compress_body` is the driver's body, and lz4_flex's
    /// block `compress` is `LZ4_compress_default`'s block.
    fn assert_compresses_like_c(payload: &[u8]) {
        assert!(
            compress_body(payload).unwrap() == driver_body(payload),
            "length {}: not the driver's body",
            payload.len()
        );
        assert!(
            lz4_flex::block::compress(payload)
                == ::lz4::block::compress(payload, None, false).unwrap(),
            "length {}: not LZ4_compress_default's block",
            payload.len()
        );
    }

    /// Decompresses with the C library (the reference), given the expected size.
    fn reference_decompress(body: &[u8], size: usize) -> Vec<u8> {
        ::lz4::block::decompress(&body[4..], Some(size as i32)).unwrap()
    }

    fn text_like(len: usize) -> Vec<u8> {
        let words = [
            "SELECT", "keyspace", "vector", "token", "where", "id", "=", "?", "\n",
        ];
        let mut text = Vec::new();
        let mut i = 7usize;
        while text.len() < len {
            i = i.wrapping_mul(2654435761).wrapping_add(12345) % 1_000_003;
            text.extend_from_slice(words[i % words.len()].as_bytes());
            text.push(b' ');
        }
        text.truncate(len);
        text
    }

    fn err_of(body: &[u8]) -> Lz4Error {
        decompress_body(body, DEFAULT_MAX_SIZE).unwrap_err()
    }

    #[test]
    fn empty_payload_is_the_empty_block() {
        let body = compress_body(b"").unwrap();
        assert_eq!(body, reference_body(b""));
        assert_eq!(decompress_body(&body, 0).unwrap(), b"");
    }

    #[test]
    fn length_prefix_is_big_endian_and_c_reads_our_blocks() {
        for len in [1, 100, 1024, 70_000, 1 << 20] {
            let payload = text_like(len);
            let body = compress_body(&payload).unwrap();
            assert_eq!(body[..4], (len as u32).to_be_bytes());
            assert_eq!(reference_decompress(&body, len), payload);
            assert_eq!(
                decompress_body(&reference_body(&payload), len).unwrap(),
                payload
            );
        }
    }

    #[test]
    fn the_c_oracle_is_at_least_the_drivers_liblz4() {
        // python-lz4 4.4.5 (the pinned driver's) bundles liblz4 1.9.4, the lz4 crate 1.10.0; their
        // fast compressors differ only in form (fixtures/lz4ref holds python-lz4's own bodies).
        let version = ::lz4::version();
        println!("C liblz4 of the lz4 crate: {version}");
        assert!(version >= 10904, "liblz4 {version}");
    }

    #[test]
    fn bodies_are_the_c_librarys_around_every_size_switch() {
        // Sizes 0-20 (13 is the shortest input with a match), and both sides of LZ4_64Klimit
        // (64 KiB + 11), where LZ4_compress_default changes its hash table.
        let limit = (64 << 10) + 11;
        let sizes = (0..=20).chain(limit - 40..limit + 40).chain([1 << 20]);
        for len in sizes {
            let noise: Vec<u8> = (0..len as u64)
                .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
                .collect();
            let mixed: Vec<u8> = text_like(len)
                .iter()
                .zip(&noise)
                .map(|(&t, &n)| if n < 24 { n } else { t })
                .collect();
            let payloads = [
                text_like(len),
                vec![0; len],
                b"ab".repeat(len),
                noise,
                mixed,
            ];
            for mut payload in payloads {
                payload.truncate(len);
                assert_compresses_like_c(&payload);
            }
        }
    }

    /// Bytes no LZ4 compressor finds a match in (a xorshift stream).
    fn incompressible(len: usize) -> Vec<u8> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ len as u64;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn literal_runs_are_copied_without_the_decoder() {
        for len in 0..=LITERAL_RUN_MAX + 300 {
            let payload = incompressible(len);
            let body = reference_body(&payload);
            let block = &body[LENGTH_PREFIX..];
            let mut out = vec![0xAA; len];
            let taken = copied_literal_run(block, &mut out);
            assert_eq!(taken, (15..=LITERAL_RUN_MAX).contains(&len), "length {len}");
            if taken {
                assert!(out == payload, "length {len}: the copy is not the payload");
            }
            // In place (a buffer already large enough) and fresh, through the public call.
            let mut reused = vec![0xAA; len + 7];
            decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut reused).unwrap();
            assert!(reused == payload, "length {len}: reused buffer");
            assert!(decompress_body(&body, DEFAULT_MAX_SIZE).unwrap() == payload);
        }
    }

    #[test]
    fn into_variants_reuse_buffers_across_sizes() {
        let mut body = Vec::new();
        let mut payload = Vec::new();
        for len in [5000, 10, 0, 3000, 1] {
            let input = text_like(len);
            compress_body_into(&input, &mut body).unwrap();
            decompress_body_into(&body, len, &mut payload).unwrap();
            assert_eq!(payload, input);
        }
    }

    #[test]
    fn short_bodies_and_the_limit() {
        assert_eq!(
            err_of(&[0, 0, 1]),
            Lz4Error::new(0, Lz4ErrorKind::MissingLengthPrefix { len: 3 })
        );
        let body = reference_body(&text_like(1000));
        assert_eq!(
            decompress_body(&body, 999).unwrap_err(),
            Lz4Error::new(
                0,
                Lz4ErrorKind::OverLimit {
                    declared: 1000,
                    limit: 999
                }
            )
        );
        assert_eq!(
            err_of(&[0x80, 0, 0, 0, 0x10, 0x61]).kind,
            Lz4ErrorKind::OverLimit {
                declared: 1 << 31,
                limit: DEFAULT_MAX_SIZE
            }
        );
        assert_eq!(
            err_of(&[0, 0, 2, 0, 0x10, 0x61]).kind,
            Lz4ErrorKind::ImpossibleExpansion {
                declared: 512,
                block_len: 2
            }
        );
    }

    #[test]
    fn declared_zero_needs_the_empty_block() {
        assert_eq!(
            err_of(&[0, 0, 0, 0]),
            Lz4Error::new(4, Lz4ErrorKind::EmptyBlock)
        );
        assert_eq!(
            err_of(&[0, 0, 0, 0, 0x10, 0x61]),
            Lz4Error::new(
                4,
                Lz4ErrorKind::NonEmptyBlockForEmptyPayload { block_len: 2 }
            )
        );
    }

    #[test]
    fn length_mismatches_are_located() {
        let payload = text_like(1000);
        let mut body = reference_body(&payload);
        body[2..4].copy_from_slice(&1001u16.to_be_bytes());
        assert_eq!(
            err_of(&body),
            Lz4Error::new(
                body.len(),
                Lz4ErrorKind::ShorterThanDeclared {
                    declared: 1001,
                    actual: 1000
                }
            )
        );
        body[2..4].copy_from_slice(&999u16.to_be_bytes());
        let error = err_of(&body);
        assert_eq!(
            error.kind,
            Lz4ErrorKind::LongerThanDeclared { declared: 999 }
        );
        assert!(error.offset > 4 && error.offset < body.len());
    }

    #[test]
    fn large_bodies_are_walked_before_allocating() {
        let payload = text_like(PREFLIGHT_ABOVE + 1000);
        let body = compress_body(&payload).unwrap();
        assert_eq!(decompress_body(&body, DEFAULT_MAX_SIZE).unwrap(), payload);
        let mut longer = body.clone();
        longer[..4].copy_from_slice(&(payload.len() as u32 + 1).to_be_bytes());
        assert_eq!(
            err_of(&longer),
            Lz4Error::new(
                body.len(),
                Lz4ErrorKind::ShorterThanDeclared {
                    declared: payload.len() + 1,
                    actual: payload.len()
                }
            )
        );
        let mut garbage = (100u32 << 20).to_be_bytes().to_vec();
        garbage.push(0xf0);
        garbage.resize(1 << 20, 0xff);
        let mut payload = Vec::new();
        let error = decompress_body_into(&garbage, DEFAULT_MAX_SIZE, &mut payload).unwrap_err();
        assert_eq!(error, Lz4Error::new(1 << 20, Lz4ErrorKind::LengthCutOff));
        assert_eq!(payload.capacity(), 0);
    }

    #[test]
    fn corrupt_blocks_are_located() {
        // 1 literal 'a', then a match with offset 2 while 1 byte is decoded.
        let body = [0, 0, 0, 9, 0x10, b'a', 2, 0, 0x10, b'b'];
        assert_eq!(
            err_of(&body),
            Lz4Error::new(
                6,
                Lz4ErrorKind::MatchOffsetTooFar {
                    offset: 2,
                    decoded: 1
                }
            )
        );
        let body = [0, 0, 0, 9, 0x10, b'a', 0, 0, 0x10, b'b'];
        assert_eq!(
            err_of(&body),
            Lz4Error::new(6, Lz4ErrorKind::MatchOffsetZero)
        );
        let body = [0, 0, 0, 5, 0x50, b'a', b'b'];
        assert_eq!(
            err_of(&body),
            Lz4Error::new(5, Lz4ErrorKind::LiteralsPastEnd { wanted: 5, left: 2 })
        );
        let body = [0, 0, 0, 5, 0x10, b'a', 1];
        assert_eq!(
            err_of(&body),
            Lz4Error::new(6, Lz4ErrorKind::MatchOffsetCutOff)
        );
        let body = [0, 0, 0, 5, 0x10, b'a', 1, 0];
        assert_eq!(
            err_of(&body),
            Lz4Error::new(8, Lz4ErrorKind::EndsAfterMatch)
        );
        let body = [0, 0, 1, 0, 0xf0, 255, 255];
        assert_eq!(err_of(&body), Lz4Error::new(7, Lz4ErrorKind::LengthCutOff));
    }

    #[test]
    fn truncated_reference_bodies_fail_cleanly() {
        let body = reference_body(&text_like(5000));
        for cut in 0..body.len() {
            assert!(
                decompress_body(&body[..cut], DEFAULT_MAX_SIZE).is_err(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn messages_name_the_offset() {
        assert_eq!(
            err_of(&[0x80, 0, 0, 0, 0]).to_string(),
            "declared uncompressed length 2147483648 exceeds the limit of 268435456 bytes at byte 0"
        );
    }

    proptest! {
        #[test]
        fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..5000)) {
            let body = compress_body(&payload).unwrap();
            prop_assert_eq!(decompress_body(&body, payload.len()).unwrap(), payload);
        }

        #[test]
        fn round_trip_repetitive(seed in proptest::collection::vec(0u8..4, 1..50), len in 0usize..20_000) {
            let payload: Vec<u8> = seed.iter().cycle().take(len).copied().collect();
            let body = compress_body(&payload).unwrap();
            prop_assert_eq!(reference_decompress(&body, len), payload.clone());
            prop_assert_eq!(decompress_body(&body, len).unwrap(), payload);
        }

        #[test]
        fn random_payloads_compress_like_c(payload in proptest::collection::vec(any::<u8>(), 0..5000)) {
            assert_compresses_like_c(&payload);
        }

        /// Repeats of short random periods with sparse byte flips, cut at any length: long matches,
        /// immediate follow-on matches and matches that end at the input's last bytes.
        #[test]
        fn structured_payloads_compress_like_c(
            period in proptest::collection::vec(0u8..6, 1..300),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..40),
            len in 0usize..70_000,
        ) {
            let mut payload: Vec<u8> = period.iter().cycle().take(len).copied().collect();
            for (at, byte) in flips {
                if !payload.is_empty() {
                    let i = at.index(payload.len());
                    payload[i] = byte;
                }
            }
            assert_compresses_like_c(&payload);
        }

        #[test]
        fn random_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decompress_body(&body, 1 << 16);
        }

        #[test]
        fn random_blocks_with_plausible_lengths_never_panic(
            declared in 0u32..4096,
            block in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut body = declared.to_be_bytes().to_vec();
            body.extend_from_slice(&block);
            match decompress_body(&body, 1 << 16) {
                Ok(payload) => prop_assert_eq!(payload.len(), declared as usize),
                Err(error) => {
                    prop_assert!(error.offset <= body.len());
                    prop_assert!(!matches!(error.kind, Lz4ErrorKind::Corrupt { .. }), "{}", error);
                }
            }
        }

        #[test]
        fn mutated_bodies_never_panic(
            payload in proptest::collection::vec(0u8..8, 0..3000),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut body = compress_body(&payload).unwrap();
            let i = at.index(body.len());
            body[i] = byte;
            match decompress_body(&body, 1 << 16) {
                Ok(out) => prop_assert_eq!(out.len() as u32, u32::from_be_bytes(body[..4].try_into().unwrap())),
                // The diagnostic walk finds every fault the decoder finds.
                Err(error) => prop_assert!(!matches!(error.kind, Lz4ErrorKind::Corrupt { .. }), "{}", error),
            }
        }
    }

    proptest! {
        /// The in-place path (a buffer already large enough) gives what the checked path gives a
        /// fresh buffer: the same payload, or the same error at the same offset, for bodies and
        /// blocks, valid, mutated or with any declared length, under any limit.
        #[test]
        fn reused_buffers_give_the_results_of_fresh_ones(
            payload in proptest::collection::vec(0u8..8, 0..3000),
            mutation in proptest::option::of((any::<prop::sample::Index>(), any::<u8>())),
            declared in proptest::option::of(0u32..4000),
            max_size in prop_oneof![Just(1usize << 20), 0usize..4000],
        ) {
            let mut body = compress_body(&payload).unwrap();
            if let Some((at, byte)) = mutation {
                let i = at.index(body.len());
                body[i] = byte;
            }
            if let Some(declared) = declared {
                body[..LENGTH_PREFIX].copy_from_slice(&declared.to_be_bytes());
            }
            // (result, buffer after) of a call into `out`.
            let run = |mut out: Vec<u8>, call: &dyn Fn(&mut Vec<u8>) -> Result<(), Lz4Error>| {
                (call(&mut out), out)
            };
            let body_call = |out: &mut Vec<u8>| decompress_body_into(&body, max_size, out);
            prop_assert_eq!(run(vec![0xAA; 8000], &body_call), run(Vec::new(), &body_call));
            let len = u32::from_be_bytes(body[..LENGTH_PREFIX].try_into().unwrap()) as usize;
            let block_call =
                |out: &mut Vec<u8>| decompress_block_into(&body[LENGTH_PREFIX..], len, max_size, out);
            prop_assert_eq!(run(vec![0xAA; 8000], &block_call), run(Vec::new(), &block_call));
        }
    }

    proptest! {
        /// A literal run whose token, length bytes, length prefix or block length are changed
        /// gives in place (where whole runs are copied without the decoder) what the decoder
        /// gives a fresh buffer: the same payload, or the same error at the same offset.
        #[test]
        fn altered_literal_runs_give_the_decoders_results(
            len in 0usize..LITERAL_RUN_MAX + 100,
            // A byte from the last of the length prefix to past the run's length bytes, and what
            // is added to it: ±1 (a length byte), ±16 (the token's literal nibble), or anything.
            mutation in proptest::option::of((
                LENGTH_PREFIX - 1..LENGTH_PREFIX + 12,
                prop_oneof![Just(1u8), Just(0xFF), Just(0x10), Just(0xF0), any::<u8>()],
            )),
            resize in -2isize..=2,
        ) {
            let mut body = reference_body(&incompressible(len));
            if let Some((at, delta)) = mutation {
                let i = at.min(body.len() - 1);
                body[i] = body[i].wrapping_add(delta);
            }
            let new_len = (body.len() as isize + resize).max(0) as usize;
            body.resize(new_len, 0x5A);
            let mut reused = vec![0xAA; LITERAL_RUN_MAX + 200];
            let in_place = decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut reused);
            let mut fresh = Vec::new();
            let checked = decompress_body_into(&body, DEFAULT_MAX_SIZE, &mut fresh);
            prop_assert_eq!((in_place, reused), (checked, fresh));
        }
    }

    #[test]
    fn blocks_are_bodies_without_their_prefix() {
        let payload = b"hello hello hello hello".repeat(20);
        let mut block = Vec::new();
        compress_block_into(&payload, &mut block).unwrap();
        assert_eq!(block, compress_body(&payload).unwrap()[LENGTH_PREFIX..]);
        let mut out = Vec::new();
        decompress_block_into(&block, payload.len(), 1 << 20, &mut out).unwrap();
        assert_eq!(out, payload);
        let error = decompress_block_into(&block, payload.len() + 1, 1 << 20, &mut out);
        assert!(matches!(
            error.unwrap_err().kind,
            Lz4ErrorKind::ShorterThanDeclared { .. }
        ));
        let error = decompress_block_into(&block, payload.len(), 100, &mut out).unwrap_err();
        assert_eq!(error.offset, 0);
        let mut bad = block.clone();
        bad[0] = 0xff;
        let error = decompress_block_into(&bad, payload.len(), 1 << 20, &mut out).unwrap_err();
        let body_error = decompress_body(
            &[&(payload.len() as u32).to_be_bytes()[..], &bad].concat(),
            1 << 20,
        )
        .unwrap_err();
        assert_eq!(error.offset + LENGTH_PREFIX, body_error.offset);
    }
}
