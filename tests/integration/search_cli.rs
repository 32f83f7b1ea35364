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
        2,
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
        2,
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

/// The results file is open (as a temporary file) while `search` connects; a server that accepts
/// the connection and never answers keeps it connecting. The first SIGINT asks the run to stop, the
/// second ends it at once (exit 130): the temporary file goes with it and no results file is left.
#[test]
fn a_second_interrupt_ends_the_run_and_removes_the_temporary_results_file() {
    use cqlwire_testkit::temporaries;
    use std::time::{Duration, Instant};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and holds every connection, answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("answers.csv");
    let queries = fixture("search/test.npy");
    let mut child = with_args(&["search", queries.to_str().unwrap(), "--table", "ks.t"])
        .arg("--hosts")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--results")
        .arg(&results)
        .args(["--timeout", "60", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while temporaries(dir.path()).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "search ended early");
        assert!(
            Instant::now() < deadline,
            "no temporary results file appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let interrupt = || {
        let sent = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };
    interrupt();
    // Apart, so that the two are seen as two.
    std::thread::sleep(Duration::from_millis(300));
    interrupt();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    assert!(!results.exists());
}

#[test]
fn a_dataset_folder_as_the_exact_training_file_is_refused_before_connecting() {
    let folder = fixture("bench/folder");
    let output = search(&["--exact", folder.to_str().unwrap()]);
    assert_error(&output, 2, "is a folder", "--exact FOLDER");
    assert_error(&output, 2, "neighbors.parquet", "--exact FOLDER");
}

#[test]
fn help_names_the_parquet_ground_truth_and_its_ids() {
    let output = with_args(&["search", "--help"]).output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "neighbors.parquet",
        "neighbors_id",
        "`id` values of VectorDBBench's train files",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}
