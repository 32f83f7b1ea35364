//! What `cqlwire inspect` shows of a capture's secrets, through the built binary: passwords masked
//! by default and shown with `--show-secrets`; with `--redact`, in every format and in `--stats`,
//! nothing of a password, token, literal, value, payload, paging state or quoted server text, in
//! text, hex (either case) or base64 — on the real Apache Cassandra 5.0.9 PasswordAuthenticator
//! sessions of fixtures/inspect (secrets_session.py: plaintext v4, and v5 over TLS 1.3 with its key
//! log), on the synthesized capture of fixtures/secrets (see its generate.py: a challenge-response
//! authenticator, which Cassandra does not have) and on the other real captures of
//! fixtures/inspect.

use crate::common::{cqlwire, cqlwire_cmd, fixture};
use serde_json::Value as Json;
use std::collections::HashSet;
use std::path::Path;

const SECRETS_PCAP: &str = "secrets/secrets.pcap";

/// Every way a redacted output is produced: the three formats, and the statistics as text and JSON.
const REDACTED_RUNS: [&[&str]; 5] = [
    &["--format", "text"],
    &["--format", "json"],
    &["--format", "explain"],
    &["--stats"],
    &["--stats", "--format", "json"],
];

/// Runs `cqlwire inspect` on a fixture; its standard output (the run must succeed).
fn inspect(capture: &str, args: &[&str]) -> String {
    let run = cqlwire_cmd()
        .arg("inspect")
        .arg(fixture(capture))
        .args(args)
        .assert()
        .success();
    String::from_utf8(run.get_output().stdout.clone()).unwrap()
}

/// The standard base64 of `bytes` (RFC 4648), to look for a secret a writer may have encoded.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The forms a secret's bytes could take in an output: as text (when it is), JSON-escaped, as in a
/// CQL string literal (quotes doubled), hex in either case, base64, a UUID's text (16 bytes).
fn forms(secret: &[u8]) -> Vec<String> {
    let hex = secret
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    let mut forms = vec![hex.to_uppercase(), hex, base64(secret)];
    if let Ok(uuid) = <[u8; 16]>::try_from(secret) {
        forms.push(uuid::Uuid::from_bytes(uuid).hyphenated().to_string());
    }
    if let Ok(text) = std::str::from_utf8(secret) {
        let escaped = serde_json::to_string(text).unwrap();
        forms.push(escaped.trim_matches('"').to_string());
        forms.push(text.replace('\'', "''"));
        forms.push(text.to_string());
    }
    forms
}

/// Fails when `output` holds any form of any of `secrets`.
fn assert_hides(output: &str, secrets: &[Vec<u8>], what: &str) {
    for secret in secrets {
        for form in forms(secret) {
            assert!(
                !output.contains(&form),
                "{what}: {:?} shows as {form:?}",
                String::from_utf8_lossy(secret)
            );
        }
    }
}

/// `fixtures/secrets/secrets.json`.
fn secrets() -> Json {
    read_json("secrets/secrets.json")
}

/// A JSON file under `fixtures/`.
fn read_json(relative: &str) -> Json {
    serde_json::from_str(&std::fs::read_to_string(fixture(relative)).unwrap()).unwrap()
}

/// The strings of `secrets[key]` as bytes (`0x…` as the bytes they spell).
fn secret_bytes(secrets: &Json, key: &str) -> Vec<Vec<u8>> {
    let bytes = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect(),
        None => s.as_bytes().to_vec(),
    };
    match &secrets[key] {
        Json::String(s) => vec![bytes(s)],
        Json::Array(items) => items.iter().map(|s| bytes(s.as_str().unwrap())).collect(),
        other => panic!("{key}: {other}"),
    }
}

/// Every secret of the synthesized capture: passwords, the user, tokens, literals, values, quotes.
fn every_secret() -> Vec<Vec<u8>> {
    let secrets = secrets();
    [
        "passwords",
        "user",
        "tokens",
        "literals",
        "values",
        "server_quotes",
    ]
    .iter()
    .flat_map(|key| secret_bytes(&secrets, key))
    .collect()
}

/// Fails when a redacted output of `inspect` (every format and the statistics, with `--redact` and
/// with a key file) shows any form of `secrets`, or when its plain output (`--show-secrets`, JSON
/// and explain) lacks one of them (so that the check can fail).
fn assert_redaction_hides(secrets: &[Vec<u8>], inspect: impl Fn(&[&str]) -> String, what: &str) {
    let key = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(key.path(), [0x5a; 32]).unwrap();
    let key = key.path().to_str().unwrap();
    for args in REDACTED_RUNS {
        for redact in [&["--redact"][..], &["--redact-key", key]] {
            let args = [args, redact].concat();
            let output = inspect(&args);
            assert!(output.len() > 500, "{what} {args:?}");
            assert_hides(&output, secrets, &format!("{what} {args:?}"));
        }
    }
    let plain = [
        inspect(&["--show-secrets", "--format", "json"]),
        inspect(&["--show-secrets", "--format", "explain"]),
    ]
    .concat();
    for secret in secrets {
        assert!(
            forms(secret).iter().any(|form| plain.contains(form)),
            "{what}: {:?} is not in the capture",
            String::from_utf8_lossy(secret)
        );
    }
}

#[test]
fn redacted_output_of_every_format_shows_no_secret_of_the_capture() {
    let secrets = every_secret();
    assert!(secrets.len() > 30);
    assert_redaction_hides(&secrets, |args| inspect(SECRETS_PCAP, args), SECRETS_PCAP);
}

#[test]
fn redaction_keeps_the_shape_names_types_and_lengths() {
    let json: Vec<Json> = inspect(SECRETS_PCAP, &["--redact", "--format", "json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let query = |stream: i64| -> String {
        json.iter()
            .find(|m| {
                m["stream"] == stream
                    && m["dir"] == "request"
                    && m["conn"].as_str().unwrap().contains(":40001")
            })
            .unwrap()["body"]["query"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The role statement: its password masked, never tagged; LOGIN's boolean tagged.
    let role = query(3);
    assert!(
        role.starts_with(
            "CREATE ROLE alice WITH PASSWORD = <password: 13 bytes> AND LOGIN = ?boolean:"
        ),
        "{role}"
    );
    // Literals of every kind keep their place; comments go; collections are one placeholder each.
    let insert = query(8);
    for kind in [
        "integer", "text", "float", "blob", "uuid", "duration", "boolean",
    ] {
        assert!(insert.contains(&format!("?{kind}:")), "{kind}: {insert}");
    }
    assert!(insert.starts_with("INSERT INTO ks.people (id, ssn, note, score, photo, token, ttl_d, ok) VALUES (?integer:"), "{insert}");
    assert!(!insert.contains("--"), "{insert}");
    let update = query(9);
    assert!(
        update.contains("SET tags = ?set:") && update.contains("attrs = ?map:"),
        "{update}"
    );
    // Tokens, payloads, paging states and values: a tag of 8 hex digits and the length.
    let tagged = |v: &Json, len: u64| {
        assert_eq!(v["$redacted"].as_str().unwrap().len(), 8, "{v}");
        assert_eq!(v["len"], len, "{v}");
    };
    let auth = json
        .iter()
        .find(|m| m["opcode"] == "AUTH_RESPONSE")
        .unwrap();
    tagged(&auth["body"]["token"], 27);
    let with_payload = json
        .iter()
        .find(|m| m.get("custom_payload").is_some())
        .unwrap();
    tagged(&with_payload["custom_payload"]["tenant"], 18);
    let rows = json.iter().find(|m| m["body"]["kind"] == "Rows").unwrap();
    tagged(&rows["body"]["paging_state"], 17);
    tagged(&rows["body"]["rows"][0][1], 13);
    assert_eq!(rows["body"]["columns"][1]["name"], "ssn");
    assert_eq!(rows["body"]["columns"][1]["type"], "text");
    let warning = rows["warnings"][0].as_str().unwrap();
    assert!(warning.starts_with("Read ?:"), "{warning}");
    let error = json.iter().find(|m| m["opcode"] == "ERROR").unwrap();
    let message = error["body"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid STRING constant (?:") && message.ends_with(" of type int"),
        "{message}"
    );
}

/// The tags of the values of the EXECUTEs of a JSON output, in order.
fn execute_tags(output: &str) -> Vec<Vec<String>> {
    output
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap())
        .filter(|m| m["opcode"] == "EXECUTE")
        .map(|m| {
            m["body"]["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["value"].to_string())
                .collect()
        })
        .collect()
}

#[test]
fn equal_values_share_a_tag_in_a_run_and_a_key_file_makes_runs_comparable() {
    let args = ["--redact", "--format", "json"];
    let first = execute_tags(&inspect(SECRETS_PCAP, &args));
    let second = execute_tags(&inspect(SECRETS_PCAP, &args));
    assert_eq!(first.len(), 2);
    // The two EXECUTEs bind the same values: the same tags within a run.
    assert_eq!(first[0], first[1]);
    assert_ne!(first[0][0], first[0][1]);
    // A new random key each run: other tags.
    assert!(
        first[0].iter().zip(&second[0]).all(|(a, b)| a != b),
        "{first:?} {second:?}"
    );
    // One key file: the same tags, and the same output, run after run.
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, b"0123456789abcdef0123456789abcdef\n").unwrap();
    let keyed = |capture: &str| {
        inspect(
            capture,
            &["--redact-key", key.to_str().unwrap(), "--format", "json"],
        )
    };
    assert_eq!(keyed(SECRETS_PCAP), keyed(SECRETS_PCAP));
    // And across captures: the first EXECUTE of v4-none and of v5-lz4 bind the same values.
    let v4 = execute_tags(&keyed("inspect/v4-none.pcap"));
    let v5 = execute_tags(&keyed("inspect/v5-lz4.pcap"));
    assert_eq!(v4[0], v5[0]);
    // Another key: other tags.
    std::fs::write(&key, [9u8; 40]).unwrap();
    assert_ne!(execute_tags(&keyed("inspect/v4-none.pcap"))[0], v4[0]);
}

#[test]
fn a_short_or_missing_key_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, [1u8; 31]).unwrap();
    for (path, code, says) in [
        (key.as_path(), 2, "holds 31 bytes; a key needs at least 32"),
        (
            Path::new("/nonexistent/key"),
            1,
            "--redact-key /nonexistent/key",
        ),
    ] {
        let output = cqlwire()
            .args(["inspect", "--redact-key"])
            .arg(path)
            .arg(fixture(SECRETS_PCAP))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains(says) && output.stdout.is_empty(),
            "{stderr}"
        );
    }
    let output = cqlwire()
        .args(["inspect", "--redact", "--show-secrets"])
        .arg(fixture(SECRETS_PCAP))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn passwords_are_masked_by_default_and_shown_with_show_secrets() {
    let secrets = secrets();
    let passwords = secret_bytes(&secrets, "passwords");
    let plain_token = &secret_bytes(&secrets, "tokens")[0];
    for format in ["text", "json", "explain"] {
        let masked = inspect(SECRETS_PCAP, &["--format", format]);
        assert_hides(&masked, &passwords, format);
        assert_hides(&masked, std::slice::from_ref(plain_token), format);
        // Masked, not removed: each password's length stands in its place (SASL PLAIN, then the
        // role statements), and the rest shows (the user, the other literals).
        for password in &passwords {
            let mask = format!("<password: {} bytes>", password.len());
            assert!(masked.contains(&mask), "{format}: {mask}");
        }
        assert!(masked.contains("dbAdminUser"), "{format}");
        assert!(masked.contains("123-45-6789"), "{format}");
        let shown = inspect(SECRETS_PCAP, &["--show-secrets", "--format", format]);
        assert!(!shown.contains("<password:"), "{format}");
        for password in &passwords {
            assert!(
                forms(password).iter().any(|form| shown.contains(form)),
                "{format}: {:?}",
                String::from_utf8_lossy(password)
            );
        }
    }
    let stats = inspect(SECRETS_PCAP, &["--stats"]);
    assert_hides(&stats, &passwords[1..], "--stats");
    assert!(stats.contains("CREATE USER bob WITH PASSWORD <password: 13 bytes> SUPERUSER"));
}

#[test]
fn redacted_statistics_group_each_statement_under_its_redacted_text() {
    let stats: Json = serde_json::from_str(&inspect(
        SECRETS_PCAP,
        &["--redact", "--stats", "--format", "json"],
    ))
    .unwrap();
    let statements = stats["statements"].as_array().unwrap();
    // The SELECT ran twice (two pages): one statement, one tag, count 2 and one error.
    let select = statements
        .iter()
        .find(|s| {
            s["statement"]
                .as_str()
                .unwrap()
                .starts_with("SELECT id, ssn FROM ks.people WHERE ssn = ?text:")
        })
        .unwrap();
    assert_eq!(select["count"], 2);
    assert_eq!(select["errors"], 1);
    let executes = statements
        .iter()
        .find(|s| s["statement"] == "INSERT INTO ks.people (id, ssn) VALUES (?, ?)")
        .unwrap();
    assert_eq!(executes["count"], 2);
}

/// The text values (with a space, digit or non-ASCII character, at least 6 characters) the driver
/// bound and read back in a real capture (its `<capture>.json`), but the addresses of the
/// connection.
fn real_text_values(capture: &str) -> Vec<Vec<u8>> {
    let path = fixture(&format!("inspect/{capture}.json"));
    let session: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found = HashSet::new();
    fn walk(v: &Json, found: &mut HashSet<String>) {
        match v {
            Json::String(s) => {
                found.insert(s.clone());
            }
            Json::Array(items) => items.iter().for_each(|v| walk(v, found)),
            Json::Object(fields) => fields.values().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    for statement in session["statements"].as_array().unwrap() {
        for value in statement["values"].as_array().into_iter().flatten() {
            walk(&value["value"], &mut found);
        }
        for page in statement["pages"].as_array().into_iter().flatten() {
            walk(&page["rows"], &mut found);
        }
    }
    found
        .into_iter()
        .filter(|s| s.chars().count() >= 6 && s.len() < 200 && !s.starts_with("0x"))
        .filter(|s| {
            s.chars()
                .any(|c| c == ' ' || c.is_ascii_digit() || !c.is_ascii())
        })
        .filter(|s| s != "127.0.0.1")
        .map(String::into_bytes)
        .collect()
}

#[test]
fn redacted_real_captures_show_none_of_their_text_values() {
    for capture in ["v4-none", "v5-lz4"] {
        let values = real_text_values(capture);
        assert!(values.len() > 20, "{capture}: {}", values.len());
        let pcap = format!("inspect/{capture}.pcap");
        let plain = inspect(&pcap, &["--format", "explain"]);
        let shown = values
            .iter()
            .filter(|v| plain.contains(std::str::from_utf8(v).unwrap()))
            .count();
        assert!(shown > 10, "{capture}: {shown}");
        for args in REDACTED_RUNS {
            let output = inspect(&pcap, &[args, &["--redact"][..]].concat());
            for value in &values {
                let text = std::str::from_utf8(value).unwrap();
                assert!(!output.contains(text), "{capture} {args:?}: {text:?}");
            }
        }
    }
}

/// The real Apache Cassandra 5.0.9 PasswordAuthenticator sessions of fixtures/inspect
/// (secrets_session.py): plaintext v4, and v5 over TLS 1.3 decrypted with its key log.
const REAL_SECRETS_CAPTURES: [&str; 2] = ["secrets-v4-none", "tls13-secrets-v5-none"];

/// `cqlwire inspect` of a capture of fixtures/inspect, with its key log when it has one.
fn inspect_real(capture: &str, args: &[&str]) -> String {
    let key_log = fixture(&format!("inspect/{capture}.keylog"));
    let mut all = args.to_vec();
    if key_log.exists() {
        all.extend(["--tls-keylog", key_log.to_str().unwrap()]);
    }
    inspect(&format!("inspect/{capture}.pcap"), &all)
}

/// The secrets a real session drew (`<capture>.secrets.json`), with the SASL PLAIN tokens and
/// paging states its driver saw (`<capture>.json`).
fn real_secrets(capture: &str) -> Vec<Vec<u8>> {
    let listed = read_json(&format!("inspect/{capture}.secrets.json"));
    let mut secrets: Vec<Vec<u8>> = [
        "passwords",
        "user",
        "literals",
        "values",
        "payloads",
        "server_quotes",
    ]
    .iter()
    .flat_map(|key| secret_bytes(&listed, key))
    .collect();
    let driver = read_json(&format!("inspect/{capture}.json"));
    let mut seen = Vec::new();
    for statement in driver["statements"].as_array().unwrap() {
        let pages = statement["pages"].as_array().into_iter().flatten();
        let states = pages.filter_map(|p| p.get("paging_state"));
        seen.extend(states.chain(statement.get("token")).cloned());
    }
    secrets.extend(secret_bytes(&serde_json::json!({ "seen": seen }), "seen"));
    secrets
}

/// The passwords a real session used, as text.
fn real_passwords(capture: &str) -> Vec<String> {
    let listed = read_json(&format!("inspect/{capture}.secrets.json"));
    listed["passwords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_value_of_the_real_password_sessions_equals_the_drivers() {
    for capture in REAL_SECRETS_CAPTURES {
        crate::inspect_cli::check_every_value_equals_the_drivers(capture, &["--show-secrets"]);
    }
}

#[test]
fn redacted_real_password_sessions_show_no_secret_in_any_format() {
    for capture in REAL_SECRETS_CAPTURES {
        let secrets = real_secrets(capture);
        assert!(secrets.len() > 50, "{capture}: {}", secrets.len());
        assert_redaction_hides(&secrets, |args| inspect_real(capture, args), capture);
    }
}

#[test]
fn real_password_sessions_mask_every_password_by_default_and_show_it_on_request() {
    for capture in REAL_SECRETS_CAPTURES {
        let passwords = real_passwords(capture);
        let bytes: Vec<Vec<u8>> = passwords.iter().map(|p| p.as_bytes().to_vec()).collect();
        for format in ["text", "json", "explain"] {
            let masked = inspect_real(capture, &["--format", format]);
            assert_hides(&masked, &bytes, &format!("{capture} {format}"));
            for password in &passwords {
                let mask = format!("<password: {} bytes>", password.len());
                assert!(masked.contains(&mask), "{capture} {format}: {mask}");
            }
            let shown = inspect_real(capture, &["--show-secrets", "--format", format]);
            assert!(
                !shown.contains("<password:") && !shown.contains("<masked:"),
                "{capture} {format}"
            );
            for password in &bytes {
                assert!(
                    forms(password).iter().any(|form| shown.contains(form)),
                    "{capture} {format}: {:?}",
                    String::from_utf8_lossy(password)
                );
            }
        }
        for stats in [&["--stats"][..], &["--stats", "--format", "json"]] {
            let masked = inspect_real(capture, stats);
            assert_hides(&masked, &bytes, &format!("{capture} {stats:?}"));
            assert!(masked.contains("<password: "), "{capture} {stats:?}");
        }
    }
}

/// A SASL PLAIN token (`"0x…"`) as `inspect` masks it by default.
fn masked_sasl_plain(token: &Json) -> Json {
    let hex = token.as_str().unwrap().strip_prefix("0x").unwrap();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let parts: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
    let [authzid, user, password] = parts[..] else {
        panic!("not SASL PLAIN: {token}")
    };
    serde_json::json!({"sasl_plain": {
        "authzid": String::from_utf8_lossy(authzid),
        "user": String::from_utf8_lossy(user),
        "password": format!("<password: {} bytes>", password.len()),
    }})
}

#[test]
fn real_password_sessions_differ_from_show_secrets_only_in_masked_passwords() {
    for capture in REAL_SECRETS_CAPTURES {
        let passwords = real_passwords(capture);
        let lines = |args: &[&str]| -> Vec<Json> {
            inspect_real(capture, args)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let masked = lines(&["--format", "json"]);
        let shown = lines(&["--show-secrets", "--format", "json"]);
        assert_eq!(masked.len(), shown.len(), "{capture}");
        let (mut statements, mut tokens, mut errors) = (0, 0, 0);
        for (masked, shown) in masked.iter().zip(&shown) {
            let mut expected = shown.clone();
            // Each password literal of a role statement, quoted or between $$, is its length.
            if let Some(query) = shown["body"]["query"].as_str() {
                let mut query = query.to_string();
                for password in &passwords {
                    let mask = format!("<password: {} bytes>", password.len());
                    for literal in [
                        format!("'{}'", password.replace('\'', "''")),
                        format!("$${password}$$"),
                    ] {
                        if query.contains(&literal) {
                            query = query.replace(&literal, &mask);
                            statements += 1;
                        }
                    }
                }
                expected["body"]["query"] = query.into();
            }
            if shown["opcode"] == "AUTH_RESPONSE" {
                expected["body"]["token"] = masked_sasl_plain(&shown["body"]["token"]);
                tokens += 1;
            }
            // The syntax error quoting a refused password: its quoted spans masked.
            let message = shown["body"]["message"].as_str().unwrap_or_default();
            if passwords.iter().any(|p| message.contains(p.as_str())) {
                let masked_message = masked["body"]["message"].as_str().unwrap();
                assert!(masked_message.contains("<masked: "), "{masked_message}");
                let bytes: Vec<Vec<u8>> = passwords.iter().map(|p| p.as_bytes().to_vec()).collect();
                assert_hides(masked_message, &bytes, capture);
                // Nor any 8 characters of one (the server cuts the password it quotes).
                for password in &passwords {
                    assert!(!masked_message.contains(&password[..8]), "{masked_message}");
                }
                expected["body"]["message"] = masked["body"]["message"].clone();
                errors += 1;
            }
            assert_eq!(masked, &expected, "{capture}");
        }
        // Every role statement with a password, every login (two connections each but the refused
        // one), one syntax error.
        let driver = read_json(&format!("inspect/{capture}.json"));
        let driver = driver["statements"].as_array().unwrap();
        let role_statements = driver
            .iter()
            .filter(|s| {
                let query = s["query"].as_str().unwrap_or_default();
                passwords
                    .iter()
                    .any(|p| query.contains(p.as_str()) || query.contains(&p.replace('\'', "''")))
            })
            .count();
        let logins = driver.iter().filter(|s| s["kind"] == "login").count();
        assert!(role_statements >= 10, "{capture}: {role_statements}");
        assert_eq!(statements, role_statements, "{capture}");
        assert_eq!(tokens, 2 * logins - 1, "{capture}");
        assert_eq!(errors, 1, "{capture}");
    }
}
