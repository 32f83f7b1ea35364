//! HDF5 inputs through the real binary on the files of `fixtures/hdf5/` (written by h5py, expected
//! bytes by NumPy's `astype('>f4')` and kin): every manifest case (each element type, contiguous,
//! chunked, gzip, shuffle, Fletcher-32, row ranges, a user block), shards, standard input, the
//! errors (missing dataset, wrong shape, unsupported filter or type, truncated files), and the
//! library's whole-integer-dataset reader on the ground-truth `neighbors`.

use crate::common;
use crate::convert_cli::{self, assert_failed, Run};

use cqlwire_vector::input::{read_integer_dataset, InputError};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The fixture folder.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hdf5")
}

/// The manifest's cases.
fn manifest() -> Vec<Json> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).expect("manifest.json");
    let cases: Json = serde_json::from_str(&text).expect("manifest JSON");
    cases.as_array().expect("manifest array").clone()
}

/// A JSON array of strings.
fn strings(value: &Json) -> Vec<String> {
    let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// Bytes per row of a `vector<SUBTYPE, N>` type of the manifest.
fn row_bytes(ty: &str) -> usize {
    let inner = ty.trim_start_matches("vector<").trim_end_matches('>');
    let (subtype, dimension) = inner.split_once(", ").expect("vector<T, N>");
    let size = match subtype {
        "float" | "int" => 4,
        "double" | "bigint" => 8,
        other => panic!("unexpected subtype {other}"),
    };
    size * dimension.parse::<usize>().expect("dimension")
}

/// The expected output of a valid case (its rows of the expected file).
fn expected(case: &Json) -> Vec<u8> {
    let path = fixtures().join(case["expected"].as_str().unwrap());
    let bytes = std::fs::read(path).expect("expected file");
    let row = row_bytes(case["type"].as_str().unwrap());
    match case["expected_rows"].as_array() {
        Some(range) => {
            let at = |i: usize| range[i].as_u64().unwrap() as usize * row;
            bytes[at(0)..at(1)].to_vec()
        }
        None => bytes,
    }
}

/// Runs `cqlwire convert INPUT ARGS --quiet -o DIR/out`.
fn convert(input: &Path, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    convert_cli::convert(input, &args, true)
}

#[test]
fn every_hdf5_case_is_numpys_bytes_or_its_error() {
    let cases = manifest();
    assert!(cases.len() > 40, "the manifest lost its cases");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let input = fixtures().join(case["input"].as_str().unwrap());
        let args = strings(&case["args"]);
        let run = convert(&input, &args);
        if case["error"].as_bool() == Some(true) {
            let code = case["status"].as_i64().unwrap() as i32;
            let mentions = strings(&case["mentions"]);
            let mentions: Vec<&str> = mentions.iter().map(String::as_str).collect();
            assert_failed(&run, code, &mentions, name);
            continue;
        }
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let file = run.file.expect("output file");
        assert!(
            file == expected(&case),
            "{name}: output differs from NumPy's bytes"
        );
    }
}

#[test]
fn shards_of_a_gzip_dataset_concatenate_to_the_whole() {
    let input = fixtures().join("ann-gzip.hdf5");
    let whole = std::fs::read(fixtures().join("expected/ann-train.bin")).unwrap();
    for n in [1, 4, 7] {
        let mut joined = Vec::new();
        for k in 1..=n {
            let run = convert(&input, &["--shard".into(), format!("{k}/{n}")]);
            assert_eq!(run.code, 0, "shard {k}/{n}: {}", run.stderr);
            joined.extend(run.file.unwrap());
        }
        assert!(joined == whole, "the {n} shards differ from the whole");
    }
}

#[test]
fn standard_input_is_read_by_magic_or_by_input_format() {
    let data = std::fs::read(fixtures().join("ann-gzip.hdf5")).unwrap();
    let test = std::fs::read(fixtures().join("expected/ann-test.bin")).unwrap();
    for args in [
        &["--dataset", "test"][..],
        &["--input-format", "hdf5", "--dataset", "test"],
    ] {
        let mut command = common::cqlwire();
        command.args(["convert", "-", "--quiet"]).args(args);
        let output = common::run(command, &data);
        assert!(output.status.success(), "{args:?}: {:?}", output);
        assert!(output.stdout == test, "{args:?}: output differs");
    }
}

#[test]
fn truncated_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["ann.hdf5", "ann-gzip.hdf5", "types.hdf5"] {
        let data = std::fs::read(fixtures().join(name)).unwrap();
        for len in [0, 7, 30, 200, 1000, data.len() / 2, data.len() - 1] {
            let path = dir.path().join(format!("cut-{len}.hdf5"));
            std::fs::write(&path, &data[..len]).unwrap();
            let run = convert(&path, &[]);
            let what = format!("{name} cut to {len} bytes");
            assert_failed(&run, 1, &[], &what);
            assert!(!run.stderr.contains("panick"), "{what}: {}", run.stderr);
        }
    }
}

#[test]
fn load_and_convert_offer_the_dataset_flag() {
    for command in ["convert", "load"] {
        let output = common::cqlwire()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(help.contains("--dataset <NAME>"), "{command}: {help}");
        assert!(help.contains("[default: train]"), "{command}: {help}");
        assert!(help.contains("arrow, hdf5"), "{command}: {help}");
    }
}

#[test]
fn integer_datasets_read_whole_as_numpy_holds_them() {
    let neighbors = std::fs::read(fixtures().join("expected/ann-neighbors.bin")).unwrap();
    let ids: Vec<i64> = neighbors
        .chunks_exact(4)
        .map(|b| i64::from(i32::from_be_bytes(b.try_into().unwrap())))
        .collect();
    for name in ["ann.hdf5", "ann-gzip.hdf5"] {
        let read = read_integer_dataset(&fixtures().join(name), "neighbors").unwrap();
        assert_eq!((read.rows, read.columns), (50, 10), "{name}");
        assert_eq!(read.values, ids, "{name}");
        assert_eq!(read.row(49), Some(&ids[490..500]), "{name}");
        assert_eq!(read.row(50), None, "{name}");
    }
    let types = fixtures().join("types.hdf5");
    let wide = read_integer_dataset(&types, "i8_be-shuffle-gzip").unwrap();
    let expected = std::fs::read(fixtures().join("expected/types-i8_be-contiguous.bin")).unwrap();
    let expected: Vec<i64> = expected
        .chunks_exact(8)
        .map(|b| i64::from_be_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(wide.values, expected);
    let floats = read_integer_dataset(&fixtures().join("ann.hdf5"), "distances");
    assert!(matches!(floats, Err(InputError::Unsupported(m)) if m.contains("not integers")));
    let missing = read_integer_dataset(&fixtures().join("ann.hdf5"), "gt");
    assert!(matches!(missing, Err(InputError::Options(m)) if m.contains("neighbors")));
}
