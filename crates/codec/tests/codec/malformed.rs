//! Every case of fixtures/malformed/cases.jsonl (built by its generator from driver-serialized bytes)
//! must fail — never panic — with the generator's expected offset and message phrase.

use cqlwire_codec::types::{parse_type, UdtRegistry};
use cqlwire_codec::{hex, value};

/// One fixture line.
struct Case {
    name: String,
    type_text: String,
    udts: Vec<String>,
    bytes: Vec<u8>,
    offset: usize,
    contains: String,
    type_error: bool,
}

fn cases() -> Vec<Case> {
    cqlwire_testkit::jsonl_cases("malformed")
        .into_iter()
        .map(|json| {
            let field = |name: &str| json[name].as_str().expect(name).to_string();
            Case {
                name: field("name"),
                type_text: field("type"),
                udts: json["udts"]
                    .as_array()
                    .expect("udts")
                    .iter()
                    .map(|d| d.as_str().expect("udt").to_string())
                    .collect(),
                bytes: hex::parse(&field("hex")).expect("hex"),
                offset: json["offset"].as_u64().expect("offset") as usize,
                contains: field("contains"),
                type_error: field("error") == "type",
            }
        })
        .collect()
}

#[test]
fn malformed_payloads_fail_at_the_expected_byte() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let mut udts = UdtRegistry::new();
        for declaration in &case.udts {
            udts.declare(declaration).expect("declaration");
        }
        let parsed = parse_type(&case.type_text, &udts);
        let (message, offset) = if case.type_error {
            match parsed {
                Ok(t) => {
                    failures.push(format!("{}: type parsed as {t}", case.name));
                    continue;
                }
                Err(e) => (e.to_string(), e.position),
            }
        } else {
            let ty = parsed.expect("valid type");
            match value::decode(&ty, &case.bytes) {
                Ok(v) => {
                    failures.push(format!("{}: decoded as {v:?}", case.name));
                    continue;
                }
                Err(e) => {
                    // explain must stop at the same fault.
                    assert_eq!(value::explain(&ty, &case.bytes).result, Err(e.clone()));
                    (e.to_string(), e.offset)
                }
            }
        };
        if offset != case.offset || !message.contains(&case.contains) {
            failures.push(format!(
                "{}: got {message:?} (offset {offset}), expected offset {} and {:?}",
                case.name, case.offset, case.contains
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
