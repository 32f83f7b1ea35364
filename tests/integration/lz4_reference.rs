//! `cqlwire compress` and `cqlwire_protocol::lz4::compress_body` produce the Python driver's bodies byte for
//! byte: the bodies in `fixtures/lz4ref/` were made by the driver's own `lz4_compress` (python-lz4,
//! the C liblz4 block compressor; see `fixtures/lz4ref/generate.py`) for payloads of every size up
//! to 20 bytes, around liblz4's 64 KiB + 11 table switch, and of 1 KiB to 1 MiB + 13.

use crate::common;

use std::collections::BTreeMap;
use std::fs;

/// A payload source (`payloads/<kind>.bin`) and the (size, driver body) pairs made from its prefixes.
type Kind = (Vec<u8>, Vec<(usize, Vec<u8>)>);

/// Every payload kind by name.
fn fixtures() -> BTreeMap<String, Kind> {
    let dir = common::fixture("lz4ref");
    let mut kinds = BTreeMap::new();
    for entry in fs::read_dir(dir.join("bodies")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let (kind, size) = stem.rsplit_once('-').unwrap();
        let (_, bodies) = kinds.entry(kind.to_owned()).or_insert_with(|| {
            let source = fs::read(dir.join(format!("payloads/{kind}.bin"))).unwrap();
            (source, Vec::new())
        });
        bodies.push((size.parse().unwrap(), fs::read(&path).unwrap()));
    }
    for (source, bodies) in kinds.values_mut() {
        bodies.sort();
        assert!(bodies.iter().all(|(size, _)| *size <= source.len()));
    }
    assert_eq!(kinds.len(), 5, "payload kinds missing");
    assert!(kinds.values().map(|(_, b)| b.len()).sum::<usize>() >= 150);
    kinds
}

#[test]
fn the_library_compresses_to_the_drivers_bodies() {
    for (kind, (source, bodies)) in fixtures() {
        for (size, body) in bodies {
            let ours = cqlwire_protocol::lz4::compress_body(&source[..size]).unwrap();
            assert!(ours == body, "{kind}-{size}: not the driver's body");
        }
    }
}

#[test]
fn the_binary_compresses_to_the_drivers_bodies() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, (source, bodies)) in fixtures() {
        for (size, body) in bodies {
            let input = dir.path().join("payload.bin");
            fs::write(&input, &source[..size]).unwrap();
            let output = common::cqlwire_cmd()
                .args(["compress", input.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(output.status.success(), "{kind}-{size}");
            assert!(
                output.stdout == body,
                "{kind}-{size}: not the driver's body"
            );
        }
    }
}
