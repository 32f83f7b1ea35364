//! `encode --json` through the binary: numbers read from their text (never through a 64-bit float),
//! and one rule for a map key, set element or UDT field given twice in either text form.

use crate::common;

use common::{assert_error, with_args};

/// Runs `cqlwire encode TYPE VALUE` (with `--json` when `json`) and returns its output.
fn encode(ty: &str, value: &str, json: bool) -> std::process::Output {
    let mut args = vec!["encode", ty, value];
    if json {
        args.push("--json");
    }
    with_args(&args).output().unwrap()
}

/// The hex `encode` prints for `value` as a CQL literal, exit 0 asserted.
fn literal_hex(ty: &str, value: &str) -> String {
    let output = encode(ty, value, false);
    assert_eq!(output.status.code(), Some(0), "{ty} {value}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn json_numbers_encode_exactly_as_the_same_cql_literal() {
    // Each number is one a 64-bit float cannot hold (more digits than 17, an exponent below the
    // smallest double, a scale, an integer above 2^53), plus ordinary ones.
    let cases = [
        ("varint", "123456789012345678901234567890"),
        ("varint", "-123456789012345678901234567890123456789"),
        ("varint", "1e30"),
        ("decimal", "1e-400"),
        ("decimal", "1.10"),
        ("decimal", "-0.000"),
        (
            "decimal",
            "123456789012345678901234567890.000000000000000000001",
        ),
        ("bigint", "9007199254740993.0"),
        ("bigint", "9007199254740993"),
        ("bigint", "-9223372036854775808"),
        ("counter", "9223372036854775807"),
        ("int", "1e3"),
        ("float", "16777217"),
        ("float", "0.1"),
        ("float", "3.4028235677973366e38"),
        ("double", "0.1"),
        ("double", "2.2250738585072011e-308"),
        ("double", "-0"),
        ("timestamp", "1700000000000"),
        ("list<varint>", "[123456789012345678901234567890, 1]"),
        ("tuple<decimal, bigint>", "[1.10, 9007199254740993]"),
    ];
    for (ty, text) in cases {
        let json = encode(ty, text, true);
        assert_eq!(json.status.code(), Some(0), "{ty} {text}: {json:?}");
        let literal = match ty {
            "tuple<decimal, bigint>" => "(1.10, 9007199254740993)",
            _ => text,
        };
        assert_eq!(
            String::from_utf8(json.stdout).unwrap(),
            literal_hex(ty, literal),
            "{ty} {text}"
        );
    }
}

#[test]
fn json_numbers_out_of_range_are_refused_as_literals_are() {
    for (ty, text) in [
        ("double", "1e400"),
        ("float", "1e39"),
        ("bigint", "9223372036854775808"),
        ("int", "2147483647.5"),
        ("varint", "1.5"),
    ] {
        assert_error(&encode(ty, text, false), 1, "", text);
        assert_error(&encode(ty, text, true), 1, "", text);
    }
}

#[test]
fn a_key_element_or_field_given_twice_is_an_error_in_both_text_forms() {
    let udt = "u(a int, b int)";
    let cases: [(&str, &str, bool, &str); 9] = [
        (
            "map<text, int>",
            "{'a': 1, 'a': 2}",
            false,
            "key 'a' given twice",
        ),
        (
            "map<text, int>",
            r#"{"a": 1, "a": 2}"#,
            true,
            r#"key "a" given twice"#,
        ),
        (
            "map<text, int>",
            r#"[["a", 1], ["a", 2]]"#,
            true,
            "key 'a' given twice",
        ),
        (
            "map<int, int>",
            r#"{"1": 1, "01": 2}"#,
            true,
            "key 1 given twice",
        ),
        ("set<int>", "{1, 2, 1}", false, "element 1 given twice"),
        ("set<int>", "[1, 2, 1]", true, "element 1 given twice"),
        ("u", "{a: 1, a: 2}", false, r#"field "a" given twice"#),
        ("u", r#"{"a": 1, "a": 2}"#, true, r#"key "a" given twice"#),
        (
            "list<frozen<map<int, int>>>",
            "[{1: 1}, {2: 2, 2: 3}]",
            false,
            "key 2 given twice (map key #0 and #1) (element 1)",
        ),
    ];
    for (ty, value, json, needle) in cases {
        let mut args = vec!["encode", "--udt", udt, ty, value];
        if json {
            args.push("--json");
        }
        let output = with_args(&args).output().unwrap();
        assert_error(&output, 1, needle, value);
    }
    // A list keeps its repeats, and equal keys of different maps are not repeats.
    let output = encode("list<int>", "[1, 1]", true);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let output = encode("list<frozen<map<int, int>>>", "[{1: 1}, {1: 1}]", false);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}
