//! `decode` / `encode` through the binary: standard input, hints that lead to the fix, memory held to
//! the bytes read.

use crate::common;

use common::{assert_error, run, with_args};

/// Runs cqlwire with `stdin_path` as standard input under an address-space limit of `limit_kib`, so
/// reading a whole endless input would fail.
fn run_limited(args: &[&str], stdin_path: &str, limit_kib: u32) -> std::process::Output {
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v {limit_kib}; exec \"$@\" < \"$STDIN_PATH\""
        ))
        .arg("bash")
        .arg(binary)
        .args(args)
        .env("STDIN_PATH", stdin_path)
        .output()
        .unwrap()
}

#[test]
fn hex_on_stdin_stops_at_the_first_bad_byte_and_names_binary() {
    let output = run_limited(&["decode", "blob"], "/dev/zero", 262_144);
    assert_error(
        &output,
        1,
        "invalid hex character '\\0' at character 0 (raw bytes? read them with --binary -)",
        "/dev/zero as hex",
    );
    let output = run(with_args(&["decode", "int", "-"]), b"\x00\x00\x00\x2a");
    assert_error(&output, 1, "--binary -", "raw bytes as hex");
    let output = run(with_args(&["decode", "text"]), b"ab\xff\xfe");
    assert_error(
        &output,
        1,
        "byte 0xff at character 2 is not UTF-8 text (raw bytes? read them with --binary -)",
        "invalid UTF-8 as hex",
    );
}

#[test]
fn dash_means_standard_input() {
    let output = run(with_args(&["decode", "int", "-"]), b"0000002a\n");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, b"42\n");
    let output = run(with_args(&["encode", "int", "-"]), b"42\n");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, b"0x0000002a\n");
}

#[test]
fn xxd_dumps_name_xxd_p() {
    // What `printf '\0\0\0*' | xxd` prints.
    let dump = b"00000000: 0000 002a                                ...*\n";
    let output = run(with_args(&["decode", "int"]), dump);
    assert_error(&output, 1, "use `xxd -p`", "xxd dump on stdin");
    let text = String::from_utf8(dump.to_vec()).unwrap();
    let output = with_args(&["decode", "int", &text]).output().unwrap();
    assert_error(&output, 1, "use `xxd -p`", "xxd dump as argument");
}

#[test]
fn trailing_bytes_name_allow_trailing() {
    for format in ["cql", "json", "explain"] {
        let output = with_args(&[
            "decode",
            "list<int>",
            "00000001000000040000002a0000",
            "--format",
            format,
        ])
        .output()
        .unwrap();
        assert_error(
            &output,
            1,
            "2 trailing bytes after the value at byte 12; --allow-trailing ignores the bytes after \
             the value",
            format,
        );
    }
    // A payload that is short is not helped by --allow-trailing.
    let output = with_args(&["decode", "list<int>", "00000002000000040000002a0000"])
        .output()
        .unwrap();
    let message = assert_error(&output, 1, "truncated element length", "short payload");
    assert!(!message.contains("--allow-trailing"), "{message}");
}

#[test]
fn unknown_types_are_named_with_a_suggestion() {
    let output = with_args(&["decode", "mapp<int,int>", "00"])
        .output()
        .unwrap();
    assert_error(
        &output,
        2,
        "unknown type `mapp` (did you mean `map`?) at character 0",
        "mapp",
    );
    let output = with_args(&["encode", "--udt", "addr(zip int)", "list<adr>", "[]"])
        .output()
        .unwrap();
    assert_error(
        &output,
        2,
        "unknown type `adr` (did you mean `addr`?) at character 5",
        "adr",
    );
}

#[test]
fn errors_quoting_long_input_stay_short() {
    let deep = format!("{}int{}", "list<".repeat(10_000), ">".repeat(10_000));
    let output = with_args(&["decode", &deep, "00"]).output().unwrap();
    let message = assert_error(
        &output,
        2,
        "<…>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>\": type nesting deeper than 64 levels at character 320",
        "deep type",
    );
    assert!(message.len() < 300, "{message}");
    let long = format!("0x{}z", "a".repeat(5000));
    let output = with_args(&["encode", "blob", &long]).output().unwrap();
    let message = assert_error(&output, 1, "az\" (expected 0x followed", "long blob");
    assert!(message.len() < 500, "{message}");
}

#[test]
fn control_characters_are_visible_on_a_terminal_and_exact_elsewhere() {
    // ESC [31m, then a C1 CSI (U+009B) and a right-to-left override (U+202E), as UTF-8.
    let payload = "1b5b33316d c29b e280ae 78";
    let output = with_args(&["decode", "text", payload]).output().unwrap();
    assert_eq!(output.stdout, "'\u{1b}[31m\u{9b}\u{202e}x'\n".as_bytes());
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    let in_terminal = |args: &str| {
        std::process::Command::new("script")
            .args([
                "-qec",
                &format!("'{}' {args}", binary.display()),
                "/dev/null",
            ])
            .stdin(std::process::Stdio::null())
            .output()
    };
    if !in_terminal("--version").is_ok_and(|o| o.status.success()) {
        eprintln!("note: `script` cannot make a terminal here; terminal test skipped");
        return;
    }
    let output = in_terminal(&format!("decode text '{payload}'")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "'␛[31m<U+009B><U+202E>x'\r\n"
    );
    let output = in_terminal(&format!("decode text '{payload}' --format json")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "\"\\u001b[31m<U+009B><U+202E>x\"\r\n"
    );
}

#[test]
fn a_zero_byte_tuple_or_udt_is_a_value() {
    let udt = ["--udt", "addr(street text, zip int)"];
    for (ty, cql, json) in [("tuple<int, text>", "()", "[]"), ("addr", "{}", "{}")] {
        let decode = |format: &str| {
            let mut args = udt.to_vec();
            args.extend(["decode", ty, "-", "--format", format]);
            args.rotate_left(2);
            run(with_args(&args), b"")
        };
        assert_eq!(decode("cql").stdout, format!("{cql}\n").as_bytes(), "{ty}");
        assert_eq!(
            decode("json").stdout,
            format!("{json}\n").as_bytes(),
            "{ty}"
        );
        for (literal, json_flag) in [(cql, false), (json, true)] {
            let mut args = vec!["encode", udt[0], udt[1], ty, literal];
            if json_flag {
                args.push("--json");
            }
            let output = with_args(&args).output().unwrap();
            assert_eq!(output.stdout, b"0x\n", "{ty} {literal}");
        }
    }
}

#[test]
fn text_forms_refuse_what_encode_refuses_with_its_message() {
    for (ty, literal, json, message) in [
        (
            "int",
            "null",
            "null",
            "a null value has no bytes (only elements, fields and components can be null)",
        ),
        (
            "duration",
            "+1mo-1d",
            "\"+1mo-1d\"",
            "duration has mixed signs (months 1, days -1, nanoseconds 0)",
        ),
        (
            "vector<int, 2>",
            "[1, null]",
            "[1, null]",
            "null element in a vector (element 1)",
        ),
    ] {
        for (text, flag) in [(literal, None), (json, Some("--json"))] {
            let mut command = with_args(&["encode", ty, text]);
            command.args(flag);
            let output = command.output().unwrap();
            assert_error(&output, 1, &format!("invalid {ty} value: {message}"), text);
        }
    }
}

/// Runs `cqlwire ARGS` under an address-space limit of `limit_kib`, standard output counted and
/// dropped; returns the output (its stdout is the byte count).
fn run_counted(args: &[&str], limit_kib: u32) -> std::process::Output {
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {limit_kib}; \"$@\" | wc -c"))
        .arg("bash")
        .arg(binary)
        .args(args)
        .output()
        .unwrap()
}

/// The byte count of what `cqlwire ARGS` prints under an 80 MiB address-space limit (the binary's
/// own mappings take about 50 MiB of it in a debug build, leaving room for a payload and a few
/// buffers, not for a value kept per element); fails on anything written to standard error.
fn counted(args: &[&str]) -> usize {
    let output = run_counted(args, 81_920);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn decoded_output_memory_follows_the_bytes_not_the_element_count() {
    // A value of one byte per element: a decoder that keeps an in-memory value per element (tens of
    // bytes each) needs well over the address space these runs get.
    let dir = tempfile::tempdir().unwrap();
    for (elements, format, printed) in [
        (2_000_000usize, "cql", 12_000_001),
        (2_000_000, "json", 10_000_002),
        (1_000_000, "explain", 0),
    ] {
        let path = dir.path().join(format!("{format}.bin"));
        std::fs::write(&path, vec![1u8; elements]).unwrap();
        let ty = format!("vector<boolean, {elements}>");
        let path = path.to_str().unwrap();
        let count = counted(&["decode", &ty, "--binary", path, "--format", format]);
        if printed > 0 {
            assert_eq!(count, printed, "{format}");
        } else {
            // A header line, then one line per element.
            assert!(count > 60 * elements, "{format}: {count} bytes");
        }
    }
}

#[test]
fn one_time_of_day_rule_for_decode_encode_and_literals() {
    let message = "time value 86400000000000 is out of range 0..86399999999999";
    let output = with_args(&["decode", "time", "00004e94914f0000"])
        .output()
        .unwrap();
    assert_error(&output, 1, message, "decode");
    let output = with_args(&["encode", "time", "86400000000000"])
        .output()
        .unwrap();
    assert_error(&output, 1, message, "encode");
}

#[test]
fn a_large_blob_literal_is_encoded_in_a_small_multiple_of_its_size() {
    // 20 MB of hex text: a parser holding four bytes per character would need more than the
    // 128 MiB address space this run gets.
    let dir = tempfile::tempdir().unwrap();
    let literal = dir.path().join("blob.txt");
    std::fs::write(&literal, format!("0x{}\n", "ab".repeat(10_000_000))).unwrap();
    let output = run_limited(
        &["encode", "blob", "--format", "raw"],
        literal.to_str().unwrap(),
        131_072,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(output.stdout.len(), 10_000_000);
    assert!(output.stdout.iter().all(|&b| b == 0xab));
}

/// Hex on standard input is held to the value limit in decoded bytes while it is
/// read: 600 MB of hex text (a 300 MB value) is refused at 256 MiB under a 768 MiB address-space
/// ceiling (it used to decode to a 398 MB value at 4.3 GB RSS and exit 0).
#[test]
fn hex_on_stdin_over_the_value_limit_is_refused_as_it_is_read() {
    let binary = common::binary();
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 786432; yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 600000000 | \"$1\" decode blob | wc -c")
        .arg("bash")
        .arg(&binary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("standard input: hex text of more than 268435456 bytes, the largest value"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "0");
}

/// Maps, and lists nested in lists, print entry by entry too, as top-level collections do. Each
/// entry takes 8 (map) or 5 (nested list) wire bytes; a decoder that builds an in-memory value
/// (tens of bytes per element) needs well over the 64 MiB address space these runs get.
#[test]
fn maps_and_nested_collections_print_in_memory_that_follows_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1_000_000usize;
    let count = |n: usize| i32::try_from(n).unwrap().to_be_bytes();
    let mut map = count(n).to_vec();
    for _ in 0..2 * n {
        map.extend([0, 0, 0, 4, 0, 0, 0, 1]);
    }
    let mut inner = count(2 * n).to_vec();
    for _ in 0..2 * n {
        inner.extend([0, 0, 0, 1, 1]);
    }
    let mut nested = count(1).to_vec();
    nested.extend(count(inner.len()));
    nested.extend(inner);
    let cases = [
        ("map<int, int>", &map, "cql", 6 * n + 1),
        ("map<int, int>", &map, "json", 6 * n + 2),
        ("map<int, int>", &map, "explain", 0),
        ("list<frozen<list<boolean>>>", &nested, "cql", 6 * 2 * n + 3),
        (
            "list<frozen<list<boolean>>>",
            &nested,
            "json",
            5 * 2 * n + 4,
        ),
        ("list<frozen<list<boolean>>>", &nested, "explain", 0),
    ];
    for (ty, bytes, format, printed) in cases {
        let path = dir.path().join("value.bin");
        std::fs::write(&path, bytes).unwrap();
        let count = counted(&[
            "decode",
            ty,
            "--binary",
            path.to_str().unwrap(),
            "--format",
            format,
        ]);
        if printed > 0 {
            assert_eq!(count, printed, "{ty} {format}");
        } else {
            // At least two lines (a length and a value) of 30+ bytes per element.
            assert!(count > 60 * 2 * n, "{ty} {format}: {count} bytes");
        }
    }
}
