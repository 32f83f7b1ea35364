//! Replays the `tls` fuzz target's property (`fuzz/src/tls.rs`, included here) on the RFC 8448
//! trace and on every input in `fixtures/fuzz-regressions/tls/`.

mod common;

#[path = "../../../fuzz/src/tls.rs"]
mod fuzz_check;

use common::{fixture, hex_field, read_json};
use cqlwire_tls::Direction;

#[test]
fn the_fuzz_property_holds_on_the_rfc8448_trace_and_every_regression_input() {
    let trace = read_json("rfc8448.json");
    let key_log = std::fs::read(fixture("rfc8448.keylog")).expect("key log");
    let records: Vec<(Direction, Vec<u8>)> = trace["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                if r["from"] == "client" {
                    Direction::ClientToServer
                } else {
                    Direction::ServerToClient
                },
                hex_field(r, "record"),
            )
        })
        .collect();
    let chunks: Vec<(Direction, &[u8])> = records.iter().map(|(d, r)| (*d, &r[..])).collect();
    assert_eq!(
        fuzz_check::tls(&fuzz_check::encode(&key_log, &chunks)),
        100,
        "both 50-byte application data payloads"
    );
    // A gap in the server direction right after its ServerHello: the server's records are lost,
    // the client's (Finished, then its application data) still decrypt.
    let mut gapped = fuzz_check::encode(&key_log, &chunks[..2]);
    gapped.push(0x80);
    gapped.extend_from_slice(&fuzz_check::encode(b"", &chunks[2..])[3..]);
    assert_eq!(fuzz_check::tls(&gapped), 50, "the client's 50 bytes");

    let folder = fixture("../fuzz-regressions/tls");
    for entry in std::fs::read_dir(&folder).into_iter().flatten() {
        let path = entry.expect("entry").path();
        fuzz_check::tls(&std::fs::read(&path).expect("input"));
    }
}
