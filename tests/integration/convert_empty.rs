//! `convert` of inputs without rows (an empty shard of a pipeline), through the binary: every output
//! format is written, empty (Parquet and Arrow with their schema); without `--type` only `npy`,
//! whose header needs the dimension, asks for it when the input does not declare one.

use crate::common;

use arrow_array::RecordBatchReader;
use arrow_schema::{DataType, SchemaRef};
use common::{assert_error, fixture, with_args};
use cqlwire_vector::output::OutputFormat;

/// The zero-row inputs of fixtures/convert/generate.py, and whether each declares its dimension
/// (a fixed_size_list, a .npy shape, a .fbin header) rather than taking it from a first row.
const INPUTS: [(&str, bool); 7] = [
    ("empty_list.parquet", false),
    ("empty_fixed_size_list.parquet", true),
    ("empty.arrows", false),
    ("empty.arrow", false),
    ("empty_f4.npy", true),
    ("empty.fvecs", false),
    ("empty.fbin", true),
];

/// Runs `cqlwire convert fixtures/convert/inputs/INPUT --format FORMAT [--type T] -o DIR/out`
/// and returns the process output and the output file's bytes (if written).
fn convert(input: &str, format: &str, ty: Option<&str>) -> (std::process::Output, Option<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = fixture(&format!("convert/inputs/{input}"));
    let mut args = vec![
        "convert".to_string(),
        path.to_str().unwrap().to_string(),
        "--format".into(),
        format.into(),
        "-q".into(),
        "-o".into(),
        out.to_str().unwrap().to_string(),
    ];
    if let Some(ty) = ty {
        args.extend(["--type".to_string(), ty.to_string()]);
    }
    let output = with_args(&args).output().unwrap();
    (output, std::fs::read(&out).ok())
}

/// The schema and row count of a Parquet file or an Arrow IPC stream.
fn table(bytes: Vec<u8>, parquet: bool) -> (SchemaRef, usize) {
    if parquet {
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1024).unwrap();
        let schema = reader.schema();
        (schema, reader.map(|b| b.unwrap().num_rows()).sum())
    } else {
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        let schema = reader.schema();
        (schema, reader.map(|b| b.unwrap().num_rows()).sum())
    }
}

/// Checks that the run succeeded and wrote the empty output of `format` from `input`.
fn check_empty_output(
    input: &str,
    format: &str,
    output: &std::process::Output,
    bytes: Option<Vec<u8>>,
) {
    let what = format!("{input} as {format}");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = bytes.expect("an output file");
    match format {
        "raw" | "framed" | "hex" => assert!(bytes.is_empty(), "{what}: {bytes:?}"),
        "npy" => {
            assert!(bytes.starts_with(b"\x93NUMPY"), "{what}");
            let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
            let header = String::from_utf8_lossy(&bytes[10..10 + header_len]);
            assert!(header.contains("'descr': '>f4'"), "{what}: {header}");
            assert!(header.contains("'shape': (0, 4)"), "{what}: {header}");
            assert_eq!(
                bytes.len(),
                10 + header_len,
                "{what}: data after the header"
            );
        }
        _ => {
            let (schema, rows) = table(bytes, format == "parquet");
            assert_eq!(rows, 0, "{what}");
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            let column = if input.ends_with(".parquet") || input.starts_with("empty.arrow") {
                "emb_cql"
            } else {
                "vector_cql"
            };
            assert_eq!(names.last(), Some(&column), "{what}: {names:?}");
            if input.starts_with("empty_list") || input.starts_with("empty.arrow") {
                assert_eq!(names, ["id", "emb_cql"], "{what}");
            }
            let field = schema.field_with_name(column).unwrap();
            assert_eq!(field.data_type(), &DataType::Binary, "{what}");
        }
    }
}

#[test]
fn zero_row_inputs_give_the_empty_output_of_every_format() {
    for (input, _) in INPUTS {
        for &format in OutputFormat::NAMES {
            let (output, bytes) = convert(input, format, Some("vector<float, 4>"));
            check_empty_output(input, format, &output, bytes);
        }
    }
}

#[test]
fn without_a_type_only_npy_output_needs_a_declared_dimension() {
    for (input, declared) in INPUTS {
        for &format in OutputFormat::NAMES {
            let (output, bytes) = convert(input, format, None);
            if format == "npy" && !declared {
                assert_error(&output, 1, "no vector type to derive", input);
                assert_error(&output, 1, "give --type", input);
                assert!(bytes.is_none(), "{input}: an output was left");
                continue;
            }
            check_empty_output(input, format, &output, bytes);
        }
    }
}

#[test]
fn a_zero_row_input_still_refuses_a_type_that_contradicts_its_declared_dimension() {
    for (input, declared) in INPUTS {
        let (output, _) = convert(input, "raw", Some("vector<float, 8>"));
        if declared {
            assert_error(&output, 1, "dimension 8", input);
        } else {
            assert_eq!(output.status.code(), Some(0), "{input}: {output:?}");
        }
    }
}
