//! One TLS connection: the record layer of each direction, the handshake followed in the clear,
//! and decryption with the key log's secrets.

use std::sync::Arc;

use crate::cipher::{AeadKind, DecryptError, RecordDecrypter, SuiteParams};
use crate::event::{Alert, Direction, TlsEvent, TlsProblem, TlsProblemKind};
use crate::handshake::{self, message_type, HandshakeReader};
use crate::keylog::{KeyLog, Secret, SecretLabel};
use crate::schedule::{self, HashAlgorithm};
use crate::summary::{CipherSuite, TlsSummary, TlsVersion};
use crate::{HEADER_LEN, MAX_RECORD_LEN};

/// TLS record content types (RFC 8446 §5.1).
mod content_type {
    pub(crate) const CHANGE_CIPHER_SPEC: u8 = 20;
    pub(crate) const ALERT: u8 = 21;
    pub(crate) const HANDSHAKE: u8 = 22;
    pub(crate) const APPLICATION_DATA: u8 = 23;
    pub(crate) const HEARTBEAT: u8 = 24;
}

/// The level of an alert that ends the connection.
const ALERT_FATAL: u8 = 2;

/// How far the handshake has been followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No hello seen yet.
    Start,
    /// The ClientHello (and maybe a HelloRetryRequest) seen, not the ServerHello.
    ClientHello,
    /// A ServerHello seen and its suite supported.
    Negotiated { tls13: bool, params: SuiteParams },
    /// A ServerHello seen whose version or suite is not decrypted: records are skipped.
    Undecryptable,
}

/// The read state of one direction.
#[derive(Default)]
struct Side {
    /// The record being received: its header and as much of its body as has arrived.
    buffer: Vec<u8>,
    /// The stream offset of `buffer[0]`.
    record_offset: u64,
    handshake: HandshakeReader,
    /// Whether the records are protected now (TLS 1.2: after ChangeCipherSpec; TLS 1.3: after the
    /// ServerHello). Protected records without a decrypter are skipped.
    protected: bool,
    decrypter: Option<RecordDecrypter>,
    /// TLS 1.2: the keys that take effect at this side's ChangeCipherSpec.
    pending: Option<RecordDecrypter>,
    /// TLS 1.3: the traffic secret in use after the handshake (for KeyUpdate).
    traffic_secret: Option<Secret>,
    /// TLS 1.3: the first application traffic secret, used after this side's Finished.
    application_secret: Option<Secret>,
    /// TLS 1.3: whether the handshake keys are in use (this side's Finished not yet seen).
    in_handshake: bool,
    /// Nothing more is read from this direction: a problem was reported, or it sent close_notify
    /// or a fatal alert.
    stopped: bool,
}

/// What one decrypted or clear record asks of its side once it has been read.
#[derive(Default)]
struct KeyChanges {
    finished: bool,
    key_update: bool,
}

/// A captured TLS connection: feed it each direction's bytes in capture order; it reports what the
/// hellos show ([`TlsConnection::summary`]), gives the decrypted application data of each direction
/// as a byte stream, and reports alerts and problems as [`TlsEvent`]s.
///
/// Without a key log (or without the connection's secrets in it) nothing is decrypted and the
/// records are only framed; problems say which secret is missing.
pub struct TlsConnection {
    key_log: Option<Arc<KeyLog>>,
    summary: TlsSummary,
    stage: Stage,
    offers_early_data: bool,
    sides: [Side; 2],
    events: Vec<TlsEvent>,
}

impl std::fmt::Debug for TlsConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnection")
            .field("summary", &self.summary)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl TlsConnection {
    /// A connection decrypted with the secrets of `key_log` (none: only named, never decrypted).
    pub fn new(key_log: Option<Arc<KeyLog>>) -> TlsConnection {
        TlsConnection {
            key_log,
            summary: TlsSummary::default(),
            stage: Stage::Start,
            offers_early_data: false,
            sides: [Side::default(), Side::default()],
            events: Vec::new(),
        }
    }

    /// What the hellos showed so far.
    pub fn summary(&self) -> &TlsSummary {
        &self.summary
    }

    /// The events since the last call, in order.
    pub fn take_events(&mut self) -> Vec<TlsEvent> {
        std::mem::take(&mut self.events)
    }

    /// Whether `direction`'s records are being decrypted now.
    pub fn is_decrypting(&self, direction: Direction) -> bool {
        let side = &self.sides[direction.index()];
        !side.stopped && side.decrypter.is_some()
    }

    /// Feeds the next bytes of `direction` (split anywhere), appending the application data they
    /// complete to `plaintext`.
    pub fn feed(&mut self, direction: Direction, mut bytes: &[u8], plaintext: &mut Vec<u8>) {
        let i = direction.index();
        while !self.sides[i].stopped && !bytes.is_empty() {
            let side = &mut self.sides[i];
            if side.buffer.len() < HEADER_LEN {
                let n = (HEADER_LEN - side.buffer.len()).min(bytes.len());
                side.buffer.extend_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                if side.buffer.len() < HEADER_LEN {
                    return;
                }
                if let Err(reason) = check_header(&side.buffer) {
                    let offset = side.record_offset;
                    self.stop(
                        direction,
                        Some(offset),
                        TlsProblemKind::MalformedRecord(reason),
                    );
                    return;
                }
            }
            let total = HEADER_LEN + record_len(&side.buffer);
            let n = (total - side.buffer.len()).min(bytes.len());
            side.buffer.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if side.buffer.len() < total {
                return;
            }
            let mut record = std::mem::take(&mut side.buffer);
            let offset = side.record_offset;
            side.record_offset += total as u64;
            let result = self.read_record(direction, &mut record, plaintext);
            record.clear();
            self.sides[i].buffer = record;
            if let Err(kind) = result {
                self.stop(direction, Some(offset), kind);
            }
        }
    }

    /// Tells that bytes of `direction` were lost at this point: the direction cannot be decrypted
    /// further (its record boundaries and sequence numbers are unknown); reported once.
    pub fn gap(&mut self, direction: Direction) {
        let side = &self.sides[direction.index()];
        let offset = side.record_offset + side.buffer.len() as u64;
        self.stop(direction, Some(offset), TlsProblemKind::Gap);
    }

    /// Tells that both directions have ended: a record left incomplete is reported.
    pub fn finish(&mut self) {
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let side = &self.sides[direction.index()];
            if !side.stopped && !side.buffer.is_empty() {
                let missing = if side.buffer.len() < HEADER_LEN {
                    HEADER_LEN - side.buffer.len()
                } else {
                    HEADER_LEN + record_len(&side.buffer) - side.buffer.len()
                };
                let offset = side.record_offset;
                self.stop(
                    direction,
                    Some(offset),
                    TlsProblemKind::TruncatedRecord { missing },
                );
            }
        }
    }

    /// Stops reading `direction` and reports why (once: a stopped direction reports nothing more).
    fn stop(&mut self, direction: Direction, offset: Option<u64>, kind: TlsProblemKind) {
        let side = &mut self.sides[direction.index()];
        if side.stopped {
            return;
        }
        side.stopped = true;
        side.buffer = Vec::new();
        side.decrypter = None;
        self.problem(Some(direction), offset, kind);
    }

    fn problem(&mut self, direction: Option<Direction>, offset: Option<u64>, kind: TlsProblemKind) {
        self.events.push(TlsEvent::Problem(TlsProblem {
            direction,
            offset,
            kind,
        }));
    }

    /// Reads one whole record (header and body); an error stops the direction.
    fn read_record(
        &mut self,
        direction: Direction,
        record: &mut [u8],
        plaintext: &mut Vec<u8>,
    ) -> Result<(), TlsProblemKind> {
        let (header, body) = record.split_at_mut(HEADER_LEN);
        let header: [u8; HEADER_LEN] = [header[0], header[1], header[2], header[3], header[4]];
        let kind = header[0];
        let tls13 = self.summary.chosen_version == Some(TlsVersion::TLS13);
        let side = &mut self.sides[direction.index()];
        if kind == content_type::CHANGE_CIPHER_SPEC {
            // TLS 1.3 sends it only for middlebox compatibility, and it changes nothing before a ServerHello.
            if tls13 || matches!(self.stage, Stage::Start | Stage::ClientHello) {
                return Ok(());
            }
            if side.protected {
                return Err(TlsProblemKind::Renegotiation);
            }
            side.protected = true;
            side.decrypter = side.pending.take();
            return Ok(());
        }
        if !side.protected {
            return self.read_clear(direction, kind, body);
        }
        if tls13 && kind != content_type::APPLICATION_DATA {
            return match kind {
                content_type::ALERT => self.read_alerts(direction, body, false),
                content_type::HEARTBEAT => Ok(()),
                _ => Err(TlsProblemKind::MalformedRecord(format!(
                    "content type {kind} in the clear after the keys changed"
                ))),
            };
        }
        let Some(decrypter) = side.decrypter.as_mut() else {
            return Ok(()); // protected with keys this connection does not have (already reported)
        };
        let sequence = decrypter.sequence();
        let range = decrypter.decrypt(&header, body).map_err(|e| match e {
            DecryptError::TooShort => TlsProblemKind::MalformedRecord(format!(
                "a {}-byte protected record is too short",
                body.len()
            )),
            DecryptError::Authentication => {
                TlsProblemKind::AuthenticationFailed { record: sequence }
            }
        })?;
        let content = &body[range];
        let (inner, content) = if tls13 {
            // TLSInnerPlaintext: content, the real content type, then zero padding.
            let Some(end) = content.iter().rposition(|&b| b != 0) else {
                return Err(TlsProblemKind::MalformedRecord(
                    "a TLS 1.3 record without a content type".into(),
                ));
            };
            (content[end], &content[..end])
        } else {
            (kind, content)
        };
        match inner {
            content_type::APPLICATION_DATA => {
                plaintext.extend_from_slice(content);
                Ok(())
            }
            content_type::ALERT => self.read_alerts(direction, content, true),
            content_type::HANDSHAKE => {
                let changes = self.read_handshake(direction, content)?;
                self.apply_key_changes(direction, changes)
            }
            content_type::HEARTBEAT => Ok(()),
            other => Err(TlsProblemKind::MalformedRecord(format!(
                "content type {other} inside a protected record"
            ))),
        }
    }

    /// Reads a record sent in the clear.
    fn read_clear(
        &mut self,
        direction: Direction,
        kind: u8,
        body: &[u8],
    ) -> Result<(), TlsProblemKind> {
        match kind {
            content_type::ALERT => self.read_alerts(direction, body, false),
            content_type::HANDSHAKE => self.read_handshake(direction, body).map(drop),
            content_type::HEARTBEAT => Ok(()),
            _ => match self.stage {
                Stage::Undecryptable => Ok(()),
                Stage::ClientHello
                    if direction == Direction::ClientToServer && self.offers_early_data =>
                {
                    Err(TlsProblemKind::EarlyData)
                }
                Stage::Start | Stage::ClientHello => Err(TlsProblemKind::HandshakeNotSeen),
                Stage::Negotiated { .. } => Err(TlsProblemKind::MalformedRecord(
                    "application data before ChangeCipherSpec".into(),
                )),
            },
        }
    }

    /// Reports each alert of an alert record's content.
    fn read_alerts(
        &mut self,
        direction: Direction,
        content: &[u8],
        encrypted: bool,
    ) -> Result<(), TlsProblemKind> {
        if content.is_empty() || !content.len().is_multiple_of(2) {
            return Err(TlsProblemKind::MalformedRecord(format!(
                "an alert record of {} bytes",
                content.len()
            )));
        }
        for pair in content.chunks_exact(2) {
            let alert = Alert {
                direction,
                level: pair[0],
                description: pair[1],
                encrypted,
            };
            self.events.push(TlsEvent::Alert(alert));
            if alert.is_close_notify() || alert.level == ALERT_FATAL {
                // Nothing after it counts (RFC 8446 §6): the direction is read no further.
                let side = &mut self.sides[direction.index()];
                side.stopped = true;
                side.decrypter = None;
                break;
            }
        }
        Ok(())
    }

    /// Feeds handshake content to the direction's message reader and acts on the messages it
    /// completes: hellos are read, Finished and KeyUpdate noted for after the record.
    fn read_handshake(
        &mut self,
        direction: Direction,
        content: &[u8],
    ) -> Result<KeyChanges, TlsProblemKind> {
        let mut changes = KeyChanges::default();
        let mut hellos: Vec<(u8, Option<Vec<u8>>)> = Vec::new();
        self.sides[direction.index()]
            .handshake
            .feed(content, |msg_type, body| match msg_type {
                message_type::FINISHED => changes.finished = true,
                message_type::KEY_UPDATE => changes.key_update = true,
                message_type::CLIENT_HELLO | message_type::SERVER_HELLO => {
                    hellos.push((msg_type, body.map(<[u8]>::to_vec)))
                }
                _ => {}
            });
        for (msg_type, body) in hellos {
            match (msg_type, direction) {
                (message_type::CLIENT_HELLO, Direction::ClientToServer) => {
                    self.read_client_hello(body.as_deref())?
                }
                (message_type::SERVER_HELLO, Direction::ServerToClient) => {
                    self.read_server_hello(body.as_deref())?
                }
                _ => {
                    return Err(TlsProblemKind::MalformedHandshake(format!(
                        "handshake message {msg_type} sent {direction}"
                    )))
                }
            }
        }
        Ok(changes)
    }

    fn read_client_hello(&mut self, body: Option<&[u8]>) -> Result<(), TlsProblemKind> {
        if self.stage != Stage::Start {
            return Ok(()); // the second ClientHello after a HelloRetryRequest, or a renegotiation
        }
        let hello = body
            .and_then(handshake::parse_client_hello)
            .ok_or_else(|| {
                TlsProblemKind::MalformedHandshake("the ClientHello does not parse".into())
            })?;
        self.summary.offered_versions = hello.offered_versions;
        self.summary.server_name = hello.server_name;
        self.summary.client_random = Some(hello.random);
        self.offers_early_data = hello.offers_early_data;
        self.stage = Stage::ClientHello;
        self.events.push(TlsEvent::ClientHello);
        Ok(())
    }

    fn read_server_hello(&mut self, body: Option<&[u8]>) -> Result<(), TlsProblemKind> {
        if matches!(self.stage, Stage::Negotiated { .. } | Stage::Undecryptable) {
            return Ok(()); // a renegotiation's ServerHello comes encrypted; this one is ignored
        }
        let hello = body
            .and_then(handshake::parse_server_hello)
            .ok_or_else(|| {
                TlsProblemKind::MalformedHandshake("the ServerHello does not parse".into())
            })?;
        if hello.is_retry_request {
            self.summary.hello_retry_request = true;
            self.events.push(TlsEvent::HelloRetryRequest);
            return Ok(());
        }
        let suite = CipherSuite(hello.cipher_suite);
        self.summary.chosen_version = Some(hello.version);
        self.summary.cipher_suite = Some(suite);
        self.events.push(TlsEvent::ServerHello);
        let tls13 = hello.version == TlsVersion::TLS13;
        if tls13 {
            // Everything after the ServerHello is protected, in both directions.
            self.sides.iter_mut().for_each(|side| side.protected = true);
        }
        self.stage = Stage::Undecryptable;
        let params = match hello.version {
            TlsVersion::TLS12 | TlsVersion::TLS13 => suite_params(hello.cipher_suite, tls13),
            version => {
                self.problem(None, None, TlsProblemKind::UnsupportedVersion(version));
                return Ok(());
            }
        };
        let Some(params) = params else {
            self.problem(None, None, TlsProblemKind::UnsupportedCipherSuite(suite));
            return Ok(());
        };
        self.stage = Stage::Negotiated { tls13, params };
        let Some(key_log) = self.key_log.clone() else {
            return Ok(());
        };
        let Some(client_random) = self.summary.client_random else {
            self.problem(None, None, TlsProblemKind::HandshakeNotSeen);
            return Ok(());
        };
        if tls13 {
            self.install_tls13_secrets(&key_log, &client_random, params);
        } else {
            self.install_tls12_keys(&key_log, &client_random, &hello.random, params);
        }
        Ok(())
    }

    /// TLS 1.2: derives both sides' keys from the master secret; they take effect at each side's
    /// ChangeCipherSpec.
    fn install_tls12_keys(
        &mut self,
        key_log: &KeyLog,
        client_random: &[u8; 32],
        server_random: &[u8; 32],
        params: SuiteParams,
    ) {
        let Some(master) = key_log.secret(SecretLabel::ClientRandom, client_random) else {
            self.problem(
                None,
                None,
                TlsProblemKind::MissingSecret {
                    label: SecretLabel::ClientRandom,
                    client_random: *client_random,
                },
            );
            return;
        };
        let (key_len, iv_len) = (params.aead.key_len(), params.aead.tls12_iv_len());
        let block = schedule::tls12_key_block(
            params.hash,
            master.as_bytes(),
            client_random,
            server_random,
            key_len,
            iv_len,
        );
        self.sides[Direction::ClientToServer.index()].pending =
            RecordDecrypter::tls12(params.aead, &block.client_key, &block.client_iv);
        self.sides[Direction::ServerToClient.index()].pending =
            RecordDecrypter::tls12(params.aead, &block.server_key, &block.server_iv);
    }

    /// TLS 1.3: installs both sides' handshake keys and keeps their first application secrets for
    /// after their Finished; reports each secret the key log lacks.
    fn install_tls13_secrets(
        &mut self,
        key_log: &KeyLog,
        client_random: &[u8; 32],
        params: SuiteParams,
    ) {
        let labels = [
            (
                Direction::ClientToServer,
                SecretLabel::ClientHandshakeTrafficSecret,
                SecretLabel::ClientTrafficSecret0,
            ),
            (
                Direction::ServerToClient,
                SecretLabel::ServerHandshakeTrafficSecret,
                SecretLabel::ServerTrafficSecret0,
            ),
        ];
        for (direction, handshake_label, application_label) in labels {
            let handshake_secret =
                self.tls13_secret(key_log, client_random, handshake_label, params.hash);
            let application_secret =
                self.tls13_secret(key_log, client_random, application_label, params.hash);
            let side = &mut self.sides[direction.index()];
            side.in_handshake = true;
            side.decrypter = handshake_secret.and_then(|s| tls13_decrypter(params, s.as_bytes()));
            side.application_secret = application_secret;
        }
    }

    /// One TLS 1.3 secret from the key log, checked against the suite's hash length.
    fn tls13_secret(
        &mut self,
        key_log: &KeyLog,
        client_random: &[u8; 32],
        label: SecretLabel,
        hash: HashAlgorithm,
    ) -> Option<Secret> {
        let Some(secret) = key_log.secret(label, client_random) else {
            self.problem(
                None,
                None,
                TlsProblemKind::MissingSecret {
                    label,
                    client_random: *client_random,
                },
            );
            return None;
        };
        if secret.as_bytes().len() != hash.output_len() {
            let (found, expected) = (secret.as_bytes().len(), hash.output_len());
            self.problem(
                None,
                None,
                TlsProblemKind::SecretLengthMismatch {
                    label,
                    found,
                    expected,
                },
            );
            return None;
        }
        Some(secret.clone())
    }

    /// TLS 1.3: after a record that ended the side's handshake (Finished) or held a KeyUpdate,
    /// switches the side to its next traffic secret.
    fn apply_key_changes(
        &mut self,
        direction: Direction,
        changes: KeyChanges,
    ) -> Result<(), TlsProblemKind> {
        let Stage::Negotiated {
            tls13: true,
            params,
        } = self.stage
        else {
            return Ok(());
        };
        let side = &mut self.sides[direction.index()];
        if (changes.finished || changes.key_update) && side.handshake.is_mid_message() {
            // RFC 8446 §5.1: a message that changes keys must end its record.
            return Err(TlsProblemKind::MalformedRecord(
                "a handshake message continues after a key change".into(),
            ));
        }
        if changes.finished && side.in_handshake {
            side.in_handshake = false;
            side.traffic_secret = side.application_secret.take();
            side.decrypter = side
                .traffic_secret
                .as_ref()
                .and_then(|s| tls13_decrypter(params, s.as_bytes()));
        } else if changes.key_update && !side.in_handshake {
            if let Some(secret) = side.traffic_secret.as_mut() {
                let mut next = secret.clone();
                if schedule::tls13_next_traffic_secret(params.hash, next.as_bytes_mut()).is_ok() {
                    side.decrypter = tls13_decrypter(params, next.as_bytes());
                    *secret = next;
                }
            }
            self.events.push(TlsEvent::KeyUpdate(direction));
        }
        Ok(())
    }
}

/// Record keys of a TLS 1.3 traffic secret.
fn tls13_decrypter(params: SuiteParams, secret: &[u8]) -> Option<RecordDecrypter> {
    let key = schedule::tls13_traffic_key(params.hash, secret, params.aead.key_len()).ok()?;
    RecordDecrypter::tls13(params.aead, &key.key, key.iv)
}

/// The AEAD and hash of a suite this crate decrypts: for TLS 1.3 the three RFC 8446 suites it
/// names, for TLS 1.2 any suite with AES-GCM or ChaCha20-Poly1305 and a SHA-256/384 PRF.
fn suite_params(id: u16, tls13: bool) -> Option<SuiteParams> {
    use tls_parser::{TlsCipherEnc, TlsCipherEncMode, TlsCipherKx, TlsCipherSuite, TlsPRF};
    let suite = TlsCipherSuite::from_id(id)?;
    if (suite.kx == TlsCipherKx::Tls13) != tls13 {
        return None;
    }
    let aead = match (suite.enc, suite.enc_mode, suite.enc_size) {
        (TlsCipherEnc::Aes, TlsCipherEncMode::Gcm, 128) => AeadKind::Aes128Gcm,
        (TlsCipherEnc::Aes, TlsCipherEncMode::Gcm, 256) => AeadKind::Aes256Gcm,
        (TlsCipherEnc::Chacha20_Poly1305, _, _) => AeadKind::ChaCha20Poly1305,
        _ => return None,
    };
    let hash = match suite.prf {
        TlsPRF::Sha256 => HashAlgorithm::Sha256,
        TlsPRF::Sha384 => HashAlgorithm::Sha384,
        _ => return None,
    };
    Some(SuiteParams { aead, hash })
}

/// The body length a record header declares.
fn record_len(header: &[u8]) -> usize {
    usize::from(header[3]) << 8 | usize::from(header[4])
}

/// Checks a record header (read with `tls-parser`): a known content type, a 3.x version and a
/// length within the TLS maximum.
fn check_header(header: &[u8]) -> Result<(), String> {
    let Ok((_, parsed)) = tls_parser::parse_tls_record_header(header) else {
        return Err("the record header does not parse".into());
    };
    let kind = parsed.record_type.0;
    if !(content_type::CHANGE_CIPHER_SPEC..=content_type::HEARTBEAT).contains(&kind) {
        return Err(format!("content type {kind} is not a TLS record type"));
    }
    if parsed.version.0 >> 8 != 3 {
        return Err(format!(
            "record version 0x{:04x} is not TLS",
            parsed.version.0
        ));
    }
    if usize::from(parsed.len) > MAX_RECORD_LEN {
        return Err(format!(
            "record length {} exceeds the TLS maximum of {MAX_RECORD_LEN}",
            parsed.len
        ));
    }
    Ok(())
}
