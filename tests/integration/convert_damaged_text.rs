//! `convert` of inputs whose text column holds one value that is not UTF-8 (row 3000 of 5000, in
//! `fixtures/damaged_text`, written by pyarrow): the other rows read whole, and only an output that
//! carries the text stops, naming the row.

use crate::common;
use crate::convert_cli::{assert_failed, convert};

#[test]
fn a_text_value_that_is_not_utf8_refuses_its_row_only() {
    let expected = std::fs::read(common::fixture("damaged_text/text.raw")).unwrap();
    let tail = std::fs::read(common::fixture("damaged_text/tail.hex")).unwrap();
    for name in ["text.parquet", "text.arrow", "text.arrows"] {
        let input = common::fixture(&format!("damaged_text/{name}"));
        let raw = convert(&input, &["--format", "raw"], true);
        assert_eq!(raw.code, 0, "{name}: {}", raw.stderr);
        assert!(
            raw.file == Some(expected.clone()),
            "{name}: raw output differs from NumPy's"
        );
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
