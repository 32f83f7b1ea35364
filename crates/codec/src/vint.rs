//! Cassandra's unsigned variable-length integers (VIntCoding), used for vector element lengths and
//! duration fields.
//!
//! The encoding is big-endian; the number of leading 1-bits of the first byte is the number of extra
//! bytes that follow (0 to 8), and the remaining bits of the first byte are the value's high bits. A
//! value below 2^7 takes one byte, below 2^14 two bytes, ... below 2^56 eight bytes, and any other
//! `u64` nine bytes (`0xff` then the eight value bytes). It is not LEB128. Signed values are zigzag
//! encoded first (0, -1, 1, -2, ... → 0, 1, 2, 3, ...).

/// The most bytes one vint takes.
pub const MAX_VINT_LEN: usize = 9;

/// A vint that runs past the end of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("truncated vint: needs {needed} bytes but only {available} are left")]
#[non_exhaustive]
pub struct VintError {
    /// The bytes the vint declares (first byte included).
    pub needed: usize,
    /// The bytes that were available.
    pub available: usize,
}

/// The number of bytes [`encode_unsigned`] writes for `value` (1 to 9).
pub fn encoded_len(value: u64) -> usize {
    let significant_bits = 64 - (value | 1).leading_zeros() as usize;
    // Each extra byte adds 7 bits of capacity up to 8 bytes (56 bits); the ninth form holds all 64.
    significant_bits.div_ceil(7).min(MAX_VINT_LEN)
}

/// Encodes `value` as an unsigned vint into a fixed buffer; returns the buffer and the used length
/// (the encoding is `buffer[..length]`).
pub fn encode_unsigned_array(value: u64) -> ([u8; MAX_VINT_LEN], usize) {
    let length = encoded_len(value);
    let mut buffer = [0u8; MAX_VINT_LEN];
    let extra = length - 1;
    // The value occupies the last `length` bytes of a 9-byte big-endian window (the 9-byte form has a
    // separate marker byte, so its value starts one byte later).
    let be = value.to_be_bytes();
    let value_bytes = length.min(8);
    buffer[length - value_bytes..length].copy_from_slice(&be[8 - value_bytes..]);
    // Set `extra` leading 1-bits in the first byte (0xff for 8 extra bytes).
    buffer[0] |= !(0xffu8.checked_shr(extra as u32).unwrap_or(0));
    (buffer, length)
}

/// Appends `value` as an unsigned vint.
pub fn encode_unsigned(value: u64, out: &mut Vec<u8>) {
    let (buffer, length) = encode_unsigned_array(value);
    out.extend_from_slice(&buffer[..length]);
}

/// Appends `value` as a zigzag-encoded signed vint.
pub fn encode_signed(value: i64, out: &mut Vec<u8>) {
    encode_unsigned(zigzag(value), out);
}

/// Decodes an unsigned vint at the start of `bytes`; returns the value and the bytes it took.
/// Non-minimal encodings are accepted, as Cassandra does.
pub fn decode_unsigned(bytes: &[u8]) -> Result<(u64, usize), VintError> {
    let Some(&first) = bytes.first() else {
        return Err(VintError {
            needed: 1,
            available: 0,
        });
    };
    let extra = first.leading_ones() as usize;
    let length = extra + 1;
    let Some(rest) = bytes.get(1..length) else {
        return Err(VintError {
            needed: length,
            available: bytes.len(),
        });
    };
    let high_bits = first & 0xffu8.checked_shr(extra as u32).unwrap_or(0);
    let value = rest
        .iter()
        .fold(u64::from(high_bits), |acc, &b| (acc << 8) | u64::from(b));
    Ok((value, length))
}

/// Decodes a zigzag-encoded signed vint at the start of `bytes`; returns the value and its length.
pub fn decode_signed(bytes: &[u8]) -> Result<(i64, usize), VintError> {
    decode_unsigned(bytes).map(|(value, length)| (unzigzag(value), length))
}

/// Maps signed to unsigned so that small magnitudes stay small: 0, -1, 1, -2 → 0, 1, 2, 3.
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsigned(value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_unsigned(value, &mut out);
        out
    }

    /// Bytes for each length from the definition: `n` bytes hold `7n` value bits (n ≤ 8) with `n-1`
    /// leading 1-bits then a 0-bit in the first byte; 9 bytes are `0xff` and the 8 value bytes.
    #[test]
    fn each_length_boundary_matches_the_definition() {
        for n in 1..=8usize {
            let largest = (1u64 << (7 * n)) - 1;
            let encoded = unsigned(largest);
            assert_eq!(encoded.len(), n, "2^{}-1", 7 * n);
            // The first byte: n-1 ones, a zero, then all ones; every other byte is 0xff.
            let first = if n == 8 {
                0xfe
            } else {
                0xffu8 ^ (0x80 >> (n - 1))
            };
            assert_eq!(encoded[0], first, "2^{}-1", 7 * n);
            assert!(encoded[1..].iter().all(|&b| b == 0xff));
            assert_eq!(decode_unsigned(&encoded), Ok((largest, n)));
            let smallest_next = largest + 1;
            assert_eq!(unsigned(smallest_next).len(), n + 1);
            assert_eq!(
                decode_unsigned(&unsigned(smallest_next)),
                Ok((smallest_next, n + 1))
            );
        }
        assert_eq!(unsigned(0), [0x00]);
        assert_eq!(unsigned(127), [0x7f]);
        assert_eq!(unsigned(128), [0x80, 0x80]);
        assert_eq!(unsigned(u64::MAX), [0xff; 9]);
        assert_eq!(decode_unsigned(&[0xff; 9]), Ok((u64::MAX, 9)));
        assert_eq!(
            unsigned(1 << 56),
            [0xff, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        );
    }

    #[test]
    fn decoding_reads_only_its_own_bytes_and_reports_truncation() {
        assert_eq!(decode_unsigned(&[0x05, 0xff]), Ok((5, 1)));
        assert_eq!(
            decode_unsigned(&[]),
            Err(VintError {
                needed: 1,
                available: 0
            })
        );
        assert_eq!(
            decode_unsigned(&[0xc0, 0x01]),
            Err(VintError {
                needed: 3,
                available: 2
            })
        );
        assert_eq!(
            decode_unsigned(&[0xff; 8]),
            Err(VintError {
                needed: 9,
                available: 8
            })
        );
        // A non-minimal form is accepted.
        assert_eq!(decode_unsigned(&[0x80, 0x05]), Ok((5, 2)));
    }

    #[test]
    fn zigzag_interleaves_signs() {
        assert_eq!([0, -1, 1, -2, 2].map(zigzag), [0, 1, 2, 3, 4]);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
        assert_eq!(zigzag(i64::MAX), u64::MAX - 1);
        for v in [0, -1, 1, i64::MIN, i64::MAX, 123_456_789, -987_654_321] {
            assert_eq!(unzigzag(zigzag(v)), v);
            let mut out = Vec::new();
            encode_signed(v, &mut out);
            assert_eq!(decode_signed(&out), Ok((v, out.len())));
        }
    }
}
