//! Record decryption: the supported AEADs and the record sequencing of TLS 1.2 (RFC 5288 explicit
//! nonces for AES-GCM, RFC 7905 nonces for ChaCha20-Poly1305) and TLS 1.3 (RFC 8446 §5.2–5.3).

use aes_gcm::aead::{AeadInOut, KeyInit, Nonce, Tag};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::ChaCha20Poly1305;

use crate::schedule::HashAlgorithm;

/// The AEAD tag length of every supported suite.
const TAG_LEN: usize = 16;
/// The explicit nonce each TLS 1.2 AES-GCM record carries before its ciphertext.
const EXPLICIT_NONCE_LEN: usize = 8;

/// The record protection of a cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AeadKind {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl AeadKind {
    pub(crate) fn key_len(self) -> usize {
        match self {
            AeadKind::Aes128Gcm => 16,
            AeadKind::Aes256Gcm | AeadKind::ChaCha20Poly1305 => 32,
        }
    }

    /// The TLS 1.2 write IV length: AES-GCM's 4-byte implicit salt, ChaCha20-Poly1305's 12 bytes.
    pub(crate) fn tls12_iv_len(self) -> usize {
        match self {
            AeadKind::Aes128Gcm | AeadKind::Aes256Gcm => 4,
            AeadKind::ChaCha20Poly1305 => 12,
        }
    }
}

/// What a negotiated suite needs to decrypt: its AEAD and its hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SuiteParams {
    pub(crate) aead: AeadKind,
    pub(crate) hash: HashAlgorithm,
}

/// A keyed AEAD.
enum Aead {
    Aes128Gcm(Box<Aes128Gcm>),
    Aes256Gcm(Box<Aes256Gcm>),
    ChaCha20Poly1305(Box<ChaCha20Poly1305>),
}

/// How a record's nonce is formed.
#[derive(Clone, Copy)]
enum NonceScheme {
    /// TLS 1.2 AES-GCM: 4-byte salt from the key block, then the record's 8-byte explicit nonce.
    Tls12Explicit { salt: [u8; 4] },
    /// TLS 1.2 ChaCha20-Poly1305 and TLS 1.3: the 12-byte IV XOR the left-padded sequence number.
    XorSequence { iv: [u8; 12], tls13: bool },
}

/// Why a record could not be decrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecryptError {
    /// The record is too short for its nonce and tag.
    TooShort,
    /// The tag did not verify: wrong keys, or altered or misordered bytes.
    Authentication,
}

/// The read state of one direction: keys and the sequence number of the next record.
pub(crate) struct RecordDecrypter {
    aead: Aead,
    nonce: NonceScheme,
    sequence: u64,
}

impl RecordDecrypter {
    /// TLS 1.2 keys from the key block (`iv` is the write IV of the same side).
    pub(crate) fn tls12(kind: AeadKind, key: &[u8], iv: &[u8]) -> Option<RecordDecrypter> {
        let nonce = match kind {
            AeadKind::ChaCha20Poly1305 => NonceScheme::XorSequence {
                iv: iv.try_into().ok()?,
                tls13: false,
            },
            _ => NonceScheme::Tls12Explicit {
                salt: iv.try_into().ok()?,
            },
        };
        Some(RecordDecrypter {
            aead: Aead::new(kind, key)?,
            nonce,
            sequence: 0,
        })
    }

    /// TLS 1.3 keys derived from a traffic secret.
    pub(crate) fn tls13(kind: AeadKind, key: &[u8], iv: [u8; 12]) -> Option<RecordDecrypter> {
        Some(RecordDecrypter {
            aead: Aead::new(kind, key)?,
            nonce: NonceScheme::XorSequence { iv, tls13: true },
            sequence: 0,
        })
    }

    /// The number of records decrypted with these keys so far.
    pub(crate) fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Decrypts the record `header` + `body` in place; returns the plaintext's range in `body`
    /// (TLS 1.3: the inner plaintext, content type and padding still attached).
    pub(crate) fn decrypt(
        &mut self,
        header: &[u8; 5],
        body: &mut [u8],
    ) -> Result<std::ops::Range<usize>, DecryptError> {
        let mut nonce = [0u8; 12];
        let (start, aad_len);
        let mut aad = [0u8; 13];
        match self.nonce {
            NonceScheme::Tls12Explicit { salt } => {
                if body.len() < EXPLICIT_NONCE_LEN + TAG_LEN {
                    return Err(DecryptError::TooShort);
                }
                nonce[..4].copy_from_slice(&salt);
                nonce[4..].copy_from_slice(&body[..EXPLICIT_NONCE_LEN]);
                start = EXPLICIT_NONCE_LEN;
                aad_len = tls12_aad(
                    &mut aad,
                    self.sequence,
                    header,
                    body.len() - EXPLICIT_NONCE_LEN - TAG_LEN,
                );
            }
            NonceScheme::XorSequence { iv, tls13 } => {
                if body.len() < TAG_LEN {
                    return Err(DecryptError::TooShort);
                }
                nonce = iv;
                for (n, s) in nonce[4..].iter_mut().zip(self.sequence.to_be_bytes()) {
                    *n ^= s;
                }
                start = 0;
                aad_len = if tls13 {
                    aad[..5].copy_from_slice(header);
                    5
                } else {
                    tls12_aad(&mut aad, self.sequence, header, body.len() - TAG_LEN)
                };
            }
        }
        let end = body.len() - TAG_LEN;
        let (message, tag) = body[start..].split_at_mut(end - start);
        self.aead.open(&nonce, &aad[..aad_len], message, tag)?;
        self.sequence = self.sequence.wrapping_add(1);
        Ok(start..end)
    }
}

/// TLS 1.2's additional data: `seq_num || type || version || length` (RFC 5246 §6.2.3.3).
fn tls12_aad(aad: &mut [u8; 13], sequence: u64, header: &[u8; 5], plaintext_len: usize) -> usize {
    aad[..8].copy_from_slice(&sequence.to_be_bytes());
    aad[8..11].copy_from_slice(&header[..3]);
    // The body is at most the record maximum, so its length fits in 16 bits.
    aad[11..13].copy_from_slice(&(plaintext_len as u16).to_be_bytes());
    13
}

impl Aead {
    fn new(kind: AeadKind, key: &[u8]) -> Option<Aead> {
        Some(match kind {
            AeadKind::Aes128Gcm => Aead::Aes128Gcm(Box::new(Aes128Gcm::new_from_slice(key).ok()?)),
            AeadKind::Aes256Gcm => Aead::Aes256Gcm(Box::new(Aes256Gcm::new_from_slice(key).ok()?)),
            AeadKind::ChaCha20Poly1305 => {
                Aead::ChaCha20Poly1305(Box::new(ChaCha20Poly1305::new_from_slice(key).ok()?))
            }
        })
    }

    fn open(
        &self,
        nonce: &[u8; 12],
        aad: &[u8],
        message: &mut [u8],
        tag: &[u8],
    ) -> Result<(), DecryptError> {
        fn open_with<A: AeadInOut>(
            aead: &A,
            nonce: &[u8; 12],
            aad: &[u8],
            message: &mut [u8],
            tag: &[u8],
        ) -> Result<(), DecryptError> {
            let nonce =
                Nonce::<A>::try_from(&nonce[..]).map_err(|_| DecryptError::Authentication)?;
            let tag = Tag::<A>::try_from(tag).map_err(|_| DecryptError::Authentication)?;
            aead.decrypt_inout_detached(&nonce, aad, message.into(), &tag)
                .map_err(|_| DecryptError::Authentication)
        }
        match self {
            Aead::Aes128Gcm(aead) => open_with(aead.as_ref(), nonce, aad, message, tag),
            Aead::Aes256Gcm(aead) => open_with(aead.as_ref(), nonce, aad, message, tag),
            Aead::ChaCha20Poly1305(aead) => open_with(aead.as_ref(), nonce, aad, message, tag),
        }
    }
}
