//! Property tests of the text formats: for random types and values, the CQL literal and the JSON read
//! back to the same value (`parse_cql ∘ format_cql` and `from_json ∘ to_json` are identities), and
//! arbitrary text never makes the readers panic. The binary round trips are in roundtrip.rs.

use crate::values::{any_type, type_and_value};
use cqlwire_codec::value::cql::{format_cql, parse_cql};
use cqlwire_codec::value::json::{from_json, to_json};
use proptest::prelude::*;

/// Nesting depth of the random types.
const DEPTH: u32 = 4;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn cql_literals_read_back((ty, value) in type_and_value(DEPTH)) {
        let text = format_cql(&ty, &value);
        prop_assert_eq!(parse_cql(&ty, &text), Ok(value), "{} as {}", text, ty);
    }

    #[test]
    fn json_reads_back((ty, value) in type_and_value(DEPTH)) {
        let json = to_json(&ty, &value);
        let reparsed: serde_json::Value =
            serde_json::from_str(&json.to_string()).expect("printed JSON parses");
        prop_assert_eq!(from_json(&ty, &reparsed), Ok(value), "{} as {}", json, ty);
    }

    #[test]
    fn arbitrary_text_never_panics(ty in any_type(DEPTH), text in "\\PC{0,40}") {
        let _ = parse_cql(&ty, &text);
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
            let _ = from_json(&ty, &json);
        }
    }

    #[test]
    fn mangled_literals_never_panic(
        (ty, value) in type_and_value(DEPTH),
        cut in any::<prop::sample::Index>(),
        insert in "[\\[\\]{}(),:'\"0-9a-z<> -]{0,3}",
    ) {
        let text = format_cql(&ty, &value);
        let chars: Vec<char> = text.chars().collect();
        let at = cut.index(chars.len() + 1);
        let mangled: String = chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[at..].iter()).collect();
        let _ = parse_cql(&ty, &mangled);
    }
}
