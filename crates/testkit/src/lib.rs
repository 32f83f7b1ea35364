//! What every crate's test suite shares: the repository's `fixtures/` folder, written by the
//! generators there from independent references (the Python driver, NumPy, pyarrow, liblz4, a real
//! Cassandra), and its JSON lines files. A dev-dependency only; never published.

use std::path::{Path, PathBuf};

/// The path of `fixtures/<relative>` in the repository.
pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(relative)
}

/// Every line of `fixtures/<name>/cases.jsonl` (written by that folder's generate.py), parsed.
pub fn jsonl_cases(name: &str) -> Vec<serde_json::Value> {
    jsonl(&format!("{name}/cases.jsonl"))
}

/// Every line of the JSON lines file `fixtures/<relative>`, parsed.
pub fn jsonl(relative: &str) -> Vec<serde_json::Value> {
    let path = fixture(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect()
}

/// The names of the temporary outputs (`.cqlwire-*.tmp`) in `dir`.
pub fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".cqlwire-") && name.ends_with(".tmp"))
        .collect()
}
