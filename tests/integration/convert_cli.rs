//! `cqlwire convert` through the real binary on the fixtures of `fixtures/convert/` (made by its
//! generate.py with NumPy, pyarrow and the driver): every manifest case in every output format,
//! shards, null handling, and errors (exit code, one-line message, no output file left behind).

use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use cqlwire_codec::types::{parse_type, CqlType, UdtRegistry};
use cqlwire_vector::output::OutputFormat;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The fixture folder.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/convert")
}

/// The manifest's cases.
fn manifest() -> Vec<Json> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).expect("manifest.json");
    serde_json::from_str::<Json>(&text)
        .expect("manifest JSON")
        .as_array()
        .expect("manifest array")
        .clone()
}

/// The strings of a JSON array.
fn strings(value: &Json) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a case's arguments choose an output format or null handling (its expected file is then
/// not plain raw values of every row).
fn is_plain(case: &Json) -> bool {
    let args = strings(&case["args"]);
    !args.iter().any(|a| a == "--format" || a == "--on-null")
}

/// The outcome of one run.
pub(crate) struct Run {
    pub(crate) code: i32,
    stdout: Vec<u8>,
    pub(crate) stderr: String,
    /// The output file's content, when `-o` was given and the file exists.
    pub(crate) file: Option<Vec<u8>>,
    /// Files in the output folder other than the output itself (temporary files left behind).
    strays: Vec<String>,
}

/// Runs `cqlwire convert INPUT ARGS... [-o DIR/out]` quietly.
pub(crate) fn convert(input: &Path, args: &[&str], to_file: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut command = common::cqlwire_cmd();
    command.arg("convert").arg(input).args(args).arg("--quiet");
    if to_file {
        command.arg("-o").arg(&out);
    }
    let output = command.output().unwrap();
    let strays = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "out")
        .collect();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        file: std::fs::read(&out).ok(),
        strays,
    }
}

/// Runs a conversion that must succeed and returns its output file.
fn converted(input: &Path, args: &[&str]) -> Vec<u8> {
    let run = convert(input, args, true);
    assert_eq!(run.code, 0, "{} {args:?}: {}", input.display(), run.stderr);
    assert!(run.stderr.is_empty(), "--quiet printed: {}", run.stderr);
    run.file.expect("output file")
}

/// Asserts that a run failed with `code`, one error line mentioning `mentions`, and no output file.
pub(crate) fn assert_failed(run: &Run, code: i32, mentions: &[&str], what: &str) {
    assert_eq!(run.code, code, "{what}: {}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: not one line: {}", run.stderr);
    assert!(
        lines[0].starts_with("cqlwire: error: "),
        "{what}: {}",
        lines[0]
    );
    for mention in mentions {
        assert!(
            lines[0].contains(mention),
            "{what}: {} lacks {mention}",
            lines[0]
        );
    }
    assert!(run.file.is_none(), "{what}: an output file was left");
    assert!(run.strays.is_empty(), "{what}: left {:?}", run.strays);
}

/// Splits raw values of `ty` (a vector type) into rows, walking vint prefixes for variable-size
/// elements.
fn split_rows(raw: &[u8], ty: &str) -> Vec<Vec<u8>> {
    let ty = parse_type(ty, &UdtRegistry::new()).unwrap();
    let CqlType::Vector(element, dimension) = &ty else {
        panic!("not a vector type");
    };
    let mut rows = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        let length = match element.vector_element_size() {
            Some(size) => size * dimension,
            None => {
                let mut at = 0;
                for _ in 0..*dimension {
                    let (len, used) = cqlwire_codec::vint::decode_unsigned(&rest[at..]).unwrap();
                    at += used + len as usize;
                }
                at
            }
        };
        let (row, tail) = rest.split_at(length);
        rows.push(row.to_vec());
        rest = tail;
    }
    rows
}

/// The framed form of rows (`None` = null).
fn framed(rows: &[Option<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        match row {
            Some(value) => {
                out.extend_from_slice(&(value.len() as i32).to_be_bytes());
                out.extend_from_slice(value);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out
}

/// The hex form of rows (`None` = null).
fn hex_lines(rows: &[Option<Vec<u8>>]) -> String {
    rows.iter()
        .map(|row| match row {
            Some(value) => format!("0x{}\n", cqlwire_codec::hex::encode(value)),
            None => "null\n".to_string(),
        })
        .collect()
}

/// The record batches of a Parquet file or an Arrow IPC stream.
pub(crate) fn read_table(bytes: Vec<u8>, parquet: bool) -> Vec<RecordBatch> {
    if parquet {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1024).unwrap();
        reader.map(|b| b.unwrap()).collect()
    } else {
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        reader.map(|b| b.unwrap()).collect()
    }
}

/// The values of a binary column across batches (`None` = null).
fn binary_column(batches: &[RecordBatch], name: &str) -> Vec<Option<Vec<u8>>> {
    let mut values = Vec::new();
    for batch in batches {
        let column = batch.column_by_name(name).expect("value column");
        let column = column.as_binary::<i32>();
        for index in 0..column.len() {
            values.push((!column.is_null(index)).then(|| column.value(index).to_vec()));
        }
    }
    values
}

#[test]
fn every_manifest_case_through_the_binary() {
    let mut valid = 0;
    let mut errors = 0;
    for case in manifest() {
        let name = case["name"].as_str().unwrap();
        let input = fixtures().join(case["input"].as_str().unwrap());
        let args = strings(&case["args"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if case["error"].as_bool() == Some(true) {
            let run = convert(&input, &args, true);
            let mentions = strings(&case["mentions"]);
            let mentions: Vec<&str> = mentions.iter().map(String::as_str).collect();
            // Options that do not fit the input (a missing column, rows past the end) are usage
            // errors (2); everything else is bad data (1).
            let code = if run.code == 2 { 2 } else { 1 };
            assert_failed(&run, code, &mentions, name);
            errors += 1;
            continue;
        }
        let expected = std::fs::read(fixtures().join(case["expected"].as_str().unwrap())).unwrap();
        assert_eq!(converted(&input, &args), expected, "{name}");
        valid += 1;
        if !is_plain(&case) {
            continue;
        }
        // The same rows in the other formats, derived from the driver-made raw bytes.
        let ty = case["type"].as_str().unwrap();
        let rows: Vec<Option<Vec<u8>>> = split_rows(&expected, ty).into_iter().map(Some).collect();
        assert_eq!(rows.len() as u64, case["rows"].as_u64().unwrap(), "{name}");
        let with = |extra: &[&str]| {
            let mut all = args.clone();
            all.extend_from_slice(extra);
            converted(&input, &all)
        };
        assert_eq!(
            with(&["--format", "framed"]),
            framed(&rows),
            "{name} framed"
        );
        let hex = String::from_utf8(with(&["--format", "hex"])).unwrap();
        assert_eq!(hex, hex_lines(&rows), "{name} hex");
        for (format, parquet) in [("parquet", true), ("arrow", false)] {
            let batches = read_table(with(&["--format", format]), parquet);
            let names: Vec<String> = batches
                .first()
                .map(|b| {
                    b.schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect()
                })
                .unwrap_or_default();
            let column = names.last().cloned().unwrap_or_default();
            assert!(column.ends_with("_cql"), "{name} {format}: {names:?}");
            if let Some(input_column) = case["column"].as_str() {
                assert_eq!(column, format!("{input_column}_cql"), "{name} {format}");
            }
            assert_eq!(binary_column(&batches, &column), rows, "{name} {format}");
            if let Some(passthrough) = case.get("passthrough") {
                let mut want = strings(passthrough);
                want.push(column);
                assert_eq!(names, want, "{name} {format} columns");
            }
        }
    }
    assert!(
        valid >= 80 && errors >= 20,
        "{valid} valid, {errors} error cases"
    );
}

#[test]
fn npy_output_is_a_header_then_the_raw_bytes() {
    let input = fixtures().join("sample/train.npy");
    let raw = std::fs::read(fixtures().join("sample/train.expected.bin")).unwrap();
    let npy = converted(&input, &["--format", "npy"]);
    assert!(npy.starts_with(b"\x93NUMPY\x01\x00"));
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let header = String::from_utf8_lossy(&npy[10..10 + header_len]);
    assert!(header.contains("'descr': '>f4'"), "{header}");
    assert!(header.contains("'shape': (1000, 128)"), "{header}");
    assert_eq!(&npy[10 + header_len..], &raw[..]);
    // With skipped null rows the row count is only known at the end: the header is rewritten.
    let input = fixtures().join("inputs/null_rows.parquet");
    let npy = converted(&input, &["--format", "npy", "--on-null", "skip"]);
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let header = String::from_utf8_lossy(&npy[10..10 + header_len]);
    assert!(header.contains("'shape': (3, 4)"), "{header}");
    let skipped = std::fs::read(fixtures().join("expected/parquet-null-rows-skip.bin")).unwrap();
    assert_eq!(&npy[10 + header_len..], &skipped[..]);
}

#[test]
fn concatenated_shards_equal_the_single_run() {
    let inputs = [
        ("sample/train.parquet", 7),
        ("sample/train.npy", 3),
        ("inputs/row_groups.parquet", 3),
        ("inputs/sample.fvecs", 2),
    ];
    for (input, parts) in inputs {
        let input = fixtures().join(input);
        for format in ["raw", "framed", "hex"] {
            let whole = converted(&input, &["--format", format]);
            let mut joined = Vec::new();
            for k in 1..=parts {
                let shard = format!("{k}/{parts}");
                joined.extend(converted(&input, &["--format", format, "--shard", &shard]));
            }
            assert_eq!(
                joined,
                whole,
                "{} {format} in {parts} shards",
                input.display()
            );
        }
    }
}

#[test]
fn one_thread_gives_the_same_output_and_errors() {
    for (input, args) in [
        ("sample/train.parquet", &["--format", "parquet"][..]),
        ("sample/train.npy", &["--format", "framed"][..]),
        ("inputs/i1_b.npy", &["--type", "vector<smallint, 4>"][..]),
        (
            "inputs/null_rows.parquet",
            &[
                "--type",
                "vector<text, 4>",
                "--on-null",
                "null",
                "--format",
                "parquet",
            ][..],
        ),
        (
            "sample/train.parquet",
            &["--type", "vector<decimal, 128>", "--format", "framed"][..],
        ),
    ] {
        let input = fixtures().join(input);
        let mut one = args.to_vec();
        one.extend_from_slice(&["--threads", "1"]);
        assert_eq!(converted(&input, &one), converted(&input, args), "{args:?}");
    }
    let run = convert(
        &fixtures().join("inputs/null_rows.parquet"),
        &["--threads", "1"],
        true,
    );
    assert_failed(&run, 1, &["row 1"], "one thread, null row");
    let run = convert(
        &fixtures().join("inputs/fraction_f4.npy"),
        &["--threads", "1", "--type", "vector<int, 4>"],
        true,
    );
    assert_failed(&run, 1, &["row 1", "element 2"], "one thread, cast");
}

#[test]
fn null_rows_in_every_mode() {
    let input = fixtures().join("inputs/null_rows.parquet");
    let skipped = std::fs::read(fixtures().join("expected/parquet-null-rows-skip.bin")).unwrap();
    let values = split_rows(&skipped, "vector<float, 4>");
    // Rows 1 and 3 of 5 are null.
    let mut present = values.into_iter();
    let rows: Vec<Option<Vec<u8>>> = (0..5)
        .map(|row| {
            if row == 1 || row == 3 {
                None
            } else {
                present.next()
            }
        })
        .collect();
    let hex = converted(&input, &["--format", "hex", "--on-null", "null"]);
    assert_eq!(String::from_utf8(hex).unwrap(), hex_lines(&rows));
    let framed_nulls = converted(&input, &["--format", "framed", "--on-null", "null"]);
    assert_eq!(framed_nulls, framed(&rows));
    for (format, parquet) in [("parquet", true), ("arrow", false)] {
        let table = converted(&input, &["--format", format, "--on-null", "null"]);
        let batches = read_table(table, parquet);
        assert_eq!(binary_column(&batches, "emb_cql"), rows, "{format}");
        let table = converted(&input, &["--format", format, "--on-null", "skip"]);
        let batches = read_table(table, parquet);
        let kept: Vec<Option<Vec<u8>>> = rows.iter().flatten().cloned().map(Some).collect();
        assert_eq!(binary_column(&batches, "emb_cql"), kept, "{format} skip");
    }
    let skip_hex = converted(&input, &["--format", "hex", "--on-null", "skip"]);
    let kept: Vec<Option<Vec<u8>>> = rows.iter().flatten().cloned().map(Some).collect();
    assert_eq!(String::from_utf8(skip_hex).unwrap(), hex_lines(&kept));
    for args in [
        &["--on-null", "error"][..],
        &["--on-null", "null"][..],
        &["--on-null", "null", "--format", "npy"][..],
        &[][..],
    ] {
        let run = convert(&input, args, true);
        assert_failed(&run, 1, &["row 1"], &format!("{args:?}"));
    }
    let run = convert(&input, &["--on-null", "null"], true);
    assert!(run.stderr.contains("framed"), "{}", run.stderr);
}

#[test]
fn hex_with_an_id_column_is_csv() {
    let input = fixtures().join("sample/train.parquet");
    let raw = std::fs::read(fixtures().join("sample/train.expected.bin")).unwrap();
    let rows = split_rows(&raw, "vector<float, 128>");
    let text = converted(&input, &["--format", "hex", "--id-column", "id"]);
    let text = String::from_utf8(text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), rows.len());
    // The ids as pyarrow reads them, through the parquet crate's reader of the input.
    let batches = read_table(std::fs::read(&input).unwrap(), true);
    let mut ids = Vec::new();
    for batch in &batches {
        let column = batch.column_by_name("id").unwrap();
        let column = column.as_primitive::<arrow_array::types::Int64Type>();
        ids.extend(column.values().iter().copied());
    }
    for ((line, row), id) in lines.iter().zip(&rows).zip(&ids) {
        assert_eq!(*line, format!("{id},0x{}", cqlwire_codec::hex::encode(row)));
    }
    // Inputs without other columns have no id column.
    let run = convert(
        &fixtures().join("sample/train.npy"),
        &["--format", "hex", "--id-column", "id"],
        true,
    );
    assert_failed(&run, 2, &["--id-column"], "npy id column");
    let run = convert(&input, &["--format", "hex", "--id-column", "nope"], true);
    assert_failed(&run, 2, &["nope", "id"], "missing id column");
}

#[test]
fn usage_and_data_errors() {
    let npy = fixtures().join("inputs/f4_le.npy");
    let run = convert(&npy, &["--type", "vector<flaot, 4>"], true);
    assert_failed(&run, 2, &["flaot"], "invalid type");
    let run = convert(&npy, &["--type", "list<float>"], true);
    assert_failed(&run, 2, &["vector"], "not a vector");
    let run = convert(&npy, &["--type", "vector<uuid, 4>"], true);
    assert_failed(&run, 2, &["uuid"], "element type without numbers");
    let run = convert(&npy, &["--type", "vector<float, 5>"], true);
    assert_failed(&run, 1, &["dimension 5", "4 elements"], "wrong dimension");
    let run = convert(
        &npy,
        &["--type", "vector<smallint, 4>", "--format", "npy"],
        true,
    );
    assert_failed(
        &run,
        2,
        &["npy", "fixed-size"],
        "npy of a variable-size type",
    );
    let run = convert(&npy, &["--shard", "3/2"], true);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = convert(&npy, &["--rows", "5..2"], true);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let corrupt = fixtures().join("inputs/corrupt_page.parquet");
    let run = convert(&corrupt, &[], true);
    assert_failed(&run, 1, &[], "corrupt parquet");
    let truncated = fixtures().join("inputs/truncated.npy");
    for &format in OutputFormat::NAMES {
        let run = convert(&truncated, &["--format", format], true);
        assert_failed(&run, 1, &["row 3", "byte 176"], format);
    }
}

#[test]
fn binary_output_is_refused_on_a_terminal_only() {
    // Not a terminal here: binary output to a pipe works, and text output too.
    let npy = fixtures().join("inputs/f4_le.npy");
    let run = convert(&npy, &[], false);
    let expected = std::fs::read(fixtures().join("expected/npy-f4-le.bin")).unwrap();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, expected);
}

#[test]
fn summary_line_unless_quiet() {
    let npy = fixtures().join("sample/train.npy");
    let dir = tempfile::tempdir().unwrap();
    let output = common::cqlwire_cmd()
        .arg("convert")
        .arg(&npy)
        .arg("-o")
        .arg(dir.path().join("out.bin"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("1000 rows") && lines[0].contains("MB/s"),
        "{stderr}"
    );
}

#[test]
fn help_shows_worked_examples() {
    let output = common::cqlwire_cmd()
        .args(["convert", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("cqlwire convert fixtures/convert/sample/train.parquet"),
        "{text}"
    );
    for flag in [
        "--output",
        "--format",
        "--column",
        "--id-column",
        "--type",
        "--input-format",
        "--on-null",
        "--rows",
        "--shard",
        "--threads",
        "--quiet",
    ] {
        assert!(text.contains(flag), "{flag} missing from --help");
    }
}
