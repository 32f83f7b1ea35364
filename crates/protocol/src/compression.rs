//! Compressed bodies of v3/v4 frames (flag 0x01): LZ4 (`[4-byte big-endian length][LZ4 block]`,
//! [`crate::lz4`]) or Snappy (the raw format, length as a leading varint), whichever the client
//! named in its STARTUP; when that was not seen, both are tried.

use crate::lz4::{self, Lz4Error};
use std::fmt;

/// A body compression algorithm of protocol v3/v4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// LZ4, as `lz4` in STARTUP.
    Lz4,
    /// Snappy, as `snappy` in STARTUP.
    Snappy,
}

impl Compression {
    /// The algorithm a STARTUP `COMPRESSION` value names (case-insensitive), if known.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "lz4" => Some(Compression::Lz4),
            "snappy" => Some(Compression::Snappy),
            _ => None,
        }
    }

    /// The STARTUP name: `lz4` or `snappy`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A body that cannot be had: a compressed one that does not decompress, or one the capture cut
/// short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The capture cut packets of the frame short (its snapshot length): `missing` of the body's
    /// bytes were not captured, the first after `captured` bytes.
    #[error("{missing} of its {length} bytes not captured")]
    NotCaptured {
        /// The body's length, by its header.
        length: u32,
        /// Bytes of the body captured before the first missing one.
        captured: usize,
        /// Bytes of the body not captured.
        missing: u64,
    },
    /// The LZ4 body is bad (the error's offset is in the body).
    #[error("LZ4 body: {0}")]
    Lz4(Lz4Error),
    /// The Snappy body is bad.
    #[error("Snappy body: {0}")]
    Snappy(String),
    /// With the algorithm unknown, neither decompresses it.
    #[error("body decompresses neither as LZ4 ({lz4}) nor as Snappy ({snappy})")]
    Neither {
        /// Why LZ4 failed.
        lz4: Lz4Error,
        /// Why Snappy failed.
        snappy: String,
    },
}

/// Decompresses a flag-0x01 body into `out` (replacing its content) with `algorithm`, or, when it
/// is `None`, with LZ4 and else Snappy; returns the algorithm that worked. A length above
/// `max_size` is refused before anything is allocated.
pub fn decompress_body(
    body: &[u8],
    algorithm: Option<Compression>,
    max_size: usize,
    out: &mut Vec<u8>,
) -> Result<Compression, BodyError> {
    match algorithm {
        Some(Compression::Lz4) => lz4::decompress_body_into(body, max_size, out)
            .map(|()| Compression::Lz4)
            .map_err(BodyError::Lz4),
        Some(Compression::Snappy) => snappy_into(body, max_size, out)
            .map(|()| Compression::Snappy)
            .map_err(BodyError::Snappy),
        None => match lz4::decompress_body_into(body, max_size, out) {
            Ok(()) => Ok(Compression::Lz4),
            Err(lz4) => match snappy_into(body, max_size, out) {
                Ok(()) => Ok(Compression::Snappy),
                Err(snappy) => Err(BodyError::Neither { lz4, snappy }),
            },
        },
    }
}

fn snappy_into(body: &[u8], max_size: usize, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    let len = snap::raw::decompress_len(body).map_err(|e| e.to_string())?;
    if len > max_size {
        return Err(format!(
            "declared uncompressed length {len} exceeds the limit of {max_size} bytes"
        ));
    }
    out.resize(len, 0);
    match snap::raw::Decoder::new().decompress(body, out) {
        Ok(written) if written == len => Ok(()),
        Ok(written) => {
            out.clear();
            Err(format!(
                "decompresses to {written} bytes, not the declared {len}"
            ))
        }
        Err(error) => {
            out.clear();
            Err(error.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_guessing() {
        assert_eq!(Compression::from_name("LZ4"), Some(Compression::Lz4));
        assert_eq!(Compression::from_name("zstd"), None);
        let payload = b"hello hello hello hello".repeat(10);
        let lz4_body = lz4::compress_body(&payload).unwrap();
        let snappy_body = snap::raw::Encoder::new().compress_vec(&payload).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            decompress_body(&lz4_body, None, 1 << 20, &mut out),
            Ok(Compression::Lz4)
        );
        assert_eq!(out, payload);
        assert_eq!(
            decompress_body(&snappy_body, None, 1 << 20, &mut out),
            Ok(Compression::Snappy)
        );
        assert_eq!(out, payload);
        assert!(decompress_body(&snappy_body, Some(Compression::Lz4), 1 << 20, &mut out).is_err());
        let error = decompress_body(&snappy_body, Some(Compression::Snappy), 10, &mut out);
        assert!(error
            .unwrap_err()
            .to_string()
            .contains("exceeds the limit of 10 bytes"));
        assert!(matches!(
            decompress_body(&[0xff; 3], None, 1 << 20, &mut out),
            Err(BodyError::Neither { .. })
        ));
    }
}
