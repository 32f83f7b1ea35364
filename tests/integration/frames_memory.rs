//! Inputs that lie or never end, under an address-space ceiling (`ulimit -v`): a frame header or an
//! LZ4 length prefix claiming more than will ever arrive is refused as soon as it can be while a
//! gigabyte of zeros waits behind it; endless hex or binary input stops at its first bad character
//! or at the command's limit.

use std::process::{Command, Output};

/// Runs `cqlwire ARGS` under `ulimit -v` 128 MiB with `head` bytes (printf escapes) and then 1 GiB
/// of zeros on standard input.
fn run_limited(head: &str, args: &[&str]) -> Output {
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 131072; (printf \"$1\"; head -c 1G /dev/zero) | \"$2\" \"${@:3}\"")
        .arg("bash")
        .arg(head)
        .arg(binary)
        .args(args)
        .output()
        .unwrap()
}

fn assert_refused(output: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_zero_length_prefix_in_front_of_a_2_gib_body_is_refused_after_4_bytes() {
    let output = run_limited(
        r"\x04\x01\x00\x01\x07\x7f\xff\xff\xff",
        &["decompress", "--frames"],
    );
    assert_refused(
        &output,
        "declared uncompressed length 0 but the LZ4 block is 2147483643 bytes, not the 1-byte \
         empty block 00 at byte 13 (frame at byte 0, stream 1)",
    );
}

#[test]
fn a_small_prefix_in_front_of_a_huge_block_is_refused() {
    let output = run_limited(
        r"\x04\x01\x00\x01\x07\x7f\xff\xff\xff\x00\x00\x00\x64",
        &["decompress", "--frames"],
    );
    assert_refused(
        &output,
        "an LZ4 block of 2147483643 bytes is too long to decompress to the declared 100 bytes",
    );
}

#[test]
fn plain_frames_over_the_limit_are_refused_from_their_header() {
    let head = r"\x04\x00\x00\x01\x07\x7f\xff\xff\xff";
    for command in ["decompress", "compress"] {
        let output = run_limited(head, &[command, "--frames"]);
        assert_refused(
            &output,
            "uncompressed frame body of 2147483647 bytes exceeds the limit of 268435456 bytes at \
             byte 5 (frame at byte 0, stream 1)",
        );
    }
    let output = run_limited(head, &["decompress", "--frames", "--max-size", "1MiB"]);
    assert_refused(&output, "exceeds the limit of 1048576 bytes at byte 5");
}

#[test]
fn a_truncated_body_within_the_limits_is_read_in_bounded_steps() {
    // 64 MiB claimed, 1 GiB of zeros follows: the frame is whole and passes through; the next
    // header (zeros) says version 0, which is refused.
    let output = run_limited(
        r"\x04\x00\x00\x01\x07\x04\x00\x00\x00",
        &["decompress", "--frames"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unsupported protocol version byte 0x00 in frame header at byte 67108873"),
        "{stderr}"
    );
}

/// Runs `SOURCE | cqlwire ARGS` under `ulimit -v` of `kib`.
fn run_piped(kib: u32, source: &str, args: &[&str]) -> Output {
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; {source} | \"$1\" \"${{@:2}}\""))
        .arg("bash")
        .arg(binary)
        .args(args)
        .output()
        .unwrap()
}

/// Hex is checked while it is read, so an endless invalid input stops at its first
/// character instead of being buffered whole.
#[test]
fn endless_invalid_hex_stops_at_the_first_bad_character() {
    for args in [
        &["compress", "--hex"][..],
        &["decompress", "--hex"],
        &["compress", "--frames", "--hex"],
    ] {
        let output = run_piped(131072, "cat /dev/zero", args);
        assert_refused(&output, "invalid hex character '\\0' at character 0");
    }
}

/// A hex frame stream is streamed frame by frame like a binary one: the bad frame
/// after the first good one ends it, not the end of the (endless) input.
#[test]
fn an_endless_hex_frame_stream_ends_at_its_first_bad_frame() {
    let output = run_piped(
        131072,
        "yes 0400000107000000",
        &["decompress", "--frames", "--hex"],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unsupported protocol version byte 0x00 in frame header at byte 13"),
        "{stderr}"
    );
}

/// An endless binary body for `compress` ends at 256 MiB, the largest frame, not
/// at the 2 GiB its length prefix could say.
#[test]
fn an_endless_body_to_compress_ends_at_the_largest_frame() {
    let output = run_piped(786432, "cat /dev/zero", &["compress"]);
    assert_refused(
        &output,
        "standard input: more than 268435456 bytes: the largest body compress takes",
    );
}
