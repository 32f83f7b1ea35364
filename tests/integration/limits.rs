//! Every cap listed in the limits table of docs/limits.md, hit on purpose: through the binary where that
//! is cheap, through the library where the input could not be given on a command line (a type longer
//! than an argument may be) or could not be parsed at all (a type deeper than the parser allows).

use crate::common;

use common::{assert_error, run, with_args, write_npy, write_random_npy};
use cqlwire_codec::types::{parse_type, CqlType, NativeType, UdtRegistry};
use cqlwire_codec::value::{cql, json};
use cqlwire_vector::input::{self, InputOptions, RowSelection};
use std::fs;
use std::io::Write;

/// `list<` … `int` … `>` with `levels` lists around `int`: a type of depth `levels + 1`.
fn nested_list_type(levels: usize) -> String {
    format!("{}int{}", "list<".repeat(levels), ">".repeat(levels))
}

#[test]
fn type_nesting_depth_is_64() {
    // 63 lists around int: depth 64, accepted (an empty outer list decodes).
    let output = run(
        with_args(&["decode", &nested_list_type(63), "00000000"]),
        b"",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.stdout, b"[]\n");
    // One more: usage error, exit 2. `frozen<…>` is a level too.
    let frozen = format!("frozen<{}>", nested_list_type(63));
    for ty in [nested_list_type(64), frozen] {
        let output = run(with_args(&["decode", &ty, "00000000"]), b"");
        assert_error(&output, 2, "type nesting deeper than 64 levels", "depth 65");
    }
    // A user-defined type counts with the depth of its declaration: `deep` has depth 64.
    let declaration = format!("deep(f {})", nested_list_type(62));
    let output = run(
        with_args(&["decode", "--udt", &declaration, "deep", "0000000400000000"]),
        b"",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.stdout, b"{f: []}\n", "{stderr}");
    let output = run(
        with_args(&["decode", "--udt", &declaration, "list<deep>", "00000000"]),
        b"",
    );
    assert_error(
        &output,
        2,
        "deeper than 64 levels",
        "list of a depth-64 udt",
    );
}

#[test]
fn type_components_are_at_most_100000() {
    // Longer than one command-line argument may be (128 KiB), hence the library.
    let tuple = |n: usize| format!("tuple<{}>", vec!["int"; n].join(", "));
    let udts = UdtRegistry::new();
    assert!(parse_type(&tuple(99_999), &udts).is_ok());
    let error = parse_type(&tuple(100_000), &udts).unwrap_err().to_string();
    assert!(error.contains("more than 100000 components"), "{error}");
}

#[test]
fn vector_dimension_is_from_1_to_2147483647() {
    for dimension in ["0", "2147483648"] {
        let ty = format!("vector<float, {dimension}>");
        let output = run(with_args(&["decode", &ty, "00"]), b"");
        assert_error(&output, 2, "from 1 to 2147483647", &ty);
    }
}

#[test]
fn element_counts_are_checked_against_the_bytes_left() {
    let cases = [
        (
            "list<int>",
            "7fffffff",
            "element count 2147483647 needs at least 8589934588 bytes but only 0 are left",
        ),
        (
            "map<int, int>",
            "0000000300000004",
            "entry count 3 needs at least 24 bytes but only 4 are left",
        ),
        (
            "vector<float, 100000000>",
            "00",
            "vector<float, 100000000> needs 400000000 bytes (100000000 elements of 4), got 1 (0 \
             elements and 1 byte)",
        ),
        (
            "vector<text, 100000000>",
            "00",
            "vector<text, 100000000> needs 100000000 elements, the value ends after 1",
        ),
    ];
    for (ty, payload, message) in cases {
        let output = run(with_args(&["decode", ty, payload]), b"");
        assert_error(&output, 1, message, ty);
    }
}

#[test]
fn literal_nesting_depth_is_128() {
    // The type parser stops at depth 64, so a deeper type is built directly, as a library caller can.
    let mut ty = CqlType::Native(NativeType::Int);
    for _ in 0..200 {
        ty = CqlType::List(Box::new(ty));
    }
    let literal = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let error = cql::parse_cql(&ty, &literal).unwrap_err().to_string();
    assert!(error.contains("nested deeper than 128 levels"), "{error}");
    // Likewise for JSON, built as a value (serde_json's own parser stops at 128 levels too).
    let mut document = serde_json::json!([]);
    for _ in 0..199 {
        document = serde_json::Value::Array(vec![document]);
    }
    let error = json::from_json(&ty, &document).unwrap_err().to_string();
    assert!(error.contains("nested deeper than 128 levels"), "{error}");
    let output = run(with_args(&["encode", "--json", "list<int>", &literal]), b"");
    assert_error(&output, 1, "recursion limit exceeded", "deep JSON text");
}

#[test]
fn literal_exponents_are_at_most_10000() {
    let output = run(with_args(&["encode", "varint", "1e10000"]), b"");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = run(with_args(&["encode", "varint", "1e10001"]), b"");
    assert_error(&output, 1, "exponent too large", "1e10001");
}

/// A CQL LZ4 body: the 4-byte declared length, then `block`.
fn body_hex(declared: u32, block: &str) -> String {
    format!("{declared:08x}{block}")
}

#[test]
fn lz4_declared_length_is_capped_by_max_size_and_the_255_rule() {
    // 256 MiB is the default --max-size.
    let over = body_hex((256 << 20) + 1, "ff");
    let output = run(with_args(&["decompress", "--hex"]), over.as_bytes());
    assert_error(
        &output,
        1,
        "declared uncompressed length 268435457 exceeds the limit of 268435456 bytes",
        "over 256 MiB",
    );
    // Raising it only reaches the next check: a block expands at most 255 times.
    let output = run(
        with_args(&["decompress", "--hex", "--max-size", "1GiB"]),
        over.as_bytes(),
    );
    assert_error(
        &output,
        1,
        "more than an LZ4 block of 1 bytes can hold",
        "255x",
    );
    let output = run(
        with_args(&["decompress", "--hex"]),
        body_hex(256, "ff").as_bytes(),
    );
    assert_error(
        &output,
        1,
        "at most 255 bytes per block byte",
        "256 from 1 byte",
    );
    // Exactly 255 per byte passes that check (and fails later, on the block itself).
    let output = run(
        with_args(&["decompress", "--hex"]),
        body_hex(255, "ff").as_bytes(),
    );
    let message = assert_error(&output, 1, "", "255 from 1 byte");
    assert!(!message.contains("can hold"), "{message}");
    // The same limits apply to each frame of a stream.
    let frame = format!("0401000107{:08x}{over}", over.len() / 2);
    let output = run(
        with_args(&["decompress", "--frames", "--hex"]),
        frame.as_bytes(),
    );
    assert_error(
        &output,
        1,
        "exceeds the limit of 268435456 bytes",
        "frame body",
    );
}

#[test]
fn frame_body_lengths_are_checked_against_the_stream_before_allocating() {
    let frame = "04010001070010000000100000ff";
    let output = run(
        with_args(&["decompress", "--frames", "--hex"]),
        frame.as_bytes(),
    );
    assert_error(
        &output,
        1,
        "header says 1048576 body bytes, 5 left",
        "1 MiB frame",
    );
    // A 2 GiB body cannot hold a block that decompresses to at most 256 MiB.
    let frame = "04010001077fffffff00000010ff";
    let output = run(
        with_args(&["decompress", "--frames", "--hex"]),
        frame.as_bytes(),
    );
    assert_error(
        &output,
        1,
        "an LZ4 block of 2147483643 bytes is too long to decompress to the declared 16 bytes at \
         byte 13 (frame at byte 0, stream 1)",
        "2 GiB frame",
    );
    // A body's length prefix is checked as soon as it arrives, before the rest of the body.
    let frame = "04010001077fffffff10000001ff";
    let output = run(
        with_args(&["decompress", "--frames", "--hex"]),
        frame.as_bytes(),
    );
    assert_error(
        &output,
        1,
        "declared uncompressed length 268435457 exceeds the limit of 268435456 bytes \
         (raise it with --max-size) at byte 9 (frame at byte 0, stream 1)",
        "lying prefix",
    );
}

#[test]
fn npy_header_is_at_most_1_mib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge_header.npy");
    // Version 2.0: a 4-byte header length, here 1 MiB + 1 (the header itself need not follow).
    let mut file = fs::File::create(&path).unwrap();
    file.write_all(b"\x93NUMPY\x02\x00").unwrap();
    file.write_all(&((1u32 << 20) + 1).to_le_bytes()).unwrap();
    file.write_all(b"{'descr': '<f4'").unwrap();
    drop(file);
    let output = run(with_args(&["convert".as_ref(), path.as_os_str()]), b"");
    assert_error(&output, 1, "exceeds the 1048576-byte limit", "npy header");
}

#[test]
fn input_rows_are_at_most_64_mib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.npy");
    // The header alone: one row of 16 Mi + 1 float32 elements is 4 bytes over the limit.
    write_npy(&path, 0, (16 << 20) + 1);
    let output = run(with_args(&["convert".as_ref(), path.as_os_str()]), b"");
    assert_error(
        &output,
        1,
        "larger than the 67108864-byte limit",
        "wide rows",
    );
}

#[test]
fn input_batches_are_at_most_8_mib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.npy");
    // Rows of 4 MiB: however many rows a batch is asked for, it holds at most 2.
    write_npy(&path, 5, 1 << 20);
    let options = InputOptions {
        format: None,
        column: None,
        dataset: "train".to_string(),
        selection: RowSelection::All,
        batch_rows: 1000,
        vectors_optional: false,
    };
    let mut reader = input::open(Some(&path), &options).unwrap();
    let mut rows = Vec::new();
    while let Some(batch) = reader.next_batch().unwrap() {
        rows.push(batch.rows);
    }
    assert_eq!(rows, [2, 2, 1]);
}

#[test]
fn parquet_output_row_groups_are_at_most_32_mib() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("random.npy");
    // 40 MiB of incompressible values (encoded size is what the cap counts).
    write_random_npy(&npy, 40 << 10, 256, 7);
    let parquet = dir.path().join("out.parquet");
    let mut command = with_args(&["convert".as_ref(), npy.as_os_str(), "-q".as_ref()]);
    command.arg("-o").arg(&parquet);
    let output = run(command, b"");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reader = SerializedFileReader::new(fs::File::open(&parquet).unwrap()).unwrap();
    let metadata = reader.metadata();
    assert!(metadata.num_row_groups() >= 2);
    for group in metadata.row_groups() {
        assert!(
            group.compressed_size() <= 32 << 20,
            "row group of {} bytes",
            group.compressed_size()
        );
    }
    let rows: i64 = metadata.row_groups().iter().map(|g| g.num_rows()).sum();
    assert_eq!(rows, 40 << 10);
}

#[test]
fn whole_inputs_are_read_up_to_a_limit() {
    // Endless inputs end with an error instead of exhausting memory.
    let output = run(with_args(&["decode", "int", "--binary", "/dev/zero"]), b"");
    assert_error(
        &output,
        1,
        "/dev/zero: more than 268435456 bytes",
        "decode --binary",
    );
    let output = with_args(&["encode", "int"])
        .stdin(fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert_error(
        &output,
        1,
        "standard input: more than 805306368 bytes",
        "encode",
    );
    let output = run(
        with_args(&["decompress", "--max-size", "1KiB", "/dev/zero"]),
        b"",
    );
    assert_error(&output, 1, "more than 2052 bytes", "decompress");
    // A regular file larger than the limit is refused before it is read (a sparse 3 GiB file).
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.bin");
    fs::File::create(&huge).unwrap().set_len(3 << 30).unwrap();
    let output = run(with_args(&["compress".as_ref(), huge.as_os_str()]), b"");
    assert_error(&output, 1, "more than 268435456 bytes", "compress");
}

#[test]
fn hdf5_chunks_decode_to_64_mib_and_rows_to_what_the_file_holds() {
    let limits = common::fixture("hdf5/limits.hdf5");
    let convert = |dataset: &str| {
        let args = [
            "convert".as_ref(),
            limits.as_os_str(),
            "--dataset".as_ref(),
            dataset.as_ref(),
        ];
        run(with_args(&args), b"")
    };
    // One chunk of 17 × 1 Mi float32 (68 MiB decoded) behind a 1 × 4 dataset.
    let big = convert("big-chunk");
    assert_error(
        &big,
        1,
        "exceeds the 67108864 byte chunk limit",
        "a 68 MiB chunk",
    );
    // 10^9 rows of 16 bytes, no chunk written: more than 1,032 times the file's size.
    let unwritten = convert("unwritten");
    assert_error(
        &unwritten,
        1,
        "claims 1000000000 rows of 16 bytes",
        "unwritten rows",
    );
}
