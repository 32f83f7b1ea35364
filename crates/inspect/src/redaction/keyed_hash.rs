//! The keyed hash of `inspect --redact`: HMAC-SHA256 under a key drawn from the operating system
//! for each run (equal values get equal tags within one output, unrelated ones across runs), or
//! read from a key file (tags comparable across runs that share the file). Without the key a tag
//! says nothing about the value: it cannot be reversed by trying small ints, dates or booleans.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::fmt;

/// The fewest bytes a key file may hold: a shorter key could be guessed.
pub const MIN_KEY_BYTES: usize = 32;

/// The most bytes of a key file read: a key is a short secret, not a document.
pub const MAX_KEY_BYTES: usize = 4096;

/// Hex digits of a tag (32 bits of the MAC): enough to group equal values in one output.
pub const TAG_HEX_DIGITS: usize = 8;

/// Why a key file's bytes are not a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Fewer than [`MIN_KEY_BYTES`] bytes.
    #[error(
        "the key file holds {0} bytes; a key needs at least {MIN_KEY_BYTES} (make one with \
         `head -c 32 /dev/urandom > FILE`)"
    )]
    TooShort(usize),
    /// More than [`MAX_KEY_BYTES`] bytes.
    #[error("the key file holds more than {MAX_KEY_BYTES} bytes; a key is 32 to {MAX_KEY_BYTES}")]
    TooLong,
    /// The operating system gave no random bytes.
    #[error("no random key from the operating system: {0}")]
    NoRandomness(String),
}

/// Tags bytes with HMAC-SHA256 under one key.
#[derive(Clone)]
pub struct KeyedHash {
    /// The MAC keyed once, cloned for each tag.
    mac: Hmac<Sha256>,
}

/// The key never shows, not even in debug output.
impl fmt::Debug for KeyedHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyedHash(<key>)")
    }
}

impl KeyedHash {
    /// A hash under a fresh random key of 32 bytes from the operating system.
    pub fn random() -> Result<Self, KeyError> {
        let mut key = [0u8; MIN_KEY_BYTES];
        getrandom::fill(&mut key).map_err(|e| KeyError::NoRandomness(e.to_string()))?;
        Ok(Self::keyed(&key))
    }

    /// A hash under the bytes of a key file, taken as they are (a trailing newline is part of
    /// the key): at least [`MIN_KEY_BYTES`], at most [`MAX_KEY_BYTES`].
    pub fn from_key(key: &[u8]) -> Result<Self, KeyError> {
        if key.len() < MIN_KEY_BYTES {
            return Err(KeyError::TooShort(key.len()));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(KeyError::TooLong);
        }
        Ok(Self::keyed(key))
    }

    fn keyed(key: &[u8]) -> Self {
        KeyedHash {
            mac: Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length"),
        }
    }

    /// The full MAC of `bytes`.
    fn mac(&self, bytes: &[u8]) -> [u8; 32] {
        let mut mac = self.mac.clone();
        mac.update(bytes);
        mac.finalize().into_bytes().into()
    }

    /// The tag of `bytes`: the first [`TAG_HEX_DIGITS`] lowercase hex digits of their MAC.
    pub fn tag(&self, bytes: &[u8]) -> String {
        let mac = self.mac(bytes);
        cqlwire_codec::hex::encode(&mac[..TAG_HEX_DIGITS / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mac_is_hmac_sha256_of_rfc_4231() {
        // RFC 4231, test case 2 has a 4-byte key: build the hash around the length check.
        let hash = KeyedHash::keyed(b"Jefe");
        assert_eq!(
            cqlwire_codec::hex::encode(&hash.mac(b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(hash.tag(b"what do ya want for nothing?"), "5bdcc146");
    }

    #[test]
    fn short_and_huge_keys_are_refused() {
        assert_eq!(
            KeyedHash::from_key(&[7; 31]).unwrap_err(),
            KeyError::TooShort(31)
        );
        assert_eq!(
            KeyedHash::from_key(&[7; MAX_KEY_BYTES + 1]).unwrap_err(),
            KeyError::TooLong
        );
        let a = KeyedHash::from_key(&[7; 32]).unwrap();
        let b = KeyedHash::from_key(&[7; 32]).unwrap();
        assert_eq!(a.tag(b"x"), b.tag(b"x"));
        assert_ne!(a.tag(b"x"), a.tag(b"y"));
    }

    #[test]
    fn random_keys_differ_from_run_to_run() {
        let a = KeyedHash::random().unwrap();
        let b = KeyedHash::random().unwrap();
        assert_ne!(a.mac(b"1"), b.mac(b"1"));
        assert_eq!(format!("{a:?}"), "KeyedHash(<key>)");
    }
}
