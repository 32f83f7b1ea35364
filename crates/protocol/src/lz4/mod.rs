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

mod error;
mod prefix;

pub use error::{Lz4Error, Lz4ErrorKind};
pub(crate) use prefix::decompress_prefix;
use std::cell::RefCell;

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

/// A read position in an LZ4 block, for [`locate_fault`] and [`prefix::decompress_prefix`].
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
mod tests;
