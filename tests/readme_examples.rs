//! Every `cqlwire …` command shown in README.md and in `cqlwire convert --help` runs, as written and in
//! order (a later one may read what an earlier one wrote, after README's `mkdir -p` lines), from a
//! folder laid out like the repository root (the bundled `fixtures/`), with that folder as HOME, and
//! succeeds.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commands of `text`: lines starting with `cqlwire ` or `$ cqlwire ` (a trailing `\` joins the
/// next line), inside ``` blocks when `fenced`, leaving out usage lines with `[OPTIONS]`-style
/// placeholders.
fn commands(text: &str, fenced: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = text.lines();
    let mut in_block = !fenced;
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        if fenced && line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let line = line.strip_prefix("$ ").unwrap_or(line);
        if line.starts_with("mkdir -p ") {
            found.push(line.to_string());
            continue;
        }
        let Some(command) = line.strip_prefix("cqlwire ") else {
            continue;
        };
        let mut command = format!("cqlwire {command}");
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap_or_default().trim());
        }
        let placeholder =
            command.contains(" [") || command.contains("INPUT") || command.contains("TYPE");
        if !placeholder {
            found.push(command);
        }
    }
    found
}

/// The folder holding the binary under test (put first on PATH so `cqlwire` is it).
fn binary_folder() -> PathBuf {
    common::binary().parent().unwrap().to_path_buf()
}

/// Runs each of `commands` with `sh -c`, in order, in a fresh folder whose `fixtures` is the
/// repository's.
#[cfg(unix)]
fn run_in_root_copy(commands: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(root.join("fixtures"), dir.path().join("fixtures")).unwrap();
    let path = format!(
        "{}:{}",
        binary_folder().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in commands {
        let output = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[cfg(unix)]
#[test]
fn readme_commands_run_on_bundled_fixtures() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let found = commands(&readme, true);
    assert!(found.len() >= 10, "{found:?}");
    run_in_root_copy(&found);
}

#[cfg(unix)]
#[test]
fn convert_help_examples_run_on_bundled_fixtures() {
    let help = common::with_args(&["convert", "--help"]).output().unwrap();
    let found = commands(&String::from_utf8_lossy(&help.stdout), false);
    assert_eq!(found.len(), 5, "{found:?}");
    run_in_root_copy(&found);
}
