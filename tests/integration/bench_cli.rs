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

/// A copy of the folder `name` of fixtures/bench in a new temporary folder.
fn copy_folder(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("folder");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    (dir, copy)
}

#[test]
fn an_output_naming_a_dataset_file_or_the_other_output_is_refused_before_connecting() {
    let (dir, folder) = copy_folder("bench/folder");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(folder.join("neighbors.parquet"), &link).unwrap();
    let before = std::fs::read(folder.join("test.parquet")).unwrap();
    for (flag, target) in [
        ("-o", folder.join("test.parquet")),
        ("--plot", folder.join("shuffle_train-00-of-3.parquet")),
        ("-o", link.clone()),
    ] {
        let output = bench(folder.to_str().unwrap(), &[flag, target.to_str().unwrap()]);
        assert_error(&output, 2, "write the output to another file", flag);
    }
    assert_eq!(std::fs::read(folder.join("test.parquet")).unwrap(), before);
    let result = dir.path().join("r.json");
    let spelled = format!(
        "{}/../{}/r.json",
        dir.path().display(),
        dir.path().file_name().unwrap().to_str().unwrap()
    );
    let output = bench(
        folder.to_str().unwrap(),
        &["-o", result.to_str().unwrap(), "--plot", &spelled],
    );
    assert_error(&output, 2, "are one file", "-o and --plot on one file");
}

#[test]
fn plot_refuses_to_write_over_a_result_it_reads_and_reads_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let result = dir.path().join("r.json");
    std::fs::copy(fixture("bench/vectordbbench_result.json"), &result).unwrap();
    let before = std::fs::read(&result).unwrap();
    let output = with_args(&[
        "bench",
        "plot",
        result.to_str().unwrap(),
        "-o",
        result.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_error(
        &output,
        2,
        "is both the input and the output",
        "plot over its input",
    );
    assert_eq!(std::fs::read(&result).unwrap(), before);

    let chart = dir.path().join("c.svg");
    let mut child = with_args(&[
        "bench",
        "plot",
        "-",
        "-o",
        chart.to_str().unwrap(),
        "--title",
        "a\u{1}b\u{7f}c",
    ])
    .stdin(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &before).unwrap();
    assert!(child.wait().unwrap().success());
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(
        svg.contains("a b c"),
        "the title's control characters as spaces"
    );
    assert!(!svg
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r'));
}

#[test]
fn options_knowable_before_the_load_are_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let folder = folder.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--plot", "c.svg", "--stages", "serial"],
            "the stages run none",
        ),
        (
            &["--index-option", "similarity_function=dot_product"],
            "choose it as the metric",
        ),
        (
            &[
                "--index-option",
                "optimize_for=recall",
                "--index-option",
                "optimize_for=latency",
            ],
            "given twice",
        ),
        (
            &["--index-option", "optimize_for=speed"],
            "takes recall or latency",
        ),
        (
            &["--index-option", "source_model=BERT"],
            "no index option source_model",
        ),
        (&["--index-wait", "0"], "the index wait must be 1 to"),
    ];
    for (extra, needle) in cases {
        let output = bench(folder, extra);
        assert_error(&output, 2, needle, needle);
    }
}

#[test]
fn hostile_folders_are_refused_before_connecting() {
    let cases = [
        ("text_ids", "column 'id' has type Utf8; expected int64"),
        ("repeated_ids", "train-01-of-2.parquet: row 0 repeats id 15"),
        ("nan_query", "query 1 has NaN at element 2"),
        ("zero_query", "query 2 is all zeros"),
        ("empty_test", "test.parquet: no query in it"),
    ];
    for (name, needle) in cases {
        let folder = fixture(&format!("bench/hostile/{name}"));
        let output = bench(folder.to_str().unwrap(), &["--k", "5"]);
        assert_error(&output, 1, needle, name);
    }
}

#[test]
fn a_zero_padded_count_and_float64_vectors_are_a_dataset() {
    for name in ["padded_count", "float64"] {
        let folder = fixture(&format!("bench/hostile/{name}"));
        let output = bench(folder.to_str().unwrap(), &["--k", "5"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // Every check passed: the run ends at the connection to a port nothing listens on.
        assert!(stderr.contains("127.0.0.1:1"), "{name}: {stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("train_00.parquet"), b"").unwrap();
    let output = bench(dir.path().to_str().unwrap(), &[]);
    assert_error(
        &output,
        1,
        "skipped train_00.parquet",
        "a file named almost as a training file",
    );
}

#[test]
fn streaming_options_that_cannot_work_are_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let folder = folder.to_str().unwrap();
    let cases: [(&[&str], &str); 12] = [
        (
            &["--streaming", "--insert-rate", "150"],
            "a multiple of 100",
        ),
        (&["--streaming", "--insert-rate", "0"], "--insert-rate"),
        (&["--insert-rate", "500"], "--streaming"),
        (&["--search-stages", "50"], "--streaming"),
        (
            &["--streaming", "--search-stages", "50,100"],
            "0 to 99, not 100",
        ),
        (
            &["--streaming", "--search-stages", "80,50,80"],
            "80 is given twice",
        ),
        (
            &["--streaming", "--search-stages", "half"],
            "expected percentages",
        ),
        (&["--streaming", "--duration", "5"], "--duration"),
        (&["--streaming", "--read-duration", "0"], "--read-duration"),
        (&["--streaming", "--stages", "serial"], "its own stages"),
        (&["--streaming", "--rounds", "2"], "runs once"),
        (&["--streaming", "--plot", "c.svg"], "Streaming page"),
    ];
    for (extra, needle) in cases {
        let output = bench(folder, extra);
        assert_error(&output, 2, needle, &format!("{extra:?}"));
    }
    let output = bench(folder, &["--streaming", "--filter", "int:0.5"]);
    assert_error(&output, 2, "no filter", "a filtered streaming case");
    let output = bench(folder, &["--streaming", "--sweep", "k=5,10"]);
    assert_error(&output, 2, "runs once", "a streaming sweep");
}

#[test]
fn sweeps_that_cannot_run_are_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let folder = folder.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["--sweep", "k"], "KEY=V1,V2"),
        (&["--sweep", "ef_search=10,20"], "no sweep key 'ef_search'"),
        (&["--sweep", "k=5,,10"], "empty value"),
        (&["--sweep", "k=5,10,5"], "repeats the value 5"),
        (&["--sweep", "k=5", "--sweep", "k=10"], "given twice"),
        (&["--sweep", "k=10,1001"], "k=1001: k must be 1 to 1000"),
        (
            &["--sweep", "maximum_node_connections=16,-1"],
            "maximum_node_connections takes a positive integer",
        ),
        (
            &[
                "--sweep",
                "construction_beam_width=50,100",
                "--stages",
                "serial,concurrent",
            ],
            "needs the index stage",
        ),
        (
            &[
                "--metric",
                "cosine",
                "--sweep",
                "similarity_function=cosine,euclidean",
            ],
            "both swept and set",
        ),
    ];
    for (extra, needle) in cases {
        let output = bench(folder, extra);
        assert_error(&output, 2, needle, needle);
    }
}

#[test]
fn load_rounds_that_cannot_run_are_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let folder = folder.to_str().unwrap();
    let output = bench(folder, &["--rounds-load", "2", "--sweep", "k=5,10"]);
    assert_error(&output, 2, "without a sweep", "load rounds with a sweep");
    let output = bench(folder, &["--rounds-load", "2", "--stages", "serial"]);
    assert_error(
        &output,
        2,
        "must include table and load",
        "load rounds without a load",
    );
    let output = bench(folder, &["--rounds-load", "0"]);
    assert_error(&output, 2, "0 is not in 1..", "no load");
}
