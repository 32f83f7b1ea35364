//! The documentation cannot drift: every `cqlwire …` command shown in README.md, in each page of
//! docs/ and in each command's `--help` runs through the built binary, in order (a later one may read
//! what an earlier one wrote), from a folder laid out like the repository root (the bundled
//! `fixtures/`, HOME set to it; a fresh one for each page), and
//! - succeeds, unless what the documentation shows after it ends with a `cqlwire: error:` line, which
//!   it must then print and exit non-zero;
//! - prints exactly the lines shown after a `$ ` command (standard error interleaved, as a terminal
//!   shows it; a command shown without output is only run); a command commented `# (excerpt)` prints the shown lines in that order among others,
//!   one with any other `# (…)` comment (e.g. output re-wrapped to fit) is only run.
//!
//! A command that needs a live cluster (`--hosts`) is parsed rather than run: its hosts become a
//! closed loopback port (no traffic leaves the machine) and it must then fail as a run that found no
//! server or no input does (exit code 1 and a `cqlwire: error:` line), never as a bad command line
//! (exit code 2). `fixtures/load/check_cli.py` runs `load` against a real server.
//!
//! Usage lines (with `[OPTIONS]`-style placeholders) and commands that need a live capture
//! (`tcpdump`) are not run.

use crate::common;

use std::path::Path;
use std::process::Command;

/// One documented command and what the documentation shows it printing (`$ ` commands shown with
/// output only).
struct Example {
    command: String,
    shown: Option<Vec<String>>,
}

/// Where the examples that name cluster hosts are pointed: a loopback port nothing listens on.
const NO_SERVER: &str = "127.0.0.1:1";

/// How an example's output is held to what is shown.
enum Compare {
    Exact,
    Excerpt,
    RunOnly,
}

impl Example {
    fn compare(&self) -> Compare {
        match self.command.rsplit_once("# (") {
            Some((_, comment)) if comment.starts_with("excerpt") => Compare::Excerpt,
            Some(_) => Compare::RunOnly,
            None => Compare::Exact,
        }
    }

    /// Whether the example names cluster hosts (and is only parsed).
    fn needs_cluster(&self) -> bool {
        self.command.contains("--hosts")
    }

    /// The command with every `--hosts` value replaced by [`NO_SERVER`].
    fn without_server(&self) -> String {
        let mut words: Vec<&str> = self.command.split(' ').collect();
        for i in 1..words.len() {
            if words[i - 1] == "--hosts" {
                words[i] = NO_SERVER;
            }
        }
        words.join(" ")
    }

    fn expects_error(&self) -> bool {
        self.shown
            .as_ref()
            .and_then(|lines| lines.last())
            .is_some_and(|last| last.starts_with("cqlwire: error:"))
    }
}

/// The examples of `text`: `$ ` lines mentioning `cqlwire` (with the lines shown after them, up to an
/// empty line, the next `$ ` line or the end of the block), bare lines starting with `cqlwire ` and
/// `mkdir -p` lines; inside ``` blocks when `fenced`. A trailing `\` joins the next line.
fn examples(text: &str, fenced: bool) -> Vec<Example> {
    let mut found = Vec::new();
    let mut lines = text.lines().map(str::trim).peekable();
    let mut in_block = !fenced;
    while let Some(line) = lines.next() {
        if fenced && line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let (dollar, rest) = match line.strip_prefix("$ ") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let runnable = if dollar {
            rest.contains("cqlwire") && !rest.starts_with("tcpdump")
        } else {
            rest.starts_with("cqlwire ") || rest.starts_with("mkdir -p ")
        };
        if !runnable {
            continue;
        }
        let mut command = rest.to_string();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap_or_default());
        }
        let usage =
            command.contains(" [") || command.contains("INPUT") || command.contains(" TYPE");
        let shown = dollar
            .then(|| {
                let mut shown = Vec::new();
                while let Some(next) = lines.next_if(|l| !l.starts_with("$ ") && !l.is_empty()) {
                    if next.starts_with("```") {
                        in_block = !in_block;
                        break;
                    }
                    shown.push(next.to_string());
                }
                shown
            })
            .filter(|shown| !shown.is_empty());
        if !usage {
            found.push(Example { command, shown });
        }
    }
    found
}

/// Runs `examples` with `sh -c`, in order, in a fresh folder whose `fixtures` is the repository's,
/// and holds each to what it shows (see the module doc). `source` names them in failures.
#[cfg(unix)]
fn check(examples: &[Example], source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(root.join("fixtures"), dir.path().join("fixtures")).unwrap();
    let binary = common::binary();
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // A password for the examples that log in (it is never a command-line argument).
    let run = |command: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("exec 2>&1; {command}"))
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("PATH", &path)
            .env("CQLWIRE_PASSWORD", "example")
            .output()
            .unwrap()
    };
    for example in examples {
        let what = format!("{source}: `{}`", example.command);
        if example.needs_cluster() {
            let output = run(&example.without_server());
            let printed = String::from_utf8_lossy(&output.stdout);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{what}, run against no server, exited with {}: {printed}",
                output.status
            );
            assert!(
                printed
                    .lines()
                    .last()
                    .is_some_and(|last| last.starts_with("cqlwire: error:")),
                "{what}, run against no server, printed {printed}"
            );
            continue;
        }
        let output = run(&example.command);
        let printed = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.success(),
            !example.expects_error(),
            "{what} exited with {}: {printed}",
            output.status
        );
        let Some(shown) = &example.shown else {
            continue;
        };
        let printed: Vec<&str> = printed.lines().map(str::trim).collect();
        match example.compare() {
            Compare::Exact => assert_eq!(printed, *shown, "{what} prints something else"),
            Compare::Excerpt => {
                let mut rest = printed.iter();
                for line in shown {
                    assert!(
                        rest.any(|p| p == line),
                        "{what}: the excerpt line {line:?} is not printed (in this order)"
                    );
                }
            }
            Compare::RunOnly => {}
        }
    }
}

#[cfg(unix)]
#[test]
fn readme_examples_run_and_print_what_they_show() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let found = examples(&readme, true);
    assert!(found.len() >= 20, "only {} examples found", found.len());
    assert!(found.iter().filter(|e| e.shown.is_some()).count() >= 10);
    check(&found, "README.md");
}

#[cfg(unix)]
#[test]
fn docs_examples_run_and_print_what_they_show() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut pages: Vec<_> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut shown = 0;
    for page in &pages {
        let found = examples(&std::fs::read_to_string(page).unwrap(), true);
        shown += found.iter().filter(|e| e.shown.is_some()).count();
        check(
            &found,
            &format!("docs/{}", page.file_name().unwrap().to_string_lossy()),
        );
    }
    assert!(shown >= 20, "only {shown} examples with output in docs/");
}

#[cfg(unix)]
#[test]
fn help_examples_run_and_print_what_they_show() {
    for command in [
        "convert",
        "compress",
        "decompress",
        "decode",
        "encode",
        "inspect",
        "load",
        "generate",
    ] {
        let help = common::with_args(&[command, "--help"]).output().unwrap();
        let found = examples(&String::from_utf8_lossy(&help.stdout), false);
        assert!(
            found.len() >= 2,
            "{command} --help: {} examples",
            found.len()
        );
        check(&found, &format!("{command} --help"));
    }
}
