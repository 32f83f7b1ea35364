//! The TLS 1.2 PRF and SHA-384 HKDF-Expand-Label against OpenSSL's (`fixtures/tls/openssl-kdf.json`,
//! made by `fixtures/tls/generate.py` with `openssl kdf`).

mod common;

use common::{hex_field, read_json};
use cqlwire_tls::schedule::{self, HashAlgorithm};

fn digest(case: &serde_json::Value) -> HashAlgorithm {
    match case["digest"].as_str() {
        Some("SHA256") => HashAlgorithm::Sha256,
        Some("SHA384") => HashAlgorithm::Sha384,
        other => panic!("digest {other:?}"),
    }
}

#[test]
fn tls12_prf_matches_openssl() {
    let vectors = read_json("openssl-kdf.json");
    let cases = vectors["tls12_prf"].as_array().expect("tls12_prf");
    assert_eq!(cases.len(), 12);
    for case in cases {
        let expected = hex_field(case, "output");
        let mut out = vec![0u8; expected.len()];
        let label = case["label"].as_str().expect("label").as_bytes();
        schedule::tls12_prf(
            digest(case),
            &hex_field(case, "secret"),
            label,
            &hex_field(case, "seed"),
            &mut out,
        );
        assert_eq!(out, expected, "{case}");
    }
}

#[test]
fn tls12_key_block_is_the_prf_output_cut_in_order() {
    let vectors = read_json("openssl-kdf.json");
    // The AES-256-GCM case: 2 x 32-byte keys then 2 x 4-byte salts, seeded server random first.
    let case = &vectors["tls12_prf"][1];
    let seed = hex_field(case, "seed");
    let (server_random, client_random): ([u8; 32], [u8; 32]) = (
        seed[..32].try_into().expect("32"),
        seed[32..].try_into().expect("32"),
    );
    let block = schedule::tls12_key_block(
        HashAlgorithm::Sha256,
        &hex_field(case, "secret"),
        &client_random,
        &server_random,
        32,
        4,
    );
    let output = hex_field(case, "output");
    assert_eq!(case["label"], "key expansion");
    assert_eq!(
        [
            block.client_key,
            block.server_key,
            block.client_iv,
            block.server_iv
        ]
        .concat(),
        output,
        "client key, server key, client IV, server IV"
    );
}

#[test]
fn sha384_hkdf_expand_label_matches_openssl() {
    let vectors = read_json("openssl-kdf.json");
    let cases = vectors["hkdf_expand_label"]
        .as_array()
        .expect("hkdf_expand_label");
    assert_eq!(cases.len(), 4);
    for case in cases {
        let expected = hex_field(case, "output");
        let mut out = vec![0u8; expected.len()];
        let label = case["label"].as_str().expect("label").as_bytes();
        schedule::hkdf_expand_label(
            digest(case),
            &hex_field(case, "secret"),
            label,
            &hex_field(case, "context"),
            &mut out,
        )
        .expect("expands");
        assert_eq!(out, expected, "{case}");
    }
    // "traffic upd" with SHA-384 is the KeyUpdate step.
    let update = &cases[2];
    let mut secret = hex_field(update, "secret");
    schedule::tls13_next_traffic_secret(HashAlgorithm::Sha384, &mut secret).expect("updates");
    assert_eq!(secret, hex_field(update, "output"));
}
