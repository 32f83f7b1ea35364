//! `cqlwire search` errors that need no server: they come before any connection (the live checks
//! are `fixtures/search/check_cli.py`).

use crate::common::{assert_error, fixture, with_args};

fn search(extra: &[&str]) -> std::process::Output {
    let queries = fixture("search/test.npy");
    let mut args = vec![
        "search",
        queries.to_str().unwrap(),
        // A port nothing listens on: these runs must end before connecting.
        "--hosts",
        "127.0.0.1:1",
        "--table",
        "ks.t",
    ];
    args.extend_from_slice(extra);
    with_args(&args).output().unwrap()
}

#[test]
fn a_results_file_that_is_an_input_is_refused_before_connecting() {
    let queries = fixture("search/test.npy");
    let output = search(&["--results", queries.to_str().unwrap()]);
    assert_error(
        &output,
        1,
        "both the input and the output",
        "--results QUERIES",
    );
    let truth = fixture("search/neighbors_euclidean.bin");
    let output = search(&[
        "--ground-truth",
        truth.to_str().unwrap(),
        "--results",
        truth.to_str().unwrap(),
    ]);
    assert_error(
        &output,
        1,
        "both the input and the output",
        "--results TRUTH",
    );
}

#[test]
fn usage_errors_exit_2() {
    let truth = fixture("search/neighbors_euclidean.bin");
    let train = fixture("search/train.npy");
    for (extra, needle) in [
        (vec!["--k", "0"], "--k"),
        (vec!["--concurrency", "0"], "--concurrency"),
        (vec!["--format", "xml"], "--format"),
        (vec!["--queries", "5..2"], "ends before it starts"),
        (vec!["--timeout", "0"], "give at least 1 s"),
        (
            vec![
                "--ground-truth",
                truth.to_str().unwrap(),
                "--exact",
                train.to_str().unwrap(),
            ],
            "--exact",
        ),
    ] {
        let output = search(&extra);
        assert_error(&output, 2, needle, &format!("{extra:?}"));
    }
}

/// A results file that cannot be created is refused before the server is reached (and so before
/// any query), not after the run.
#[test]
fn a_results_file_that_cannot_be_written_is_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing/results.csv");
    let output = search(&["--results", missing.to_str().unwrap()]);
    assert_error(&output, 1, "cannot create", "--results in a missing folder");
    let output = search(&["--results", dir.path().to_str().unwrap()]);
    assert_error(&output, 1, "is a directory", "--results DIR");
    // A device that cannot take the header line.
    let output = search(&["--results", "/dev/full"]);
    assert_error(&output, 1, "No space left", "--results /dev/full");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `--vector-column` and its older spelling `--column` are one flag: each is accepted (the run
/// gets as far as connecting), both at once is a usage error.
#[test]
fn the_vector_column_is_named_by_vector_column_or_column() {
    for flag in ["--vector-column", "--column"] {
        let output = search(&[flag, "emb"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{flag}: {stderr}");
        assert!(stderr.contains("127.0.0.1:1"), "{flag}: {stderr}");
    }
    let output = search(&["--vector-column", "a", "--column", "b"]);
    assert_error(
        &output,
        2,
        "cannot be used multiple times",
        "both spellings",
    );
}
