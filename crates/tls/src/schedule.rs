//! The key-schedule glue between the key log's secrets and the record keys: the TLS 1.2 PRF
//! (RFC 5246 §5) and its key block (§6.3), and TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1),
//! traffic keys and IVs (§7.3) and the KeyUpdate secret (§7.2). Hashing, HMAC and HKDF are the
//! RustCrypto crates'; only the framing of their inputs is written here.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Sha256, Sha384};

/// The hash of a cipher suite: the PRF's in TLS 1.2, HKDF's in TLS 1.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashAlgorithm {
    /// SHA-256 (32-byte output).
    Sha256,
    /// SHA-384 (48-byte output).
    Sha384,
}

impl HashAlgorithm {
    /// The output length in bytes, which is also the length of a TLS 1.3 traffic secret.
    pub fn output_len(self) -> usize {
        match self {
            HashAlgorithm::Sha256 => 32,
            HashAlgorithm::Sha384 => 48,
        }
    }
}

/// The longest output any supported hash gives (SHA-384).
pub const MAX_HASH_LEN: usize = 48;

/// The longest `HkdfLabel.label` (RFC 8446 §7.1: `opaque label<7..255>`, "tls13 " included).
const MAX_LABEL_LEN: usize = 255;

/// Why a key-schedule input was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyScheduleError {
    /// The secret is shorter than the hash output (HKDF's PRK must be at least that long).
    #[error("secret of {found} bytes is shorter than the {needed}-byte hash output")]
    SecretTooShort {
        /// Bytes given.
        found: usize,
        /// Bytes the hash needs.
        needed: usize,
    },
    /// More output than HKDF-Expand can give (255 hash blocks), or than `HkdfLabel.length` holds.
    #[error("{0} bytes of output is more than HKDF-Expand-Label can give")]
    OutputTooLong(usize),
    /// A label or context longer than `HkdfLabel` can carry (255 bytes each).
    #[error("label or context longer than 255 bytes")]
    LabelTooLong,
}

/// The TLS 1.2 PRF: `P_hash(secret, label || seed)` (RFC 5246 §5), filling `out`.
pub fn tls12_prf(hash: HashAlgorithm, secret: &[u8], label: &[u8], seed: &[u8], out: &mut [u8]) {
    match hash {
        HashAlgorithm::Sha256 => p_hash::<Hmac<Sha256>>(secret, &[label, seed], out),
        HashAlgorithm::Sha384 => p_hash::<Hmac<Sha384>>(secret, &[label, seed], out),
    }
}

/// `P_hash`: `A(0) = seed`, `A(i) = HMAC(secret, A(i-1))`, output `HMAC(secret, A(i) || seed)`
/// for i = 1, 2, … until `out` is full. `seed` is given in parts (label, then seed).
fn p_hash<M: Mac + KeyInit + Clone>(secret: &[u8], seed: &[&[u8]], out: &mut [u8]) {
    // HMAC takes keys of any length, so this cannot fail.
    let Ok(keyed) = <M as KeyInit>::new_from_slice(secret) else {
        return;
    };
    let mut a = keyed.clone();
    for part in seed {
        a.update(part);
    }
    let mut a_i = a.finalize().into_bytes();
    for block in out.chunks_mut(a_i.len()) {
        let mut mac = keyed.clone();
        mac.update(&a_i);
        for part in seed {
            mac.update(part);
        }
        let output = mac.finalize().into_bytes();
        block.copy_from_slice(&output[..block.len()]);
        let mut next = keyed.clone();
        next.update(&a_i);
        a_i = next.finalize().into_bytes();
    }
}

/// The TLS 1.2 write keys and IVs of both sides for an AEAD suite (no MAC keys), cut from the key
/// block `PRF(master_secret, "key expansion", server_random || client_random)` (RFC 5246 §6.3).
#[derive(Clone, PartialEq, Eq)]
pub struct Tls12KeyBlock {
    /// The client's write key.
    pub client_key: Vec<u8>,
    /// The server's write key.
    pub server_key: Vec<u8>,
    /// The client's write IV (the 4-byte salt for AES-GCM, 12 bytes for ChaCha20-Poly1305).
    pub client_iv: Vec<u8>,
    /// The server's write IV.
    pub server_iv: Vec<u8>,
}

impl std::fmt::Debug for Tls12KeyBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tls12KeyBlock({}-byte keys, {}-byte IVs)",
            self.client_key.len(),
            self.client_iv.len()
        )
    }
}

/// Derives the TLS 1.2 key block of an AEAD suite with `key_len`-byte keys and `iv_len`-byte IVs.
pub fn tls12_key_block(
    hash: HashAlgorithm,
    master_secret: &[u8],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
    key_len: usize,
    iv_len: usize,
) -> Tls12KeyBlock {
    let mut block = vec![0u8; 2 * key_len + 2 * iv_len];
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(server_random);
    seed[32..].copy_from_slice(client_random);
    tls12_prf(hash, master_secret, b"key expansion", &seed, &mut block);
    let (client_key, rest) = block.split_at(key_len);
    let (server_key, rest) = rest.split_at(key_len);
    let (client_iv, server_iv) = rest.split_at(iv_len);
    Tls12KeyBlock {
        client_key: client_key.to_vec(),
        server_key: server_key.to_vec(),
        client_iv: client_iv.to_vec(),
        server_iv: server_iv.to_vec(),
    }
}

/// The `HkdfLabel` structure HKDF-Expand-Label uses as HKDF's info (RFC 8446 §7.1):
/// `uint16 length`, `opaque label<7..255>` ("tls13 " + `label`), `opaque context<0..255>`.
pub fn hkdf_label(length: u16, label: &[u8], context: &[u8]) -> Result<Vec<u8>, KeyScheduleError> {
    let full_label_len = b"tls13 ".len() + label.len();
    if full_label_len > MAX_LABEL_LEN || context.len() > MAX_LABEL_LEN {
        return Err(KeyScheduleError::LabelTooLong);
    }
    let mut info = Vec::with_capacity(4 + full_label_len + context.len());
    info.extend_from_slice(&length.to_be_bytes());
    info.push(full_label_len as u8);
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label);
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    Ok(info)
}

/// HKDF-Expand-Label(secret, label, context, out.len()) (RFC 8446 §7.1), filling `out`.
pub fn hkdf_expand_label(
    hash: HashAlgorithm,
    secret: &[u8],
    label: &[u8],
    context: &[u8],
    out: &mut [u8],
) -> Result<(), KeyScheduleError> {
    let length =
        u16::try_from(out.len()).map_err(|_| KeyScheduleError::OutputTooLong(out.len()))?;
    let info = hkdf_label(length, label, context)?;
    let too_short = KeyScheduleError::SecretTooShort {
        found: secret.len(),
        needed: hash.output_len(),
    };
    let expanded = match hash {
        HashAlgorithm::Sha256 => hkdf::Hkdf::<Sha256>::from_prk(secret)
            .map_err(|_| too_short)?
            .expand(&info, out),
        HashAlgorithm::Sha384 => hkdf::Hkdf::<Sha384>::from_prk(secret)
            .map_err(|_| too_short)?
            .expand(&info, out),
    };
    expanded.map_err(|_| KeyScheduleError::OutputTooLong(out.len()))
}

/// A TLS 1.3 record key and IV derived from a traffic secret (RFC 8446 §7.3).
#[derive(Clone, PartialEq, Eq)]
pub struct TrafficKey {
    /// `HKDF-Expand-Label(secret, "key", "", key_length)`.
    pub key: Vec<u8>,
    /// `HKDF-Expand-Label(secret, "iv", "", 12)`.
    pub iv: [u8; 12],
}

impl std::fmt::Debug for TrafficKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TrafficKey({}-byte key)", self.key.len())
    }
}

/// Derives the record key (`key_len` bytes) and IV of a TLS 1.3 traffic secret.
pub fn tls13_traffic_key(
    hash: HashAlgorithm,
    secret: &[u8],
    key_len: usize,
) -> Result<TrafficKey, KeyScheduleError> {
    let mut key = vec![0u8; key_len];
    hkdf_expand_label(hash, secret, b"key", b"", &mut key)?;
    let mut iv = [0u8; 12];
    hkdf_expand_label(hash, secret, b"iv", b"", &mut iv)?;
    Ok(TrafficKey { key, iv })
}

/// The traffic secret after a KeyUpdate:
/// `HKDF-Expand-Label(secret, "traffic upd", "", Hash.length)` (RFC 8446 §7.2), written over `secret`.
pub fn tls13_next_traffic_secret(
    hash: HashAlgorithm,
    secret: &mut [u8],
) -> Result<(), KeyScheduleError> {
    let mut next = [0u8; MAX_HASH_LEN];
    let next = &mut next[..hash.output_len()];
    hkdf_expand_label(hash, secret, b"traffic upd", b"", next)?;
    if secret.len() != next.len() {
        return Err(KeyScheduleError::SecretTooShort {
            found: secret.len(),
            needed: next.len(),
        });
    }
    secret.copy_from_slice(next);
    Ok(())
}
