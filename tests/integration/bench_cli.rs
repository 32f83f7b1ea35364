//! `cqlwire bench` without a server: `bench plot` on result files, and the errors that come before
//! any connection (the live checks are `fixtures/bench/check_cli.py`).

use crate::common::{assert_error, fixture, with_args};

fn bench(folder: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bench",
        folder,
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
fn plot_draws_every_case_of_the_result_files_as_svg() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("recall.svg");
    let result = fixture("bench/vectordbbench_result.json");
    let output = with_args(&[
        "bench",
        "plot",
        result.to_str().unwrap(),
        "-o",
        chart.to_str().unwrap(),
        "--title",
        "Two runs",
    ])
    .output()
    .unwrap();
    assert!(output.status.success(), "{output:?}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    assert!(svg.contains("Two runs") && svg.contains("QPS") && svg.contains("<circle"));
}

#[test]
fn plot_of_a_file_that_is_not_a_result_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("recall.svg");
    let not_json = fixture("bench/folder.json");
    let output = with_args(&["bench", "plot", "nope.json", "-o", chart.to_str().unwrap()])
        .output()
        .unwrap();
    assert_error(&output, 1, "nope.json", "a missing result file");
    let output = with_args(&[
        "bench",
        "plot",
        not_json.to_str().unwrap(),
        "-o",
        chart.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_error(&output, 1, "folder.json", "a JSON file of another shape");
    assert!(!chart.exists(), "no chart is left behind");
}

#[test]
fn a_folder_without_a_training_set_or_options_that_cannot_work_end_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let output = bench(dir.path().to_str().unwrap(), &[]);
    assert_error(&output, 1, "no training set", "an empty folder");
    let folder = fixture("bench/folder");
    let output = bench(folder.to_str().unwrap(), &["--stages", "indexing"]);
    assert_error(&output, 2, "no stage 'indexing'", "an unknown stage");
    let output = bench(folder.to_str().unwrap(), &["--index-option", "novalue"]);
    assert_error(&output, 2, "KEY=VALUE", "an index option without a value");
    let output = bench(folder.to_str().unwrap(), &["--concurrency", "1,0"]);
    assert_error(&output, 2, "0 is not in 1..", "a level of no query");
}

#[test]
fn outputs_in_a_missing_folder_are_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let output = bench(
        folder.to_str().unwrap(),
        &["-o", "/nonexistent-folder/result.json"],
    );
    assert_error(&output, 1, "nonexistent-folder", "-o in a missing folder");
}

#[test]
fn a_filter_that_does_not_parse_or_lacks_its_ground_truth_ends_before_connecting() {
    let folder = fixture("bench/folder");
    let folder = folder.to_str().unwrap();
    let output = bench(folder, &["--filter", "int:1.5"]);
    assert_error(&output, 2, "bad filter 'int:1.5'", "a rate above 1");
    let output = bench(folder, &["--filter", "range:0.5"]);
    assert_error(&output, 2, "expected int:RATE", "an unknown kind of filter");
    let output = bench(folder, &["--filter", "int:0.3"]);
    assert_error(
        &output,
        1,
        "neighbors_int_30p.parquet",
        "an int filter the folder has no ground truth of",
    );
    let output = bench(folder, &["--filter", "label:0.05"]);
    assert_error(
        &output,
        1,
        "neighbors_labels_label_5p.parquet",
        "a label filter the folder has no ground truth of",
    );
}
