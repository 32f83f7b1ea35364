//! Vints against the Python driver's `uvint_pack` / `vints_pack` (fixtures/vint/cases.jsonl).

use cqlwire_codec::{hex, vint};

/// One fixture line: the kind, the value in decimal and the driver's bytes.
struct Case {
    kind: String,
    value: String,
    bytes: Vec<u8>,
}

fn cases() -> Vec<Case> {
    cqlwire_testkit::jsonl_cases("vint")
        .into_iter()
        .map(|json| {
            let field = |name: &str| json[name].as_str().expect(name).to_string();
            Case {
                kind: field("kind"),
                value: field("value"),
                bytes: hex::parse(&field("hex")).expect("hex"),
            }
        })
        .collect()
}

#[test]
fn unsigned_and_signed_vints_match_the_driver() {
    let cases = cases();
    assert!(cases.len() >= 30);
    for case in cases {
        let mut encoded = Vec::new();
        match case.kind.as_str() {
            "unsigned" => {
                let value: u64 = case.value.parse().expect("u64");
                vint::encode_unsigned(value, &mut encoded);
                assert_eq!(
                    vint::decode_unsigned(&case.bytes),
                    Ok((value, case.bytes.len()))
                );
                assert_eq!(vint::encoded_len(value), case.bytes.len());
            }
            "signed" => {
                let value: i64 = case.value.parse().expect("i64");
                vint::encode_signed(value, &mut encoded);
                assert_eq!(
                    vint::decode_signed(&case.bytes),
                    Ok((value, case.bytes.len()))
                );
            }
            other => panic!("unknown kind {other}"),
        }
        assert_eq!(encoded, case.bytes, "{} {}", case.kind, case.value);
    }
}
