//! `convert` of a Parquet or Arrow IPC file piped on standard input: it is copied to a temporary
//! file in TMPDIR for random access, and when that folder is unusable the error says so.

use crate::common;

use common::{assert_error, fixture, run, with_args};

/// Runs `cqlwire convert - --input-format FORMAT` with `input` piped in and TMPDIR set to `tmpdir`.
fn piped(input: &str, format: &str, tmpdir: &std::path::Path) -> std::process::Output {
    let bytes = std::fs::read(fixture(input)).unwrap();
    let mut command = with_args(&["convert", "-", "--input-format", format, "-q"]);
    command.env("TMPDIR", tmpdir);
    run(command, &bytes)
}

#[test]
fn an_unusable_tmpdir_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    for (input, format) in [
        ("convert/sample/train.parquet", "parquet"),
        ("convert/inputs/file_i1.arrow", "arrow"),
    ] {
        let output = piped(input, format, &missing);
        let message = assert_error(&output, 1, "cannot make a temporary file in TMPDIR=", input);
        assert!(
            message.contains(&missing.display().to_string()),
            "{message}"
        );
        assert!(
            message.contains("set TMPDIR to a writable folder"),
            "{message}"
        );
    }
}

#[test]
fn a_piped_parquet_file_converts_through_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let output = piped("convert/sample/train.parquet", "parquet", dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let expected = std::fs::read(fixture("convert/sample/train.expected.bin")).unwrap();
    assert_eq!(output.stdout, expected);
    // The temporary copy is gone (unlinked when made).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
