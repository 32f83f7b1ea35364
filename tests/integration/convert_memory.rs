//! `convert` of a Parquet file whose rows are mostly text (a dictionary-encoded 8 KiB string a row,
//! 160 MB decoded from 63 KB on disk) under an address-space ceiling (`ulimit -v`): batches are
//! sized by the decoded bytes of every column read, not by the vector bytes alone.

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
