//! `cqlwire load` against servers that misbehave, played by the test itself: no Cassandra needed.

use crate::common::{assert_error, fixture, run, with_args};
use std::net::TcpListener;
use std::time::Duration;

/// A server that accepts connections and never answers: the load gives up within its request
/// timeout, saying so, instead of waiting for the driver's keepalive.
#[test]
fn a_server_that_never_answers_fails_within_the_request_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        let mut connections = Vec::new();
        for connection in listener.incoming().take(8) {
            match connection {
                Ok(connection) => connections.push(connection),
                Err(_) => break,
            }
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    let input = fixture("convert/sample/train.npy");
    let output = run(
        with_args(&[
            "load",
            input.to_str().unwrap(),
            "--hosts",
            &address,
            "--table",
            "ks.t",
            "--row-number-column",
            "id",
            "--timeout",
            "2",
        ]),
        b"",
    );
    assert_error(&output, 1, "no answer within 2.0 s", "silent server");
    drop(held);
}

/// The input flags `load` shares with `convert` keep their checks: `--rows` and `--shard` exclude
/// each other, a bad `--input-format` names the formats, and a rejects file that is the input is
/// refused; all before any connection.
#[test]
fn the_shared_input_flags_are_checked_before_connecting() {
    let input = fixture("convert/sample/train.npy");
    let load = |extra: &[&str]| load_unreachable(&input, extra);
    let both = load(&["--rows", "0..5", "--shard", "1/2"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
    let format = load(&["--input-format", "csv"]);
    assert_eq!(format.status.code(), Some(2), "{format:?}");
    assert!(String::from_utf8_lossy(&format.stderr).contains("npy"));
    let before = std::fs::read(&input).unwrap();
    let rejects = load(&["--rejects", input.to_str().unwrap()]);
    assert_error(&rejects, 2, "is the input", "--rejects INPUT");
    assert!(String::from_utf8_lossy(&rejects.stderr).contains("(--rejects)"));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

/// `cqlwire load INPUT` into `ks.t` on a port where nothing listens, with `extra` flags.
fn load_unreachable(input: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "load",
        input.to_str().unwrap(),
        "--hosts",
        "127.0.0.1:1",
        "--table",
        "ks.t",
    ];
    args.extend_from_slice(extra);
    run(with_args(&args), b"")
}

/// `--batch` and `--batch-bytes` out of bounds are usage errors naming the flag, before any
/// connection (the bounds are the library's).
#[test]
fn batch_bounds_are_checked_before_connecting() {
    let input = fixture("convert/sample/train.npy");
    for (extra, needle) in [
        (["--batch", "0"], "(--batch)"),
        (["--batch", "1025"], "1 to 1024 rows"),
        (["--batch-bytes", "0"], "(--batch-bytes)"),
        (["--batch-bytes", "268435457"], "(--batch-bytes)"),
    ] {
        assert_error(
            &load_unreachable(&input, &extra),
            2,
            needle,
            &format!("{extra:?}"),
        );
    }
}
