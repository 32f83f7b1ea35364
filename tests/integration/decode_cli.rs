//! `cqlwire decode` / `cqlwire encode` through the real binary, on the golden driver payloads
//! (fixtures/driver/cases.jsonl) and the codec's malformed payloads (fixtures/malformed/cases.jsonl).

use crate::common;

use assert_cmd::Command;
use std::process::Output;

/// One golden case: type, declarations, payload hex and the expected JSON and CQL forms.
struct Golden {
    type_text: String,
    udts: Vec<String>,
    hex: String,
    json: serde_json::Value,
    cql: String,
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

fn golden() -> Vec<Golden> {
    common::jsonl_cases("driver")
        .into_iter()
        .map(|case| Golden {
            type_text: case["type"].as_str().expect("type").to_string(),
            udts: strings(&case["udts"]),
            hex: case["hex"].as_str().expect("hex").to_string(),
            json: case["json"].clone(),
            cql: case["cql"].as_str().expect("cql").to_string(),
        })
        .collect()
}

/// A sample of the golden cases spread over the whole file (every type family appears).
fn sample() -> Vec<Golden> {
    golden().into_iter().step_by(5).collect()
}

/// `cqlwire <command> [--udt D]... TYPE <rest...>`.
fn cqlwire(command: &str, case: &Golden, rest: &[&str]) -> Command {
    let mut cmd = common::cqlwire_cmd();
    cmd.arg(command);
    for declaration in &case.udts {
        cmd.arg("--udt").arg(declaration);
    }
    cmd.arg(&case.type_text).args(rest);
    cmd
}

fn stdout_of(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

/// Asserts the process succeeded and returns its standard output without the final newline.
fn success(mut cmd: Command) -> String {
    let output = cmd.output().expect("runs");
    assert!(
        output.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_of(&output).trim_end_matches('\n').to_string()
}

/// Asserts the exit code and exactly one `cqlwire: error: ` line on stderr; returns that line.
fn failure(mut cmd: Command, code: i32) -> String {
    let output = cmd.output().expect("runs");
    let stderr = String::from_utf8(output.stderr.clone()).expect("utf-8 stderr");
    assert_eq!(output.status.code(), Some(code), "{cmd:?}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{cmd:?}: {stderr}");
    assert!(lines[0].starts_with("cqlwire: error: "), "{stderr}");
    lines[0].to_string()
}

#[test]
fn decode_prints_the_fixture_json_and_cql() {
    for case in sample() {
        let json = success(cqlwire("decode", &case, &[&case.hex, "--format", "json"]));
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("json output");
        assert_eq!(parsed, case.json, "{} {}", case.type_text, case.hex);
        let literal = success(cqlwire("decode", &case, &[&case.hex]));
        assert_eq!(literal, case.cql, "{} {}", case.type_text, case.hex);
        let cql = success(cqlwire("decode", &case, &[&case.hex, "--format", "cql"]));
        assert_eq!(cql, case.cql);
    }
}

#[test]
fn explain_lists_every_item_with_offsets_inside_the_payload() {
    for case in sample() {
        let dump = success(cqlwire(
            "decode",
            &case,
            &[&case.hex, "--format", "explain"],
        ));
        let payload_len = case.hex.len() / 2;
        assert!(!dump.is_empty() || payload_len == 0, "{}", case.type_text);
        for line in dump.lines() {
            let offset: usize = line
                .get(..4)
                .and_then(|o| o.parse().ok())
                .unwrap_or_else(|| panic!("no offset in {line:?}"));
            assert!(offset <= payload_len, "{line}");
        }
    }
}

#[test]
fn explain_of_a_malformed_payload_prints_up_to_the_fault_then_the_error() {
    let malformed = common::jsonl_cases("malformed");
    let case = malformed
        .iter()
        .find(|c| c["error"] == "value" && c["offset"].as_u64().unwrap_or(0) > 8)
        .expect("a malformed case past its first items");
    let mut cmd = common::cqlwire_cmd();
    cmd.arg("decode");
    for declaration in strings(&case["udts"]) {
        cmd.arg("--udt").arg(declaration);
    }
    let offset = case["offset"].as_u64().expect("offset");
    cmd.args([
        case["type"].as_str().expect("type"),
        case["hex"].as_str().expect("hex"),
        "--format",
        "explain",
    ]);
    let output = cmd.output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let dump = stdout_of(&output);
    assert!(dump.lines().count() >= 1, "nothing before the fault");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("at byte {offset}")), "{stderr}");
}

#[test]
fn hex_is_read_in_every_pasted_form() {
    let case = golden()
        .into_iter()
        .find(|c| c.type_text.starts_with("map<") && c.hex.len() > 40)
        .expect("a map case");
    let expected = success(cqlwire("decode", &case, &[&case.hex, "--format", "json"]));
    let pairs: Vec<String> = case
        .hex
        .as_bytes()
        .chunks(2)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let forms = [
        format!("0x{}", case.hex),
        format!("0X{}", case.hex.to_uppercase()),
        pairs.join(" "),
        pairs.join(":"),
        pairs
            .chunks(4)
            .map(|c| c.concat())
            .collect::<Vec<_>>()
            .join("\n"),
        format!("  {}\r\n", pairs.join(" ").to_uppercase()),
    ];
    for form in &forms {
        let got = success(cqlwire(
            "decode",
            &case,
            &[form.as_str(), "--format", "json"],
        ));
        assert_eq!(got, expected, "{form:?}");
        let mut from_stdin = cqlwire("decode", &case, &["--format", "json"]);
        from_stdin.write_stdin(form.as_str());
        assert_eq!(success(from_stdin), expected, "stdin {form:?}");
    }
    // Unquoted `xxd`-style words arrive as separate arguments.
    let mut words: Vec<&str> = pairs.iter().map(String::as_str).collect();
    words.extend(["--format", "json"]);
    assert_eq!(success(cqlwire("decode", &case, &words)), expected, "split");
    let error = failure(cqlwire("decode", &case, &["00zz"]), 1);
    assert!(error.contains("invalid hex"), "{error}");
}

#[test]
fn binary_file_input_decodes_like_hex() {
    let dir = tempfile::tempdir().expect("temp dir");
    for case in sample().into_iter().take(20) {
        let path = dir.path().join("payload.bin");
        std::fs::write(&path, cqlwire_codec::hex::parse(&case.hex).expect("hex")).expect("write");
        let path = path.to_str().expect("utf-8 path");
        let got = success(cqlwire(
            "decode",
            &case,
            &["--binary", path, "--format", "json"],
        ));
        let parsed: serde_json::Value = serde_json::from_str(&got).expect("json");
        assert_eq!(parsed, case.json);
    }
}

#[test]
fn encode_writes_the_driver_bytes_from_cql_and_json() {
    for case in sample() {
        let expected = format!("0x{}", case.hex);
        let mut literal_on_stdin = cqlwire("encode", &case, &[]);
        literal_on_stdin.write_stdin(case.cql.as_str());
        assert_eq!(success(literal_on_stdin), expected, "{}", case.cql);
        if case.cql.contains('\0') {
            continue; // a NUL cannot be passed as an argument
        }
        assert_eq!(
            success(cqlwire("encode", &case, &[&case.cql])),
            expected,
            "{} {}",
            case.type_text,
            case.cql
        );
        let json = case.json.to_string();
        assert_eq!(
            success(cqlwire("encode", &case, &["--json", &json])),
            expected
        );
        let mut from_stdin = cqlwire("encode", &case, &["--json"]);
        from_stdin.write_stdin(format!("{json}\n"));
        assert_eq!(success(from_stdin), expected);
        let mut raw = cqlwire("encode", &case, &["--format", "raw", &case.cql]);
        let bytes = raw.output().expect("runs").stdout;
        assert_eq!(cqlwire_codec::hex::encode(&bytes), case.hex);
    }
}

#[test]
fn decode_then_encode_and_encode_then_decode_are_identities() {
    let cases = golden().into_iter().filter(|c| !c.cql.contains('\0'));
    for case in cases.skip(2).step_by(4) {
        let literal = success(cqlwire("decode", &case, &[&case.hex]));
        let hex = success(cqlwire("encode", &case, &[&literal]));
        assert_eq!(hex, format!("0x{}", case.hex), "{}", case.type_text);
        let json = success(cqlwire("decode", &case, &[&hex, "--format", "json"]));
        let hex_again = success(cqlwire("encode", &case, &["--json", &json]));
        assert_eq!(hex_again, hex);
        let literal_again = success(cqlwire("decode", &case, &[&hex_again]));
        assert_eq!(literal_again, literal);
    }
}

#[test]
fn trailing_bytes_are_counted_unless_allowed() {
    let case = golden()
        .into_iter()
        .find(|c| c.type_text == "list<int>" && c.hex.len() > 16)
        .expect("a list<int> case");
    let padded = format!("{}beef", case.hex);
    let error = failure(cqlwire("decode", &case, &[&padded]), 1);
    assert!(error.contains("2 trailing bytes"), "{error}");
    assert!(error.contains("at byte"), "{error}");
    let allowed = success(cqlwire("decode", &case, &[&padded, "--allow-trailing"]));
    assert_eq!(allowed, case.cql);
    let dump = success(cqlwire(
        "decode",
        &case,
        &[&padded, "--allow-trailing", "--format", "explain"],
    ));
    assert!(
        dump.lines().last().unwrap_or_default().contains("beef"),
        "{dump}"
    );
}

#[test]
fn errors_follow_the_exit_code_contract() {
    let case = golden()
        .into_iter()
        .find(|c| c.type_text == "list<int>" && c.hex.len() > 16)
        .expect("a list<int> case");
    let truncated = &case.hex[..case.hex.len() - 2];
    let error = failure(cqlwire("decode", &case, &[truncated]), 1);
    assert!(error.contains("at byte"), "{error}");
    for format in ["cql", "json", "explain"] {
        let mut cmd = cqlwire("decode", &case, &[truncated, "--format", format]);
        assert_eq!(cmd.output().expect("runs").status.code(), Some(1));
    }
    let bad_type = Golden {
        type_text: "list<nosuch>".into(),
        ..case
    };
    let error = failure(cqlwire("decode", &bad_type, &["00000000"]), 2);
    assert!(error.contains("invalid type"), "{error}");
    let error = failure(cqlwire("encode", &bad_type, &["[]"]), 2);
    assert!(error.contains("invalid type"), "{error}");
    let bad_udt = Golden {
        type_text: "int".into(),
        udts: vec!["addr(street nosuch)".into()],
        ..bad_type
    };
    failure(cqlwire("decode", &bad_udt, &["00000001"]), 2);
    let int = Golden {
        udts: Vec::new(),
        ..bad_udt
    };
    let error = failure(cqlwire("encode", &int, &["12x"]), 1);
    assert!(error.contains("at character 0"), "{error}");
    failure(cqlwire("encode", &int, &["--json", "{"]), 1);
    failure(cqlwire("encode", &int, &["null"]), 1);
    let mut unknown_flag = common::cqlwire_cmd();
    unknown_flag.args(["decode", "--nosuch", "int", "00"]);
    assert_eq!(unknown_flag.output().expect("runs").status.code(), Some(2));
}

#[test]
fn help_shows_worked_examples() {
    for command in ["decode", "encode"] {
        let mut cmd = common::cqlwire_cmd();
        let help = success({
            cmd.args([command, "--help"]);
            cmd
        });
        assert!(help.contains("Examples:"), "{help}");
        assert!(help.contains(&format!("$ cqlwire {command} ")), "{help}");
    }
}

#[test]
fn every_malformed_fixture_fails_with_one_line_at_its_offset() {
    let cases = common::jsonl_cases("malformed");
    assert!(!cases.is_empty());
    for case in &cases {
        let mut cmd = common::cqlwire_cmd();
        cmd.arg("decode");
        for declaration in strings(&case["udts"]) {
            cmd.arg("--udt").arg(declaration);
        }
        cmd.arg(case["type"].as_str().expect("type"));
        cmd.arg(format!("0x{}", case["hex"].as_str().expect("hex")));
        let offset = case["offset"].as_u64().expect("offset");
        let (code, position) = if case["error"] == "type" {
            (2, format!("at character {offset}"))
        } else {
            (1, format!("at byte {offset}"))
        };
        let line = failure(cmd, code);
        assert!(line.contains(&position), "{}: {line}", case["name"]);
        let phrase = case["contains"].as_str().expect("contains");
        assert!(line.contains(phrase), "{}: {line}", case["name"]);
    }
}

/// The corpus case `id` of conformance/cases.jsonl (the server's answers recorded against Apache
/// Cassandra 5.0.9 by conformance/generate.py): its type, declarations and hex.
fn corpus_case(id: &str) -> Golden {
    let case = cqlwire_testkit::jsonl("../conformance/cases.jsonl")
        .into_iter()
        .find(|case| case["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not in the corpus"));
    Golden {
        type_text: case["type"].as_str().expect("type").to_string(),
        udts: strings(&case["udts"]),
        hex: case["hex"].as_str().expect("hex").to_string(),
        json: case["value"].clone(),
        cql: String::new(),
    }
}

#[test]
fn bytes_cassandra_refuses_are_shown_with_a_warning_in_every_format_and_refused_by_strict() {
    // A null map value and a null inside a UDT's list and map: one line per finding, with its path.
    for (id, findings) in [
        (
            "map-text-int/8cc8327363",
            vec!["a null value in a map (null is not supported inside collections) at byte 9 (map value #0)"],
        ),
        ("frozen-with-list/aa71f14326", vec!["(field xs / element 1)", "(field m / map value #0)"]),
    ] {
        let case = corpus_case(id);
        for format in ["cql", "json", "explain"] {
            let output = cqlwire("decode", &case, &["--format", format, &case.hex])
                .output()
                .expect("runs");
            assert_eq!(output.status.code(), Some(0), "{id} {format}");
            assert!(!output.stdout.is_empty(), "{id} {format}: the value is shown");
            let stderr = String::from_utf8(output.stderr).expect("utf-8");
            let lines: Vec<&str> = stderr.lines().collect();
            assert_eq!(lines.len(), findings.len(), "{id} {format}: {stderr}");
            for (line, needle) in lines.iter().zip(&findings) {
                assert!(
                    line.starts_with("cqlwire: warning: Apache Cassandra refuses ")
                        && line.contains(needle),
                    "{id} {format}: {line}"
                );
            }
            let strict = cqlwire("decode", &case, &["--strict", "--format", format, &case.hex])
                .output()
                .expect("runs");
            assert_eq!(strict.status.code(), Some(1), "{id} {format} --strict");
            assert!(!strict.stdout.is_empty(), "{id} {format} --strict: the value is shown");
            let stderr = String::from_utf8(strict.stderr).expect("utf-8");
            assert_eq!(stderr.lines().count(), findings.len(), "{stderr}");
            assert!(stderr.lines().all(|l| l.starts_with("cqlwire: error: Apache Cassandra refuses ")));
        }
    }
    // The same type's valid bytes: nothing said, and --strict exits 0.
    let valid = corpus_case("tuple-int/4b9414547a");
    let output = cqlwire("decode", &valid, &["--strict", &valid.hex])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_payload_of_many_refused_elements_lists_a_hundred_and_counts_the_rest() {
    // 1,000 null elements of a list<int>, the corpus's null element repeated.
    let case = corpus_case("list-text/931662b8a9");
    let hex = format!("000003e8{}", "ffffffff".repeat(1000));
    let output = cqlwire("decode", &case, &[&hex]).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8(output.stderr).expect("utf-8");
    assert_eq!(stderr.lines().count(), 100, "{stderr}");
    assert!(stderr
        .lines()
        .last()
        .expect("a line")
        .ends_with("(element 99); and 900 more items Apache Cassandra refuses, not listed"));
}

#[test]
fn a_vector_payload_of_the_wrong_length_names_the_dimension_in_bytes_and_elements() {
    // 1.0, 2.0, 3.0, 4.0, 5.0 as big-endian floats.
    let floats = ["3f800000", "40000000", "40400000", "40800000", "40a00000"];
    let cases = [
        (
            floats[..3].concat(),
            "vector<float, 4> needs 16 bytes (4 elements of 4), got 12 (3 elements) at byte 0",
        ),
        (
            floats.concat(),
            "vector<float, 4> needs 16 bytes (4 elements of 4), got 20 (5 elements) at byte 16; \
             --allow-trailing ignores the bytes after the value",
        ),
    ];
    for (payload, message) in cases {
        let output = common::with_args(&["decode", "vector<float, 4>", &payload])
            .output()
            .unwrap();
        common::assert_error(&output, 1, message, &payload);
    }
    // Elements behind vint lengths (smallint: 02 then 2 bytes) are counted as elements.
    for (payload, message) in [
        (
            "020001 020002",
            "vector<smallint, 3> needs 3 elements, the value ends after 2 at byte 6",
        ),
        (
            "020001 020002 020003 020004",
            "vector<smallint, 3> needs 3 elements, got 4 at byte 9",
        ),
    ] {
        let output = common::with_args(&["decode", "vector<smallint, 3>", payload])
            .output()
            .unwrap();
        common::assert_error(&output, 1, message, payload);
    }
}
