//! `convert` contract points that are easy to get wrong: f64 → float rounding against NumPy, a
//! dangling symbolic link as `-o`, absurd `--threads`, the summary line under `--on-null skip` and
//! for small inputs, and a missing output folder.

use crate::common;

use common::{assert_error, fixture, with_args};
use std::time::Duration;

/// Runs `cqlwire convert` with `args`; a guard stops a run that hangs.
fn convert(args: &[&str]) -> std::process::Output {
    let mut command = with_args(&["convert"]);
    command.args(args);
    assert_cmd::Command::from_std(command)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn path(relative: &str) -> String {
    fixture(relative).to_str().unwrap().to_string()
}

#[test]
fn doubles_round_to_the_nearest_float_as_numpy_does() {
    // Tiny values round to subnormals or to ±0, huge ones within the float range to the nearest
    // float: fixtures/float_cast/generate.py pins NumPy's astype('>f4') bytes.
    let output = convert(&[
        &path("float_cast/rounds.npy"),
        "--type",
        "vector<float, 4>",
        "-q",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = std::fs::read(fixture("float_cast/rounds.expected.bin")).unwrap();
    assert_eq!(output.stdout, expected);
}

#[test]
fn doubles_beyond_the_float_range_are_an_error() {
    let output = convert(&[
        &path("float_cast/overflow.npy"),
        "--type",
        "vector<float, 4>",
        "-q",
    ]);
    // The value is quoted in its short form, not as 301 digits.
    assert_error(
        &output,
        1,
        "value 1e300 is out of range for float at row 1 (element 2)",
        "1e300",
    );
    assert!(output.stdout.is_empty());
}

#[cfg(unix)]
#[test]
fn a_dangling_link_as_output_creates_its_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink("sub/real.bin", &link).unwrap();
    let output = convert(&[
        &path("convert/inputs/f4_le.npy"),
        "-q",
        "-o",
        link.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    let written = std::fs::read(dir.path().join("sub/real.bin")).unwrap();
    let expected = std::fs::read(fixture("convert/expected/npy-f4-le.bin")).unwrap();
    assert_eq!(written, expected);
}

#[test]
fn absurd_thread_counts_are_refused() {
    let output = convert(&[&path("convert/inputs/f4_le.npy"), "--threads", "65535"]);
    assert_error(&output, 2, "--threads", "65535 threads");
    // Many threads, but within the limit, are capped at what helps and finish.
    let output = convert(&[
        &path("convert/sample/train.npy"),
        "--threads",
        "1024",
        "--type",
        "vector<decimal, 128>",
        "--format",
        "hex",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn skipped_null_rows_are_not_counted_as_converted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    let output = convert(&[
        &path("convert/inputs/null_rows.parquet"),
        "--on-null",
        "skip",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // 5 rows, of which rows 1 and 3 are null; 16 bytes per row written.
    assert_eq!(std::fs::read(&out).unwrap().len(), 3 * 16);
    assert!(
        stderr.starts_with("cqlwire: converted 3 rows (2 null rows skipped), 48 bytes of values"),
        "{stderr}"
    );
}

#[test]
fn small_runs_say_rows_and_bytes_without_a_meaningless_rate() {
    let output = convert(&[&path("convert/inputs/f4_le.npy"), "--rows", "0..1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("cqlwire: converted 1 row, 16 bytes of values in "),
        "{stderr}"
    );
    assert!(!stderr.contains("MB/s"), "{stderr}");
}

#[test]
fn a_missing_output_folder_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("missing/out.bin");
    let output = convert(&[
        &path("convert/inputs/f4_le.npy"),
        "-o",
        target.to_str().unwrap(),
    ]);
    let message = assert_error(&output, 1, target.to_str().unwrap(), "missing folder");
    assert!(!message.contains(".cqlwire-"), "{message}");
}
