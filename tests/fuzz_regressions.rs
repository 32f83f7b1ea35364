//! Replays every input the fuzzers found (`fixtures/fuzz-regressions/<target>/`) through the same
//! checks the fuzz targets run (`fuzz/src/checks.rs`): no panic, the targets' invariants, and no
//! single allocation above 64 MiB.

#[path = "../fuzz/src/checks.rs"]
mod checks;

use std::path::Path;

#[global_allocator]
static ALLOCATOR: checks::CappedAllocator = checks::CappedAllocator;

/// Runs one target's check on each file of its regression folder; returns how many ran.
fn replay(target: &str, check: checks::Check) -> usize {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fuzz-regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return 0;
    };
    let mut paths: Vec<_> = entries
        .map(|e| e.expect("readable folder").path())
        .collect();
    paths.sort();
    let failing: Vec<_> = paths
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("readable regression input");
            std::panic::catch_unwind(|| check(&data)).is_err()
        })
        .collect();
    assert!(
        failing.is_empty(),
        "{target}: these inputs fail again: {failing:?}"
    );
    paths.len()
}

#[test]
fn every_found_input_passes_its_targets_checks() {
    let replayed: usize = checks::TARGETS
        .iter()
        .map(|&(target, check)| replay(target, check))
        .sum();
    println!("replayed {replayed} inputs");
}

#[test]
fn every_regression_folder_names_a_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz-regressions");
    for entry in std::fs::read_dir(root).expect("fixtures/fuzz-regressions exists") {
        let name = entry.expect("readable folder").file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        assert!(
            checks::TARGETS.iter().any(|&(target, _)| target == name),
            "fixtures/fuzz-regressions/{name} is not a fuzz target"
        );
    }
}
