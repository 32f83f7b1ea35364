//! `remove_temporaries`, alone in its test binary: it removes the temporary files of every open
//! output of the process, which would take those of tests running beside it.

use std::io::Write;

use cqlwire_output::{remove_temporaries, Output};
use cqlwire_testkit::temporaries;

#[test]
fn open_outputs_lose_their_temporary_files_and_destinations_stay_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.bin");
    std::fs::write(&old, b"old content").unwrap();
    let new = dir.path().join("new.bin");
    let mut outputs = Vec::new();
    for path in [&old, &new] {
        let mut output = Output::open(Some(path), true).unwrap();
        output.write_all(b"partial").unwrap();
        output.flush().unwrap();
        outputs.push(output);
    }
    assert_eq!(temporaries(dir.path()).len(), 2);

    remove_temporaries();

    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    assert_eq!(std::fs::read(&old).unwrap(), b"old content");
    assert!(!new.exists());
    // Dropping them afterwards finds nothing to remove and does not fail.
    drop(outputs);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
