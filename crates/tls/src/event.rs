//! What a [`crate::TlsConnection`] reports besides plaintext: hellos seen, alerts, key updates and
//! problems.

use std::fmt;

use crate::keylog::SecretLabel;
use crate::summary::{CipherSuite, TlsVersion};

/// The direction of a byte stream in a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client (the side that sent the ClientHello) to the server.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    pub(crate) fn index(self) -> usize {
        match self {
            Direction::ClientToServer => 0,
            Direction::ServerToClient => 1,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::ClientToServer => "client to server",
            Direction::ServerToClient => "server to client",
        })
    }
}

/// Something that happened in a connection, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsEvent {
    /// The ClientHello was read: [`crate::TlsConnection::summary`] now has the offered versions,
    /// the server name and the client random.
    ClientHello,
    /// The server asked the client for another ClientHello.
    HelloRetryRequest,
    /// The ServerHello was read: the summary now has the chosen version and cipher suite.
    ServerHello,
    /// An alert record (in the clear or decrypted).
    Alert(Alert),
    /// A TLS 1.3 KeyUpdate: the sender's next records use its next traffic secret.
    KeyUpdate(Direction),
    /// Something that stops or prevents decryption, reported once.
    Problem(TlsProblem),
}

/// A TLS alert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alert {
    /// Who sent it.
    pub direction: Direction,
    /// 1 warning, 2 fatal.
    pub level: u8,
    /// The alert description (0 close_notify, 40 handshake_failure, …).
    pub description: u8,
    /// Whether it came encrypted (and was decrypted).
    pub encrypted: bool,
}

impl Alert {
    /// Whether this is the close_notify that ends a connection normally.
    pub fn is_close_notify(&self) -> bool {
        self.description == 0
    }
}

/// e.g. `server to client alert Fatal HandshakeFailure`.
impl fmt::Display for Alert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} alert {} {}",
            self.direction,
            tls_parser::TlsAlertSeverity(self.level),
            tls_parser::TlsAlertDescription(self.description)
        )
    }
}

/// A problem with a connection or one of its directions; it never quotes key material.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsProblem {
    /// The direction it concerns (`None`: the whole connection).
    pub direction: Option<Direction>,
    /// Where in that direction's byte stream (the start of the record concerned), when known.
    pub offset: Option<u64>,
    /// What went wrong.
    pub kind: TlsProblemKind,
}

/// The kinds of [`TlsProblem`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsProblemKind {
    /// The key log has no such secret for this connection: what it protects is not decrypted.
    MissingSecret {
        /// The key log label missing.
        label: SecretLabel,
        /// The connection's client random (public: it is sent in the clear).
        client_random: [u8; 32],
    },
    /// The key log's secret has the wrong length for the negotiated suite's hash.
    SecretLengthMismatch {
        /// The key log label.
        label: SecretLabel,
        /// Its length in the key log.
        found: usize,
        /// The length the suite needs.
        expected: usize,
    },
    /// A record failed authentication: wrong keys (first record), or altered bytes.
    /// The direction is not decrypted further.
    AuthenticationFailed {
        /// The record's number under the keys in use (0: the first record they protect).
        record: u64,
    },
    /// The negotiated suite is not one this crate decrypts.
    UnsupportedCipherSuite(CipherSuite),
    /// The negotiated version is not TLS 1.2 or 1.3.
    UnsupportedVersion(TlsVersion),
    /// Bytes were lost (the caller said so): the direction is not decrypted further.
    Gap,
    /// A record header or record content that is not valid TLS; the direction stops.
    MalformedRecord(String),
    /// A hello that does not parse.
    MalformedHandshake(String),
    /// Encrypted records without the hellos before them (the capture started mid-connection, or
    /// lacks the other direction): there is no client random or suite to find keys by.
    HandshakeNotSeen,
    /// TLS 1.3 0-RTT early data, which is not decrypted; the client direction stops.
    EarlyData,
    /// A TLS 1.2 renegotiation, whose new keys are not followed; the direction stops.
    Renegotiation,
    /// The stream ended inside a record.
    TruncatedRecord {
        /// Bytes missing to complete it.
        missing: usize,
    },
}

impl fmt::Display for TlsProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsProblemKind::MissingSecret { label, client_random } => {
                write!(f, "the key log has no {label} for client random ")?;
                client_random.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
            TlsProblemKind::SecretLengthMismatch { label, found, expected } => {
                write!(f, "the key log's {label} is {found} bytes, the cipher suite needs {expected}")
            }
            TlsProblemKind::AuthenticationFailed { record } => write!(
                f,
                "record #{record} under the current keys fails authentication (wrong keys, or altered bytes); \
                 this direction is not decrypted further"
            ),
            TlsProblemKind::UnsupportedCipherSuite(suite) => write!(f, "cipher suite {suite} is not decrypted"),
            TlsProblemKind::UnsupportedVersion(version) => write!(f, "{version} is not decrypted"),
            TlsProblemKind::Gap => f.write_str("bytes lost: this direction is not decrypted further"),
            TlsProblemKind::MalformedRecord(reason) => write!(f, "malformed TLS record: {reason}"),
            TlsProblemKind::MalformedHandshake(reason) => write!(f, "malformed TLS handshake: {reason}"),
            TlsProblemKind::HandshakeNotSeen => {
                f.write_str("encrypted records without the handshake before them: cannot find the keys")
            }
            TlsProblemKind::EarlyData => f.write_str("TLS 1.3 early data (0-RTT) is not decrypted"),
            TlsProblemKind::Renegotiation => f.write_str("TLS renegotiation is not followed"),
            TlsProblemKind::TruncatedRecord { missing } => write!(f, "the stream ends {missing} bytes short of a whole record"),
        }
    }
}

/// e.g. `TLS server to client at byte 1234: record #0 under the current keys fails authentication …`.
impl fmt::Display for TlsProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TLS")?;
        if let Some(direction) = self.direction {
            write!(f, " {direction}")?;
        }
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        write!(f, ": {}", self.kind)
    }
}
