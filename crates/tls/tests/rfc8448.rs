//! RFC 8448 section 3 ("Simple 1-RTT Handshake", TLS_AES_128_GCM_SHA256): the key schedule's
//! outputs and the records of the trace, from `fixtures/tls/rfc8448.json` (made by
//! `fixtures/tls/generate.py` from the RFC's text).

mod common;

use std::sync::Arc;

use common::{feed_all, fixture, hex, hex_field, read_json};
use cqlwire_tls::schedule::{self, HashAlgorithm};
use cqlwire_tls::{Alert, CipherSuite, Direction, KeyLog, TlsConnection, TlsEvent, TlsVersion};

#[test]
fn hkdf_expand_label_reproduces_every_derive_secret_step() {
    let trace = read_json("rfc8448.json");
    let steps = trace["derive_secret"].as_array().expect("derive_secret");
    assert!(steps.len() >= 10, "{} steps", steps.len());
    for step in steps {
        let label = step["label"].as_str().expect("label").as_bytes();
        let (prk, context, info, expanded) = (
            hex_field(step, "prk"),
            hex_field(step, "context_hash"),
            hex_field(step, "info"),
            hex_field(step, "expanded"),
        );
        let built =
            schedule::hkdf_label(expanded.len() as u16, label, &context).expect("label fits");
        assert_eq!(built, info, "HkdfLabel of {}", step["step"]);
        let mut out = vec![0u8; expanded.len()];
        schedule::hkdf_expand_label(HashAlgorithm::Sha256, &prk, label, &context, &mut out)
            .expect("expands");
        assert_eq!(out, expanded, "{}", step["step"]);
    }
}

#[test]
fn traffic_keys_and_ivs_match_the_trace() {
    let trace = read_json("rfc8448.json");
    let derivations = trace["traffic_keys"].as_array().expect("traffic_keys");
    assert_eq!(derivations.len(), 4);
    for derivation in derivations {
        let key = schedule::tls13_traffic_key(
            HashAlgorithm::Sha256,
            &hex_field(derivation, "secret"),
            16,
        )
        .expect("derives");
        assert_eq!(
            key.key,
            hex_field(derivation, "key"),
            "{}",
            derivation["step"]
        );
        assert_eq!(
            key.iv.to_vec(),
            hex_field(derivation, "iv"),
            "{}",
            derivation["step"]
        );
        assert_eq!(
            schedule::hkdf_label(16, b"key", b"").expect("fits"),
            hex_field(derivation, "key_info")
        );
        assert_eq!(
            schedule::hkdf_label(12, b"iv", b"").expect("fits"),
            hex_field(derivation, "iv_info")
        );
    }
}

/// The trace's records in order, with their senders.
fn records() -> Vec<(Direction, Vec<u8>, String, Vec<u8>)> {
    let trace = read_json("rfc8448.json");
    trace["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            let direction = if r["from"] == "client" {
                Direction::ClientToServer
            } else {
                Direction::ServerToClient
            };
            (
                direction,
                hex_field(r, "record"),
                r["content"].as_str().unwrap_or_default().to_string(),
                hex_field(r, "payload"),
            )
        })
        .collect()
}

#[test]
fn the_trace_decrypts_to_its_application_data_whatever_the_split() {
    let trace = read_json("rfc8448.json");
    let key_log = Arc::new(KeyLog::from_path(&fixture("rfc8448.keylog")).expect("key log"));
    let records = records();
    let expected = |from| -> Vec<u8> {
        records
            .iter()
            .filter(|r| r.0 == from && r.2 == "application_data")
            .flat_map(|r| r.3.clone())
            .collect()
    };
    let (client_data, server_data) = (
        expected(Direction::ClientToServer),
        expected(Direction::ServerToClient),
    );
    assert_eq!((client_data.len(), server_data.len()), (50, 50));
    let chunks: Vec<(Direction, &[u8])> = records.iter().map(|r| (r.0, &r.1[..])).collect();
    for piece in [usize::MAX, 1, 3, 7, 100] {
        let mut connection = TlsConnection::new(Some(key_log.clone()));
        let outcome = feed_all(&mut connection, &chunks, piece);
        assert_eq!(outcome.client_plaintext, client_data, "pieces of {piece}");
        assert_eq!(outcome.server_plaintext, server_data, "pieces of {piece}");
        let close = |direction| {
            TlsEvent::Alert(Alert {
                direction,
                level: 1,
                description: 0,
                encrypted: true,
            })
        };
        assert_eq!(
            outcome.events,
            vec![
                TlsEvent::ClientHello,
                TlsEvent::ServerHello,
                close(Direction::ClientToServer),
                close(Direction::ServerToClient)
            ],
            "pieces of {piece}"
        );
        let summary = connection.summary();
        assert_eq!(summary.offered_versions, vec![TlsVersion::TLS13]);
        assert_eq!(summary.server_name.as_deref(), Some("server"));
        assert_eq!(
            summary.client_random.map(|r| r.to_vec()),
            Some(hex(trace["client_random"].as_str().unwrap_or_default()))
        );
        assert_eq!(summary.chosen_version, Some(TlsVersion::TLS13));
        assert_eq!(
            summary.cipher_suite,
            Some(CipherSuite(
                trace["cipher_suite"].as_u64().unwrap_or_default() as u16
            ))
        );
        assert_eq!(
            summary.to_string(),
            r#"TLS 1.3 (offered TLS 1.3), SNI "server", TLS_AES_128_GCM_SHA256"#
        );
    }
}
