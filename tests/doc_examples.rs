//! The `$ cqlwire …` examples of README.md's decode / encode and errors sections and of `decode --help`
//! and `encode --help` run through the binary and print exactly what the documentation shows.

use std::path::Path;
use std::process::Command;

/// One example: the command line (after `$ `) and the lines shown after it.
struct Example {
    command: String,
    expected: String,
}

/// The examples in `text`: each `$ ` line (joined with following lines while it ends with `\`), and
/// the lines after it up to the next `$ ` line, an empty line or the end of a code block.
fn examples(text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut lines = text.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let Some(first) = line.strip_prefix("$ ") else {
            continue;
        };
        let mut command = first.to_string();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap_or_default());
        }
        let mut expected = String::new();
        while let Some(next) = lines.next_if(|l| !l.starts_with("$ ") && !l.is_empty()) {
            if next == "```" {
                break;
            }
            expected.push_str(next);
            expected.push('\n');
        }
        found.push(Example { command, expected });
    }
    found
}

/// The text between the heading `start` and the next heading of the same level.
fn section<'t>(readme: &'t str, start: &str) -> &'t str {
    let from = readme.find(start).unwrap_or_else(|| panic!("no {start:?}"));
    let rest = &readme[from + start.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// Runs `example` with `sh` in an empty folder, the binary first on PATH; compares standard output
/// and standard error (interleaved as a terminal shows them) with what is shown.
fn check(example: &Example, source: &str) {
    let binary = Path::new(env!("CARGO_BIN_EXE_cqlwire"));
    let folder = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {}", example.command))
        .current_dir(folder.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        shown, example.expected,
        "{source}: `{}` prints something else than documented",
        example.command
    );
}

#[test]
fn readme_examples_print_what_they_show() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut count = 0;
    for heading in ["## decode / encode", "## Exit codes and errors"] {
        for example in examples(section(&readme, heading)) {
            check(&example, heading);
            count += 1;
        }
    }
    assert!(count >= 6, "only {count} examples found");
}

#[test]
fn help_examples_print_what_they_show() {
    for command in ["decode", "encode"] {
        let help = Command::new(env!("CARGO_BIN_EXE_cqlwire"))
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        let examples = examples(&help);
        assert!(
            examples.len() >= 3,
            "{command} --help: {} examples",
            examples.len()
        );
        for example in examples {
            check(&example, &format!("{command} --help"));
        }
    }
}
