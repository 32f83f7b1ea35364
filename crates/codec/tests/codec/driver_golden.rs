//! Every case of fixtures/driver/cases.jsonl (bytes from cassandra-driver 3.30.1, expected JSON and CQL
//! computed by the generator from the Python values): decode → JSON and CQL match, JSON → encode gives
//! the driver's bytes, and the CQL literal reads back to the same value.

use cqlwire_codec::hex;
use cqlwire_codec::types::{parse_type, CqlType, UdtRegistry};
use cqlwire_codec::value::{self, cql, json};

/// One fixture line, with its type parsed.
struct Case {
    line: usize,
    type_text: String,
    ty: CqlType,
    bytes: Vec<u8>,
    json: serde_json::Value,
    cql: Option<String>,
}

fn cases() -> Vec<Case> {
    cqlwire_testkit::jsonl_cases("driver")
        .into_iter()
        .enumerate()
        .map(|(i, case)| {
            let mut udts = UdtRegistry::new();
            for declaration in case["udts"].as_array().expect("udts") {
                udts.declare(declaration.as_str().expect("declaration"))
                    .expect("declaration parses");
            }
            let type_text = case["type"].as_str().expect("type").to_string();
            let ty = parse_type(&type_text, &udts)
                .unwrap_or_else(|e| panic!("line {}: type {type_text}: {e}", i + 1));
            Case {
                line: i + 1,
                type_text,
                ty,
                bytes: hex::parse(case["hex"].as_str().expect("hex")).expect("hex digits"),
                json: case["json"].clone(),
                cql: case["cql"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// JSON equality with numbers compared by value: Python writes `1e-05` where cqlwire writes
/// `0.00001`, and both keep their text when parsed.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as Json;
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            (x.as_i64(), x.as_u64(), x.as_f64()) == (y.as_i64(), y.as_u64(), y.as_f64())
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same_json(x, y))
        }
        _ => a == b,
    }
}

#[test]
fn driver_cases_decode_encode_and_print_as_expected() {
    let cases = cases();
    assert!(cases.len() >= 250, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let at = format!(
            "line {} ({} 0x{})",
            case.line,
            case.type_text,
            hex::encode(&case.bytes)
        );
        match value::decode(&case.ty, &case.bytes) {
            Err(e) => failures.push(format!("{at}: decode: {e}")),
            Ok(decoded) => {
                let got = json::to_json(&case.ty, &decoded);
                if !same_json(&got, &case.json) {
                    failures.push(format!("{at}: json {got} != expected {}", case.json));
                }
                let literal = cql::format_cql(&case.ty, &decoded);
                if let Some(expected) = &case.cql {
                    if &literal != expected {
                        failures.push(format!("{at}: cql {literal} != expected {expected}"));
                    }
                }
                match cql::parse_cql(&case.ty, &literal) {
                    Ok(back) if back == decoded => {}
                    Ok(back) => failures.push(format!("{at}: cql {literal} read back as {back:?}")),
                    Err(e) => failures.push(format!("{at}: cql {literal} does not read back: {e}")),
                }
            }
        }
        match json::from_json(&case.ty, &case.json) {
            Err(e) => failures.push(format!("{at}: from_json: {e}")),
            Ok(v) => match value::encode(&case.ty, &v) {
                Ok(bytes) if bytes == case.bytes => {}
                Ok(bytes) => failures.push(format!("{at}: encoded 0x{}", hex::encode(&bytes))),
                Err(e) => failures.push(format!("{at}: encode: {e}")),
            },
        }
    }
    println!("{} driver cases checked", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
