//! `cqlwire bench` without a server: `bench plot` on result files, and the errors that come before
//! any connection (the live checks are `fixtures/bench/check_cli.py`).

use crate::common::{assert_error, fixture, with_args};

fn bench(folder: &str, extra: &[&str]) -> std::process::Output {
    bench_on(&[folder], extra)
}

/// `bench DATASET… --hosts … --table ks.t EXTRA…`, `dataset` the folder or the file options.
fn bench_on(dataset: &[&str], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["bench"];
    args.extend_from_slice(dataset);
    // A port nothing listens on: these runs must end before connecting.
    args.extend_from_slice(&["--hosts", "127.0.0.1:1", "--table", "ks.t"]);
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

/// `bench --train F --test F --ground-truth F` and the options after them.
fn bench_files(train: &str, test: &str, truth: &str, extra: &[&str]) -> std::process::Output {
    bench_on(
        &["--train", train, "--test", test, "--ground-truth", truth],
        extra,
    )
}

/// A TEXMEX file of `rows` float32 vectors of `dimension` elements.
fn write_fvecs(path: &std::path::Path, rows: usize, dimension: usize) {
    let mut bytes = Vec::new();
    for row in 0..rows {
        bytes.extend_from_slice(&(dimension as i32).to_le_bytes());
        for i in 0..dimension {
            bytes.extend_from_slice(&((row + i) as f32).to_le_bytes());
        }
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn dataset_files_that_are_missing_or_do_not_fit_end_before_connecting() {
    let files = fixture("bench/files");
    let file = |name: &str| files.join(name).to_str().unwrap().to_owned();
    let (train, test, truth) = (
        file("train.fvecs"),
        file("test.fvecs"),
        file("neighbors.ivecs"),
    );
    for (which, args) in [
        ("train", ["/nonexistent/train.fvecs", &test, &truth]),
        ("test", [&train, "/nonexistent/test.fvecs", &truth]),
        ("ground truth", [&train, &test, "/nonexistent/gt.ivecs"]),
    ] {
        let output = bench_files(args[0], args[1], args[2], &["--k", "10"]);
        assert_error(
            &output,
            1,
            "/nonexistent/",
            &format!("a missing {which} file"),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let narrow = dir.path().join("narrow.fvecs");
    write_fvecs(&narrow, 10, 4);
    let output = bench_files(&train, narrow.to_str().unwrap(), &truth, &["--k", "10"]);
    let message = assert_error(&output, 1, "queries of 4 dimensions", "narrower queries");
    assert!(message.contains("train.fvecs has 8"), "{message}");
    let fewer = dir.path().join("fewer.fvecs");
    write_fvecs(&fewer, 3, 8);
    let output = bench_files(&train, fewer.to_str().unwrap(), &truth, &["--k", "10"]);
    assert_error(
        &output,
        1,
        "10 neighbour lists for 3 queries",
        "fewer queries",
    );
    let short = dir.path().join("short.fvecs");
    write_fvecs(&short, 5, 8);
    let output = bench_files(short.to_str().unwrap(), &test, &truth, &["--k", "10"]);
    assert_error(
        &output,
        1,
        "outside the training ids 0..5",
        "ids past the training rows",
    );
    let output = bench_files(&train, &test, &truth, &[]);
    assert_error(
        &output,
        2,
        "k can be 10 at most",
        "k above the ground truth's",
    );
    let output = bench_files(&train, &test, &truth, &["--k", "10", "--filter", "int:0.5"]);
    assert_error(
        &output,
        2,
        "needs a VectorDBBench dataset folder",
        "a filter",
    );
}

#[test]
fn the_dataset_is_a_folder_or_all_three_files() {
    let files = fixture("bench/files");
    let train = files.join("train.fvecs");
    let train = train.to_str().unwrap();
    let output = bench_on(&["--train", train], &[]);
    assert_eq!(output.status.code(), Some(2), "--train alone");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--test"));
    let folder = fixture("bench/folder");
    let output = bench(
        folder.to_str().unwrap(),
        &["--train", train, "--test", train, "--ground-truth", train],
    );
    assert_eq!(output.status.code(), Some(2), "a folder and files");
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot be used with"));
}

#[test]
fn an_hdf5_dataset_whose_distance_cannot_be_the_index_ends_before_connecting() {
    let hamming = fixture("bench/files/ann-hamming.hdf5");
    let output = bench(hamming.to_str().unwrap(), &[]);
    assert_error(
        &output,
        2,
        "its distance 'hamming' has no similarity function",
        "a dataset by hamming distance",
    );
    let angular = fixture("bench/files/ann-angular.hdf5");
    let output = bench(angular.to_str().unwrap(), &["--metric", "dot_product"]);
    assert_error(
        &output,
        2,
        "by angular distance (the similarity function cosine), not dot_product",
        "a metric against the file's distance",
    );
    let fvecs = fixture("bench/files/train.fvecs");
    let output = bench(fvecs.to_str().unwrap(), &[]);
    assert_error(
        &output,
        2,
        "not a dataset folder or an ann-benchmarks HDF5 file",
        "a vector file as the dataset",
    );
}
