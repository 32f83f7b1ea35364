use super::*;
use arrow_ipc::reader::FileReader;
use cqlwire_codec::types::{parse_type, UdtRegistry};
use std::fs::File;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/columns")
}

/// The one column of `fixtures/columns/arrow/<name>.arrow`.
fn column(name: &str) -> ArrayRef {
    let path = fixtures().join("arrow").join(format!("{name}.arrow"));
    let reader = FileReader::try_new(File::open(&path).unwrap(), None).unwrap();
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(batches.len(), 1, "{name}: one record batch");
    batches[0].column(0).clone()
}

/// Every case of the generator: the bytes equal the Python driver's, nulls stay null, the cells the
/// type cannot hold exactly are errors, and the refused pairings are refused before any cell.
#[test]
fn cells_equal_the_python_drivers_bytes() {
    let text = std::fs::read_to_string(fixtures().join("expected.json")).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = cases.as_array().unwrap();
    assert!(cases.len() > 40);
    for case in cases {
        let name = case["column"].as_str().unwrap();
        let ty = parse_type(case["type"].as_str().unwrap(), &UdtRegistry::new()).unwrap();
        let array = column(name);
        let encoder = ColumnEncoder::new(array.data_type(), &ty);
        if case.get("refused").is_some() {
            let error = encoder.expect_err(&format!("{name} as {ty} is refused"));
            assert!(!error.message.is_empty());
            continue;
        }
        let encoder = encoder.unwrap_or_else(|e| panic!("{name} as {ty}: {e}"));
        let rows = case["rows"].as_array().unwrap();
        assert_eq!(rows.len(), array.len(), "{name}");
        for (row, expected) in rows.iter().enumerate() {
            let mut out = vec![0xAA];
            let result = encoder.encode(&array, row, &mut out);
            let place = format!("{name} row {row} as {ty}");
            match expected.as_str() {
                None => {
                    assert!(expected.is_null());
                    assert_eq!(result, Ok(false), "{place}");
                    assert_eq!(out, [0xAA], "{place}");
                }
                Some("error") => {
                    assert!(result.is_err(), "{place}: {out:02x?}");
                    assert_eq!(out, [0xAA], "{place}: nothing appended on error");
                }
                Some(hex) => {
                    assert_eq!(result, Ok(true), "{place}");
                    assert_eq!(cqlwire_codec::hex::encode(&out[1..]), hex, "{place}");
                }
            }
        }
    }
}

#[test]
fn a_row_past_the_column_is_an_error() {
    let array = column("int8");
    let ty = parse_type("tinyint", &UdtRegistry::new()).unwrap();
    let encoder = ColumnEncoder::new(array.data_type(), &ty).unwrap();
    assert!(encoder
        .encode(&array, array.len(), &mut Vec::new())
        .is_err());
}
