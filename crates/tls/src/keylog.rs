//! The NSS key log format (what `SSLKEYLOGFILE`, OpenSSL's `-keylogfile` and Python's
//! `SSLContext.keylog_filename` write): one `<LABEL> <client_random hex> <secret hex>` per line.
//!
//! Read: `CLIENT_RANDOM` (the TLS 1.2 master secret) and the TLS 1.3 traffic secrets
//! `CLIENT_HANDSHAKE_TRAFFIC_SECRET`, `SERVER_HANDSHAKE_TRAFFIC_SECRET`, `CLIENT_TRAFFIC_SECRET_0`,
//! `SERVER_TRAFFIC_SECRET_0`. Ignored: blank lines, `#` comments and every other label
//! (`EXPORTER_SECRET`, `CLIENT_EARLY_TRAFFIC_SECRET`, …).
//!
//! A malformed line (wrong field count, bad hex, a client random that is not 32 bytes, a secret
//! of the wrong length, a line longer than [`MAX_LINE_LEN`]) is **skipped and counted**, not an
//! error: key log files are appended to by many processes at once and may hold torn lines, and one
//! bad line must not hide the keys of every other connection. [`KeyLog::skipped_lines`] and
//! [`KeyLog::first_skipped_line`] say how many and where, for a warning.
//!
//! Memory and time are bounded: a line is never buffered beyond [`MAX_LINE_LEN`] bytes, one read
//! stops with [`KeyLogErrorKind::TooLarge`] after [`MAX_KEY_LOG_BYTES`] (so `/dev/zero` ends), and
//! at most [`KeyLog::DEFAULT_MAX_CLIENT_RANDOMS`] connections (or the limit given) are kept: the
//! latest ones, as a long-lived `SSLKEYLOGFILE` appends them. Older ones are dropped and counted
//! ([`KeyLog::dropped_client_randoms`]); their connections stay encrypted.
//!
//! Secrets never leave this module except as keys for decryption: [`KeyLog`]'s `Debug` prints
//! counts only, and no error or problem quotes a secret.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::BufRead;
use std::path::Path;

/// The longest line kept; longer lines are skipped as malformed (a valid line is under 200 bytes).
pub const MAX_LINE_LEN: usize = 1024;

/// The most bytes one [`KeyLog::read_from`] reads (1 GiB: over five million valid lines).
pub const MAX_KEY_LOG_BYTES: u64 = 1 << 30;

/// A key log label this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SecretLabel {
    /// `CLIENT_RANDOM`: the TLS 1.2 master secret (48 bytes).
    ClientRandom,
    /// `CLIENT_HANDSHAKE_TRAFFIC_SECRET` (TLS 1.3).
    ClientHandshakeTrafficSecret,
    /// `SERVER_HANDSHAKE_TRAFFIC_SECRET` (TLS 1.3).
    ServerHandshakeTrafficSecret,
    /// `CLIENT_TRAFFIC_SECRET_0` (TLS 1.3).
    ClientTrafficSecret0,
    /// `SERVER_TRAFFIC_SECRET_0` (TLS 1.3).
    ServerTrafficSecret0,
}

impl SecretLabel {
    const ALL: [SecretLabel; 5] = [
        SecretLabel::ClientRandom,
        SecretLabel::ClientHandshakeTrafficSecret,
        SecretLabel::ServerHandshakeTrafficSecret,
        SecretLabel::ClientTrafficSecret0,
        SecretLabel::ServerTrafficSecret0,
    ];

    /// The label as the key log writes it, e.g. `CLIENT_TRAFFIC_SECRET_0`.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretLabel::ClientRandom => "CLIENT_RANDOM",
            SecretLabel::ClientHandshakeTrafficSecret => "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            SecretLabel::ServerHandshakeTrafficSecret => "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            SecretLabel::ClientTrafficSecret0 => "CLIENT_TRAFFIC_SECRET_0",
            SecretLabel::ServerTrafficSecret0 => "SERVER_TRAFFIC_SECRET_0",
        }
    }

    fn from_bytes(label: &[u8]) -> Option<SecretLabel> {
        SecretLabel::ALL
            .into_iter()
            .find(|l| l.as_str().as_bytes() == label)
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Secret lengths the label may have: the TLS 1.2 master secret is 48 bytes; a TLS 1.3 secret
    /// is as long as its suite's hash (32 or 48).
    fn accepts_len(self, len: usize) -> bool {
        match self {
            SecretLabel::ClientRandom => len == 48,
            _ => len == 32 || len == 48,
        }
    }
}

impl fmt::Display for SecretLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Key material from the key log. Its `Debug` shows the length only.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret {
    bytes: [u8; 48],
    len: u8,
}

impl Secret {
    fn from_slice(bytes: &[u8]) -> Secret {
        let mut secret = Secret {
            bytes: [0; 48],
            len: bytes.len() as u8,
        };
        secret.bytes[..bytes.len()].copy_from_slice(bytes);
        secret
    }

    /// The secret's bytes, for the key schedule.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The secret's bytes, to be replaced by the next secret (TLS 1.3 KeyUpdate).
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[..self.len as usize]
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes)", self.len)
    }
}

/// The secrets of one connection, by [`SecretLabel`].
type Secrets = [Option<Secret>; 5];

/// Why a key log could not be read.
#[derive(Debug, thiserror::Error)]
#[error("key log: {kind}{}", .line.map(|l| format!(" at line {l}")).unwrap_or_default())]
#[non_exhaustive]
pub struct KeyLogError {
    /// What went wrong.
    pub kind: KeyLogErrorKind,
    /// The 1-based line number it went wrong at, when it is about one line.
    pub line: Option<u64>,
}

/// The kinds of [`KeyLogError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyLogErrorKind {
    /// Reading the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// More bytes than a key log may have (1 GiB): the file is not a key log.
    #[error("larger than {limit} bytes, the most read of one key log")]
    TooLarge {
        /// The limit in force.
        limit: u64,
    },
}

/// The secrets of an NSS key log, by client random.
#[derive(Clone, Default)]
pub struct KeyLog {
    entries: HashMap<[u8; 32], Secrets>,
    /// The client randoms of `entries`, oldest first.
    order: VecDeque<[u8; 32]>,
    max_client_randoms: usize,
    dropped: u64,
    lines: u64,
    skipped: u64,
    first_skipped: Option<u64>,
}

impl fmt::Debug for KeyLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyLog")
            .field("client_randoms", &self.entries.len())
            .field("dropped_client_randoms", &self.dropped)
            .field("lines", &self.lines)
            .field("skipped_lines", &self.skipped)
            .finish()
    }
}

impl KeyLog {
    /// How many connections a key log may hold unless told otherwise (about 30 MiB of secrets).
    pub const DEFAULT_MAX_CLIENT_RANDOMS: usize = 100_000;

    /// An empty key log holding up to [`KeyLog::DEFAULT_MAX_CLIENT_RANDOMS`] connections.
    pub fn new() -> KeyLog {
        KeyLog::with_max_client_randoms(KeyLog::DEFAULT_MAX_CLIENT_RANDOMS)
    }

    /// An empty key log holding up to `max` connections (the latest; at least one).
    pub fn with_max_client_randoms(max: usize) -> KeyLog {
        KeyLog {
            max_client_randoms: max.max(1),
            ..KeyLog::default()
        }
    }

    /// Reads the key log file at `path`.
    pub fn from_path(path: &Path) -> Result<KeyLog, KeyLogError> {
        let file = std::fs::File::open(path).map_err(|e| KeyLogError {
            kind: e.into(),
            line: None,
        })?;
        KeyLog::from_reader(std::io::BufReader::new(file))
    }

    /// Reads a key log from `reader`.
    pub fn from_reader<R: BufRead>(reader: R) -> Result<KeyLog, KeyLogError> {
        let mut log = KeyLog::new();
        log.read_from(reader)?;
        Ok(log)
    }

    /// Adds the lines of `reader` (e.g. what was appended to the file since the last read); line
    /// numbers continue from the lines read before.
    pub fn read_from<R: BufRead>(&mut self, reader: R) -> Result<(), KeyLogError> {
        self.read_at_most(reader, MAX_KEY_LOG_BYTES)
    }

    /// [`KeyLog::read_from`], reading at most `limit` bytes.
    fn read_at_most<R: BufRead>(&mut self, mut reader: R, limit: u64) -> Result<(), KeyLogError> {
        let mut line = Vec::with_capacity(256);
        let mut budget = limit;
        loop {
            let (ended, too_long) = read_bounded_line(&mut reader, &mut line, &mut budget)
                .map_err(|e| KeyLogError {
                    kind: match e {
                        KeyLogErrorKind::TooLarge { .. } => KeyLogErrorKind::TooLarge { limit },
                        other => other,
                    },
                    line: Some(self.lines + 1),
                })?;
            if ended && line.is_empty() && !too_long {
                return Ok(());
            }
            self.lines += 1;
            if too_long || !self.add_line(&line)? {
                self.skipped += 1;
                self.first_skipped.get_or_insert(self.lines);
            }
            if ended {
                return Ok(());
            }
        }
    }

    /// Adds one line; `Ok(false)` if it is malformed.
    fn add_line(&mut self, line: &[u8]) -> Result<bool, KeyLogError> {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") {
            return Ok(true);
        }
        let mut fields = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty());
        let (Some(label), Some(random), Some(secret), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Ok(false);
        };
        if !label
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        {
            return Ok(false);
        }
        let (Some(random), Some(secret)) = (decode_hex::<32>(random), decode_hex::<48>(secret))
        else {
            return Ok(false);
        };
        let Some(label) = SecretLabel::from_bytes(label) else {
            return Ok(true); // another label: not ours to read
        };
        let (random, secret) = (&random.0[..random.1], &secret.0[..secret.1]);
        let Ok(random) = <[u8; 32]>::try_from(random) else {
            return Ok(false);
        };
        if !label.accepts_len(secret.len()) {
            return Ok(false);
        }
        if !self.entries.contains_key(&random) {
            if self.entries.len() >= self.max_client_randoms {
                if let Some(oldest) = self.order.pop_front() {
                    self.entries.remove(&oldest);
                    self.dropped += 1;
                }
            }
            self.order.push_back(random);
        }
        self.entries.entry(random).or_default()[label.index()] = Some(Secret::from_slice(secret));
        Ok(true)
    }

    /// The number of connections (client randoms) with at least one secret.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no secret was read.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The number of connections (client randoms) dropped to keep the latest
    /// `max_client_randoms`; a client random read again after it was dropped counts again.
    pub fn dropped_client_randoms(&self) -> u64 {
        self.dropped
    }

    /// The number of lines read.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The number of malformed lines skipped.
    pub fn skipped_lines(&self) -> u64 {
        self.skipped
    }

    /// The 1-based number of the first malformed line skipped.
    pub fn first_skipped_line(&self) -> Option<u64> {
        self.first_skipped
    }

    /// Whether the key log holds `label`'s secret for the connection with `client_random`.
    pub fn contains(&self, label: SecretLabel, client_random: &[u8; 32]) -> bool {
        self.secret(label, client_random).is_some()
    }

    /// `label`'s secret for the connection with `client_random`.
    pub(crate) fn secret(&self, label: SecretLabel, client_random: &[u8; 32]) -> Option<&Secret> {
        self.entries.get(client_random)?[label.index()].as_ref()
    }
}

/// Reads one line (without its `\n`) into `line`, keeping at most [`MAX_LINE_LEN`] bytes and
/// discarding the rest, and takes the bytes consumed from `budget`. Returns (whether the input
/// ended, whether the line was too long).
fn read_bounded_line<R: BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    budget: &mut u64,
) -> Result<(bool, bool), KeyLogErrorKind> {
    line.clear();
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if available.is_empty() {
            return Ok((true, too_long));
        }
        let (chunk, newline) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        let room = MAX_LINE_LEN.saturating_sub(line.len());
        if chunk.len() > room {
            too_long = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len() + usize::from(newline);
        *budget = budget
            .checked_sub(used as u64)
            .ok_or(KeyLogErrorKind::TooLarge {
                limit: MAX_KEY_LOG_BYTES,
            })?;
        reader.consume(used);
        if newline {
            return Ok((false, too_long));
        }
    }
}

/// Decodes hex text of at most `N` bytes into a buffer and its length.
fn decode_hex<const N: usize>(text: &[u8]) -> Option<([u8; N], usize)> {
    if !text.len().is_multiple_of(2) || text.len() / 2 > N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        let high = (pair[0] as char).to_digit(16)?;
        let low = (pair[1] as char).to_digit(16)?;
        out[i] = (high * 16 + low) as u8;
    }
    Some((out, text.len() / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANDOM: &str = "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7";

    fn random() -> [u8; 32] {
        decode_hex::<32>(RANDOM.as_bytes())
            .map(|(r, _)| r)
            .unwrap_or_default()
    }

    #[test]
    fn reads_each_label_and_keeps_the_secret_bytes() {
        let secret48 = "ab".repeat(48);
        let secret32 = "CD".repeat(32);
        let text = format!(
            "# comment\n\nCLIENT_RANDOM {RANDOM} {secret48}\r\nCLIENT_TRAFFIC_SECRET_0 {RANDOM} {secret32}\nEXPORTER_SECRET {RANDOM} {secret32}\n"
        );
        let log = KeyLog::from_reader(text.as_bytes()).expect("reads");
        assert_eq!((log.len(), log.lines(), log.skipped_lines()), (1, 5, 0));
        assert_eq!(
            log.secret(SecretLabel::ClientRandom, &random())
                .map(Secret::as_bytes),
            Some(&[0xab; 48][..])
        );
        assert_eq!(
            log.secret(SecretLabel::ClientTrafficSecret0, &random())
                .map(Secret::as_bytes),
            Some(&[0xcd; 32][..])
        );
        assert!(!log.contains(SecretLabel::ServerTrafficSecret0, &random()));
    }

    #[test]
    fn skips_and_counts_malformed_lines() {
        let good = format!("SERVER_TRAFFIC_SECRET_0 {RANDOM} {}", "01".repeat(48));
        let long = format!("CLIENT_RANDOM {RANDOM} {}", "0".repeat(MAX_LINE_LEN));
        let text = [
            good.as_str(),
            "CLIENT_RANDOM 00 11", // short random, short secret
            &format!("CLIENT_RANDOM {RANDOM} {}", "01".repeat(32)), // master secret not 48 bytes
            &format!("CLIENT_RANDOM {RANDOM} zz{}", "01".repeat(47)),
            &format!("client_random {RANDOM} {}", "01".repeat(48)),
            &format!("CLIENT_RANDOM {RANDOM}"),
            &long,
            &format!("SERVER_TRAFFIC_SECRET_0 {RANDOM} {} extra", "01".repeat(48)),
        ]
        .join("\n");
        let log = KeyLog::from_reader(text.as_bytes()).expect("reads");
        assert_eq!(
            (log.lines(), log.skipped_lines(), log.first_skipped_line()),
            (8, 7, Some(2))
        );
        assert!(log.contains(SecretLabel::ServerTrafficSecret0, &random()));
        assert!(!log.contains(SecretLabel::ClientRandom, &random()));
    }

    #[test]
    fn keeps_the_latest_client_randoms_and_counts_the_dropped() {
        let line = |i: u8| {
            format!(
                "CLIENT_RANDOM {} {}\n",
                format!("{i:02x}").repeat(32),
                "00".repeat(48)
            )
        };
        let text: String = (0..5u8).map(line).collect();
        let mut log = KeyLog::with_max_client_randoms(2);
        log.read_from(text.as_bytes())
            .expect("an old random is dropped, not an error");
        assert_eq!((log.len(), log.dropped_client_randoms()), (2, 3));
        let kept = |i: u8| log.contains(SecretLabel::ClientRandom, &[i; 32]);
        assert_eq!(
            (0..5).map(kept).collect::<Vec<_>>(),
            [false, false, false, true, true]
        );
    }

    #[test]
    fn stops_after_the_most_bytes_of_one_key_log() {
        let line = format!("CLIENT_RANDOM {RANDOM} {}\n", "5a".repeat(48));
        let mut log = KeyLog::new();
        log.read_at_most(line.as_bytes(), line.len() as u64)
            .expect("a key log of exactly the cap");
        let endless = std::io::repeat(0);
        let error = KeyLog::new()
            .read_at_most(std::io::BufReader::new(endless), 1 << 20)
            .expect_err("a key log over the cap");
        assert!(
            matches!(error.kind, KeyLogErrorKind::TooLarge { .. }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "key log: larger than 1048576 bytes, the most read of one key log at line 1"
        );
    }

    #[test]
    fn debug_shows_counts_and_no_secret() {
        let text = format!("CLIENT_RANDOM {RANDOM} {}\n", "5a".repeat(48));
        let log = KeyLog::from_reader(text.as_bytes()).expect("reads");
        let debug = format!(
            "{log:?} {:?}",
            log.secret(SecretLabel::ClientRandom, &random())
        );
        assert!(!debug.to_ascii_lowercase().contains("5a5a"), "{debug}");
        assert!(
            debug.contains("client_randoms: 1") && debug.contains("Secret(48 bytes)"),
            "{debug}"
        );
    }
}
