//! What Apache Cassandra refuses, against the conformance corpus (conformance/cases.jsonl: the server's
//! answer to each case, recorded by conformance/generate.py against Apache Cassandra 5.0.9): every
//! wire-legal case the server refuses (`valid` false, with a `value`) has a finding of the kind its note
//! names, and no valid case has any.

use cqlwire_codec::hex;
use cqlwire_codec::types::{parse_type, UdtRegistry};
use cqlwire_codec::value::refused::{self, Place, Refusal};

#[test]
fn the_refused_corpus_cases_and_only_they_have_findings() {
    let mut refused_cases = 0;
    for case in cqlwire_testkit::jsonl("../conformance/cases.jsonl") {
        if case.get("value").is_none() {
            continue; // bytes no decoder accepts
        }
        let id = case["id"].as_str().expect("id");
        let mut udts = UdtRegistry::new();
        for declaration in case["udts"].as_array().expect("udts") {
            udts.declare(declaration.as_str().expect("declaration"))
                .expect("declaration parses");
        }
        let ty = parse_type(case["type"].as_str().expect("type"), &udts).expect("type parses");
        let bytes = hex::parse(case["hex"].as_str().expect("hex")).expect("hex digits");
        let found = refused::refusals(&ty, &bytes).unwrap_or_else(|e| panic!("{id}: {e}"));
        if case["valid"].as_bool().expect("valid") {
            assert!(
                found.is_empty(),
                "{id}: a valid case has findings: {found:?}"
            );
            continue;
        }
        refused_cases += 1;
        assert!(
            !found.is_empty(),
            "{id}: nothing found in bytes the server refuses"
        );
        let note = case["note"].as_str().expect("note");
        for finding in &found {
            let named = match finding.refusal {
                Refusal::NullElement(_) => note.contains("a null element"),
                Refusal::EmptyElement(_) => note.contains("an empty element"),
                Refusal::EmptyValue(_) => note.contains("the empty value of"),
                _ => false,
            };
            assert!(named, "{id}: {finding} does not match the note {note:?}");
            assert!(
                finding.offset < bytes.len().max(1),
                "{id}: {finding} past the bytes"
            );
        }
    }
    assert_eq!(refused_cases, 21, "the corpus's wire-legal refused cases");
}

#[test]
fn findings_name_the_collection_and_the_path() {
    let udts = UdtRegistry::new();
    let corpus = cqlwire_testkit::jsonl("../conformance/cases.jsonl");
    let case = |id: &str| {
        let case = corpus
            .iter()
            .find(|c| c["id"] == id)
            .expect("case in the corpus");
        let ty = parse_type(case["type"].as_str().expect("type"), &udts).expect("type parses");
        let bytes = hex::parse(case["hex"].as_str().expect("hex")).expect("hex digits");
        refused::refusals(&ty, &bytes).expect("decodes")
    };
    // [1, null, 3]: the second element's length prefix is at byte 12.
    let found = case("list-int/1cc79f6243");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].refusal, Refusal::NullElement(Place::ListElement));
    assert_eq!(
        found[0].to_string(),
        "Apache Cassandra refuses a null element in a list (null is not supported inside \
         collections) at byte 12 (element 1)"
    );
    // {'a': null}, a null key, an empty element, a null inside a map value, the empty smallint.
    assert_eq!(
        case("map-text-int/8cc8327363")[0].refusal,
        Refusal::NullElement(Place::MapValue)
    );
    assert_eq!(
        case("map-int-text/3b80129b2b")[0].refusal,
        Refusal::NullElement(Place::MapKey)
    );
    assert_eq!(
        case("set-int/435355d490")[0].refusal,
        Refusal::NullElement(Place::SetElement)
    );
    let empty = case("list-int/ac2ab2a7a2");
    assert_eq!(empty[0].refusal, Refusal::EmptyElement(Place::ListElement));
    assert_eq!(empty[0].path, "element 1");
    let nested = case("map-text-list-int/838602bb6b");
    assert_eq!(nested.len(), 1);
    assert_eq!(nested[0].path, "map value #1 / element 0");
    let smallint = case("smallint/4c61d2df08");
    assert_eq!(
        smallint[0].to_string(),
        "Apache Cassandra refuses the empty value of smallint (it wants exactly 2 bytes) at byte 0"
    );
}

#[test]
fn the_types_that_can_hold_nothing_refused_are_known_without_bytes() {
    let udts = UdtRegistry::new();
    for (text, can) in [
        ("int", false),
        ("vector<float, 3>", false),
        ("tuple<int, text>", false),
        ("smallint", true),
        ("tuple<int, duration>", true),
        ("list<int>", true),
        ("vector<frozen<map<int, int>>, 2>", true),
    ] {
        let ty = parse_type(text, &udts).expect("type parses");
        assert_eq!(refused::can_be_refused(&ty), can, "{text}");
    }
}
