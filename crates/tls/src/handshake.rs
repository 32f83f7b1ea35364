//! Handshake messages: their reassembly across records (a message may span several records and a
//! record may hold several messages) and the hellos read with `tls-parser`.

use sha2::{Digest, Sha256};
use tls_parser::{TlsExtension, TlsVersion as ParsedVersion};

use crate::summary::TlsVersion;

/// The longest ClientHello or ServerHello kept for parsing; other messages are skipped as they
/// stream past, whatever length they claim.
pub(crate) const MAX_HELLO_LEN: usize = 1 << 16;

/// Handshake message types this crate acts on (RFC 8446 §4).
pub(crate) mod message_type {
    pub(crate) const CLIENT_HELLO: u8 = 1;
    pub(crate) const SERVER_HELLO: u8 = 2;
    pub(crate) const FINISHED: u8 = 20;
    pub(crate) const KEY_UPDATE: u8 = 24;
}

/// Cuts a stream of handshake record contents into messages, keeping the bodies of hellos only.
#[derive(Default)]
pub(crate) struct HandshakeReader {
    header: [u8; 4],
    header_len: usize,
    remaining: usize,
    body: Vec<u8>,
    keep: bool,
}

impl HandshakeReader {
    /// Feeds record content; calls `on_message(type, body)` for each message completed, with the
    /// body of a hello of at most [`MAX_HELLO_LEN`] bytes (`None` for every other message).
    pub(crate) fn feed(&mut self, mut data: &[u8], mut on_message: impl FnMut(u8, Option<&[u8]>)) {
        loop {
            if self.header_len < 4 {
                let n = (4 - self.header_len).min(data.len());
                self.header[self.header_len..self.header_len + n].copy_from_slice(&data[..n]);
                self.header_len += n;
                data = &data[n..];
                if self.header_len < 4 {
                    return;
                }
                self.remaining = usize::from(self.header[1]) << 16
                    | usize::from(self.header[2]) << 8
                    | usize::from(self.header[3]);
                let msg_type = self.header[0];
                self.keep = matches!(
                    msg_type,
                    message_type::CLIENT_HELLO | message_type::SERVER_HELLO
                ) && self.remaining <= MAX_HELLO_LEN;
                self.body.clear();
            }
            let n = self.remaining.min(data.len());
            if self.keep {
                self.body.extend_from_slice(&data[..n]);
            }
            self.remaining -= n;
            data = &data[n..];
            if self.remaining > 0 {
                return;
            }
            on_message(self.header[0], self.keep.then_some(&self.body[..]));
            self.header_len = 0;
            if data.is_empty() {
                return;
            }
        }
    }

    /// Whether a message has started and not ended.
    pub(crate) fn is_mid_message(&self) -> bool {
        self.header_len > 0
    }
}

/// What a ClientHello shows in the clear.
pub(crate) struct ClientHelloInfo {
    pub(crate) random: [u8; 32],
    /// supported_versions without GREASE values, else the legacy version.
    pub(crate) offered_versions: Vec<TlsVersion>,
    pub(crate) server_name: Option<String>,
    pub(crate) offers_early_data: bool,
}

/// What a ServerHello (or HelloRetryRequest) shows in the clear.
pub(crate) struct ServerHelloInfo {
    pub(crate) random: [u8; 32],
    /// supported_versions' selected version, else the legacy version.
    pub(crate) version: TlsVersion,
    pub(crate) cipher_suite: u16,
    pub(crate) is_retry_request: bool,
}

/// GREASE values (RFC 8701) are 0x?A?A and mean nothing.
fn is_grease(value: u16) -> bool {
    value & 0x0f0f == 0x0a0a
}

/// Reads a ClientHello body; `None` if it does not parse.
pub(crate) fn parse_client_hello(body: &[u8]) -> Option<ClientHelloInfo> {
    let (_, hello) = tls_parser::parse_tls_handshake_client_hello(body).ok()?;
    let mut info = ClientHelloInfo {
        random: hello.random.try_into().ok()?,
        offered_versions: vec![TlsVersion(hello.version.0)],
        server_name: None,
        offers_early_data: false,
    };
    let extensions = hello
        .ext
        .and_then(|e| tls_parser::parse_tls_client_hello_extensions(e).ok())
        .map(|(_, e)| e)
        .unwrap_or_default();
    for extension in extensions {
        match extension {
            TlsExtension::SupportedVersions(versions) => {
                info.offered_versions = versions
                    .iter()
                    .filter(|v| !is_grease(v.0))
                    .map(|v: &ParsedVersion| TlsVersion(v.0))
                    .collect();
            }
            TlsExtension::SNI(names) => {
                if let Some((_, name)) = names.iter().find(|(kind, _)| kind.0 == 0) {
                    info.server_name = Some(String::from_utf8_lossy(name).into_owned());
                }
            }
            TlsExtension::EarlyData(_) => info.offers_early_data = true,
            _ => {}
        }
    }
    Some(info)
}

/// Reads a ServerHello body; `None` if it does not parse.
pub(crate) fn parse_server_hello(body: &[u8]) -> Option<ServerHelloInfo> {
    let (_, hello) = tls_parser::parse_tls_handshake_server_hello(body).ok()?;
    let random: [u8; 32] = hello.random.try_into().ok()?;
    let mut version = TlsVersion(hello.version.0);
    let extensions = hello
        .ext
        .and_then(|e| tls_parser::parse_tls_server_hello_extensions(e).ok())
        .map(|(_, e)| e)
        .unwrap_or_default();
    for extension in extensions {
        if let TlsExtension::SupportedVersions(selected) = extension {
            if let [selected] = selected.as_slice() {
                version = TlsVersion(selected.0);
            }
        }
    }
    // A HelloRetryRequest is a ServerHello whose random is SHA-256("HelloRetryRequest") (RFC 8446 §4.1.3).
    let is_retry_request = random[..] == Sha256::digest(b"HelloRetryRequest")[..];
    Some(ServerHelloInfo {
        random,
        version,
        cipher_suite: hello.cipher.0,
        is_retry_request,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(chunks: &[&[u8]]) -> Vec<(u8, Option<Vec<u8>>)> {
        let mut reader = HandshakeReader::default();
        let mut out = Vec::new();
        for chunk in chunks {
            reader.feed(chunk, |t, body| out.push((t, body.map(<[u8]>::to_vec))));
        }
        out
    }

    #[test]
    fn splits_messages_across_and_within_chunks() {
        let stream = [20u8, 0, 0, 2, 0xaa, 0xbb, 2, 0, 0, 1, 0xcc, 24, 0, 0, 0];
        let expected = vec![(20, None), (2, Some(vec![0xcc])), (24, None)];
        assert_eq!(messages(&[&stream]), expected);
        let single: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(messages(&single), expected);
        assert_eq!(
            messages(&[&stream[..3], &stream[3..11], &stream[11..]]),
            expected
        );
    }

    #[test]
    fn skips_a_hello_longer_than_kept_without_buffering_it() {
        let len = MAX_HELLO_LEN + 1;
        let header = [1u8, (len >> 16) as u8, (len >> 8) as u8, len as u8];
        let body = vec![0u8; len];
        let mut reader = HandshakeReader::default();
        let mut seen = Vec::new();
        reader.feed(&header, |t, b| seen.push((t, b.is_some())));
        for chunk in body.chunks(4096) {
            reader.feed(chunk, |t, b| seen.push((t, b.is_some())));
            assert!(reader.body.capacity() < 4096);
        }
        assert_eq!(seen, vec![(1, false)]);
        assert!(!reader.is_mid_message());
    }
}
