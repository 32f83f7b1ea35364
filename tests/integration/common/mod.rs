//! Helpers shared by the integration tests that run the binary on inputs they make.
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The path of the binary under test, as cargo built it for the integration tests: the one way the
/// tests find it.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cqlwire"))
}

pub mod pcap;

/// The address space (MiB) the binary's own mappings took when the `ulimit -v` ceilings of the
/// memory tests were set; [`own_address_space_mib`] measures today's.
pub const CALIBRATED_OWN_MIB: u64 = 39;

/// The least address space (MiB) in which the binary decodes one int: its own mappings (code,
/// libraries, thread stacks), which grow with what it links, unlike the memory a run needs for
/// its data. Measured once per test process, by bisection.
pub fn own_address_space_mib() -> u64 {
    static MEASURED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEASURED.get_or_init(|| {
        let runs = |mib: u64| {
            Command::new("bash")
                .arg("-c")
                .arg("ulimit -v $1; exec \"$2\" decode int 00000001 >/dev/null 2>&1")
                .arg("bash")
                .arg((mib << 10).to_string())
                .arg(binary())
                .status()
                .is_ok_and(|status| status.success())
        };
        let (mut low, mut high) = (8, 512);
        assert!(
            runs(high),
            "the binary does not run in {high} MiB of address space"
        );
        while high - low > 1 {
            let mid = (low + high) / 2;
            if runs(mid) {
                high = mid;
            } else {
                low = mid;
            }
        }
        high
    })
}

/// The binary under test.
pub fn cqlwire() -> Command {
    Command::new(binary())
}

/// The binary under test as an `assert_cmd` command (`write_stdin`, `timeout`, `assert`).
pub fn cqlwire_cmd() -> assert_cmd::Command {
    assert_cmd::Command::new(binary())
}

pub use cqlwire_testkit::{fixture, jsonl_cases};

/// Runs `command` with `stdin` as its standard input and returns what it did.
pub fn run(mut command: Command, stdin: &[u8]) -> Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    output
}

/// The binary with arguments.
pub fn with_args<S: AsRef<OsStr>>(args: &[S]) -> Command {
    let mut command = cqlwire();
    command.args(args);
    command
}

/// Asserts the error contract: exit `code`, standard error exactly one `cqlwire: error: ` line (that
/// contains `needle`), no panic; returns the message.
pub fn assert_error(output: &Output, code: i32, needle: &str, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: stderr {stderr:?}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert!(stderr.starts_with("cqlwire: error: "), "{what}: {stderr:?}");
    assert!(stderr.ends_with('\n'), "{what}: {stderr:?}");
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr:?}");
    assert!(
        stderr.contains(needle),
        "{what}: {stderr:?} lacks {needle:?}"
    );
    stderr
}

/// Deterministic pseudo-random bytes (xorshift64), incompressible enough for LZ4.
pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(len + 8);
    while bytes.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        bytes.extend_from_slice(&seed.to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

/// Writes a version 1.0 `.npy` file of `rows` × `dim` little-endian f32 values: small integers, the
/// same in every row (fast to make, very compressible).
pub fn write_npy(path: &Path, rows: usize, dim: usize) {
    let row: Vec<u8> = (0..dim)
        .flat_map(|i| ((i % 1000) as f32).to_le_bytes())
        .collect();
    write_npy_rows(path, rows, dim, |_| row.clone());
}

/// Writes a `.npy` file of `rows` × `dim` pseudo-random finite f32 values in (0, 2)
/// (incompressible).
pub fn write_random_npy(path: &Path, rows: usize, dim: usize, seed: u64) {
    let mut values = noise(rows * dim * 4, seed);
    for value in values.chunks_exact_mut(4) {
        // Little-endian: clearing the sign and the exponent's top bit leaves a finite value below 2.
        value[3] &= 0x3f;
    }
    let row_bytes = dim * 4;
    write_npy_rows(path, rows, dim, |r| {
        values[r * row_bytes..(r + 1) * row_bytes].to_vec()
    });
}

/// Writes a version 1.0 `.npy` file of `rows` rows of `dim` little-endian f32 values, row `r` being
/// `row(r)` (its bytes).
fn write_npy_rows(path: &Path, rows: usize, dim: usize, mut row: impl FnMut(usize) -> Vec<u8>) {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {dim}), }}");
    // magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let header = format!(
        "{dict}{}\n",
        " ".repeat(unpadded.next_multiple_of(64) - unpadded)
    );
    let mut file = std::io::BufWriter::new(File::create(path).unwrap());
    file.write_all(b"\x93NUMPY\x01\x00").unwrap();
    file.write_all(&u16::try_from(header.len()).unwrap().to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    for r in 0..rows {
        file.write_all(&row(r)).unwrap();
    }
    file.flush().unwrap();
}

/// Lowercase hex of `bytes` (test inputs for the `--hex` modes).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits = bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .collect();
    String::from_utf8(digits).unwrap()
}
