//! CQL over TLS: connections whose first bytes are a TLS record are named once ([`TlsRecord`]) and,
//! with an NSS key log ([`Options::tls_key_log`]), decrypted by `cqlwire-tls`; the decrypted
//! application data of each direction goes to the connection's CQL decoders exactly as the bytes
//! of a plaintext connection do, so message offsets count in the decrypted stream.
//!
//! A TLS connection on one of [`Options::ports`] is CQL over TLS. On another port it is kept only
//! when its first decrypted bytes are a CQL frame header; otherwise it is named and ignored. Without
//! a key log nothing is decrypted and nothing of it is parsed as CQL. The first key problem of a
//! connection (a missing secret, a secret of the wrong length, a first record failing
//! authentication) is reported once and the connection is skipped; key material is never shown.

use super::conn::Conn;
use super::pending::PendingTotals;
use super::{cql_side, Options};
use crate::capture::{Connection, Direction, Timestamp};
use crate::record::{Problem, Record, Side, TlsRecord};
use cqlwire_protocol::frame;
use cqlwire_tls::{TlsConnection, TlsEvent, TlsProblem, TlsProblemKind};

pub use cqlwire_tls::{looks_like_tls, KeyLog};

/// Reads key log files into one key log, in order. A file's malformed lines are skipped and said
/// once to `warn` (`key log FILE: N malformed lines skipped, the first at line L`), and so are
/// client randoms dropped over the key log's bound; a file that cannot be read is an error naming
/// it.
pub fn read_key_logs(
    paths: &[std::path::PathBuf],
    warn: &mut dyn FnMut(String),
) -> std::io::Result<KeyLog> {
    let mut log = KeyLog::new();
    for path in paths {
        let (lines, skipped, first) = (log.lines(), log.skipped_lines(), log.first_skipped_line());
        let named = |text: String| std::io::Error::other(text);
        let file = std::fs::File::open(path)
            .map_err(|e| named(format!("key log {}: {e}", path.display())))?;
        log.read_from(std::io::BufReader::new(file))
            .map_err(|e| named(format!("{e} ({})", path.display())))?;
        let new = log.skipped_lines() - skipped;
        if new > 0 {
            let at = match (first, log.first_skipped_line()) {
                (None, Some(line)) => format!(", the first at line {}", line - lines),
                _ => String::new(),
            };
            warn(format!(
                "key log {}: {new} malformed line{} skipped{at}",
                path.display(),
                if new == 1 { "" } else { "s" }
            ));
        }
    }
    let dropped = log.dropped_client_randoms();
    if dropped > 0 {
        warn(format!(
            "key log: {dropped} older client randoms dropped to keep the latest {}; their \
             connections stay encrypted",
            KeyLog::DEFAULT_MAX_CLIENT_RANDOMS
        ));
    }
    Ok(log)
}

/// The TLS state of a connection that started with a TLS record.
#[derive(Debug)]
pub(super) struct TlsLayer {
    connection: TlsConnection,
    /// Whether the [`TlsRecord`] was reported.
    named: bool,
    /// Off the CQL ports: whether the decrypted data has yet to show a CQL frame header.
    unproven: bool,
    /// The first decrypted bytes of an unproven connection, until they hold a frame header.
    probe: Vec<u8>,
    /// Nothing more of the connection is read: named without a key log, a key problem, or not CQL.
    skipped: bool,
    /// Whether a key log was given.
    keyed: bool,
    /// Decrypted bytes, reused.
    plaintext: Vec<u8>,
    /// Decrypted messages are queued, not decoded (raw streams: their reader decides the order).
    pub(super) queue_only: bool,
}

/// Whether `bytes`, the first bytes of a direction of a connection (at stream offset `offset`),
/// start a TLS record.
pub(super) fn starts_tls(offset: u64, bytes: &[u8]) -> bool {
    offset == 0 && looks_like_tls(bytes)
}

/// A connection whose first bytes, `bytes` sent in `direction`, are a TLS record: a ClientHello
/// makes its sender the client, a ServerHello the server; else the SYN and the ports decide.
pub(super) fn tls_conn(
    connection: Connection,
    direction: Direction,
    bytes: &[u8],
    options: &Options,
) -> Conn {
    const CLIENT_HELLO: u8 = 1;
    const SERVER_HELLO: u8 = 2;
    let from_initiator = direction == Direction::FromInitiator;
    let initiator_is_client = match (bytes[0], bytes.get(cqlwire_tls::HEADER_LEN)) {
        (22, Some(&CLIENT_HELLO)) => Some(from_initiator),
        (22, Some(&SERVER_HELLO)) => Some(!from_initiator),
        _ => None,
    };
    let on_port = options.ports.contains(&connection.responder.port())
        || options.ports.contains(&connection.initiator.port());
    let mut conn = Conn::new(connection, initiator_is_client, options);
    conn.tls = Some(TlsLayer::new(options, !on_port));
    conn
}

impl TlsLayer {
    /// The TLS state of a new connection; `unproven` when its decrypted bytes must show a CQL
    /// frame header before they are decoded (off the CQL ports).
    pub(super) fn new(options: &Options, unproven: bool) -> Box<TlsLayer> {
        Box::new(TlsLayer {
            connection: TlsConnection::new(options.tls_key_log.clone()),
            named: false,
            unproven,
            probe: Vec::new(),
            skipped: false,
            keyed: options.tls_key_log.is_some(),
            plaintext: Vec::new(),
            queue_only: false,
        })
    }
}

/// Whether a problem says the connection's keys are missing or wrong.
fn is_key_problem(problem: &TlsProblem) -> bool {
    matches!(
        problem.kind,
        TlsProblemKind::MissingSecret { .. }
            | TlsProblemKind::SecretLengthMismatch { .. }
            | TlsProblemKind::HandshakeNotSeen
            | TlsProblemKind::AuthenticationFailed { record: 0 }
    )
}

impl Conn {
    /// The TLS direction of decoder `i`.
    fn tls_direction(&self, i: usize) -> cqlwire_tls::Direction {
        match self.side(i) {
            Side::Client => cqlwire_tls::Direction::ClientToServer,
            Side::Server => cqlwire_tls::Direction::ServerToClient,
        }
    }

    /// Feeds the next TLS bytes of decoder `i`'s direction; reports the connection, its problems
    /// and the messages its decrypted bytes complete.
    pub(super) fn feed_tls(
        &mut self,
        i: usize,
        bytes: &[u8],
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        let direction = self.tls_direction(i);
        let Some(layer) = self.tls.as_mut().filter(|t| !t.skipped) else {
            return;
        };
        let mut plaintext = std::mem::take(&mut layer.plaintext);
        plaintext.clear();
        layer.connection.feed(direction, bytes, &mut plaintext);
        if !plaintext.is_empty() {
            self.name_tls(time, true, sink);
            self.decrypted(i, &plaintext, time, totals, sink);
        }
        if let Some(layer) = self.tls.as_mut() {
            layer.plaintext = plaintext;
        }
        self.tls_events(time, sink);
    }

    /// Tells the TLS side that bytes of decoder `i`'s direction were lost.
    pub(super) fn gap_tls(&mut self, i: usize, time: Timestamp, sink: &mut dyn FnMut(Record)) {
        let direction = self.tls_direction(i);
        if let Some(layer) = self.tls.as_mut().filter(|t| !t.skipped) {
            layer.connection.gap(direction);
            self.tls_events(time, sink);
        }
    }

    /// At the connection's end: reports a record left incomplete, and names the connection if
    /// nothing did yet.
    pub(super) fn close_tls(&mut self, time: Timestamp, sink: &mut dyn FnMut(Record)) {
        if let Some(layer) = self.tls.as_mut().filter(|t| !t.skipped) {
            layer.connection.finish();
            self.tls_events(time, sink);
        }
        self.name_tls(time, false, sink);
    }

    /// Hands decrypted bytes of decoder `i` to the CQL decoders; off the CQL ports, only once
    /// they have shown a CQL frame header.
    fn decrypted(
        &mut self,
        i: usize,
        plaintext: &[u8],
        time: Timestamp,
        totals: &mut PendingTotals,
        sink: &mut dyn FnMut(Record),
    ) {
        let Some(layer) = self.tls.as_mut() else {
            return;
        };
        if layer.unproven {
            layer.probe.extend_from_slice(plaintext);
            if layer.probe.len() < frame::HEADER_LEN {
                return;
            }
            if cql_side(&layer.probe).is_none() {
                layer.skipped = true;
                layer.probe = Vec::new();
                return;
            }
            layer.unproven = false;
            let probe = std::mem::take(&mut layer.probe);
            self.feed_and_drain(i, &probe, time, totals, sink);
        } else if layer.queue_only {
            self.feed(i, plaintext);
        } else {
            self.feed_and_drain(i, plaintext, time, totals, sink);
        }
    }

    /// Reports the connection once: what its hellos showed, and whether it is decrypted.
    fn name_tls(&mut self, time: Timestamp, decrypted: bool, sink: &mut dyn FnMut(Record)) {
        let Some(layer) = self.tls.as_mut().filter(|t| !t.named) else {
            return;
        };
        layer.named = true;
        sink(Record::Tls(TlsRecord {
            conn_id: self.connection.id,
            conn: self.label.clone(),
            time,
            summary: layer.connection.summary().clone(),
            decrypted,
        }));
    }

    /// Reports what the TLS side saw: the connection once its ServerHello is read without a key
    /// log (which skips it), alerts other than close_notify, and problems (the first key problem only, which skips
    /// the connection).
    fn tls_events(&mut self, time: Timestamp, sink: &mut dyn FnMut(Record)) {
        let Some(layer) = self.tls.as_mut() else {
            return;
        };
        let keyed = layer.keyed;
        for event in layer.connection.take_events() {
            let (direction, offset, message) = match event {
                TlsEvent::ServerHello if !keyed => {
                    self.name_tls(time, false, sink);
                    if let Some(layer) = self.tls.as_mut() {
                        layer.skipped = true;
                    }
                    continue;
                }
                TlsEvent::Alert(alert) if !alert.is_close_notify() => {
                    (Some(alert.direction), 0, format!("TLS {alert}"))
                }
                TlsEvent::Problem(problem) => {
                    let Some(layer) = self.tls.as_mut() else {
                        return;
                    };
                    if layer.skipped {
                        continue;
                    }
                    if is_key_problem(&problem) {
                        layer.skipped = true;
                    }
                    self.name_tls(time, false, sink);
                    (
                        problem.direction,
                        problem.offset.unwrap_or(0),
                        problem.to_string(),
                    )
                }
                _ => continue,
            };
            let side = direction.map(|d| match d {
                cqlwire_tls::Direction::ClientToServer => Side::Client,
                cqlwire_tls::Direction::ServerToClient => Side::Server,
            });
            sink(Record::Problem(Problem {
                conn: Some((self.connection.id, self.label.clone())),
                side,
                time,
                offset,
                message,
            }));
        }
    }
}
