//! `convert` of inputs whose text column holds one value that is not UTF-8 (row 3000 of 5000, in
//! `fixtures/damaged_text`, written by pyarrow), top-level or nested in a list, struct, map or
//! dictionary: the other rows read whole, and only an output that carries the text stops, naming
//! the row, the column and where in its value the bad text sits.

use crate::common;
use crate::convert_cli::{assert_failed, convert, read_table};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::Array;
use arrow_schema::DataType;

/// The path of the fixture `name`, after checking that `convert --format raw` writes every row of it,
/// the damaged ones too, as NumPy does (`text.raw`).
fn raw_is_numpys(name: &str) -> std::path::PathBuf {
    let expected = std::fs::read(common::fixture("damaged_text/text.raw")).unwrap();
    let input = common::fixture(&format!("damaged_text/{name}"));
    let raw = convert(&input, &["--format", "raw"], true);
    assert_eq!(raw.code, 0, "{name}: {}", raw.stderr);
    assert!(
        raw.file == Some(expected),
        "{name}: raw output differs from NumPy's"
    );
    input
}

#[test]
fn a_text_value_that_is_not_utf8_refuses_its_row_only() {
    let tail = std::fs::read(common::fixture("damaged_text/tail.hex")).unwrap();
    for name in ["text.parquet", "text.arrow", "text.arrows"] {
        let input = raw_is_numpys(name);
        for args in [
            &["--format", "parquet"][..],
            &["--format", "arrow"],
            &["--format", "hex", "--id-column", "name"],
        ] {
            let run = convert(&input, args, true);
            let what = format!("{name} {args:?}");
            assert_failed(&run, 1, &[name, "row 3000", "'name'", "not UTF-8"], &what);
        }
        let after = convert(
            &input,
            &[
                "--rows",
                "3001..3011",
                "--format",
                "hex",
                "--id-column",
                "name",
            ],
            true,
        );
        assert_eq!(after.code, 0, "{name}: {}", after.stderr);
        assert!(
            after.file == Some(tail.clone()),
            "{name}: rows after the damaged one differ"
        );
    }
}

/// `(row, column, path)` of each value that is not UTF-8 in the nested inputs (`nested.bad`).
fn nested_bad() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(common::fixture("damaged_text/nested.bad")).unwrap();
    text.lines()
        .map(|line| {
            let mut words = line.split(' ').map(str::to_owned);
            let mut next = || words.next().unwrap_or_default();
            (next(), next(), next())
        })
        .collect()
}

/// Item `index` of `array` as text, whatever its field names and encoding (a dictionary shows the
/// value its index stands for), so that columns read from different formats compare by value.
fn show(array: &dyn Array, index: usize) -> String {
    if array.is_null(index) {
        return "null".into();
    }
    let items = |values: &dyn Array, range: std::ops::Range<usize>| {
        let items: Vec<String> = range.map(|i| show(values, i)).collect();
        format!("[{}]", items.join(", "))
    };
    match array.data_type() {
        DataType::Int32 => array.as_primitive::<Int32Type>().value(index).to_string(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(index).to_string(),
        DataType::Utf8 => format!("{:?}", array.as_string::<i32>().value(index)),
        DataType::LargeUtf8 => format!("{:?}", array.as_string::<i64>().value(index)),
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            items(
                list.values(),
                offsets[index] as usize..offsets[index + 1] as usize,
            )
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let offsets = list.value_offsets();
            items(
                list.values(),
                offsets[index] as usize..offsets[index + 1] as usize,
            )
        }
        DataType::Map(..) => {
            let map = array.as_map();
            let offsets = map.value_offsets();
            items(
                map.entries(),
                offsets[index] as usize..offsets[index + 1] as usize,
            )
        }
        DataType::Struct(fields) => {
            let columns = array.as_struct().columns().iter().zip(fields.iter());
            let shown: Vec<String> = columns
                .map(|(column, field)| format!("{}: {}", field.name(), show(column, index)))
                .collect();
            format!("{{{}}}", shown.join(", "))
        }
        DataType::Dictionary(..) => {
            let dictionary = array.as_any_dictionary();
            show(dictionary.values(), dictionary.normalized_keys()[index])
        }
        other => panic!("no text form for {other}"),
    }
}

#[test]
fn a_text_value_nested_in_a_list_struct_map_or_dictionary_refuses_its_row_only() {
    let tail = std::fs::read(common::fixture("damaged_text/nested_tail.arrows")).unwrap();
    let reference = read_table(tail, false).remove(0);
    let bad = nested_bad();
    for name in ["nested.parquet", "nested.arrow", "nested.arrows"] {
        let input = raw_is_numpys(name);
        // The whole input stops at the first damaged row, each damaged row at itself.
        let whole = convert(&input, &["--format", "parquet"], true);
        let (row, column, path) = &bad[0];
        let mentions = [name, &format!("row {row},"), &format!("'{column}'"), path];
        assert_failed(&whole, 1, &mentions, &format!("{name} whole"));
        for (row, column, path) in &bad {
            let rows = format!("{row}..{}", row.parse::<u64>().unwrap() + 1);
            let run = convert(&input, &["--rows", &rows, "--format", "arrow"], true);
            let what = format!("{name} row {row}");
            let at = if path.is_empty() {
                "its value is not UTF-8 text".to_owned()
            } else {
                format!("its value at {path} is not UTF-8 text")
            };
            let mentions = [name, &format!("row {row},"), &format!("'{column}'"), &at];
            assert_failed(&run, 1, &mentions, &what);
        }
        // The rows after a damaged one (in the same batch) are the input's.
        let after = convert(&input, &["--rows", "1001..1011", "--format", "arrow"], true);
        assert_eq!(after.code, 0, "{name}: {}", after.stderr);
        let batches = read_table(after.file.unwrap(), false);
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, reference.num_rows(), "{name}");
        for field in reference.schema().fields() {
            if field.name() == "emb" {
                continue;
            }
            let want = reference.column_by_name(field.name()).unwrap();
            let mut row = 0;
            for batch in &batches {
                let have = batch.column_by_name(field.name()).expect("column");
                for i in 0..batch.num_rows() {
                    assert_eq!(
                        show(have.as_ref(), i),
                        show(want.as_ref(), row),
                        "{name}: column {}, row {}",
                        field.name(),
                        1001 + row
                    );
                    row += 1;
                }
            }
        }
    }
}
