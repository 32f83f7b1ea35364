//! The input readers against the fixtures of `fixtures/convert/` (made by `generate.py` with NumPy,
//! pyarrow and the Python driver): every valid input yields the values the driver serialized, every
//! bad input is an error naming what the manifest says, and shards concatenate to the whole input.

use cqlwire_vector::input::{
    self, Batch, BatchReader, ElementType, Elements, InputError, InputFormat, InputOptions,
    RowSelection,
};
use proptest::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    cqlwire_testkit::fixture("convert")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).unwrap();
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

fn options(selection: RowSelection) -> InputOptions {
    InputOptions {
        format: None,
        column: None,
        dataset: "train".to_string(),
        selection,
        batch_rows: 3,
        vectors_optional: false,
    }
}

/// The reader options a case's command-line arguments ask for.
fn options_from_args(args: &[Value]) -> InputOptions {
    let mut result = options(RowSelection::All);
    let args: Vec<&str> = args.iter().map(|a| a.as_str().unwrap()).collect();
    for pair in args.windows(2) {
        match pair {
            ["--rows", range] => {
                let (start, end) = range.split_once("..").unwrap();
                result.selection =
                    RowSelection::Range(start.parse().unwrap()..end.parse().unwrap());
            }
            ["--shard", shard] => {
                let (k, n) = shard.split_once('/').unwrap();
                result.selection = RowSelection::Shard {
                    k: k.parse().unwrap(),
                    n: n.parse().unwrap(),
                };
            }
            ["--column", name] => result.column = Some(name.to_string()),
            ["--input-format", name] => result.format = Some(name.parse().unwrap()),
            _ => {}
        }
    }
    result
}

/// Everything a reader yields.
struct Read {
    element_type: ElementType,
    dimension: usize,
    rows: Option<u64>,
    column: Option<String>,
    passthrough: Option<Vec<String>>,
    batches: Vec<Batch>,
}

fn read_all(mut reader: Box<dyn BatchReader>) -> Result<Read, InputError> {
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch()? {
        // Give the memory back, so that later batches reuse it (as the converter does).
        batches.push(batch.clone());
        reader.recycle(batch.elements);
    }
    Ok(Read {
        element_type: reader.element_type(),
        dimension: reader.dimension(),
        rows: reader.rows(),
        column: reader.column_name().map(str::to_string),
        passthrough: reader
            .passthrough_schema()
            .map(|s| s.fields().iter().map(|f| f.name().clone()).collect()),
        batches,
    })
}

fn read_path(path: &Path, options: &InputOptions) -> Result<Read, InputError> {
    read_all(input::open(Some(path), options)?)
}

/// An element as an exact number: integers as i64, floats as the bits of an f64.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int(i64),
    Float(u64),
}

fn numbers(elements: &Elements) -> Vec<Number> {
    let float = |x: f64| Number::Float(x.to_bits());
    match elements {
        Elements::F16(v) => v.iter().map(|x| float(x.to_f64())).collect(),
        Elements::F32(v) => v.iter().map(|&x| float(f64::from(x))).collect(),
        Elements::F64(v) => v.iter().map(|&x| float(x)).collect(),
        Elements::I8(v) => v.iter().map(|&x| Number::Int(x.into())).collect(),
        Elements::U8(v) => v.iter().map(|&x| Number::Int(x.into())).collect(),
        Elements::I16(v) => v.iter().map(|&x| Number::Int(x.into())).collect(),
        Elements::I32(v) => v.iter().map(|&x| Number::Int(x.into())).collect(),
        Elements::I64(v) => v.iter().map(|&x| Number::Int(x)).collect(),
    }
}

/// Decodes one serialized vector value of `dimension` elements of `subtype`.
fn decode_value(bytes: &[u8], subtype: &str, dimension: usize) -> Vec<Number> {
    let mut out = Vec::new();
    let mut at = 0;
    for _ in 0..dimension {
        let size = match subtype {
            "float" | "int" => 4,
            "double" | "bigint" => 8,
            _ => {
                // smallint / tinyint / date / time / varint: a one-byte unsigned vint length
                // prefix (values are short).
                let len = bytes[at] as usize;
                assert!(len < 0x80);
                at += 1;
                len
            }
        };
        let field = &bytes[at..at + size];
        at += size;
        out.push(match subtype {
            "float" => {
                Number::Float(f64::from(f32::from_be_bytes(field.try_into().unwrap())).to_bits())
            }
            "double" => Number::Float(f64::from_be_bytes(field.try_into().unwrap()).to_bits()),
            _ => {
                let mut value = if field[0] & 0x80 != 0 { -1i64 } else { 0 };
                for &b in field {
                    value = (value << 8) | i64::from(b);
                }
                Number::Int(value)
            }
        });
    }
    assert_eq!(at, bytes.len(), "trailing bytes in a value");
    out
}

/// The rows of an expected output: one entry per row, None for a framed null.
fn expected_rows(
    bytes: &[u8],
    subtype: &str,
    dimension: usize,
    rows: usize,
    framed: bool,
) -> Vec<Option<Vec<Number>>> {
    let mut out = Vec::new();
    let mut at = 0;
    for _ in 0..rows {
        let len = if framed {
            let len = i32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
            at += 4;
            if len < 0 {
                out.push(None);
                continue;
            }
            len as usize
        } else {
            bytes.len() / rows
        };
        out.push(Some(decode_value(&bytes[at..at + len], subtype, dimension)));
        at += len;
    }
    assert_eq!(at, bytes.len());
    out
}

/// `vector<float, 4>` → ("float", 4).
fn parse_vector_type(text: &str) -> (String, usize) {
    let inner = text.trim_start_matches("vector<").trim_end_matches('>');
    let (subtype, dimension) = inner.split_once(',').unwrap();
    (
        subtype.trim().to_string(),
        dimension.trim().parse().unwrap(),
    )
}

#[test]
fn every_valid_input_yields_the_stored_values() {
    let mut checked = 0;
    for case in manifest().iter().filter(|c| c.get("error").is_none()) {
        let name = case["name"].as_str().unwrap();
        let options = options_from_args(case["args"].as_array().unwrap());
        let read = read_path(&fixtures().join(case["input"].as_str().unwrap()), &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (subtype, dimension) = parse_vector_type(case["type"].as_str().unwrap());
        // Only targets that hold the input's numbers as numbers of the same kind can be read back
        // here; text, decimal and integers made from floats are the converter's business
        // (tests/integration/convert_cli.rs).
        let float_input = case["element_type"].as_str().unwrap().starts_with('f');
        let read_back = match subtype.as_str() {
            "float" | "double" => float_input,
            "text" | "ascii" | "decimal" => false,
            _ => !float_input,
        };
        if !read_back {
            continue;
        }
        assert_eq!(read.dimension, dimension, "{name}");
        assert_eq!(
            read.element_type.name(),
            case["element_type"].as_str().unwrap(),
            "{name}"
        );
        if let Some(column) = case.get("column") {
            assert_eq!(read.column.as_deref(), column.as_str(), "{name}");
        }
        if let Some(passthrough) = case.get("passthrough") {
            let expected: Vec<String> = serde_json::from_value(passthrough.clone()).unwrap();
            assert_eq!(read.passthrough.as_ref(), Some(&expected), "{name}");
            for batch in &read.batches {
                let columns = batch.columns.as_ref().unwrap();
                assert_eq!(columns.num_rows(), batch.rows, "{name}");
                assert_eq!(columns.num_columns(), expected.len(), "{name}");
            }
        }

        // Rows as the reader yields them, None for a null row, with consecutive row numbers.
        let mut next_row = case.get("first_row").map_or(0, |v| v.as_u64().unwrap());
        let mut rows = Vec::new();
        for batch in &read.batches {
            assert_eq!(batch.first_row, next_row, "{name}");
            assert_eq!(batch.elements.len(), batch.rows * dimension, "{name}");
            next_row += batch.rows as u64;
            let values = numbers(&batch.elements);
            for (i, row) in values.chunks(dimension).enumerate() {
                let valid = batch.validity.as_ref().is_none_or(|v| v[i]);
                rows.push(valid.then(|| row.to_vec()));
            }
        }
        if let Some(known) = read.rows {
            assert_eq!(known, rows.len() as u64, "{name}");
        }
        let null_rows: Vec<usize> = case
            .get("null_rows")
            .map_or(Vec::new(), |v| serde_json::from_value(v.clone()).unwrap());
        let nulls: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].is_none()).collect();
        assert_eq!(nulls, null_rows, "{name}");

        let framed = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "framed");
        let skip_nulls = case["args"].as_array().unwrap().iter().any(|a| a == "skip");
        let expected_count = case["rows"].as_u64().unwrap() as usize;
        let bytes = std::fs::read(fixtures().join(case["expected"].as_str().unwrap())).unwrap();
        let expected = expected_rows(&bytes, &subtype, dimension, expected_count, framed);
        let got: Vec<Option<Vec<Number>>> = if skip_nulls {
            rows.into_iter().filter(Option::is_some).collect()
        } else {
            rows
        };
        // Integer targets hold integer inputs; float targets hold float inputs (widened exactly).
        assert_eq!(got, expected, "{name}");
        checked += 1;
    }
    assert!(checked > 80, "only {checked} valid cases");
}

#[test]
fn every_bad_input_is_an_error_naming_the_place() {
    let mut checked = 0;
    for case in manifest().iter().filter(|c| c.get("error").is_some()) {
        if case["stage"] != "read" {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let options = options_from_args(case["args"].as_array().unwrap());
        let error = match read_path(&fixtures().join(case["input"].as_str().unwrap()), &options) {
            Ok(_) => panic!("{name}: no error"),
            Err(e) => e.to_string(),
        };
        assert!(!error.contains('\n'), "{name}: {error}");
        // Flags (`--column`) are named by the command line, not the library.
        let mentions = case["mentions"].as_array().unwrap().iter();
        for mention in mentions.filter_map(|m| m.as_str().filter(|m| !m.starts_with("--"))) {
            assert!(
                error.contains(mention),
                "{name}: '{error}' does not mention '{mention}'"
            );
        }
        checked += 1;
    }
    assert!(checked > 15, "only {checked} error cases");
}

/// Every element of a read, with the row number of each row.
fn flatten(read: &Read) -> (Vec<u64>, Vec<Number>) {
    let mut row_numbers = Vec::new();
    let mut values = Vec::new();
    for batch in &read.batches {
        row_numbers.extend(batch.first_row..batch.first_row + batch.rows as u64);
        values.extend(numbers(&batch.elements));
    }
    (row_numbers, values)
}

#[test]
fn shards_concatenate_to_the_whole_input() {
    for file in [
        "inputs/f4_12rows.npy",
        "inputs/row_groups.parquet",
        "inputs/sample.fvecs",
        "inputs/sample.u8bin",
        "inputs/f4_be_fortran.npy",
        "sample/train.npy",
        "sample/train.parquet",
    ] {
        let path = fixtures().join(file);
        let whole = flatten(&read_path(&path, &options(RowSelection::All)).unwrap());
        for n in 1..=5 {
            let mut rows = Vec::new();
            let mut values = Vec::new();
            for k in 1..=n {
                let shard = read_path(&path, &options(RowSelection::Shard { k, n })).unwrap();
                let (r, v) = flatten(&shard);
                assert_eq!(shard.rows, Some(r.len() as u64), "{file} {k}/{n}");
                rows.extend(r);
                values.extend(v);
            }
            assert_eq!((&rows, &values), (&whole.0, &whole.1), "{file} n={n}");
        }
        let error = read_path(&path, &options(RowSelection::Shard { k: 3, n: 2 }));
        assert!(matches!(error, Err(InputError::Options(_))), "{file}");
    }
}

#[test]
fn parquet_shards_follow_row_groups() {
    // The sample has 4 row groups of 250 rows: 2 shards take 2 whole groups each.
    let path = fixtures().join("sample/train.parquet");
    let second = read_path(&path, &options(RowSelection::Shard { k: 2, n: 2 })).unwrap();
    assert_eq!(second.batches.first().map(|b| b.first_row), Some(500));
    assert_eq!(second.rows, Some(500));
}

#[test]
fn ranges_pick_rows_anywhere() {
    for file in [
        "inputs/f4_12rows.npy",
        "inputs/row_groups.parquet",
        "inputs/f4_be_fortran.npy",
    ] {
        let path = fixtures().join(file);
        let (all_rows, all_values) =
            flatten(&read_path(&path, &options(RowSelection::All)).unwrap());
        let dimension = all_values.len() / all_rows.len();
        let total = all_rows.len() as u64;
        for start in 0..total {
            for end in start..=total + 1 {
                let read = read_path(&path, &options(RowSelection::Range(start..end))).unwrap();
                let (rows, values) = flatten(&read);
                let end = end.min(total);
                assert_eq!(
                    rows,
                    (start..end).collect::<Vec<_>>(),
                    "{file} {start}..{end}"
                );
                let from = start as usize * dimension;
                assert_eq!(values, all_values[from..end as usize * dimension], "{file}");
            }
        }
    }
}

/// Reads a file through `open_stream`, as standard input would be read.
fn read_stream(path: &Path, options: &InputOptions) -> Result<Read, InputError> {
    let bytes = std::fs::read(path).unwrap();
    read_all(input::open_stream(
        "stdin",
        Box::new(std::io::Cursor::new(bytes)),
        options,
    )?)
}

#[test]
fn streams_read_like_files() {
    for file in [
        "inputs/f4_le.npy",
        "inputs/f8_be.npy",
        "inputs/passthrough.parquet",
        "inputs/stream.arrows",
        "inputs/file_i1.arrow",
        "sample/train.parquet",
    ] {
        let path = fixtures().join(file);
        for selection in [RowSelection::All, RowSelection::Range(1..3)] {
            let from_file = flatten(&read_path(&path, &options(selection.clone())).unwrap());
            let from_stream = flatten(&read_stream(&path, &options(selection)).unwrap());
            assert_eq!(from_file, from_stream, "{file}");
        }
    }
    // Formats without magic bytes need --input-format on a stream.
    for (file, format) in [
        ("inputs/sample.fvecs", InputFormat::Fvecs),
        ("inputs/sample.bvecs", InputFormat::Bvecs),
        ("inputs/sample.i8bin", InputFormat::I8bin),
    ] {
        let path = fixtures().join(file);
        let mut stream_options = options(RowSelection::All);
        assert!(read_stream(&path, &stream_options).is_err(), "{file}");
        stream_options.format = Some(format);
        let from_stream = read_stream(&path, &stream_options).unwrap();
        let from_file = read_path(&path, &options(RowSelection::All)).unwrap();
        assert_eq!(flatten(&from_stream), flatten(&from_file), "{file}");
        stream_options.selection = RowSelection::Range(2..4);
        let (rows, _) = flatten(&read_stream(&path, &stream_options).unwrap());
        assert_eq!(rows, [2, 3], "{file}");
    }
}

#[test]
fn streams_report_truncation_and_unknown_row_counts() {
    let mut fvecs = options(RowSelection::All);
    fvecs.format = Some(InputFormat::Fvecs);
    let error = read_stream(&fixtures().join("inputs/truncated.fvecs"), &fvecs)
        .err()
        .unwrap();
    assert!(error.to_string().contains("row 2"), "{error}");
    fvecs.selection = RowSelection::Shard { k: 1, n: 2 };
    let error = read_stream(&fixtures().join("inputs/sample.fvecs"), &fvecs)
        .err()
        .unwrap();
    assert!(
        matches!(error, InputError::ShardNeedsRowCount { .. }),
        "{error}"
    );
    let npy = options(RowSelection::All);
    let error = read_stream(&fixtures().join("inputs/truncated.npy"), &npy)
        .err()
        .unwrap();
    assert!(error.to_string().contains("row 3"), "{error}");
    let error = read_stream(&fixtures().join("inputs/f4_be_fortran.npy"), &npy)
        .err()
        .unwrap();
    assert!(error.to_string().contains("Fortran"), "{error}");
}

/// A valid NPY file's bytes: header for `rows × 3` `descr` elements, then the data.
fn npy_bytes(descr: &str, rows: u64, fortran: bool, version: u8, data: &[u8]) -> Vec<u8> {
    let text = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': ({rows}, 3), }}\n",
        if fortran { "True" } else { "False" }
    );
    let mut bytes = b"\x93NUMPY".to_vec();
    bytes.push(version);
    bytes.push(0);
    if version == 1 {
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
    } else {
        bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
    }
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// Reads bytes as an NPY stream and as an NPY file; neither may panic.
fn read_both_ways(bytes: &[u8]) {
    let mut npy = options(RowSelection::All);
    npy.format = Some(InputFormat::Npy);
    let _ = input::open_stream("fuzz", Box::new(std::io::Cursor::new(bytes.to_vec())), &npy)
        .and_then(read_all);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.npy");
    std::fs::write(&path, bytes).unwrap();
    let _ = read_path(&path, &npy);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_npy_headers_never_panic(
        descr in "[<>|=]?[fiuc][0-9]{1,2}",
        rows in prop_oneof![0u64..6, any::<u64>()],
        fortran in any::<bool>(),
        version in 1u8..4,
        data in proptest::collection::vec(any::<u8>(), 0..200),
        cut in any::<proptest::sample::Index>(),
        flip in any::<(proptest::sample::Index, u8)>(),
    ) {
        let bytes = npy_bytes(&descr, rows, fortran, version, &data);
        read_both_ways(&bytes);
        read_both_ways(&bytes[..cut.index(bytes.len())]);
        let mut flipped = bytes.clone();
        let at = flip.0.index(flipped.len());
        flipped[at] ^= flip.1;
        read_both_ways(&flipped);
    }

    #[test]
    fn random_bytes_never_panic_any_reader(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        for &format in InputFormat::ALL {
            let mut any_format = options(RowSelection::Range(1..4));
            any_format.format = Some(format);
            let stream = Box::new(std::io::Cursor::new(bytes.clone()));
            let _ = input::open_stream("fuzz", stream, &any_format).and_then(read_all);
        }
    }
}

/// Writes `rows` (None = null row) as a Parquet column `emb` of `list<float>` (read through the
/// leaf column) or `list<int16>` (read through Arrow list arrays) beside an `id` column.
fn write_parquet_rows(
    path: &Path,
    rows: &[Option<Vec<i16>>],
    as_float: bool,
    compression: parquet::basic::Compression,
    group_rows: usize,
    page_bytes: usize,
    version_2: bool,
) {
    use arrow_array::builder::{Float32Builder, Int16Builder, ListBuilder};
    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use std::sync::Arc;

    let emb: ArrayRef = if as_float {
        let mut emb = ListBuilder::new(Float32Builder::new());
        for row in rows {
            if let Some(values) = row {
                values
                    .iter()
                    .for_each(|&v| emb.values().append_value(f32::from(v)));
            }
            emb.append(row.is_some());
        }
        Arc::new(emb.finish())
    } else {
        let mut emb = ListBuilder::new(Int16Builder::new());
        for row in rows {
            if let Some(values) = row {
                emb.values().append_slice(values);
            }
            emb.append(row.is_some());
        }
        Arc::new(emb.finish())
    };
    let ids = Int64Array::from_iter_values(0..rows.len() as i64);
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef), ("emb", emb)]).unwrap();
    let version = if version_2 {
        WriterVersion::PARQUET_2_0
    } else {
        WriterVersion::PARQUET_1_0
    };
    let properties = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .set_data_page_size_limit(page_bytes)
        .set_write_batch_size(2)
        .set_dictionary_enabled(false)
        .set_writer_version(version)
        .set_compression(compression)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Parquet files of every page and row-group layout and every compression (including the
    /// legacy Hadoop LZ4 codec, which pyarrow no longer writes) read back as written, for any range.
    #[test]
    fn parquet_layouts_read_back_exactly(
        rows in proptest::collection::vec(proptest::option::weighted(0.85, proptest::collection::vec(any::<i16>(), 3)), 1..40),
        as_float in any::<bool>(),
        compression in proptest::sample::select(vec![
            parquet::basic::Compression::UNCOMPRESSED,
            parquet::basic::Compression::SNAPPY,
            parquet::basic::Compression::LZ4,
            parquet::basic::Compression::LZ4_RAW,
            parquet::basic::Compression::ZSTD(Default::default()),
            parquet::basic::Compression::GZIP(Default::default()),
        ]),
        group_rows in 1usize..12,
        page_bytes in 8usize..200,
        version_2 in any::<bool>(),
        batch_rows in 1usize..9,
        start in 0usize..40,
        length in 0usize..40,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.parquet");
        write_parquet_rows(&path, &rows, as_float, compression, group_rows, page_bytes, version_2);
        let start = start % rows.len();
        let end = (start + length).min(rows.len());
        let mut reader_options = options(RowSelection::Range(start as u64..end as u64));
        reader_options.batch_rows = batch_rows;
        let read = read_path(&path, &reader_options).unwrap();
        let mut got = Vec::new();
        let mut ids = Vec::new();
        for batch in &read.batches {
            prop_assert!(batch.rows <= batch_rows);
            // The dimension comes from the first non-null row of the file (0 when there is none).
            let dimension = read.dimension;
            prop_assert_eq!(dimension, if rows.iter().any(Option::is_some) { 3 } else { 0 });
            let values = numbers(&batch.elements);
            prop_assert_eq!(values.len(), batch.rows * dimension);
            for i in 0..batch.rows {
                let valid = batch.validity.as_ref().is_none_or(|v| v[i]);
                got.push(valid.then(|| values[i * dimension..(i + 1) * dimension].to_vec()));
            }
            let columns = batch.columns.as_ref().unwrap();
            let id = columns.column(0).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
            ids.extend(id.values().iter().copied());
        }
        let expected: Vec<Option<Vec<Number>>> = rows[start..end]
            .iter()
            .map(|row| {
                row.as_ref().map(|v| {
                    numbers(&if as_float {
                        Elements::F32(v.iter().map(|&x| f32::from(x)).collect())
                    } else {
                        Elements::I16(v.clone())
                    })
                })
            })
            .collect();
        prop_assert_eq!(got, expected);
        prop_assert_eq!(ids, (start as i64..end as i64).collect::<Vec<_>>());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Valid Parquet and Arrow files with a few bytes changed: an error or some rows, never a panic.
    #[test]
    fn corrupted_columnar_files_never_panic(
        file in proptest::sample::select(vec![
            "inputs/passthrough.parquet",
            "inputs/null_rows.parquet",
            "inputs/fixed_size_list_i2.parquet",
            "inputs/row_groups.parquet",
            "inputs/stream.arrows",
            "inputs/file_i1.arrow",
        ]),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let mut bytes = std::fs::read(fixtures().join(file)).unwrap();
        for (at, xor) in &flips {
            let at = at.index(bytes.len());
            bytes[at] ^= xor;
        }
        let stream = Box::new(std::io::Cursor::new(bytes));
        let _ = input::open_stream("fuzz", stream, &options(RowSelection::All)).and_then(read_all);
    }
}

/// Standard input redirected from a file is read as a file (seeks work: Fortran order, shards);
/// piped, it is a stream. The test runs itself again as a child with standard input set up.
#[test]
fn standard_input_from_a_file_can_seek() {
    const CHILD: &str = "CQLWIRE_TEST_STDIN_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let result =
            input::open(None, &options(RowSelection::Shard { k: 2, n: 3 })).and_then(read_all);
        match result {
            Ok(read) => println!("child rows {:?}", flatten(&read).0),
            Err(e) => println!("child error {e}"),
        }
        return;
    }
    let fortran = fixtures().join("inputs/f4_be_fortran.npy");
    let run = |stdin: std::process::Stdio, bytes: Option<Vec<u8>>| {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "input_readers::standard_input_from_a_file_can_seek",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .stdin(stdin)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(bytes) = bytes {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&bytes).unwrap();
        }
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let from_file = run(std::fs::File::open(&fortran).unwrap().into(), None);
    assert!(from_file.contains("child rows [1, 2]"), "{from_file}");
    let from_pipe = run(
        std::process::Stdio::piped(),
        Some(std::fs::read(&fortran).unwrap()),
    );
    assert!(
        from_pipe.contains("child error") && from_pipe.contains("Fortran"),
        "{from_pipe}"
    );
}

/// A Parquet and an Arrow IPC file of `id` (int64) and `note` (text) and no list column: refused
/// when vectors are needed, else read for those columns alone, every row of two ranges in order.
#[test]
fn files_without_a_list_column_are_read_for_their_columns_when_vectors_are_optional() {
    use arrow_array::{
        cast::AsArray, types::Int64Type, Array, Int64Array, RecordBatch, StringArray,
    };
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("note", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (0..10).map(|i| i * 3 - 5).collect();
    let notes: Vec<Option<String>> = (0..10)
        .map(|i| (i % 4 != 0).then(|| format!("n{i}")))
        .collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from(notes.clone())),
        ],
    )
    .unwrap();
    let folder = tempfile::tempdir().unwrap();
    let parquet = folder.path().join("scalars.parquet");
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&parquet).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let arrow = folder.path().join("scalars.arrow");
    let mut writer =
        arrow_ipc::writer::FileWriter::try_new(std::fs::File::create(&arrow).unwrap(), &schema)
            .unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();

    for path in [&parquet, &arrow] {
        let refused = input::open(Some(path), &options(RowSelection::All))
            .err()
            .unwrap();
        assert!(
            refused.to_string().contains("no list-typed column"),
            "{refused}"
        );
        let mut read = Vec::new();
        for selection in [RowSelection::Range(0..4), RowSelection::Range(4..10)] {
            let options = InputOptions {
                vectors_optional: true,
                ..options(selection)
            };
            let mut reader = input::open(Some(path), &options).unwrap();
            assert!(!reader.has_vectors());
            assert_eq!(reader.column_name(), None);
            assert_eq!(reader.dimension(), 0);
            assert_eq!(
                reader.passthrough_schema().unwrap().fields(),
                schema.fields()
            );
            while let Some(batch) = reader.next_batch().unwrap() {
                assert!(batch.elements.is_empty());
                let columns = batch.columns.unwrap();
                let id = columns.column(0).as_primitive::<Int64Type>();
                let note = columns.column(1).as_string::<i32>();
                for i in 0..batch.rows {
                    let number = batch.first_row as usize + i;
                    read.push(number);
                    assert_eq!(id.value(i), ids[number], "{}", path.display());
                    let text = note.is_valid(i).then(|| note.value(i).to_owned());
                    assert_eq!(text, notes[number], "{}", path.display());
                }
            }
        }
        assert_eq!(read, (0..10).collect::<Vec<_>>(), "{}", path.display());
    }
}
