//! The hidden `cqlwire generate`: completions and man pages made from the clap definitions.

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
    for page in [
        "cqlwire",
        "cqlwire-convert",
        "cqlwire-compress",
        "cqlwire-decompress",
        "cqlwire-decode",
        "cqlwire-encode",
    ] {
        let text = std::fs::read_to_string(target.join(format!("{page}.1"))).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let convert = std::fs::read_to_string(target.join("cqlwire-convert.1")).unwrap();
    assert!(
        convert.contains("on\\-null"),
        "convert's page lacks its flags"
    );
    assert!(
        !target.join("cqlwire-generate.1").exists(),
        "the hidden command has no page"
    );
}
