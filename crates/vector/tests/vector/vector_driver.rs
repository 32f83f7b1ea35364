//! The conversion kernel against the Python driver: every case of `fixtures/vector/cases.jsonl`
//! (made by `fixtures/vector/generate.py` with `VectorType.serialize`) is encoded row by row and as a
//! parallel batch; the bytes must equal the driver's, and where the driver refuses an element the
//! kernel must fail naming the same row and element.

use cqlwire_codec::types::{parse_type, UdtRegistry};
use cqlwire_vector::input::{Batch, Elements};
use cqlwire_vector::kernel::{Rows, VectorEncoder};
use serde_json::Value as Json;

/// The input elements of a case, rebuilt exactly from their bit patterns.
fn elements(dtype: &str, bits: &[Json]) -> Elements {
    let unsigned = || bits.iter().map(|b| b.as_u64().expect("unsigned bits"));
    let signed = || bits.iter().map(|b| b.as_i64().expect("integer"));
    match dtype {
        "f2" => Elements::F16(unsigned().map(|b| half::f16::from_bits(b as u16)).collect()),
        "f4" => Elements::F32(unsigned().map(|b| f32::from_bits(b as u32)).collect()),
        "f8" => Elements::F64(unsigned().map(f64::from_bits).collect()),
        "i1" => Elements::I8(signed().map(|v| v as i8).collect()),
        "u1" => Elements::U8(signed().map(|v| v as u8).collect()),
        "i2" => Elements::I16(signed().map(|v| v as i16).collect()),
        "i4" => Elements::I32(signed().map(|v| v as i32).collect()),
        "i8" => Elements::I64(signed().collect()),
        other => panic!("unknown dtype {other}"),
    }
}

#[test]
fn kernel_matches_the_driver() {
    let mut checked = 0;
    for case in cqlwire_testkit::jsonl_cases("vector") {
        let name = case["name"].as_str().expect("name");
        let ty = parse_type(case["type"].as_str().expect("type"), &UdtRegistry::new()).unwrap();
        let encoder = VectorEncoder::new(&ty).unwrap();
        let input = elements(
            case["dtype"].as_str().unwrap(),
            case["bits"].as_array().unwrap(),
        );
        let rows = case["rows"].as_u64().unwrap() as usize;
        // Rows are numbered from 100 to check that errors use the absolute row index.
        let mut sequential = Vec::new();
        let row_by_row = encoder.encode_rows(Rows::from(&input), 100, &mut sequential);
        let mut batch = Batch {
            first_row: 100,
            rows,
            elements: input.clone(),
            validity: None,
            columns: None,
            damaged: Vec::new(),
        };
        let parallel = encoder.encode_batch(&mut batch, Vec::new());
        match case.get("error") {
            None => {
                let expected = cqlwire_codec::hex::parse(case["hex"].as_str().unwrap()).unwrap();
                assert_eq!(row_by_row, Ok(()), "{name}");
                assert_eq!(sequential, expected, "{name}");
                assert_eq!(parallel.unwrap().bytes, expected, "{name}");
            }
            Some(error) => {
                let place = format!(
                    "at row {} (element {})",
                    100 + error["row"].as_u64().unwrap(),
                    error["element"].as_u64().unwrap()
                );
                let message = row_by_row.expect_err(name).to_string();
                assert!(
                    message.ends_with(&place),
                    "{name}: {message} (want {place})"
                );
                let message = parallel.expect_err(name).to_string();
                assert!(
                    message.ends_with(&place),
                    "{name}: {message} (want {place})"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} cases");
}
