//! `cqlwire inspect` on TLS connections, through the built binary, on the pcaps of fixtures/tls/pcaps
//! (the captured TLS connections of fixtures/tls/captures replayed as TCP): connections are named
//! from their hellos, decrypted with their key logs, and the CQL v4 session carried by two of them
//! decodes exactly as fixtures/inspect/v4-none.pcap, where it was captured in plaintext; and on the
//! real Apache Cassandra 5.0.9 TLS sessions of fixtures/inspect (TLS 1.2 with AES-GCM and ChaCha20,
//! TLS 1.3; CQL v4 and v5), every row and bound value equals what the Python driver sent and got.

use crate::common::{fixture, with_args};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;

fn pcap(name: &str) -> PathBuf {
    fixture(&format!("tls/pcaps/{name}.pcap"))
}

fn key_log(capture: &str) -> PathBuf {
    fixture(&format!("tls/captures/{capture}/keylog"))
}

fn capture_json(capture: &str) -> Json {
    let path = fixture(&format!("tls/captures/{capture}/capture.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn manifest() -> Json {
    let text = std::fs::read_to_string(fixture("tls/pcaps/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs `cqlwire inspect ARGS`; it must succeed without panicking.
fn inspect(args: &[&str], key_logs: &[PathBuf]) -> Output {
    let mut all: Vec<String> = vec!["inspect".into()];
    all.extend(args.iter().map(|a| a.to_string()));
    for log in key_logs {
        all.push("--tls-keylog".into());
        all.push(log.to_str().unwrap().into());
    }
    let output = with_args(&all).output().unwrap();
    assert!(
        output.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn json_lines(output: &Output) -> Vec<Json> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn inspect_json(name: &str, key_logs: &[PathBuf]) -> Vec<Json> {
    let path = pcap(name);
    json_lines(&inspect(
        &[path.to_str().unwrap(), "--format", "json"],
        key_logs,
    ))
}

/// The client port of a `client-server` connection label.
fn client_port(conn: &Json) -> String {
    let conn = conn.as_str().unwrap();
    conn.split('-')
        .next()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .into()
}

/// The lines of `lines` by kind: the TLS objects, the messages and the problems, by client port.
#[derive(Default)]
struct ByConn {
    tls: BTreeMap<String, Vec<Json>>,
    messages: BTreeMap<String, Vec<Json>>,
    problems: BTreeMap<String, Vec<Json>>,
}

fn by_conn(lines: &[Json]) -> ByConn {
    let mut out = ByConn::default();
    for line in lines {
        let port = client_port(&line["conn"]);
        let kind = if line.get("tls").is_some() {
            &mut out.tls
        } else if line.get("problem").is_some() {
            &mut out.problems
        } else {
            &mut out.messages
        };
        kind.entry(port).or_default().push(line.clone());
    }
    out
}

/// A message without what depends on where and when it was captured.
fn placeless(message: &Json) -> Json {
    let mut m = message.clone();
    for key in ["conn", "time", "offset", "latency_ms"] {
        m.as_object_mut().unwrap().remove(key);
    }
    m
}

/// The messages of the busiest connection of fixtures/inspect/v4-none.pcap (the session the two
/// CQL TLS captures carry), placeless.
fn plaintext_session() -> Vec<Json> {
    let path = fixture("inspect/v4-none.pcap");
    let lines = json_lines(&inspect(&[path.to_str().unwrap(), "--format", "json"], &[]));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in &lines {
        *counts
            .entry(line["conn"].as_str().unwrap().into())
            .or_default() += 1;
    }
    let busiest = counts.iter().max_by_key(|(_, n)| **n).unwrap().0.clone();
    lines
        .iter()
        .filter(|l| l["conn"] == busiest.as_str())
        .map(placeless)
        .collect()
}

/// The IANA name of a cipher suite number (RFC 8446, RFC 5289, RFC 7905).
fn iana_suite(number: u64) -> &'static str {
    match number {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0xc02f => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xc030 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xcca8 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        other => panic!("suite 0x{other:04x} not in the table"),
    }
}

/// Checks a TLS object against what the capture's libraries reported.
fn check_named(tls: &Json, capture: &str, decrypted: bool) {
    let expected = capture_json(capture);
    let version = match expected["version"].as_str().unwrap() {
        "TLSv1.2" => "TLS 1.2",
        "TLSv1.3" => "TLS 1.3",
        other => panic!("{other}"),
    };
    let tls = &tls["tls"];
    assert_eq!(tls["version"], version, "{capture}");
    assert_eq!(
        tls["cipher"],
        iana_suite(expected["cipher_suite"].as_u64().unwrap()),
        "{capture}"
    );
    assert_eq!(tls["sni"], expected["server_name"], "{capture}");
    assert_eq!(
        tls["hello_retry_request"], expected["hello_retry_request"],
        "{capture}"
    );
    assert!(tls["offered"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == version));
    assert_eq!(tls["decrypted"], decrypted, "{capture}");
}

const CQL_CAPTURES: [(&str, &str); 2] = [
    ("50001", "tls12-aes128gcm-cql"),
    ("50002", "tls13-aes256gcm-cql"),
];

fn cql_key_logs() -> Vec<PathBuf> {
    CQL_CAPTURES.iter().map(|(_, c)| key_log(c)).collect()
}

#[test]
fn decrypted_cql_sessions_decode_exactly_as_their_plaintext_capture() {
    let lines = inspect_json("cql", &cql_key_logs());
    // The TLS object comes first on each connection.
    for (port, _) in CQL_CAPTURES {
        let first = lines
            .iter()
            .find(|l| client_port(&l["conn"]) == port)
            .unwrap();
        assert!(first.get("tls").is_some(), "{first}");
    }
    let conns = by_conn(&lines);
    assert!(conns.problems.is_empty(), "{:?}", conns.problems);
    let plaintext = plaintext_session();
    assert!(plaintext.len() > 100);
    // Port 9042: CQL over TLS by its port; port 9142: CQL by its first decrypted bytes.
    for (port, capture) in CQL_CAPTURES {
        assert_eq!(conns.tls[port].len(), 1, "{capture} named once");
        check_named(&conns.tls[port][0], capture, true);
        let messages: Vec<Json> = conns.messages[port].iter().map(placeless).collect();
        assert_eq!(messages.len(), plaintext.len(), "{capture}");
        for (ours, theirs) in messages.iter().zip(&plaintext) {
            assert_eq!(ours, theirs, "{capture}");
        }
    }
}

#[test]
fn without_a_key_log_tls_is_named_and_nothing_is_parsed_as_cql() {
    let lines = inspect_json("cql", &[]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (line, (port, capture)) in lines.iter().zip(CQL_CAPTURES) {
        assert_eq!(client_port(&line["conn"]), port);
        check_named(line, capture, false);
    }
    let path = pcap("cql");
    let output = inspect(&[path.to_str().unwrap()], &[]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().next().unwrap().ends_with(
        "127.0.0.1:50001-127.0.0.1:9042 TLS 1.2 (offered TLS 1.2), SNI \"cassandra.test\", \
         TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, not decrypted"
    ));
    assert!(output.stderr.is_empty());
}

#[test]
fn text_explain_and_stats_show_the_tls_connections() {
    let path = pcap("cql");
    let path = path.to_str().unwrap();
    for format in ["text", "explain"] {
        let output = inspect(&[path, "--format", format], &cql_key_logs());
        let text = String::from_utf8(output.stdout).unwrap();
        let tls: Vec<&str> = text.lines().filter(|l| l.contains(" TLS 1.")).collect();
        assert_eq!(tls.len(), 2, "{format}");
        assert!(tls[1].contains(
            "127.0.0.1:50002-127.0.0.1:9142 TLS 1.3 (offered TLS 1.3, TLS 1.2), SNI \
             \"cassandra.test\", TLS_AES_256_GCM_SHA384, decrypted"
        ));
    }
    let output = inspect(&[path, "--stats"], &cql_key_logs()[..1]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("2 TLS connections (1 decrypted)"), "{text}");
    let plaintext = fixture("inspect/v4-none.pcap");
    let output = inspect(&[plaintext.to_str().unwrap(), "--stats"], &[]);
    assert!(!String::from_utf8(output.stdout).unwrap().contains("TLS"));
    let output = inspect(&[path, "--stats", "--format", "json"], &cql_key_logs());
    let stats: Json = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        stats["tls"],
        serde_json::json!({"connections": 2, "decrypted": 2})
    );
    // The session's statements, counted once per connection.
    assert!(stats["opcodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["opcode"] == "EXECUTE" && o["count"].as_u64().unwrap() >= 2));
}

const SUITES: [&str; 5] = [
    "tls12-aes256gcm",
    "tls12-chacha20",
    "tls13-chacha20",
    "tls13-aes128gcm-hrr",
    "tls13-chacha20-keyupdate",
];

#[test]
fn every_suite_is_named_from_its_hellos_and_decrypted_off_the_cql_ports() {
    let manifest = manifest();
    let key_logs: Vec<PathBuf> = SUITES.iter().map(|c| key_log(c)).collect();
    for (keys, decrypted) in [(&key_logs[..], true), (&[][..], false)] {
        let conns = by_conn(&inspect_json("suites", keys));
        // Port 443 and application data that is not CQL: named, nothing decoded, nothing wrong.
        assert!(conns.messages.is_empty() && conns.problems.is_empty());
        assert_eq!(conns.tls.len(), SUITES.len());
        for (port, tls) in &conns.tls {
            let capture = manifest["suites.pcap"][port]["capture"].as_str().unwrap();
            assert_eq!(tls.len(), 1);
            check_named(&tls[0], capture, decrypted);
        }
    }
    // On a CQL port the same connections are CQL over TLS: their synthetic data is reported as
    // malformed CQL.
    let path = pcap("suites");
    let lines = json_lines(&inspect(
        &[path.to_str().unwrap(), "--format", "json", "--port", "443"],
        &key_logs,
    ));
    assert!(by_conn(&lines).problems.len() == SUITES.len());
}

/// `capture`'s key log with `edit` applied to each secret line.
fn edited_key_log(
    dir: &tempfile::TempDir,
    capture: &str,
    edit: impl Fn(&str) -> Option<String>,
) -> PathBuf {
    let text = std::fs::read_to_string(key_log(capture)).unwrap();
    let edited: String = text
        .lines()
        .filter_map(|l| {
            if l.starts_with('#') {
                Some(l.into())
            } else {
                edit(l)
            }
        })
        .map(|l| l + "\n")
        .collect();
    let path = dir.path().join(format!("{capture}.keylog"));
    std::fs::write(&path, edited).unwrap();
    path
}

/// A key log line with the last hex digit of its secret changed.
fn wrong_secret(line: &str) -> Option<String> {
    let (head, last) = line.split_at(line.len() - 1);
    Some(format!("{head}{}", if last == "0" { "1" } else { "0" }))
}

#[test]
fn wrong_keys_are_reported_once_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = edited_key_log(&dir, "tls13-aes256gcm-cql", wrong_secret);
    let lines = inspect_json("cql", &[key_log("tls12-aes128gcm-cql"), wrong]);
    let conns = by_conn(&lines);
    check_named(&conns.tls["50002"][0], "tls13-aes256gcm-cql", false);
    assert!(!conns.messages.contains_key("50002"));
    let problems = &conns.problems["50002"];
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0]["problem"]
        .as_str()
        .unwrap()
        .contains("record #0 under the current keys fails authentication"));
    // The other connection decodes whole.
    assert_eq!(conns.messages["50001"].len(), plaintext_session().len());
    assert!(!conns.problems.contains_key("50001"));
}

#[test]
fn a_missing_secret_is_named_with_the_client_random() {
    let dir = tempfile::tempdir().unwrap();
    let missing = edited_key_log(&dir, "tls13-aes256gcm-cql", |l| {
        (!l.starts_with("SERVER_TRAFFIC_SECRET_0")).then(|| l.into())
    });
    let random = std::fs::read_to_string(&missing)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    let conns = by_conn(&inspect_json("cql", &[missing]));
    let problems = &conns.problems["50002"];
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        problems[0]["problem"],
        format!("TLS: the key log has no SERVER_TRAFFIC_SECRET_0 for client random {random}")
    );
    assert!(conns.messages.is_empty());
    // Both application secrets missing: still one line for the connection.
    let neither = edited_key_log(&dir, "tls13-aes256gcm-cql", |l| {
        (!l.contains("_TRAFFIC_SECRET_0")).then(|| l.into())
    });
    let problems = &by_conn(&inspect_json("cql", &[neither])).problems["50002"];
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0]["problem"]
        .as_str()
        .unwrap()
        .contains("TRAFFIC_SECRET_0"));
    // The TLS 1.2 connection has no master secret in this key log.
    assert!(conns.problems["50001"][0]["problem"]
        .as_str()
        .unwrap()
        .starts_with("TLS: the key log has no CLIENT_RANDOM for client random "));
}

#[test]
fn malformed_key_log_lines_are_skipped_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(key_log("tls12-aes128gcm-cql")).unwrap();
    let path = dir.path().join("keys.log");
    std::fs::write(
        &path,
        format!("CLIENT_RANDOM zz\n{text}not a key log line\n"),
    )
    .unwrap();
    let output = inspect(
        &[pcap("cql").to_str().unwrap(), "--format", "json"],
        &[path],
    );
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains(": 2 malformed lines skipped, the first at line 1"));
    // The good lines still decrypt.
    let conns = by_conn(&json_lines(&output));
    assert_eq!(conns.messages["50001"].len(), plaintext_session().len());
}

/// A long-lived key log (here 100,005 other connections before the capture's): the latest 100,000
/// client randoms are kept, the older ones dropped with one warning, and the capture's connections,
/// written last, still decrypt. (More than 100,000 failed the run.)
#[test]
fn a_key_log_of_many_connections_keeps_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(key_log("tls12-aes128gcm-cql")).unwrap();
    let own = text
        .lines()
        .filter(|l| l.starts_with("CLIENT_RANDOM"))
        .count();
    let others: String = (0..100_005u32)
        .map(|i| format!("CLIENT_RANDOM {:064x} {}\n", i, "5a".repeat(48)))
        .collect();
    let path = dir.path().join("keys.log");
    std::fs::write(&path, format!("{others}{text}")).unwrap();
    let output = inspect(
        &[pcap("cql").to_str().unwrap(), "--format", "json"],
        &[path],
    );
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    let dropped = 100_005 + own - 100_000;
    assert!(
        stderr.contains(&format!(
            "key log: {dropped} older client randoms dropped to keep the latest 100000"
        )),
        "{stderr}"
    );
    let conns = by_conn(&json_lines(&output));
    assert_eq!(conns.messages["50001"].len(), plaintext_session().len());
}

#[test]
fn key_material_never_appears_in_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut key_logs = cql_key_logs();
    key_logs.push(edited_key_log(&dir, "tls13-aes256gcm-cql", wrong_secret));
    let secrets: Vec<String> = key_logs
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| l.rsplit(' ').next().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(secrets.len() >= 7);
    let path = pcap("cql");
    let path = path.to_str().unwrap();
    for extra in [
        &["--format", "json"][..],
        &["--format", "explain"],
        &["--stats"],
    ] {
        for keys in [&key_logs[..2], &key_logs[1..]] {
            let mut args = vec![path];
            args.extend_from_slice(extra);
            let output = inspect(&args, keys);
            let all = [output.stdout, output.stderr].concat();
            let all = String::from_utf8_lossy(&all).to_lowercase();
            for secret in &secrets {
                // Any 16 hex digits of a secret.
                assert!(!all.contains(&secret[..16]) && !all.contains(&secret[16..32]));
            }
        }
    }
}

#[test]
fn a_tcp_gap_stops_the_decryption_of_its_direction_once() {
    let dropped = &manifest()["gap.pcap"]["50021"]["dropped"];
    let conns = by_conn(&inspect_json("gap", &[key_log("tls12-aes128gcm-cql")]));
    let problems = &conns.problems["50021"];
    let tls: Vec<&Json> = problems
        .iter()
        .filter(|p| p["problem"].as_str().unwrap().starts_with("TLS"))
        .collect();
    assert_eq!(tls.len(), 1, "{problems:?}");
    assert_eq!(tls[0]["dir"], "response");
    assert_eq!(tls[0]["offset"], dropped["offset"]);
    assert!(tls[0]["problem"].as_str().unwrap().contains("bytes lost"));
    // Every request still decodes (an EXECUTE whose PREPARED response was lost without its
    // statement); the responses before the gap too.
    let plaintext = plaintext_session();
    let requests = |messages: &[Json]| {
        messages
            .iter()
            .filter(|m| m["dir"] == "request")
            .map(|m| (m["stream"].clone(), m["opcode"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(requests(&conns.messages["50021"]), requests(&plaintext));
    let responses = conns.messages["50021"].len() - requests(&plaintext).len();
    assert!(responses > 10 && responses < plaintext.len() - requests(&plaintext).len());
}

#[test]
fn control_characters_of_the_server_name_are_escaped() {
    let expected = manifest()["sni.pcap"]["50031"]["server_name"].clone();
    assert!(expected.as_str().unwrap().contains('\u{1b}'));
    let path = pcap("sni");
    let lines = inspect_json("sni", &[]);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["tls"]["sni"], expected);
    for format in ["text", "explain"] {
        let output = inspect(&[path.to_str().unwrap(), "--format", format], &[]);
        let text = String::from_utf8(output.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains(r#"SNI "db\u{1b}[2J\r\n\u{7f}evil1""#),
            "{text}"
        );
        assert!(!text.trim_end().chars().any(|c| c.is_control()));
    }
}

/// The real Apache Cassandra 5.0.9 sessions of fixtures/inspect over TLS (capture.sh).
const REAL_TLS_CAPTURES: [&str; 4] = [
    "tls12-v4-lz4",
    "tls12-chacha20-v5-none",
    "tls13-v5-none",
    "tls13-v5-lz4",
];

/// The IANA name of the suite OpenSSL names `name` (TLS 1.3 suites have one name).
fn iana_of_openssl(name: &str) -> String {
    match name {
        "ECDHE-RSA-AES128-GCM-SHA256" => iana_suite(0xc02f).into(),
        "ECDHE-RSA-AES256-GCM-SHA384" => iana_suite(0xc030).into(),
        "ECDHE-RSA-CHACHA20-POLY1305" => iana_suite(0xcca8).into(),
        tls13 if tls13.starts_with("TLS_") => tls13.into(),
        other => panic!("{other} not in the table"),
    }
}

#[test]
fn every_value_of_the_real_tls_sessions_equals_the_drivers() {
    for capture in REAL_TLS_CAPTURES {
        // Decrypted with the driver's key log: every row and bound value as the driver's JSON.
        crate::inspect_cli::check_every_value_equals_the_drivers(capture, &[]);
        let path = fixture(&format!("inspect/{capture}.pcap"));
        let key_log = fixture(&format!("inspect/{capture}.keylog"));
        let driver: Json = serde_json::from_str(
            &std::fs::read_to_string(fixture(&format!("inspect/{capture}.json"))).unwrap(),
        )
        .unwrap();
        let version = driver["tls"]["version"]
            .as_str()
            .unwrap()
            .replace("TLSv", "TLS ");
        let cipher = iana_of_openssl(driver["tls"]["cipher"].as_str().unwrap());
        for (keys, decrypted) in [(vec![key_log], true), (vec![], false)] {
            let lines = json_lines(&inspect(
                &[path.to_str().unwrap(), "--format", "json"],
                &keys,
            ));
            let conns = by_conn(&lines);
            assert!(conns.problems.is_empty(), "{capture}: {:?}", conns.problems);
            assert_eq!(conns.messages.is_empty(), !decrypted, "{capture}");
            // The driver's control connection and its session's connection.
            assert_eq!(conns.tls.len(), 2, "{capture}");
            for tls in conns.tls.values() {
                assert_eq!(tls.len(), 1);
                let tls = &tls[0]["tls"];
                assert_eq!(tls["version"], version.as_str(), "{capture}");
                assert_eq!(tls["cipher"], cipher.as_str(), "{capture}");
                assert_eq!(tls["sni"], "cassandra.test");
                assert_eq!(tls["decrypted"], decrypted);
            }
        }
    }
}

/// `inspect --client C --server S --format json` of the two raw directions of `capture`
/// (fixtures/tls/captures/<capture>/client.bin and server.bin, the bytes each side sent).
fn inspect_raw_json(capture: &str, key_logs: &[PathBuf]) -> Vec<Json> {
    let dir = fixture(&format!("tls/captures/{capture}"));
    let client = dir.join("client.bin");
    let server = dir.join("server.bin");
    json_lines(&inspect(
        &[
            "--format",
            "json",
            "--client",
            client.to_str().unwrap(),
            "--server",
            server.to_str().unwrap(),
        ],
        key_logs,
    ))
}

#[test]
fn raw_tls_streams_are_named_as_their_packet_capture_names_them() {
    let captures: Vec<String> = std::fs::read_dir(fixture("tls/captures"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(captures.len(), 7);
    for capture in &captures {
        // Without a key log: named once, first, by what the capture's TLS library reported, and
        // nothing else said of it (the connection is skipped after its ServerHello, as in a pcap).
        let lines = inspect_raw_json(capture, &[]);
        assert_eq!(lines.len(), 1, "{capture}: {lines:?}");
        check_named(&lines[0], capture, false);
        // With its key log: decrypted.
        let lines = inspect_raw_json(capture, &[key_log(capture)]);
        check_named(&lines[0], capture, true);
    }
    // The CQL conversations decode from raw streams as from the pcap of the same bytes: each
    // direction's messages the same, in the same order (raw streams have no times, so where the
    // client sent several requests before the first response, the two directions interleave
    // otherwise).
    let from_pcap = by_conn(&inspect_json("cql", &cql_key_logs()));
    for (port, capture) in CQL_CAPTURES {
        let raw = inspect_raw_json(capture, &[key_log(capture)]);
        assert!(
            raw[1..].iter().all(|l| l.get("problem").is_none()),
            "{capture}"
        );
        for dir in ["request", "response"] {
            let ours: Vec<Json> = raw[1..]
                .iter()
                .filter(|m| m["dir"] == dir)
                .map(placeless)
                .collect();
            let pcap: Vec<Json> = from_pcap.messages[port]
                .iter()
                .filter(|m| m["dir"] == dir)
                .map(placeless)
                .collect();
            assert!(ours.len() > 40, "{capture} {dir}");
            assert!(ours == pcap, "{capture} {dir}: raw and pcap differ");
        }
    }
}
