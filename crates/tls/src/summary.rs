//! What a TLS connection shows in the clear: versions, server name, cipher suite.

use std::fmt;

/// A TLS protocol version as it appears on the wire (e.g. `0x0303` for TLS 1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TlsVersion(pub u16);

impl TlsVersion {
    /// TLS 1.2.
    pub const TLS12: TlsVersion = TlsVersion(0x0303);
    /// TLS 1.3.
    pub const TLS13: TlsVersion = TlsVersion(0x0304);
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0x0300 => f.write_str("SSL 3.0"),
            0x0301..=0x0304 => write!(f, "TLS 1.{}", self.0 - 0x0301),
            other => write!(f, "0x{other:04x}"),
        }
    }
}

/// A cipher suite by its IANA number (e.g. `0x1301`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CipherSuite(pub u16);

impl CipherSuite {
    /// The IANA name, e.g. `TLS_AES_128_GCM_SHA256` or `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`.
    pub fn name(self) -> Option<&'static str> {
        tls_parser::TlsCipherSuite::from_id(self.0).map(|suite| suite.name)
    }
}

impl fmt::Display for CipherSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "0x{:04x}", self.0),
        }
    }
}

/// What the hellos of a connection showed in the clear, as far as they were seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsSummary {
    /// The versions the ClientHello offered, in its order: its supported_versions extension
    /// (GREASE values left out), else its legacy version. Empty until a ClientHello is seen.
    pub offered_versions: Vec<TlsVersion>,
    /// The server name (SNI host_name) the ClientHello asked for, as sent (invalid UTF-8 replaced).
    pub server_name: Option<String>,
    /// The ClientHello's random, which names the connection in the key log (not secret).
    pub client_random: Option<[u8; 32]>,
    /// The version the ServerHello chose (its supported_versions extension, else its legacy version).
    pub chosen_version: Option<TlsVersion>,
    /// The cipher suite the ServerHello chose.
    pub cipher_suite: Option<CipherSuite>,
    /// Whether the server first answered with a HelloRetryRequest.
    pub hello_retry_request: bool,
}

/// One line, with control characters of the server name escaped, e.g.
/// `TLS 1.3 (offered TLS 1.3, TLS 1.2), SNI "db.example", TLS_AES_256_GCM_SHA384`.
impl fmt::Display for TlsSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.chosen_version {
            Some(version) => write!(f, "{version}")?,
            None => f.write_str("TLS, no ServerHello seen")?,
        }
        if !self.offered_versions.is_empty() {
            f.write_str(" (offered ")?;
            for (i, version) in self.offered_versions.iter().enumerate() {
                write!(f, "{}{version}", if i == 0 { "" } else { ", " })?;
            }
            f.write_str(")")?;
        }
        if let Some(name) = &self.server_name {
            write!(f, ", SNI \"{}\"", name.escape_debug())?;
        }
        if let Some(suite) = self.cipher_suite {
            write!(f, ", {suite}")?;
        }
        if self.hello_retry_request {
            f.write_str(", after a HelloRetryRequest")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_suites_print_their_names() {
        assert_eq!(TlsVersion(0x0303).to_string(), "TLS 1.2");
        assert_eq!(TlsVersion(0x0300).to_string(), "SSL 3.0");
        assert_eq!(TlsVersion(0x7f1c).to_string(), "0x7f1c");
        assert_eq!(CipherSuite(0x1302).to_string(), "TLS_AES_256_GCM_SHA384");
        assert_eq!(
            CipherSuite(0xcca8).to_string(),
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        );
        assert_eq!(CipherSuite(0xfefe).to_string(), "0xfefe");
    }

    #[test]
    fn summary_escapes_the_server_name() {
        let summary = TlsSummary {
            offered_versions: vec![TlsVersion::TLS13, TlsVersion::TLS12],
            server_name: Some("db\n\u{1b}[2J".into()),
            chosen_version: Some(TlsVersion::TLS13),
            cipher_suite: Some(CipherSuite(0x1301)),
            ..TlsSummary::default()
        };
        assert_eq!(
            summary.to_string(),
            r#"TLS 1.3 (offered TLS 1.3, TLS 1.2), SNI "db\n\u{1b}[2J", TLS_AES_128_GCM_SHA256"#
        );
    }
}
