//! `cqlwire generate`: completions and man pages made from the clap definitions.

use crate::common;

#[test]
fn completions_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = common::with_args(&["generate", "completions", shell])
            .output()
            .unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for command in ["convert", "compress", "decompress", "decode", "encode"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
        assert!(script.contains("on-null"), "{shell} lacks convert's flags");
    }
    let unknown = common::with_args(&["generate", "completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn man_pages_for_the_tool_and_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("share/man/man1");
    let output = common::with_args(&["generate", "man"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let main = std::fs::read_to_string(target.join("cqlwire.1")).unwrap();
    for command in COMMANDS {
        let text = std::fs::read_to_string(target.join(format!("cqlwire-{command}.1"))).unwrap();
        assert!(text.contains(".TH"), "{command}");
        assert!(
            main.contains(&format!("cqlwire\\-{command}(1)")),
            "cqlwire.1 does not list {command}"
        );
    }
    let convert = std::fs::read_to_string(target.join("cqlwire-convert.1")).unwrap();
    assert!(
        convert.contains("on\\-null"),
        "convert's page lacks its flags"
    );
}

/// Every command of the binary.
const COMMANDS: [&str; 11] = [
    "convert",
    "load",
    "search",
    "unload",
    "bench",
    "compress",
    "decompress",
    "decode",
    "encode",
    "inspect",
    "generate",
];

#[test]
fn help_lists_every_command() {
    let output = common::with_args(&["--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    let mut expected = COMMANDS.to_vec();
    expected.sort_unstable();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected, "cqlwire --help lists {listed:?}");
}
