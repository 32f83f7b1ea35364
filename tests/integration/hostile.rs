//! Failure injection through the real binary: full disks, killed runs, closed pipes, unreadable and
//! directory inputs, input = output, and the error contract (exit code, one `cqlwire: error:` line,
//! never a panic) of every command.
//!
//! Inputs are made here (a seeded generator, NPY headers written by the rules of the format) or taken
//! from the driver-made fixtures in `fixtures/lz4`. Tests that need root (a tiny tmpfs, dropping to
//! another user) print a note and return when they cannot run.

use crate::common;
use cqlwire_testkit::temporaries;

use common::{assert_error, cqlwire, fixture, hex, noise, run, with_args, write_npy};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The hex of a `list<int>` value with `n` elements.
fn long_int_list_hex(n: u32) -> String {
    let mut bytes = n.to_be_bytes().to_vec();
    for i in 0..n {
        bytes.extend_from_slice(&4u32.to_be_bytes());
        bytes.extend_from_slice(&i.to_be_bytes());
    }
    hex(&bytes)
}

/// Whether this process runs as root (who can read a mode-000 file and mount file systems).
fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Whether signal `number` is ignored by this process (and so by its children), from the `SigIgn`
/// mask in `/proc` (background jobs of a non-interactive shell ignore SIGINT, `nohup` SIGHUP).
fn signal_ignored(number: u32) -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & (1 << (number - 1)) != 0)
}

/// A tiny tmpfs mounted on a temporary folder, unmounted on drop.
struct TinyDisk {
    dir: tempfile::TempDir,
}

impl TinyDisk {
    /// Mounts a `size` tmpfs, or None (with a note) when that is not possible (not root, no mount).
    fn mount(size: &str) -> Option<TinyDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!(
                "note: cannot mount a tmpfs here (needs root); full-file-system test skipped"
            );
            return None;
        }
        Some(TinyDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

// ---------------------------------------------------------------------------------------------
// Full disk
// ---------------------------------------------------------------------------------------------

/// Every command, with standard output on `/dev/full`: exit 1 and one error line naming the cause.
#[test]
fn standard_output_on_a_full_device_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 100, 16);
    let npy = npy.to_str().unwrap();
    let body = fixture("lz4/bodies/text-65536.lz4");
    let hex_body = hex(&fs::read(&body).unwrap());
    let body = body.to_str().unwrap();
    let list = long_int_list_hex(1000);
    let cases: Vec<(Vec<&str>, &[u8])> = vec![
        (vec!["decode", "int", "0000002a"], b""),
        (
            vec!["decode", "list<int>", "--format", "explain"],
            list.as_bytes(),
        ),
        (
            vec!["decode", "list<int>", "--format", "json"],
            list.as_bytes(),
        ),
        (vec!["encode", "int", "42"], b""),
        (vec!["encode", "int", "42", "--format", "raw"], b""),
        (vec!["compress"], b"hello hello hello hello"),
        (vec!["compress", "--hex"], b"68656c6c6f"),
        (vec!["decompress", body], b""),
        (vec!["decompress", "--hex"], hex_body.as_bytes()),
        (vec!["convert", npy], b""),
        (vec!["convert", npy, "--format", "hex"], b""),
        (vec!["convert", npy, "--format", "arrow"], b""),
        (vec!["convert", npy, "--format", "parquet"], b""),
    ];
    for (args, stdin) in cases {
        let mut command = with_args(&args);
        command.stdout(File::options().write(true).open("/dev/full").unwrap());
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin);
        drop(input);
        let output = child.wait_with_output().unwrap();
        assert_error(
            &output,
            1,
            "No space left on device",
            &format!("{args:?} > /dev/full"),
        );
    }
}

/// `-o /dev/full` is written in place (a device is never replaced by a file): exit 1, one line.
#[test]
fn output_option_on_a_full_device_is_an_error_and_leaves_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 100, 16);
    let payload = dir.path().join("payload.bin");
    fs::write(&payload, noise(100_000, 1)).unwrap();
    let body = fixture("lz4/bodies/text-65536.lz4");
    for args in [
        vec!["compress", payload.to_str().unwrap()],
        vec!["decompress", body.to_str().unwrap()],
        vec!["convert", npy.to_str().unwrap(), "--format", "framed"],
    ] {
        let mut command = with_args(&args);
        command.args(["-o", "/dev/full"]);
        let output = run(command, b"");
        assert_error(
            &output,
            1,
            "cannot write /dev/full: No space left",
            &format!("{args:?}"),
        );
        assert!(!fs::metadata("/dev/full").unwrap().is_file());
    }
}

/// `-o FILE` on a full file system: exit 1, one line, the old destination intact, no temporary file
/// left behind.
#[test]
fn output_file_on_a_full_file_system_keeps_the_old_content() {
    let Some(disk) = TinyDisk::mount("64k") else {
        return;
    };
    let inputs = tempfile::tempdir().unwrap();
    let npy = inputs.path().join("v.npy");
    write_npy(&npy, 1000, 64);
    let payload = inputs.path().join("payload.bin");
    fs::write(&payload, noise(256 * 1024, 2)).unwrap();
    let body = fixture("lz4/bodies/text-1048576.lz4");
    let destination = disk.path().join("out.bin");
    for args in [
        vec!["compress", payload.to_str().unwrap()],
        vec!["decompress", body.to_str().unwrap()],
        vec!["convert", npy.to_str().unwrap()],
        vec!["convert", npy.to_str().unwrap(), "--format", "hex"],
        vec!["convert", npy.to_str().unwrap(), "--format", "npy"],
    ] {
        fs::write(&destination, b"old content").unwrap();
        let mut command = with_args(&args);
        command.arg("-o").arg(&destination);
        let output = run(command, b"");
        assert_error(&output, 1, "No space left on device", &format!("{args:?}"));
        assert_eq!(fs::read(&destination).unwrap(), b"old content", "{args:?}");
        assert_eq!(temporaries(disk.path()), Vec::<String>::new(), "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Killed runs
// ---------------------------------------------------------------------------------------------

/// Starts `convert` of a large input to `destination`, waits until its temporary file is being
/// written, and kills it with `signal`.
fn kill_convert_mid_run(input: &Path, destination: &Path, signal: &str) {
    let mut child = cqlwire()
        .arg("convert")
        .arg(input)
        .arg("-o")
        .arg(destination)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let dir = destination.parent().unwrap();
    let mine = format!(".cqlwire-{}-", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let writing = fs::read_dir(dir).unwrap().any(|e| {
            let e = e.unwrap();
            e.file_name().to_string_lossy().starts_with(&mine)
                && e.metadata().is_ok_and(|m| m.len() > 0)
        });
        if writing {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "convert ended before it could be killed"
        );
        assert!(Instant::now() < deadline, "convert never started writing");
        std::thread::sleep(Duration::from_millis(2));
    }
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "convert finished before the {signal}");
}

/// SIGTERM, SIGINT (Ctrl-C), SIGHUP and SIGKILL in the middle of a 200 MB conversion: the
/// destination is absent or keeps its old content; the caught signals remove the temporary file on
/// the way out, and the next run to that folder removes the one SIGKILL left.
#[test]
fn killed_convert_leaves_the_destination_and_no_temporary_file() {
    let inputs = tempfile::tempdir().unwrap();
    let big = inputs.path().join("big.npy");
    write_npy(&big, 65_536, 768);
    let small = inputs.path().join("small.npy");
    write_npy(&small, 4, 8);
    let out = tempfile::tempdir().unwrap();
    let destination = out.path().join("vectors.bin");

    // Caught: the temporary file goes with the process. The first run has no destination (it stays
    // absent), the others an old content (it stays).
    for (signal, number) in [("-TERM", 15), ("-INT", 2), ("-HUP", 1)] {
        if signal_ignored(number) {
            eprintln!("note: signal {number} is ignored in this process; {signal} case skipped");
            continue;
        }
        let before = fs::read(&destination).ok();
        kill_convert_mid_run(&big, &destination, signal);
        assert_eq!(fs::read(&destination).ok(), before, "after {signal}");
        assert_eq!(
            temporaries(out.path()),
            Vec::<String>::new(),
            "after {signal}"
        );
        fs::write(&destination, b"old content").unwrap();
    }
    fs::write(&destination, b"old content").unwrap();

    kill_convert_mid_run(&big, &destination, "-KILL");
    assert_eq!(fs::read(&destination).unwrap(), b"old content");
    assert_eq!(temporaries(out.path()).len(), 1, "SIGKILL cannot be caught");

    let mut next = cqlwire();
    next.arg("convert")
        .arg(&small)
        .arg("-q")
        .arg("-o")
        .arg(out.path().join("next.bin"));
    let next = run(next, b"");
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert_eq!(
        temporaries(out.path()),
        Vec::<String>::new(),
        "after the next run"
    );
    assert_eq!(fs::read(&destination).unwrap(), b"old content");
}

// ---------------------------------------------------------------------------------------------
// Closed pipes
// ---------------------------------------------------------------------------------------------

/// Runs `args` with `stdin`, reads the first line (at most 4 KiB of it) of standard output and
/// closes the pipe, like `| head -1`; asserts exit 0 and nothing on standard error.
fn assert_quiet_after_first_line(args: &[&str], stdin: Vec<u8>) {
    let mut child = with_args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = Vec::new();
    stdout
        .by_ref()
        .take(4096)
        .read_until(b'\n', &mut line)
        .unwrap();
    assert!(!line.is_empty(), "{args:?}: no output");
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    assert_eq!(stderr, "", "{args:?}");
}

/// `| head -1` on long text output of every command ends quietly with exit 0 (and so does
/// `| head -c` on the binary outputs that go through the Parquet and Arrow writers).
#[test]
fn closed_pipe_on_text_output_is_quiet_success() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("rows.npy");
    write_npy(&npy, 20_000, 64);
    let npy = npy.to_str().unwrap();
    let list = long_int_list_hex(100_000).into_bytes();
    assert_quiet_after_first_line(&["convert", npy, "--format", "hex"], vec![]);
    assert_quiet_after_first_line(&["convert", npy, "--format", "arrow"], vec![]);
    assert_quiet_after_first_line(&["convert", npy, "--format", "parquet"], vec![]);
    assert_quiet_after_first_line(
        &["decode", "list<int>", "--format", "explain"],
        list.clone(),
    );
    assert_quiet_after_first_line(&["decode", "list<int>", "--format", "json"], list.clone());
    assert_quiet_after_first_line(&["decode", "list<int>"], list.clone());
    let literal = format!("[{}]", vec!["123456789"; 100_000].join(", "));
    assert_quiet_after_first_line(&["encode", "list<int>"], literal.into_bytes());
    let payload = hex(&noise(1 << 20, 3)).into_bytes();
    assert_quiet_after_first_line(&["compress", "--hex"], payload);

    // A stream of 20,000 small QUERY frames, compressed and back, one hex line per frame.
    let mut frames = Vec::new();
    for stream in 0..20_000u32 {
        let body = format!("SELECT * FROM t WHERE k = {stream}; -- padding padding");
        frames.extend_from_slice(&[0x04, 0x00]);
        frames.extend_from_slice(&(stream as u16).to_be_bytes());
        frames.push(0x07);
        frames.extend_from_slice(&(body.len() as u32).to_be_bytes());
        frames.extend_from_slice(body.as_bytes());
    }
    let frames = hex(&frames);
    let compressed = run(
        with_args(&["compress", "--frames", "--hex"]),
        frames.as_bytes(),
    );
    assert!(compressed.status.success());
    assert_quiet_after_first_line(&["compress", "--frames", "--hex"], frames.into_bytes());
    assert_quiet_after_first_line(&["decompress", "--frames", "--hex"], compressed.stdout);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs and input = output
// ---------------------------------------------------------------------------------------------

/// The commands that read an input path, as argument lists with `{}` standing for the path.
const PATH_COMMANDS: [&[&str]; 5] = [
    &["compress", "{}"],
    &["decompress", "{}"],
    &["convert", "{}", "--input-format", "npy"],
    &["decode", "int", "--binary", "{}"],
    &["compress", "--frames", "{}"],
];

fn substitute(args: &[&str], path: &str) -> Vec<String> {
    args.iter().map(|a| a.replace("{}", path)).collect()
}

#[test]
fn a_directory_as_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for args in PATH_COMMANDS {
        let args = substitute(args, dir.path().to_str().unwrap());
        let output = run(with_args(&args), b"");
        assert_error(&output, 1, "is a directory", &format!("{args:?}"));
    }
    // Standard input redirected from a directory.
    for args in [
        &["decode", "int"][..],
        &["encode", "int"],
        &["compress"],
        &["decompress", "--frames"],
        &["convert", "--input-format", "npy"],
    ] {
        let mut command = with_args(args);
        command.stdin(File::open(dir.path()).unwrap());
        let output = command.output().unwrap();
        assert_error(
            &output,
            1,
            "standard input: Is a directory",
            &format!("{args:?} < dir"),
        );
    }
}

#[test]
fn a_missing_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bin");
    for args in PATH_COMMANDS {
        let args = substitute(args, missing.to_str().unwrap());
        let output = run(with_args(&args), b"");
        assert_error(&output, 1, "No such file", &format!("{args:?}"));
    }
}

/// A mode-000 input. Root reads it anyway, so as root the binary runs as `nobody` (setpriv); without
/// root or setpriv the test notes that it is skipped.
#[test]
fn an_unreadable_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.path().join("secret.bin");
    fs::write(&secret, b"\x00\x00\x00\x01").unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    let binary = common::binary().into_os_string();
    let command = |args: &[String]| -> Option<Command> {
        if !is_root() {
            let mut c = Command::new(&binary);
            c.args(args);
            return Some(c);
        }
        let has_setpriv = Command::new("setpriv").arg("--version").output().is_ok();
        if !has_setpriv {
            return None;
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&binary)
            .args(args);
        Some(c)
    };
    // The binary must be reachable by that user; if it is not, the setup cannot test this.
    let probe = command(&["--version".to_string()]).map(|mut c| c.output());
    if !matches!(probe, Some(Ok(ref o)) if o.status.success()) {
        eprintln!("note: cannot run cqlwire as another user here; unreadable-input test skipped");
        return;
    }
    for args in PATH_COMMANDS {
        let args = substitute(args, secret.to_str().unwrap());
        let output = run(command(&args).unwrap(), b"");
        assert_error(&output, 1, "Permission denied", &format!("{args:?}"));
    }
}

/// `-o` naming the input (or a link to it), and standard output redirected onto the input: refused
/// before anything is written, the input unchanged.
#[test]
fn input_equal_to_output_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 10, 4);
    let body = dir.path().join("body.lz4");
    fs::copy(fixture("lz4/bodies/text-1024.lz4"), &body).unwrap();
    let link = dir.path().join("link.lz4");
    std::os::unix::fs::symlink(&body, &link).unwrap();
    let npy_before = fs::read(&npy).unwrap();
    let body_before = fs::read(&body).unwrap();

    let cases: Vec<Vec<&Path>> = vec![
        vec![Path::new("compress"), &body, Path::new("-o"), &body],
        vec![Path::new("decompress"), &body, Path::new("-o"), &body],
        vec![Path::new("decompress"), &link, Path::new("-o"), &body],
        vec![Path::new("decompress"), &body, Path::new("-o"), &link],
        vec![Path::new("convert"), &npy, Path::new("-o"), &npy],
    ];
    for args in cases {
        let output = run(with_args(&args), b"");
        assert_error(
            &output,
            1,
            "write the output to another file",
            &format!("{args:?}"),
        );
    }
    // Standard input is the file named by -o.
    let mut command = with_args(&["decompress", "-o"]);
    command
        .arg(&body)
        .stdin(File::open(&body).unwrap())
        .stderr(Stdio::piped());
    let output = command.output().unwrap();
    assert_error(&output, 1, "are the same file", "decompress < body -o body");
    // Standard output appends to the input (`>>` does not truncate it first, so it can be checked).
    for args in [
        vec!["decompress", body.to_str().unwrap()],
        vec!["decode", "blob", "--binary", body.to_str().unwrap()],
    ] {
        let mut command = with_args(&args);
        command.stdout(File::options().append(true).open(&body).unwrap());
        command.stderr(Stdio::piped());
        let output = command.output().unwrap();
        assert_error(
            &output,
            1,
            "are the same file",
            &format!("{args:?} >> input"),
        );
    }
    assert_eq!(fs::read(&npy).unwrap(), npy_before);
    assert_eq!(fs::read(&body).unwrap(), body_before);
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

// ---------------------------------------------------------------------------------------------
// Exit codes and the error line
// ---------------------------------------------------------------------------------------------

/// Every command's documented failures: bad data exits 1, bad usage 2, each with one
/// `cqlwire: error:` line and nothing on standard output.
#[test]
fn every_command_fails_with_one_line_and_the_documented_code() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.npy");
    write_npy(&truncated, 10, 4);
    let bytes = fs::read(&truncated).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    let truncated = truncated.to_str().unwrap();
    let npy = dir.path().join("ok.npy");
    write_npy(&npy, 10, 4);
    let npy = npy.to_str().unwrap();
    let bad_body = hex(&[0, 0, 0, 20, 0xff, 0xff]);
    let cases: Vec<(Vec<&str>, &[u8], i32, &str)> = vec![
        (vec!["decode", "int", "0000"], b"", 1, "at byte"),
        (vec!["decode", "int", "zz"], b"", 1, "invalid hex"),
        (vec!["decode", "list<int>", "00000002"], b"", 1, "at byte"),
        (vec!["decode", "lst<int>", "00"], b"", 2, "invalid type"),
        (
            vec!["decode", "int", "--format", "yaml", "00"],
            b"",
            2,
            "invalid value",
        ),
        (vec!["decode"], b"", 2, "required"),
        (vec!["encode", "int", "'x'"], b"", 1, "invalid int value"),
        (vec!["encode", "int", "--json", "{"], b"", 1, "invalid JSON"),
        (vec!["encode", "int"], b"\xff\xfe", 1, "not UTF-8"),
        (vec!["encode", "map<int>", "1"], b"", 2, "invalid type"),
        (vec!["compress", "--hex"], b"0g", 1, "invalid hex"),
        (
            vec!["compress", "--frames"],
            b"\x04\x00\x00\x01\x07\x00\x00\x00\x09ab",
            1,
            "byte",
        ),
        (vec!["compress", "--bogus"], b"", 2, "unexpected argument"),
        (
            vec!["decompress", "--hex"],
            bad_body.as_bytes(),
            1,
            "at byte",
        ),
        (
            vec!["decompress", "--hex", "--max-size", "4"],
            b"00000014ff",
            1,
            "4",
        ),
        (
            vec!["decompress", "--max-size", "lots"],
            b"",
            2,
            "--max-size",
        ),
        (vec!["convert", truncated], b"", 1, truncated),
        (
            vec!["convert", npy, "--type", "vector<float, 5>"],
            b"",
            1,
            "dimension",
        ),
        (
            vec!["convert", npy, "--type", "vectr<float, 4>"],
            b"",
            2,
            "invalid --type",
        ),
        (vec!["convert", npy, "--shard", "3/2"], b"", 2, "--shard"),
        (
            vec!["convert", "--input-format", "npy"],
            b"not an npy file",
            1,
            "standard input",
        ),
    ];
    for (args, stdin, code, needle) in cases {
        let output = run(with_args(&args), stdin);
        assert_error(&output, code, needle, &format!("{args:?}"));
        assert!(
            output.stdout.is_empty(),
            "{args:?} wrote to standard output"
        );
    }
}

/// A failing run with `-o` leaves an existing destination as it was and no temporary file.
#[test]
fn a_failing_run_leaves_the_destination_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let destination = dir.path().join("out.bin");
    let truncated = dir.path().join("truncated.npy");
    write_npy(&truncated, 1000, 16);
    let bytes = fs::read(&truncated).unwrap();
    fs::write(&truncated, &bytes[..bytes.len() - 1]).unwrap();
    let corrupt = dir.path().join("corrupt.lz4");
    let mut body = fs::read(fixture("lz4/bodies/text-65536.lz4")).unwrap();
    body.truncate(body.len() / 2);
    fs::write(&corrupt, &body).unwrap();
    for args in [
        vec!["convert", truncated.to_str().unwrap()],
        vec!["convert", truncated.to_str().unwrap(), "--format", "hex"],
        vec!["decompress", corrupt.to_str().unwrap()],
        vec![
            "decompress",
            "--max-size",
            "1KiB",
            corrupt.to_str().unwrap(),
        ],
    ] {
        fs::write(&destination, b"old content").unwrap();
        let mut command = with_args(&args);
        command.arg("-o").arg(&destination);
        let output = run(command, b"");
        assert_error(&output, 1, "", &format!("{args:?}"));
        assert_eq!(fs::read(&destination).unwrap(), b"old content", "{args:?}");
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "{args:?}");
    }
}

/// Which of a command's outputs is on `/dev/full`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Full {
    Stdout,
    Stderr,
}

/// Runs `args` with one output on `/dev/full` (the other piped) and returns the exit code.
fn exit_with_full(args: &[String], full: Full) -> Option<i32> {
    let mut command = with_args(args);
    let device = File::options().write(true).open("/dev/full").unwrap();
    match full {
        Full::Stdout => command.stdout(device).stderr(Stdio::piped()),
        Full::Stderr => command.stderr(device).stdout(Stdio::piped()),
    };
    command.stdin(Stdio::null()).output().unwrap().status.code()
}

/// Every command, with standard error and then standard output on `/dev/full`: never a panic or an
/// abort, and a run whose output was lost (a warning, a summary, a hint, help text) exits non-zero
/// (1 where it would have succeeded); a run that writes nothing there exits as it otherwise would.
#[test]
fn every_command_with_a_full_output_loses_nothing_silently() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 100, 16);
    let bad_log = dir.path().join("bad.keylog");
    fs::write(&bad_log, "not a key log line\n").unwrap();
    let capture = fixture("inspect/tls13-v5-lz4.pcap");
    let truncated = fixture("inspect/hostile/truncated.pcap");
    let body = fixture("lz4/bodies/text-65536.lz4");
    let man = dir.path().join("man");
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let cases: Vec<Vec<String>> = [
        vec!["--help"],
        vec!["--version"],
        vec![],
        vec!["load", "--help"],
        vec!["inspect", "--help"],
        vec!["decode", "int", "0000002a"],
        vec!["decode", "int", "00"],
        vec!["encode", "int", "42"],
        vec!["convert", &path(&npy), "--format", "hex"],
        vec!["convert", &path(&npy), "--format", "hex", "--quiet"],
        vec!["decompress", &path(&body)],
        vec!["compress", &path(&npy)],
        vec!["generate", "completions", "bash"],
        vec!["generate", "man", &path(&man)],
        vec!["inspect", &path(&capture)],
        vec!["inspect", &path(&capture), "--tls-keylog", &path(&bad_log)],
        vec!["inspect", &path(&capture), "--port", "1"],
        vec!["inspect", &path(&truncated)],
        vec!["inspect", &path(&truncated), "--stats"],
        vec![
            "load",
            &path(&npy),
            "--hosts",
            "127.0.0.1:1",
            "--table",
            "k.t",
        ],
    ]
    .iter()
    .map(|args| args.iter().map(|a| a.to_string()).collect())
    .collect();
    for args in &cases {
        let normal = with_args(args).stdin(Stdio::null()).output().unwrap();
        let code = normal.status.code();
        assert!(matches!(code, Some(0..=2)), "{args:?}: {normal:?}");
        for (full, lost) in [
            (Full::Stderr, !normal.stderr.is_empty()),
            (Full::Stdout, !normal.stdout.is_empty()),
        ] {
            let got = exit_with_full(args, full);
            let expected = if lost && code == Some(0) {
                Some(1)
            } else {
                code
            };
            assert_eq!(got, expected, "{args:?} with {full:?} on /dev/full");
        }
    }
}

/// `-o /dev/stdout` writes to whatever standard output is, in place: a regular file (appending, as
/// `>>` asked) or a pipe; the name `/dev/stdout` is never replaced by a file.
#[test]
fn output_to_dev_stdout_writes_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    fs::write(&log, b"before\n").unwrap();
    let mut command = with_args(&["encode", "int", "42", "--format", "raw"]);
    command.stdout(File::options().append(true).open(&log).unwrap());
    assert!(command.status().unwrap().success());
    let payload = dir.path().join("payload.bin");
    fs::write(&payload, b"hello hello hello hello").unwrap();
    let mut command = with_args(&["compress".as_ref(), payload.as_os_str()]);
    command.args(["-o", "/dev/stdout"]);
    command.stdout(File::options().append(true).open(&log).unwrap());
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = fs::read(&log).unwrap();
    assert!(
        written.starts_with(b"before\n\x00\x00\x00\x2a"),
        "{written:?}"
    );
    // The body: the payload's length (23), then the LZ4 block.
    assert_eq!(written.get(11..15), Some(&[0, 0, 0, 23][..]), "{written:?}");
    assert!(fs::symlink_metadata("/dev/stdout")
        .unwrap()
        .file_type()
        .is_symlink());
    // To a pipe.
    let mut command = with_args(&["compress".as_ref(), payload.as_os_str()]);
    let output = command.args(["-o", "/dev/stdout"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.stdout, written[11..]);
}

/// Binary output to a terminal is refused, also through `-o /dev/tty`; text output is not. The
/// terminal is a pseudo-terminal made by `script` (util-linux); without it the test notes a skip.
#[test]
fn binary_output_to_a_terminal_is_refused() {
    let binary = common::binary().into_os_string();
    let binary = binary.to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let payload = dir.path().join("payload.bin");
    fs::write(&payload, b"hello hello hello hello").unwrap();
    let payload = payload.to_str().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 2, 3);
    let npy = npy.to_str().unwrap();
    let in_terminal = |command: &str| {
        Command::new("script")
            .args(["-qec", command, "/dev/null"])
            .stdin(Stdio::null())
            .output()
    };
    if !in_terminal("true").is_ok_and(|o| o.status.success()) {
        eprintln!("note: `script` cannot make a terminal here; terminal test skipped");
        return;
    }
    for command in [
        format!("'{binary}' encode int 42 --format raw"),
        format!("'{binary}' compress '{payload}'"),
        format!("'{binary}' compress '{payload}' -o /dev/tty"),
        format!("'{binary}' convert '{npy}'"),
    ] {
        let output = in_terminal(&command).unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(1), "{command}: {text}");
        assert!(
            text.contains("cqlwire: error: refusing to write binary output to a terminal"),
            "{command}: {text}"
        );
        assert_eq!(text.trim_end().lines().count(), 1, "{command}: {text}");
    }
    let output = in_terminal(&format!("'{binary}' compress --hex /dev/null")).unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!text.contains("refusing"), "{text}");
}

/// A fake server that answers a client's first frame on every connection with a SUPPORTED header
/// claiming a 1.5 GiB body, then sends zeros towards it until the client goes away.
fn lying_frame_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut header = [0u8; 9];
                if stream.read_exact(&mut header).is_err() {
                    return;
                }
                let claimed: u32 = 3 << 29;
                let mut answer = vec![0x84, 0, header[2], header[3], 0x06];
                answer.extend_from_slice(&claimed.to_be_bytes());
                let zeros = vec![0u8; 1 << 16];
                if stream.write_all(&answer).is_err() {
                    return;
                }
                for _ in 0..(claimed >> 16) {
                    if stream.write_all(&zeros).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A server whose frame header claims 1.5 GiB is refused from the header: `load` ends with one
/// error line within seconds, under an address-space ceiling far below the claim (the driver
/// reserved the claim, up to 4 GiB per connection, and filled it with what the server sent).
#[test]
fn a_server_claiming_a_huge_frame_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 10, 4);
    let port = lying_frame_server();
    let ceiling_mib = common::own_address_space_mib() + 768;
    let started = Instant::now();
    let output = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v $1; exec \"${@:2}\"")
        .arg("bash")
        .arg((ceiling_mib << 10).to_string())
        .arg(common::binary())
        .arg("load")
        .arg(&npy)
        .args(["--hosts", &format!("127.0.0.1:{port}"), "--table", "k.t"])
        .args(["--timeout", "5"])
        .output()
        .unwrap();
    assert_error(&output, 1, "frame body of 1610612736 bytes", "lying server");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

/// The bytes of an `.fvecs` (each row: its dimension as i32, then f32s) and an `.fbin` (rows and
/// dimension as u32, then the f32s) of `rows` × `dim` small integers.
fn ann_files(rows: u32, dim: u32) -> (Vec<u8>, Vec<u8>) {
    let value = |r: u32, d: u32| ((r * 7 + d) % 1000) as f32;
    let mut fvecs = Vec::new();
    let mut fbin = [rows.to_le_bytes(), dim.to_le_bytes()].concat();
    for r in 0..rows {
        fvecs.extend_from_slice(&dim.to_le_bytes());
        for d in 0..dim {
            fvecs.extend_from_slice(&value(r, d).to_le_bytes());
            fbin.extend_from_slice(&value(r, d).to_le_bytes());
        }
    }
    (fvecs, fbin)
}

/// The output of `cqlwire convert FILE --format hex`, which must succeed.
fn hex_of(file: &Path) -> Vec<u8> {
    let converted = with_args(&["convert".as_ref(), file.as_os_str()])
        .args(["--format", "hex"])
        .output()
        .unwrap();
    assert!(
        converted.status.success(),
        "{}: {converted:?}",
        file.display()
    );
    converted.stdout
}

/// Runs `cqlwire convert FIFO ARGS` on a named pipe made at `fifo`, written `bytes` by a thread,
/// under `timeout` (a run that opens the pipe twice waits for a second writer forever).
fn convert_through_fifo(fifo: &Path, bytes: &[u8], args: &[&str]) -> std::process::Output {
    let made = Command::new("mkfifo").arg(fifo).status().unwrap();
    assert!(made.success());
    // Not joined: a run that never opens the pipe would leave the writer blocked.
    let (path, copy) = (fifo.to_path_buf(), bytes.to_vec());
    std::thread::spawn(move || {
        let _ = File::options()
            .write(true)
            .open(path)
            .map(|mut f| f.write_all(&copy));
    });
    Command::new("timeout")
        .arg("60")
        .arg(common::binary())
        .args(["convert".as_ref(), fifo.as_os_str()])
        .args(args)
        .output()
        .unwrap()
}

/// Inputs named without an extension — a named pipe, `/dev/stdin` on a pipe — are recognised by
/// their magic bytes, as standard input is: `.npy`, Parquet, Arrow IPC file and stream, HDF5 (the
/// last three copied to a temporary file first) convert exactly as the file does.
#[test]
fn pipes_without_an_extension_are_recognised_by_their_magic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        "convert/sample/train.npy",
        "convert/sample/train.parquet",
        "damaged_text/text.arrow",
        "damaged_text/text.arrows",
        "hdf5/ann.hdf5",
    ];
    for (i, input) in inputs.into_iter().enumerate() {
        let file = fixture(input);
        let bytes = fs::read(&file).unwrap();
        let expected = hex_of(&file);
        let fifo = dir.path().join(format!("pipe{i}"));
        let from_fifo = convert_through_fifo(&fifo, &bytes, &["--format", "hex"]);
        assert!(
            from_fifo.status.success(),
            "{input} from a named pipe: {from_fifo:?}"
        );
        assert!(
            from_fifo.stdout == expected,
            "{input} from a named pipe differs"
        );
        let piped = run(
            with_args(&["convert", "/dev/stdin", "--format", "hex"]),
            &bytes,
        );
        assert!(piped.status.success(), "{input} from /dev/stdin: {piped:?}");
        assert!(piped.stdout == expected, "{input} from /dev/stdin differs");
    }
}

/// Inputs that stream (`.npy`, `.fvecs`, `.fbin`) convert from a named pipe, `/dev/stdin` on a pipe
/// and `/dev/fd/N` (what `<(…)` gives) exactly as from the file; they were read as empty files
/// ("truncated NPY data") or seeked ("Illegal seek").
#[test]
fn streamable_inputs_convert_from_pipes_as_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("v.npy");
    write_npy(&npy, 300, 8);
    let (fvecs, fbin) = ann_files(300, 8);
    let inputs = [
        ("npy", fs::read(&npy).unwrap()),
        ("fvecs", fvecs),
        ("fbin", fbin),
    ];
    for (format, bytes) in inputs {
        let file = dir.path().join(format!("file.{format}"));
        fs::write(&file, &bytes).unwrap();
        let expected = hex_of(&file);

        let fifo = dir.path().join(format!("fifo.{format}"));
        let from_fifo = convert_through_fifo(&fifo, &bytes, &["--format", "hex"]);
        assert_eq!(
            from_fifo.stdout, expected,
            "{format} from a named pipe: {from_fifo:?}"
        );
        assert!(from_fifo.status.success(), "{format}: {from_fifo:?}");

        for name in ["/dev/stdin", "/dev/fd/0"] {
            let mut command = with_args(&["convert", name, "--format", "hex"]);
            command.args(["--input-format", format]);
            let piped = run(command, &bytes);
            assert_eq!(piped.stdout, expected, "{format} from {name}: {piped:?}");
            assert!(piped.status.success(), "{format} from {name}: {piped:?}");
        }
    }
}
