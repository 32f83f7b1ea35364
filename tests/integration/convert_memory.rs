//! `convert` of a Parquet file whose rows are mostly text (a dictionary-encoded 8 KiB string a row,
//! 160 MB decoded from 63 KB on disk) under an address-space ceiling (`ulimit -v`): batches are
//! sized by the decoded bytes of every column read, not by the vector bytes alone. The same rows
//! from an Arrow IPC stream of one 32 MiB record batch come out in Arrow IPC batches of at most
//! about 16 MiB.

use crate::common;

use common::pcap::run_limited;
use std::ffi::OsStr;
use std::path::Path;

/// Address space for the run (counting the binary's own mappings as calibrated): a few 16 MiB
/// batches in flight and the allocator's per-thread arenas, far below the 160 MB of decoded text.
const CEILING_MIB: u64 = common::CALIBRATED_OWN_MIB + 160;

/// Runs `cqlwire convert INPUT --quiet -o OUT ARGS` under the ceiling; returns the output file.
fn convert_under_ceiling(input: &Path, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut all: Vec<&OsStr> = vec!["convert".as_ref(), input.as_os_str()];
    all.extend(["--quiet", "-o"].map(OsStr::new));
    all.push(out.as_os_str());
    all.extend(args.iter().map(OsStr::new));
    let ran = run_limited(CEILING_MIB, &all);
    assert!(
        ran.status.success(),
        "{args:?} under {CEILING_MIB} MiB: {}",
        ran.stderr
    );
    std::fs::read(&out).unwrap()
}

#[test]
fn wide_text_rows_convert_in_bounded_memory() {
    let input = common::fixture("wide/text.parquet");
    let expected = std::fs::read(common::fixture("wide/text.raw")).unwrap();
    let raw = convert_under_ceiling(&input, &["--format", "raw"]);
    assert!(raw == expected, "raw output differs from NumPy's");
    let hex = convert_under_ceiling(&input, &["--format", "hex", "--threads", "1"]);
    assert_eq!(hex.iter().filter(|&&b| b == b'\n').count(), 20_000);
}

/// Bytes allowed in one output record batch: the readers' 16 MiB of input columns plus the values
/// column (8 bytes of floats and a 4-byte offset a row here), and the IPC format's padding.
const OUTPUT_BATCH_BYTES: u64 = (16 << 20) + 4096 * 12 + 4096;

/// (rows, body bytes) of each record batch of an Arrow IPC stream, from its messages.
fn record_batches(stream: &[u8]) -> Vec<(i64, u64)> {
    let mut batches = Vec::new();
    let mut at = 0;
    while let Some(prefix) = stream.get(at..at + 8) {
        assert_eq!(prefix[..4], [0xff; 4], "message at {at}");
        let length = u32::from_le_bytes(prefix[4..].try_into().unwrap()) as usize;
        if length == 0 {
            break;
        }
        let message = arrow_ipc::root_as_message(&stream[at + 8..at + 8 + length]).unwrap();
        let body = message.bodyLength() as u64;
        if let Some(batch) = message.header_as_record_batch() {
            batches.push((batch.length(), body));
        }
        at += 8 + length + body as usize;
    }
    batches
}

#[test]
fn arrow_output_batches_are_bounded_by_their_bytes() {
    let expected = std::fs::read(common::fixture("wide/text.raw")).unwrap();
    for (name, rows) in [("text.parquet", 20_000), ("text.arrows", 4_096)] {
        let input = common::fixture(&format!("wide/{name}"));
        let raw = convert_under_ceiling(&input, &["--format", "raw"]);
        assert!(
            raw == expected[..rows * 8],
            "{name}: raw output differs from NumPy's"
        );
        let output = convert_under_ceiling(&input, &["--format", "arrow"]);
        let batches = record_batches(&output);
        for &(batch_rows, bytes) in &batches {
            assert!(
                bytes <= OUTPUT_BATCH_BYTES,
                "{name}: an output batch of {batch_rows} rows holds {bytes} bytes"
            );
        }
        let seen: i64 = batches.iter().map(|&(rows, _)| rows).sum();
        assert_eq!(seen, rows as i64, "{name}");
        assert!(batches.len() > 1, "{name}: {} batch", batches.len());
    }
}
