//! `cqlwire unload`: what is refused before any server is reached (no Cassandra needed).

use crate::common::{assert_error, run, with_args};
use std::process::Output;

/// `cqlwire unload` of `ks.t` through a port nothing listens on, with `extra` arguments: these runs
/// must end before connecting.
fn unload(extra: &[&str]) -> Output {
    let mut args = vec!["unload", "--hosts", "127.0.0.1:1", "--table", "ks.t"];
    args.extend_from_slice(extra);
    run(with_args(&args), b"")
}

/// One new file named two ways as the output and the ids file would leave only one of the two:
/// refused with exit 2 before connecting, and nothing is written.
#[test]
fn output_and_ids_spelled_two_ways_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let output = dir.path().join("out/same.npy");
    let ids = dir.path().join("./out/../out/same.npy");
    let ran = unload(&[
        "-o",
        output.to_str().unwrap(),
        "--ids",
        ids.to_str().unwrap(),
    ]);
    assert_error(&ran, 2, "same file", "output = ids, spelled two ways");
    assert_eq!(
        std::fs::read_dir(dir.path().join("out")).unwrap().count(),
        0
    );
}

/// The table's vector column is `--vector-column`, and `--column` (its older spelling) is the
/// same flag: either refused the same way with a parquet output, the message naming the new one.
#[test]
fn the_vector_column_is_named_by_vector_column_or_column() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.parquet");
    for flag in ["--vector-column", "--column"] {
        let ran = unload(&["-o", output.to_str().unwrap(), flag, "emb"]);
        assert_error(
            &ran,
            2,
            "--vector-column and --ids go with the npy, fbin, raw and hex formats",
            flag,
        );
    }
    let both = unload(&["--vector-column", "a", "--column", "b"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used multiple times"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
