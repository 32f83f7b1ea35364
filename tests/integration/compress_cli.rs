//! `cqlwire compress` / `cqlwire decompress` run as a process on the driver-made fixtures in
//! `fixtures/lz4/` (see `fixtures/lz4/generate.py`).

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lz4")
        .join(relative)
}

fn read(relative: &str) -> Vec<u8> {
    fs::read(fixture(relative)).unwrap()
}

fn cqlwire() -> Command {
    common::cqlwire_cmd()
}

/// Runs cqlwire with `args` on `stdin` and returns its standard output, asserting success.
fn run(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let output = cqlwire().args(args).write_stdin(stdin).output().unwrap();
    assert!(
        output.status.success(),
        "cqlwire {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The payload fixtures: (name, payload) sorted by name.
fn payloads() -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = fs::read_dir(fixture("payloads"))
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            path.file_stem().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    assert!(names.len() >= 17, "payload fixtures missing");
    names
        .into_iter()
        .map(|name| {
            let payload = read(&format!("payloads/{name}.bin"));
            (name, payload)
        })
        .collect()
}

const STREAMS: [&str; 3] = ["requests", "requests-v3", "responses"];

/// (version, flags, stream, opcode, body) of each frame, split with nothing but the header layout.
fn split_frames(mut bytes: &[u8]) -> Vec<(u8, u8, i16, u8, Vec<u8>)> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let length = i32::from_be_bytes(bytes[5..9].try_into().unwrap()) as usize;
        let stream = i16::from_be_bytes([bytes[2], bytes[3]]);
        frames.push((
            bytes[0],
            bytes[1],
            stream,
            bytes[4],
            bytes[9..9 + length].to_vec(),
        ));
        bytes = &bytes[9 + length..];
    }
    frames
}

#[test]
fn driver_bodies_decompress_to_the_payloads() {
    for (name, payload) in payloads() {
        let path = fixture(&format!("bodies/{name}.lz4"));
        let out = run(&["decompress", path.to_str().unwrap()], b"");
        assert!(out == payload, "{name}");
    }
}

#[test]
fn compress_then_decompress_round_trips_through_files() {
    let dir = tempfile::tempdir().unwrap();
    for (name, payload) in payloads() {
        let body = dir.path().join(format!("{name}.lz4"));
        let input = fixture(&format!("payloads/{name}.bin"));
        run(
            &[
                "compress",
                input.to_str().unwrap(),
                "-o",
                body.to_str().unwrap(),
            ],
            b"",
        );
        let compressed = fs::read(&body).unwrap();
        assert_eq!(
            compressed[..4],
            (payload.len() as u32).to_be_bytes(),
            "{name}"
        );
        let out = run(&["decompress", "-"], &compressed);
        assert!(out == payload, "{name}");
    }
}

#[test]
fn decompress_frames_equals_the_driver_decoding() {
    for name in STREAMS {
        let out = run(
            &["decompress", "--frames"],
            &read(&format!("frames/{name}.lz4.bin")),
        );
        assert!(out == read(&format!("frames/{name}.plain.bin")), "{name}");
    }
}

#[test]
fn frames_round_trip_and_flag_what_the_driver_flags() {
    for name in STREAMS {
        let driver = read(&format!("frames/{name}.lz4.bin"));
        let plain = run(&["decompress", "--frames"], &driver);
        let compressed = run(&["compress", "--frames"], &plain);
        assert_eq!(
            run(&["decompress", "--frames"], &compressed),
            plain,
            "{name}"
        );

        let ours = split_frames(&compressed);
        let theirs = split_frames(&driver);
        assert_eq!(ours.len(), theirs.len());
        for (ours, theirs) in ours.iter().zip(&theirs) {
            assert_eq!((ours.0, ours.2, ours.3), (theirs.0, theirs.2, theirs.3));
            if theirs.1 & 0x01 != 0 {
                assert_eq!(ours.1, theirs.1, "{name} stream {}", theirs.2);
            }
        }
        // Frames already flagged pass through `compress --frames` untouched.
        let again = split_frames(&run(&["compress", "--frames"], &driver));
        for (again, theirs) in again.iter().zip(&theirs) {
            if theirs.1 & 0x01 != 0 {
                assert_eq!(again, theirs);
            }
        }
    }
}

#[test]
fn hex_in_and_out() {
    let payload = read("payloads/text-1024.bin");
    let body = read("bodies/text-1024.lz4");
    // Pasted the way xxd or Wireshark give it: 0x prefix, colons, upper case, line breaks.
    let pasted: String = body
        .chunks(16)
        .map(|line| {
            let bytes: Vec<String> = line.iter().map(|b| format!("{b:02X}")).collect();
            bytes.join(":") + "\n"
        })
        .collect();
    let out = run(&["decompress", "--hex"], format!("0x{pasted}").as_bytes());
    let expected: String = payload.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(String::from_utf8(out).unwrap(), expected + "\n");

    let hex_body = run(&["compress", "--hex"], expected_hex(&payload).as_bytes());
    let body = decode_hex(std::str::from_utf8(&hex_body).unwrap().trim());
    assert_eq!(run(&["decompress"], &body), payload);

    // --frames --hex writes one line per frame.
    let stream = read("frames/responses.lz4.bin");
    let lines = run(
        &["decompress", "--frames", "--hex"],
        expected_hex(&stream).as_bytes(),
    );
    let lines = String::from_utf8(lines).unwrap();
    assert_eq!(lines.lines().count(), split_frames(&stream).len());
    let joined: Vec<u8> = lines.lines().flat_map(decode_hex).collect();
    assert_eq!(joined, read("frames/responses.plain.bin"));
}

fn expected_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Runs cqlwire under a 256 MiB address-space limit, so a 2 GiB allocation would abort it.
fn run_limited(args: &[&str], input: &Path) -> std::process::Output {
    let binary = common::binary();
    let mut command = std::process::Command::new("bash");
    command
        .arg("-c")
        .arg("ulimit -v 262144; exec \"$@\"")
        .arg("bash")
        .arg(binary)
        .args(args)
        .arg(input);
    command.output().unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_declared_2_gib_body_is_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("hostile.lz4");
    let mut body = read("bodies/text-8192.lz4");
    body[..4].copy_from_slice(&(1u32 << 31).to_be_bytes());
    fs::write(&input, &body).unwrap();

    let output = run_limited(&["decompress"], &input);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("2147483648 exceeds the limit of 268435456 bytes"));
    assert!(stderr(&output).contains("at byte 0"));

    // With the limit raised, the block's size alone rules the length out.
    let output = run_limited(&["decompress", "--max-size", "4GiB"], &input);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("more than an LZ4 block of"));

    // Under the limit but garbage: the block is walked before the 200 MiB are allocated.
    let mut garbage = (200u32 << 20).to_be_bytes().to_vec();
    garbage.push(0xf0);
    garbage.resize(1 << 20, 0xff);
    fs::write(&input, &garbage).unwrap();
    let output = run_limited(&["decompress"], &input);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("runs past the end of the block at byte 1048576"));

    // A frame whose header claims 2 GiB of body: refused from its header (256 MiB at most).
    let mut stream = read("frames/requests.plain.bin");
    let tail = stream.len();
    stream.extend_from_slice(&[0x04, 0x00, 0x00, 0x2a, 0x07]);
    stream.extend_from_slice(&i32::MAX.to_be_bytes());
    stream.extend_from_slice(&[0; 100]);
    fs::write(&input, &stream).unwrap();
    let output = run_limited(&["compress", "--frames"], &input);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!(
        "uncompressed frame body of 2147483647 bytes exceeds the limit of 268435456 bytes at byte \
         {} (frame at byte {tail}, stream 42)",
        tail + 5
    )));
}

/// Runs cqlwire on `input` writing to a file in a temporary folder; asserts exit 1, that the
/// error names `needle`, and that no output file (nor temporary file) is left behind.
fn assert_data_error(args: &[&str], input: &[u8], needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    cqlwire()
        .args(args)
        .arg("-o")
        .arg(&out)
        .write_stdin(input)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("cqlwire: error: "))
        .stderr(predicate::str::contains(needle))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "{needle}");
}

#[test]
fn bad_bodies_are_errors_naming_the_offset() {
    let body = read("bodies/text-8192.lz4");
    let declared = |len: u32| {
        let mut b = body.clone();
        b[..4].copy_from_slice(&len.to_be_bytes());
        b
    };
    assert_data_error(
        &["decompress"],
        &declared(8193),
        &format!(
            "decompresses to 8192 bytes, fewer than the declared 8193 at byte {}",
            body.len()
        ),
    );
    assert_data_error(
        &["decompress"],
        &declared(8191),
        "decompresses to more than the declared 8191 bytes at byte ",
    );
    assert_data_error(&["decompress"], &body[..body.len() - 3], "at byte ");
    assert_data_error(
        &["decompress"],
        &body[..2],
        "shorter than its 4-byte length prefix",
    );
    assert_data_error(
        &["decompress"],
        &[0, 0, 0, 0, 0x10, b'a'],
        "declared uncompressed length 0 but the LZ4 block is 2 bytes",
    );
    // Garbage: a length, then bytes that are not an LZ4 block.
    let garbage: Vec<u8> = (0u32..200).map(|i| (i * 151 % 251) as u8).collect();
    assert_data_error(
        &["decompress"],
        &[&[0, 0, 1, 0][..], &garbage].concat(),
        "at byte ",
    );
    assert_data_error(&["decompress"], b"\xff\xfe", "at byte 0");
    assert_data_error(&["decompress", "--hex"], b"00 0g", "invalid hex");
}

#[test]
fn bad_frames_are_errors_naming_the_frame() {
    let plain = read("frames/requests.plain.bin");
    let frames = split_frames(&plain);
    let (last_offset, last) = {
        let sizes: usize = frames[..frames.len() - 1]
            .iter()
            .map(|f| 9 + f.4.len())
            .sum();
        (sizes, frames.last().unwrap())
    };
    let cut = &plain[..plain.len() - 10];
    let message = format!(
        "truncated frame at byte {last_offset} (stream {}): header says {} body bytes, {} left",
        last.2,
        last.4.len(),
        last.4.len() - 10
    );
    assert_data_error(&["compress", "--frames"], cut, &message);
    assert_data_error(&["decompress", "--frames"], cut, &message);
    assert_data_error(
        &["decompress", "--frames"],
        &plain[..last_offset + 5],
        &format!("truncated frame header at byte {last_offset}: 5 of 9 bytes left"),
    );

    // A corrupt compressed body inside a stream: the offset counts from the start of the stream.
    let driver = read("frames/responses.lz4.bin");
    let frames = split_frames(&driver);
    let index = frames.iter().position(|f| f.1 & 0x01 != 0).unwrap();
    let offset: usize = frames[..index].iter().map(|f| 9 + f.4.len()).sum();
    let mut broken = driver.clone();
    broken[offset + 9..offset + 13].copy_from_slice(&(1u32 << 30).to_be_bytes());
    assert_data_error(
        &["decompress", "--frames"],
        &broken,
        &format!(
            "at byte {} (frame at byte {offset}, stream {})",
            offset + 9,
            frames[index].2
        ),
    );

    let mut wrong_version = plain.clone();
    wrong_version[0] = 0x05;
    assert_data_error(
        &["decompress", "--frames"],
        &wrong_version,
        "unsupported protocol version byte 0x05 in frame header at byte 0",
    );
}

#[test]
fn usage_errors_exit_2() {
    cqlwire()
        .args(["decompress", "--max-size", "lots"])
        .assert()
        .code(2);
    cqlwire().args(["compress", "--bogus"]).assert().code(2);
}

#[test]
fn help_shows_examples() {
    for command in ["compress", "decompress"] {
        cqlwire()
            .args([command, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"))
            .stdout(predicate::str::contains(format!("cqlwire {command} --hex")));
    }
}
