//! End to end on the connections of `fixtures/tls/captures/` (made by `fixtures/tls/make.py` with
//! Python's ssl module and the openssl command): each decrypts to exactly the plaintext the script
//! wrote, whatever the split, and damaged inputs are reported, never a panic.

mod common;

use std::sync::Arc;

use common::{feed_all, fixture, reports, Outcome};
use cqlwire_tls::{
    CipherSuite, Direction, KeyLog, SecretLabel, TlsConnection, TlsEvent, TlsProblemKind,
    TlsVersion,
};

const CAPTURES: [&str; 7] = [
    "tls12-aes128gcm-cql",
    "tls12-aes256gcm",
    "tls12-chacha20",
    "tls13-aes256gcm-cql",
    "tls13-chacha20",
    "tls13-aes128gcm-hrr",
    "tls13-chacha20-keyupdate",
];

/// One capture's files.
struct Capture {
    name: &'static str,
    client: Vec<u8>,
    server: Vec<u8>,
    client_plain: Vec<u8>,
    server_plain: Vec<u8>,
    key_log_text: String,
    facts: serde_json::Value,
}

impl Capture {
    fn load(name: &'static str) -> Capture {
        let read = |file: &str| {
            std::fs::read(fixture(&format!("captures/{name}/{file}")))
                .unwrap_or_else(|e| panic!("{name}/{file}: {e}"))
        };
        let facts: serde_json::Value =
            serde_json::from_slice(&read("capture.json")).expect("capture.json");
        Capture {
            name,
            client: read("client.bin"),
            server: read("server.bin"),
            client_plain: read("client.plain"),
            server_plain: read("server.plain"),
            key_log_text: String::from_utf8(read("keylog")).expect("key log text"),
            facts,
        }
    }

    fn key_log(&self) -> Arc<KeyLog> {
        Arc::new(KeyLog::from_reader(self.key_log_text.as_bytes()).expect("key log"))
    }

    /// The two streams cut as they were sent, in the order they were sent.
    fn chunks<'a>(&self, client: &'a [u8], server: &'a [u8]) -> Vec<(Direction, &'a [u8])> {
        let (mut c, mut s) = (0usize, 0usize);
        let mut chunks = Vec::new();
        for entry in self.facts["order"].as_array().expect("order") {
            let n = entry[1].as_u64().expect("length") as usize;
            if entry[0] == "client" {
                chunks.push((
                    Direction::ClientToServer,
                    &client[c.min(client.len())..(c + n).min(client.len())],
                ));
                c += n;
            } else {
                chunks.push((
                    Direction::ServerToClient,
                    &server[s.min(server.len())..(s + n).min(server.len())],
                ));
                s += n;
            }
        }
        assert_eq!(
            (c, s),
            (self.client.len(), self.server.len()),
            "{}: the order covers both files",
            self.name
        );
        chunks
    }

    fn run(
        &self,
        key_log: Option<Arc<KeyLog>>,
        client: &[u8],
        server: &[u8],
        piece: usize,
    ) -> (Outcome, TlsConnection) {
        let mut connection = TlsConnection::new(key_log);
        let outcome = feed_all(&mut connection, &self.chunks(client, server), piece);
        (outcome, connection)
    }

    /// The hex secrets of the key log, which no output may contain.
    fn secrets(&self) -> Vec<String> {
        self.key_log_text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(' ').nth(2))
            .map(str::to_lowercase)
            .collect()
    }
}

fn key_updates(outcome: &Outcome, direction: Direction) -> u64 {
    outcome
        .events
        .iter()
        .filter(|e| **e == TlsEvent::KeyUpdate(direction))
        .count() as u64
}

#[test]
fn every_capture_decrypts_to_its_plaintext_whatever_the_split() {
    for name in CAPTURES {
        let capture = Capture::load(name);
        let key_log = capture.key_log();
        // Whole sends, TCP-segment-sized pieces (a 16 KiB record spans many), odd small pieces.
        let pieces: &[usize] = if capture.client.len() < 100_000 {
            &[usize::MAX, 1460, 7, 1]
        } else {
            &[usize::MAX, 1460, 7]
        };
        for &piece in pieces {
            let (outcome, connection) = capture.run(
                Some(key_log.clone()),
                &capture.client,
                &capture.server,
                piece,
            );
            assert_eq!(
                outcome.problems(),
                Vec::<&TlsProblemKind>::new(),
                "{name}, pieces of {piece}"
            );
            assert!(
                outcome.client_plaintext == capture.client_plain,
                "{name}, pieces of {piece}: client plaintext differs"
            );
            assert!(
                outcome.server_plaintext == capture.server_plain,
                "{name}, pieces of {piece}: server plaintext differs"
            );
            let facts = &capture.facts;
            for (direction, side) in [
                (Direction::ClientToServer, "client"),
                (Direction::ServerToClient, "server"),
            ] {
                assert_eq!(
                    key_updates(&outcome, direction),
                    facts["key_updates"][side].as_u64().unwrap_or(99),
                    "{name}: {side} key updates"
                );
            }
            let summary = connection.summary();
            let version = if facts["version"] == "TLSv1.3" {
                TlsVersion::TLS13
            } else {
                TlsVersion::TLS12
            };
            assert_eq!(summary.chosen_version, Some(version), "{name}");
            assert_eq!(
                summary.cipher_suite,
                Some(CipherSuite(
                    facts["cipher_suite"].as_u64().unwrap_or_default() as u16
                )),
                "{name}"
            );
            if version == TlsVersion::TLS13 {
                // OpenSSL names TLS 1.3 suites by their IANA names (TLS 1.2 ones by its own).
                assert_eq!(
                    summary.cipher_suite.and_then(CipherSuite::name),
                    facts["cipher_name"].as_str(),
                    "{name}"
                );
            }
            assert_eq!(
                summary.server_name.as_deref(),
                facts["server_name"].as_str(),
                "{name}"
            );
            assert_eq!(
                summary.hello_retry_request,
                facts["hello_retry_request"] == true,
                "{name}"
            );
            assert!(summary.offered_versions.contains(&version), "{name}");
            assert_eq!(
                outcome
                    .events
                    .iter()
                    .filter(|e| **e == TlsEvent::HelloRetryRequest)
                    .count(),
                usize::from(summary.hello_retry_request)
            );
        }
    }
}

#[test]
fn without_a_key_log_connections_are_named_and_nothing_is_reported() {
    for name in CAPTURES {
        let capture = Capture::load(name);
        let (outcome, connection) = capture.run(None, &capture.client, &capture.server, 1460);
        assert_eq!(outcome.problems(), Vec::<&TlsProblemKind>::new(), "{name}");
        assert!(
            outcome.client_plaintext.is_empty() && outcome.server_plaintext.is_empty(),
            "{name}"
        );
        assert!(
            connection.summary().cipher_suite.is_some()
                && connection.summary().server_name.is_some(),
            "{name}"
        );
    }
}

/// The key log with one hex digit of every secret changed.
fn wrong_secrets(text: &str) -> String {
    text.lines()
        .map(|line| match line.split(' ').collect::<Vec<_>>()[..] {
            [label, random, secret] if !label.starts_with('#') => {
                let flipped = if secret.starts_with('0') { "1" } else { "0" };
                format!("{label} {random} {flipped}{}\n", &secret[1..])
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

#[test]
fn wrong_keys_fail_authentication_on_the_first_protected_record_of_each_side() {
    for name in [
        "tls12-chacha20",
        "tls13-aes128gcm-hrr",
        "tls12-aes256gcm",
        "tls13-chacha20",
    ] {
        let capture = Capture::load(name);
        let key_log = Arc::new(
            KeyLog::from_reader(wrong_secrets(&capture.key_log_text).as_bytes()).expect("key log"),
        );
        let (outcome, _) = capture.run(Some(key_log), &capture.client, &capture.server, 1460);
        let failures: Vec<_> = reports(&outcome.events)
            .into_iter()
            .map(|p| (p.direction, p.kind.clone()))
            .collect();
        assert_eq!(failures.len(), 2, "{name}: {failures:?}");
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            assert!(
                failures.contains(&(
                    Some(direction),
                    TlsProblemKind::AuthenticationFailed { record: 0 }
                )),
                "{name}: {failures:?}"
            );
        }
        assert!(
            outcome.client_plaintext.is_empty() && outcome.server_plaintext.is_empty(),
            "{name}"
        );
        // No secret, right or wrong, in any event's Debug or any problem's Display.
        let printed: String = outcome
            .events
            .iter()
            .map(|e| format!("{e:?}\n"))
            .collect::<String>()
            + &reports(&outcome.events)
                .iter()
                .map(|p| format!("{p}\n"))
                .collect::<String>();
        let wrong = Capture {
            key_log_text: wrong_secrets(&capture.key_log_text),
            ..Capture::load(name)
        };
        for secret in capture.secrets().into_iter().chain(wrong.secrets()) {
            assert!(
                !printed.to_lowercase().contains(&secret[..16]),
                "{name}: a secret in {printed}"
            );
        }
    }
}

#[test]
fn missing_secrets_are_reported_by_label_and_client_random() {
    // TLS 1.2: no CLIENT_RANDOM line at all.
    let capture = Capture::load("tls12-chacha20");
    let (outcome, connection) = capture.run(
        Some(Arc::new(KeyLog::new())),
        &capture.client,
        &capture.server,
        1460,
    );
    let client_random = connection.summary().client_random.expect("client random");
    assert_eq!(
        outcome.problems(),
        vec![&TlsProblemKind::MissingSecret {
            label: SecretLabel::ClientRandom,
            client_random
        }]
    );
    assert!(outcome.client_plaintext.is_empty() && outcome.server_plaintext.is_empty());
    let line = outcome.events.iter().find_map(|e| {
        if let TlsEvent::Problem(p) = e {
            Some(p.to_string())
        } else {
            None
        }
    });
    let random_hex: String = client_random.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        line,
        Some(format!(
            "TLS: the key log has no CLIENT_RANDOM for client random {random_hex}"
        ))
    );

    // TLS 1.3 without the server's application secret: the client side still decrypts whole, the
    // server's handshake still decrypts (no authentication failure), its application data does not.
    let capture = Capture::load("tls13-chacha20");
    let text: String = capture
        .key_log_text
        .lines()
        .filter(|l| !l.starts_with("SERVER_TRAFFIC_SECRET_0"))
        .map(|l| format!("{l}\n"))
        .collect();
    let key_log = Arc::new(KeyLog::from_reader(text.as_bytes()).expect("key log"));
    let (outcome, connection) = capture.run(Some(key_log), &capture.client, &capture.server, 1460);
    let client_random = connection.summary().client_random.expect("client random");
    assert_eq!(
        outcome.problems(),
        vec![&TlsProblemKind::MissingSecret {
            label: SecretLabel::ServerTrafficSecret0,
            client_random
        }]
    );
    assert!(outcome.client_plaintext == capture.client_plain);
    assert!(outcome.server_plaintext.is_empty());
}

#[test]
fn a_truncated_stream_is_reported_and_keeps_the_records_before_the_cut() {
    let capture = Capture::load("tls12-aes256gcm");
    let cut = capture.client.len() - 1000; // inside the last 16 KiB record
    let (outcome, _) = capture.run(
        Some(capture.key_log()),
        &capture.client[..cut],
        &capture.server,
        1460,
    );
    let problems = outcome.problems();
    assert!(
        matches!(problems[..], [TlsProblemKind::TruncatedRecord { missing }] if *missing > 0 && *missing <= 1000),
        "{problems:?}"
    );
    assert!(outcome.client_plaintext.len() < capture.client_plain.len());
    assert!(capture.client_plain.starts_with(&outcome.client_plaintext));
    assert!(outcome.server_plaintext == capture.server_plain);
}

#[test]
fn an_altered_record_stops_its_direction_after_the_good_ones() {
    let capture = Capture::load("tls13-chacha20");
    let mut server = capture.server.clone();
    let at = server.len() - 2000; // inside the server's last application data record
    server[at] ^= 0x40;
    let (outcome, _) = capture.run(Some(capture.key_log()), &capture.client, &server, 1460);
    let problems = outcome.problems();
    assert!(
        matches!(problems[..], [TlsProblemKind::AuthenticationFailed { record }] if *record > 0),
        "{problems:?}"
    );
    assert!(
        outcome.server_plaintext.len() < capture.server_plain.len()
            && capture.server_plain.starts_with(&outcome.server_plaintext)
    );
    assert!(outcome.client_plaintext == capture.client_plain);
}

#[test]
fn a_record_header_claiming_too_much_is_malformed_and_stops_the_direction() {
    let capture = Capture::load("tls12-chacha20");
    let mut client = capture.client.clone();
    // The first record's length field: beyond the TLS maximum.
    client[3] = 0xff;
    client[4] = 0xff;
    let (outcome, _) = capture.run(Some(capture.key_log()), &client, &capture.server, 1460);
    let problems = reports(&outcome.events);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        (problems[0].direction, problems[0].offset),
        (Some(Direction::ClientToServer), Some(0))
    );
    assert!(
        matches!(&problems[0].kind, TlsProblemKind::MalformedRecord(reason) if reason.contains("65535")),
        "{problems:?}"
    );
    // The ClientHello was in that record: the ServerHello that follows has no client random to find keys by.
    assert_eq!(
        (problems[1].direction, &problems[1].kind),
        (None, &TlsProblemKind::HandshakeNotSeen)
    );
    assert!(outcome.client_plaintext.is_empty() && outcome.server_plaintext.is_empty());
}

#[test]
fn a_gap_stops_only_its_direction() {
    let capture = Capture::load("tls12-aes256gcm");
    let chunks = capture.chunks(&capture.client, &capture.server);
    let mut connection = TlsConnection::new(Some(capture.key_log()));
    let (mut client_out, mut server_out, mut events) = (Vec::new(), Vec::new(), Vec::new());
    let mut server_chunks = 0;
    for (direction, bytes) in chunks {
        match direction {
            Direction::ClientToServer => connection.feed(direction, bytes, &mut client_out),
            Direction::ServerToClient => {
                server_chunks += 1;
                if server_chunks == 4 {
                    connection.gap(direction); // this chunk is lost
                } else {
                    connection.feed(direction, bytes, &mut server_out);
                }
            }
        }
        events.extend(connection.take_events());
    }
    connection.finish();
    events.extend(connection.take_events());
    let problems = reports(&events);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        (problems[0].direction, &problems[0].kind),
        (Some(Direction::ServerToClient), &TlsProblemKind::Gap)
    );
    assert!(client_out == capture.client_plain);
    assert!(
        server_out.len() < capture.server_plain.len()
            && capture.server_plain.starts_with(&server_out)
    );
}

#[test]
fn garbage_after_any_prefix_never_panics_and_reports_at_most_once_per_direction() {
    let capture = Capture::load("tls13-aes128gcm-hrr");
    let key_log = capture.key_log();
    let garbage: Vec<u8> = (0..4000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for cut in (0..capture.server.len().min(3000)).step_by(97) {
        let mut server = capture.server[..cut].to_vec();
        server.extend_from_slice(&garbage);
        let (outcome, _) = capture.run(
            Some(key_log.clone()),
            &capture.client,
            &server[..server.len().min(capture.server.len())],
            211,
        );
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let reported = outcome
                .events
                .iter()
                .filter(|e| matches!(e, TlsEvent::Problem(p) if p.direction == Some(direction)))
                .count();
            assert!(reported <= 1, "cut {cut}: {:?}", outcome.events);
        }
    }
}

#[test]
fn one_direction_alone_names_the_connection_and_says_the_keys_cannot_be_found() {
    let capture = Capture::load("tls13-chacha20");
    let mut connection = TlsConnection::new(Some(capture.key_log()));
    let mut plaintext = Vec::new();
    connection.feed(Direction::ClientToServer, &capture.client, &mut plaintext);
    let events = connection.take_events();
    let problems = reports(&events);
    assert_eq!(events[0], TlsEvent::ClientHello);
    assert_eq!(problems.len(), 1, "{events:?}");
    assert_eq!(
        (problems[0].direction, &problems[0].kind),
        (
            Some(Direction::ClientToServer),
            &TlsProblemKind::HandshakeNotSeen
        )
    );
    assert!(plaintext.is_empty());
    assert_eq!(
        connection.summary().server_name.as_deref(),
        Some("cassandra.test")
    );
    assert_eq!(
        connection.summary().to_string(),
        r#"TLS, no ServerHello seen (offered TLS 1.3, TLS 1.2), SNI "cassandra.test""#
    );
}
