//! Replays every input the fuzzers found (`fixtures/fuzz-regressions/<target>/`) through the same
//! checks the fuzz targets run (`fuzz/src/checks/`): no panic, the targets' invariants, no
//! single allocation above 64 MiB, and each target's bound on the live heap (`checks::bounded`).

#[path = "../fuzz/src/capture.rs"]
mod capture;
#[path = "../fuzz/src/checks/mod.rs"]
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

#[test]
fn the_allocator_measures_the_peak_of_live_bytes() {
    // 1 MiB freed, then 2 MiB live together: the peak is 2 MiB, not the 3 MiB allocated.
    let bound = checks::MemoryBound {
        per_input_byte: 0,
        constant: 8 << 20,
        decompressed_per_input_byte: 0,
        retained_per_connection: None,
    };
    let peak = checks::bounded(&[], bound, |_| {
        drop(std::hint::black_box(vec![1u8; 1 << 20]));
        let both = (vec![1u8; 1 << 20], vec![1u8; 1 << 20]);
        std::hint::black_box(&both);
    });
    assert!((2 << 20..(2 << 20) + (64 << 10)).contains(&peak), "{peak}");
    // Work left out of the measure does not count.
    let peak = checks::bounded(&[], bound, |_| {
        checks::unmeasured(|| drop(std::hint::black_box(vec![1u8; 4 << 20])));
    });
    assert!(peak < 64 << 10, "{peak}");
}

#[test]
fn a_bound_grows_with_the_input_and_its_open_connections() {
    let bound = checks::MemoryBound {
        per_input_byte: 2,
        constant: 100,
        decompressed_per_input_byte: 10,
        retained_per_connection: Some(1000),
    };
    assert_eq!(bound.limit(0, 0), 100);
    // The decompressed term, capped by the connections open.
    assert_eq!(bound.limit(50, 1), 100 + 100 + 500);
    assert_eq!(bound.limit(500, 1), 100 + 1000 + 1000);
    assert_eq!(bound.limit(500, 3), 100 + 1000 + 3000);
}
