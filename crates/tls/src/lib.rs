//! Names and decrypts captured TLS connections.
//!
//! A [`TlsConnection`] is fed the bytes of each direction of one TCP connection in capture order,
//! split anywhere. It parses the TLS record layer, follows the handshake in the clear (ClientHello:
//! offered versions, server name, client random; ServerHello: chosen version, cipher suite;
//! HelloRetryRequest) into a [`TlsSummary`], and, given an NSS [`KeyLog`] with the connection's
//! secrets, decrypts the records and hands back each direction's application data as a byte stream.
//! Alerts, key updates and problems (a missing secret, a record failing authentication, an
//! unsupported suite, a gap, malformed records) come as [`TlsEvent`]s, each problem once.
//!
//! Decrypted: TLS 1.2 with AES-128-GCM, AES-256-GCM or ChaCha20-Poly1305 (any key exchange: the
//! key log holds the master secret) and TLS 1.3 with `TLS_AES_128_GCM_SHA256`,
//! `TLS_AES_256_GCM_SHA384` and `TLS_CHACHA20_POLY1305_SHA256`, including encrypted handshake
//! records, padding, KeyUpdate and compatibility ChangeCipherSpec records. Not decrypted (reported):
//! other suites, TLS 1.0/1.1, TLS 1.3 0-RTT early data, TLS 1.2 renegotiation.
//!
//! Memory per connection is bounded by two records (at most [`MAX_RECORD_LEN`] bytes each) and one
//! hello; no length read from the input allocates more than that. Key material never appears in
//! any `Debug`, `Display`, error or event.
//!
//! Record and handshake parsing is `tls-parser`'s; the AEADs, hashes, HMAC and HKDF are RustCrypto's.
//!
//! The API is what the crate root re-exports: [`TlsConnection`], its events and summary, and the
//! [`KeyLog`]. The key schedule (`schedule`) is public only for the tests that check it against
//! RFC 8448's trace and OpenSSL's outputs; it is not part of the API.

mod cipher;
mod connection;
mod event;
mod handshake;
mod keylog;
#[doc(hidden)]
pub mod schedule;
mod summary;

pub use connection::TlsConnection;
pub use event::{Alert, Direction, TlsEvent, TlsProblem, TlsProblemKind};
pub use keylog::{KeyLog, KeyLogError, KeyLogErrorKind, SecretLabel, MAX_LINE_LEN};
pub use summary::{CipherSuite, TlsSummary, TlsVersion};

/// The length of a TLS record header: content type, version, length.
pub const HEADER_LEN: usize = 5;

/// The largest record body accepted: 2^14 + 2048 bytes, TLS 1.2's `TLSCiphertext` limit (TLS 1.3's
/// is 2^14 + 256). A header declaring more is malformed.
pub const MAX_RECORD_LEN: usize = (1 << 14) + 2048;

/// Whether `first_bytes` (the start of a direction of a connection) look like a TLS record header:
/// a content type of 20–24 (ChangeCipherSpec, alert, handshake, application data, heartbeat), a
/// 3.x version (SSL 3.0 to TLS 1.3) and a non-zero length within [`MAX_RECORD_LEN`]. Needs the
/// 5 header bytes. A CQL frame never passes: its first byte is a protocol version (3–5, or
/// 0x83–0x85 for a response).
pub fn looks_like_tls(first_bytes: &[u8]) -> bool {
    let Some(header) = first_bytes.get(..HEADER_LEN) else {
        return false;
    };
    let len = usize::from(header[3]) << 8 | usize::from(header[4]);
    (20..=24).contains(&header[0])
        && header[1] == 3
        && header[2] <= 4
        && (1..=MAX_RECORD_LEN).contains(&len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_like_tls_accepts_record_headers_and_refuses_cql_frames() {
        assert!(looks_like_tls(&[0x16, 0x03, 0x01, 0x00, 0xc4, 0x01]));
        assert!(looks_like_tls(&[0x17, 0x03, 0x03, 0x40, 0x11]));
        assert!(
            !looks_like_tls(&[0x16, 0x03, 0x01, 0x00]),
            "needs the whole header"
        );
        assert!(
            !looks_like_tls(&[0x04, 0x00, 0x00, 0x01, 0x05, 0, 0, 0, 0]),
            "a CQL v4 OPTIONS request"
        );
        assert!(
            !looks_like_tls(&[0x84, 0x00, 0x00, 0x01, 0x06]),
            "a CQL v4 response"
        );
        assert!(
            !looks_like_tls(&[0x16, 0x03, 0x05, 0x00, 0x10]),
            "no TLS 1.4"
        );
        assert!(
            !looks_like_tls(&[0x17, 0x03, 0x03, 0x48, 0x01]),
            "longer than any record"
        );
        assert!(!looks_like_tls(&[0x17, 0x03, 0x03, 0x00, 0x00]), "empty");
    }
}
