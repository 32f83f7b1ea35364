//! `cqlwire inspect` through the built binary, on the real Apache Cassandra 5.0.9 captures of
//! fixtures/inspect: every row and bound value equals what cassandra-driver 3.30.1 sent and got
//! back (`<capture>.json`), message counts equal tshark's (wireshark.json) for v4, and crafted
//! damage (gaps, corrupt CRCs, truncated and lying frames) is reported while the run goes on.

use assert_cmd::Command;
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

const CAPTURES: [&str; 5] = ["v4-none", "v4-lz4", "v4-snappy", "v5-none", "v5-lz4"];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/inspect")
        .join(name)
}

fn run(args: &[&str]) -> (String, String) {
    let output = Command::cargo_bin("cqlwire")
        .unwrap()
        .arg("inspect")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The JSON lines of `text`; each must be exactly what serde_json prints for the document it
/// holds (inspect writes them straight, without serde_json).
fn json_lines(text: &str) -> Vec<Json> {
    text.lines()
        .map(|l| {
            let json: Json = serde_json::from_str(l).unwrap();
            assert_eq!(json.to_string(), l, "not as serde_json prints it");
            json
        })
        .collect()
}

/// `inspect --format json` of a capture (decrypted with its `<capture>.keylog` when it has one).
fn inspect_json(capture: &str, extra: &[&str]) -> Vec<Json> {
    let path = fixture(&format!("{capture}.pcap"));
    let key_log = fixture(&format!("{capture}.keylog"));
    let mut args = vec![path.to_str().unwrap(), "--format", "json"];
    if key_log.exists() {
        args.extend_from_slice(&["--tls-keylog", key_log.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    json_lines(&run(&args).0)
}

/// A request and the response paired with it by connection and stream id.
struct Exchange {
    request: Json,
    response: Option<Json>,
}

fn exchanges(messages: &[Json]) -> Vec<Exchange> {
    let mut out: Vec<Exchange> = Vec::new();
    let mut pending: HashMap<(String, i64), usize> = HashMap::new();
    // A TLS connection's line names it; its messages follow.
    for m in messages.iter().filter(|m| m.get("tls").is_none()) {
        assert!(
            m.get("problem").is_none(),
            "problem in a healthy capture: {m}"
        );
        let key = (
            m["conn"].as_str().unwrap().to_string(),
            m["stream"].as_i64().unwrap(),
        );
        if m["dir"] == "request" {
            pending.insert(key, out.len());
            out.push(Exchange {
                request: m.clone(),
                response: None,
            });
        } else if let Some(i) = pending.remove(&key) {
            out[i].response = Some(m.clone());
        }
    }
    out
}

/// The next exchange at or after `*at` whose request has `opcode` and satisfies `matches`.
fn next<'a>(
    all: &'a [Exchange],
    at: &mut usize,
    opcode: &str,
    matches: impl Fn(&Json) -> bool,
) -> &'a Exchange {
    let found = (*at..all.len())
        .find(|&i| all[i].request["opcode"] == opcode && matches(&all[i].request["body"]))
        .unwrap_or_else(|| panic!("no {opcode} after exchange {at}"));
    *at = found + 1;
    &all[found]
}

fn check_response(statement: &Json, response: &Json, page: Option<&Json>) {
    if let Some(error) = statement.get("error") {
        assert_eq!(response["opcode"], "ERROR");
        assert_eq!(response["body"]["code"], error["code"]);
        assert_eq!(response["body"]["message"], error["message"]);
        return;
    }
    if let Some(page) = page {
        assert_eq!(response["body"]["kind"], "Rows", "{statement}");
        assert_eq!(
            response["body"]["rows"], page["rows"],
            "{}",
            statement["query"]
        );
        let columns: Vec<Json> = response["body"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::json!({"name": c["name"], "type": c["type"]}))
            .collect();
        assert_eq!(
            Json::Array(columns),
            statement["columns"],
            "{}",
            statement["query"]
        );
    }
    // A page's own warnings (none: an empty list), else the statement's.
    let warnings = page
        .and_then(|p| p.get("warnings"))
        .or(statement.get("warnings"));
    match warnings.and_then(Json::as_array) {
        Some(none) if none.is_empty() => assert!(response.get("warnings").is_none()),
        Some(_) => assert_eq!(response.get("warnings"), warnings),
        None => {}
    }
    if let Some(id) = statement.get("tracing_id") {
        assert_eq!(&response["tracing_id"], id);
    }
}

/// Walks the driver's statements through the exchanges of `inspect` with `extra` arguments;
/// returns (rows, bound values) compared.
fn compare_with_driver(capture: &str, extra: &[&str]) -> (usize, usize) {
    let driver: Json = serde_json::from_str(
        &std::fs::read_to_string(fixture(&format!("{capture}.json"))).unwrap(),
    )
    .unwrap();
    let all = exchanges(&inspect_json(capture, extra));
    let (mut rows, mut values) = (0, 0);
    let mut at = 0;
    for statement in driver["statements"].as_array().unwrap() {
        let query = &statement["query"];
        let kind = statement["kind"].as_str().unwrap();
        let pages = statement.get("pages").and_then(Json::as_array);
        let page_count = pages.map_or(1, Vec::len);
        for p in 0..page_count {
            let exchange = match kind {
                "query" => next(&all, &mut at, "QUERY", |b| &b["query"] == query),
                "prepare" => next(&all, &mut at, "PREPARE", |b| &b["query"] == query),
                "execute" => next(&all, &mut at, "EXECUTE", |b| b["id"] == statement["id"]),
                "batch" => next(&all, &mut at, "BATCH", |_| true),
                // The SASL PLAIN token the driver sent (shown with --show-secrets).
                "login" => next(&all, &mut at, "AUTH_RESPONSE", |b| {
                    b["token"] == statement["token"]
                }),
                other => panic!("unknown kind {other}"),
            };
            let body = &exchange.request["body"];
            match kind {
                "execute" => {
                    assert_eq!(&body["query"], query);
                    assert_eq!(body["values"], statement["values"], "{query}");
                    values += statement["values"].as_array().unwrap().len();
                }
                "batch" => {
                    assert_eq!(body["type"], statement["type"]);
                    let ours = body["statements"].as_array().unwrap();
                    let theirs = statement["statements"].as_array().unwrap();
                    assert_eq!(ours.len(), theirs.len());
                    for (o, t) in ours.iter().zip(theirs) {
                        assert_eq!(o["query"], t["query"]);
                        if let Some(v) = t.get("values") {
                            assert_eq!(&o["values"], v);
                            values += v.as_array().unwrap().len();
                        }
                    }
                }
                "query" => {
                    if let Some(payload) = statement.get("custom_payload") {
                        assert_eq!(&exchange.request["custom_payload"], payload);
                    }
                    if let Some(size) = statement.get("page_size") {
                        assert_eq!(&body["page_size"], size);
                    }
                }
                "prepare" if statement.get("error").is_none() => {
                    let response = exchange.response.as_ref().unwrap();
                    assert_eq!(response["body"]["id"], statement["id"]);
                }
                "login" if statement.get("error").is_none() => {
                    let response = exchange.response.as_ref().unwrap();
                    assert_eq!(response["opcode"], "AUTH_SUCCESS");
                }
                _ => {}
            }
            let response = exchange.response.as_ref().expect("answered");
            let page = pages.map(|pages| &pages[p]);
            check_response(statement, response, page);
            rows += page.map_or(0, |p| p["rows"].as_array().unwrap().len());
        }
    }
    (rows, values)
}

#[test]
fn every_row_and_bound_value_equals_the_drivers() {
    for capture in CAPTURES {
        check_every_value_equals_the_drivers(capture, &[]);
    }
}

/// Every row and bound value of `capture` (`inspect` with `extra` arguments) equals the driver's
/// JSON, and none of it was skipped.
pub(crate) fn check_every_value_equals_the_drivers(capture: &str, extra: &[&str]) {
    let (rows, values) = compare_with_driver(capture, extra);
    // Every statement of the driver's JSON was walked: nothing skipped.
    let driver = std::fs::read_to_string(fixture(&format!("{capture}.json"))).unwrap();
    let driver: Json = serde_json::from_str(&driver).unwrap();
    let (mut their_rows, mut their_values) = (0, 0);
    for s in driver["statements"].as_array().unwrap() {
        for page in s
            .get("pages")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            their_rows += page["rows"].as_array().unwrap().len();
        }
        if s["kind"] == "execute" {
            their_values += s["values"].as_array().unwrap().len();
        }
        for b in s
            .get("statements")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            their_values += b.get("values").and_then(Json::as_array).map_or(0, Vec::len);
        }
    }
    assert_eq!((rows, values), (their_rows, their_values), "{capture}");
    assert!(rows > 0 && values > 0);
}

/// Messages per direction and opcode, and error codes.
fn counts(
    messages: &[Json],
) -> (
    BTreeMap<String, BTreeMap<String, u64>>,
    BTreeMap<String, u64>,
) {
    let mut by_dir: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for m in messages {
        let dir = m["dir"].as_str().unwrap().to_string();
        let op = m["opcode"].as_str().unwrap().to_string();
        *by_dir
            .entry(dir)
            .or_default()
            .entry(op.clone())
            .or_default() += 1;
        if op == "ERROR" {
            let code = format!("0x{:04x}", m["body"]["code"].as_i64().unwrap());
            *errors.entry(code).or_default() += 1;
        }
    }
    (by_dir, errors)
}

#[test]
fn message_counts_and_error_codes_equal_tsharks() {
    let wireshark: Json =
        serde_json::from_str(&std::fs::read_to_string(fixture("wireshark.json")).unwrap()).unwrap();
    // And the plaintext v4 session with a login (secrets_session.py).
    for capture in CAPTURES.into_iter().chain(["secrets-v4-none"]) {
        let messages = inspect_json(capture, &[]);
        let (by_dir, errors) = counts(&messages);
        let theirs = &wireshark[format!("{capture}.pcap")];
        if capture.contains("v4") {
            assert_eq!(
                serde_json::to_value(&by_dir).unwrap(),
                theirs["cql_messages"],
                "{capture}"
            );
            assert_eq!(
                serde_json::to_value(&errors).unwrap(),
                theirs["error_codes"],
                "{capture}"
            );
        } else {
            // tshark finds no v5 message; ours must be consistent: every request answered once,
            // the three errors of session.py, as many messages as the v4 capture of the same
            // compression variant has requests for the session.
            let all = exchanges(&messages);
            assert!(
                all.iter().all(|e| e.response.is_some()),
                "{capture}: unanswered request"
            );
            let responses = messages.iter().filter(|m| m["dir"] == "response").count();
            let events = by_dir["response"].get("EVENT").copied().unwrap_or(0) as usize;
            assert_eq!(responses - events, all.len(), "{capture}");
            let v4: BTreeMap<String, u64> =
                serde_json::from_value(wireshark["v4-none.pcap"]["error_codes"].clone()).unwrap();
            assert_eq!(errors, v4, "{capture}");
        }
    }
}

#[test]
fn text_has_one_line_per_message_with_gist_and_latency() {
    for capture in CAPTURES {
        let path = fixture(&format!("{capture}.pcap"));
        let (text, _) = run(&[path.to_str().unwrap()]);
        let messages = inspect_json(capture, &[]);
        assert_eq!(text.lines().count(), messages.len());
        let version = &capture[1..2];
        for (line, m) in text.lines().zip(&messages) {
            let arrow = if m["dir"] == "request" { " > " } else { " < " };
            assert!(line.contains(arrow), "{line}");
            assert!(
                line.contains(&format!(" v{version} s{} ", m["stream"])),
                "{line}"
            );
            assert!(line.contains(m["opcode"].as_str().unwrap()), "{line}");
            if m.get("latency_ms").is_some() {
                assert!(line.ends_with(" ms)"), "{line}");
            }
        }
        // The errors of session.py, with their message.
        assert!(text.contains("Syntax_error (0x2000): line 1:0 no viable alternative"));
        assert!(text.contains("null is not supported inside collections"));
    }
}

#[test]
fn explain_shows_the_header_and_every_item_with_offsets() {
    for capture in CAPTURES {
        let path = fixture(&format!("{capture}.pcap"));
        let (text, _) = run(&[
            path.to_str().unwrap(),
            "--format",
            "explain",
            "--opcode",
            "EXECUTE",
        ]);
        let headers = text.lines().filter(|l| l.contains("  header: v")).count();
        let messages = inspect_json(capture, &["--opcode", "EXECUTE"]);
        assert_eq!(headers, messages.len());
        assert!(!text.contains("error:"), "{capture}");
        // The vectors session.py bound, as CQL literals.
        assert!(text.contains("vector<float, 4>"), "{capture}");
        // A compressed v4 body is explained as decompressed, its offsets counted from its start
        // (they have no place in the stream); every other body's offsets follow its header's.
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let Some(at) = line.find("  header: v") else {
                continue;
            };
            let header_offset: usize = line[..at]
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            // The body's first line (a message without a decodable body has none).
            let next = lines.peek().and_then(|l| l.split_whitespace().next());
            let Some(first_item) = next.and_then(|word| word.parse::<usize>().ok()) else {
                continue;
            };
            if line.contains("\"compression\"") {
                assert!(line.contains("body decompressed to"), "{capture}: {line}");
                assert_eq!(first_item, 0, "{capture}: {line}");
            } else if !line.contains("v5 segment") {
                assert_eq!(first_item, header_offset + 9, "{capture}: {line}");
            }
        }
    }
}

#[test]
fn stats_count_statements_errors_and_opcodes() {
    let driver: Json =
        serde_json::from_str(&std::fs::read_to_string(fixture("v4-lz4.json")).unwrap()).unwrap();
    let path = fixture("v4-lz4.pcap");
    let (text, _) = run(&[path.to_str().unwrap(), "--stats", "--format", "json"]);
    let stats: Json = serde_json::from_str(&text).unwrap();
    let statements = stats["statements"].as_array().unwrap();
    // The INSERT into `everything`: executed as often as the driver says, no error.
    let insert = driver["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "execute")
        .unwrap();
    let executions = driver["statements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "execute" && s["query"] == insert["query"])
        .count();
    let ours = statements
        .iter()
        .find(|s| s["statement"] == insert["query"])
        .unwrap();
    assert_eq!(ours["count"], executions);
    assert_eq!(ours["errors"], 0);
    assert!(ours["p50_ms"].as_f64().unwrap() <= ours["max_ms"].as_f64().unwrap());
    // The refused statements.
    for s in driver["statements"].as_array().unwrap() {
        if s.get("error").is_some() && s["kind"] == "query" {
            let ours = statements
                .iter()
                .find(|o| o["statement"] == s["query"])
                .unwrap();
            assert_eq!(ours["errors"], 1);
        }
    }
    let (by_dir, errors) = counts(&inspect_json("v4-lz4", &[]));
    for o in stats["opcodes"].as_array().unwrap() {
        assert_eq!(
            by_dir[o["dir"].as_str().unwrap()][o["opcode"].as_str().unwrap()],
            o["count"]
        );
    }
    assert_eq!(serde_json::to_value(errors).unwrap(), stats["error_codes"]);
}

#[test]
fn redact_hides_values_and_keeps_types_lengths_nulls_and_unsets() {
    for capture in CAPTURES {
        let plain = inspect_json(capture, &[]);
        let redacted = inspect_json(capture, &["--redact"]);
        assert_eq!(plain.len(), redacted.len());
        let mut hidden = 0;
        for (p, r) in plain.iter().zip(&redacted) {
            if p["opcode"] == "EXECUTE" {
                for (pv, rv) in p["body"]["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(r["body"]["values"].as_array().unwrap())
                {
                    assert_eq!(pv["name"], rv["name"]);
                    assert_eq!(pv["type"], rv["type"]);
                    match &pv["value"] {
                        Json::Null => assert!(rv["value"].is_null()),
                        v if v.get("$unset").is_some() => assert_eq!(&rv["value"], v),
                        _ => {
                            assert_eq!(rv["value"]["$redacted"].as_str().unwrap().len(), 8);
                            hidden += 1;
                        }
                    }
                }
            }
            if p["body"]["kind"] == "Rows" {
                assert_eq!(p["body"]["columns"], r["body"]["columns"]);
            }
        }
        assert!(hidden > 100, "{capture}: {hidden}");
        // Nothing of session.py's text values is left.
        let text = redacted.iter().map(Json::to_string).collect::<String>();
        assert!(
            !text.contains("vector \\u00fcn") && !text.contains("vector ün"),
            "{capture}"
        );
    }
    // Stable under one key: equal bytes give equal hashes, across captures.
    let key = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(key.path(), [7u8; 32]).unwrap();
    let key = key.path().to_str().unwrap();
    let a = inspect_json("v4-none", &["--redact-key", key, "--opcode", "EXECUTE"]);
    let b = inspect_json("v5-lz4", &["--redact-key", key, "--opcode", "EXECUTE"]);
    let first =
        |v: &[Json]| v.iter().find(|m| m["opcode"] == "EXECUTE").unwrap()["body"]["values"].clone();
    assert_eq!(first(&a), first(&b));
}

#[test]
fn filters_select_connections_streams_opcodes_and_slow_pairs() {
    let all = inspect_json("v5-lz4", &[]);
    let conn = all.iter().find(|m| m["opcode"] == "EXECUTE").unwrap()["conn"]
        .as_str()
        .unwrap()
        .to_string();
    let only = inspect_json("v5-lz4", &["--conn", &conn]);
    assert_eq!(
        only.len(),
        all.iter().filter(|m| m["conn"] == conn.as_str()).count()
    );
    let stream = inspect_json("v5-lz4", &["--stream", "5"]);
    assert!(!stream.is_empty() && stream.iter().all(|m| m["stream"] == 5));
    let executes = inspect_json("v5-lz4", &["--opcode", "execute"]);
    let requests = executes.iter().filter(|m| m["dir"] == "request").count();
    assert!(executes
        .iter()
        .filter(|m| m["dir"] == "request")
        .all(|m| m["opcode"] == "EXECUTE"));
    assert_eq!(executes.len(), 2 * requests);
    // --slower-than: pairs whose latency is at least the threshold, request then response.
    let latencies: Vec<f64> = all
        .iter()
        .filter_map(|m| m["latency_ms"].as_f64())
        .collect();
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let threshold = sorted[sorted.len() / 2];
    let slow = inspect_json(
        "v5-lz4",
        &[
            "--slower-than",
            &format!("{}us", (threshold * 1000.0).ceil()),
        ],
    );
    let expected = latencies
        .iter()
        .filter(|&&l| l * 1000.0 >= (threshold * 1000.0).ceil())
        .count();
    assert_eq!(slow.len(), 2 * expected);
    for pair in slow.chunks(2) {
        assert_eq!(pair[0]["dir"], "request");
        assert_eq!(pair[1]["stream"], pair[0]["stream"]);
    }
}

/// Decodes a crafted capture of fixtures/inspect/hostile (made by fixtures/inspect/generate.py):
/// the messages and the problems, in order.
fn hostile(name: &str) -> (Vec<Json>, Vec<Json>, Json) {
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(fixture("hostile/manifest.json")).unwrap())
            .unwrap();
    let path = fixture(&format!("hostile/{name}.pcap"));
    let (out, err) = run(&[path.to_str().unwrap(), "--format", "json"]);
    let (problems, messages): (Vec<Json>, Vec<Json>) = json_lines(&out)
        .into_iter()
        .partition(|m| m.get("problem").is_some());
    if !problems.is_empty() {
        // The summary counts the problems the JSON lines report ("1 problem", "2 problems").
        let plural = if problems.len() == 1 { "" } else { "s" };
        let summary = format!(", {} problem{plural} reported", problems.len());
        assert!(err.contains(&summary), "{err} lacks {summary:?}");
    }
    (messages, problems, manifest[name].clone())
}

/// The messages of a capture in stream order (connection, direction, offset), without the fields a
/// reordering of packets may change (capture times, latencies), as text.
fn in_stream_order(messages: &[Json]) -> Vec<String> {
    let mut out: Vec<(String, String, u64, String)> = messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            let object = m.as_object_mut().unwrap();
            object.remove("time");
            object.remove("latency_ms");
            let key = |k: &str| m[k].as_str().unwrap().to_string();
            (
                key("conn"),
                key("dir"),
                m["offset"].as_u64().unwrap(),
                m.to_string(),
            )
        })
        .collect();
    out.sort();
    out.into_iter().map(|t| t.3).collect()
}

#[test]
fn retransmitted_segments_decode_as_the_original() {
    let (messages, problems, _) = hostile("retransmit");
    assert!(problems.is_empty(), "{problems:?}");
    let ours = in_stream_order(&messages);
    let original = in_stream_order(&inspect_json("v4-none", &[]));
    assert_eq!(ours.len(), original.len());
    for (a, b) in ours.iter().zip(&original) {
        assert!(a == b, "{a}\n!=\n{b}");
    }
}

#[test]
fn reordered_segments_give_the_same_responses() {
    let (messages, problems, _) = hostile("reorder");
    assert!(problems.is_empty(), "{problems:?}");
    let original = inspect_json("v4-none", &[]);
    let responses = |m: &[Json]| {
        let r: Vec<Json> = m
            .iter()
            .filter(|m| m["dir"] == "response")
            .cloned()
            .collect();
        in_stream_order(&r)
    };
    assert_eq!(messages.len(), original.len());
    assert!(responses(&messages) == responses(&original));
}

#[test]
fn a_tcp_gap_is_reported_once_and_decoding_resumes() {
    let (messages, problems, done) = hostile("gap");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["offset"], done["offset"]);
    assert_eq!(problems[0]["dir"], done["dir"]);
    assert!(problems[0]["problem"].as_str().unwrap().contains("gap of"));
    let original = inspect_json("v4-none", &[]);
    // One segment lost: at most the messages it carried are missing, the rest decode.
    assert!(messages.len() < original.len() && messages.len() + 3 >= original.len());
    assert_eq!(messages.last(), original.last());
}

#[test]
fn an_rst_that_is_not_the_next_byte_is_ignored_and_every_message_decodes() {
    let (messages, problems, done) = hostile("rst-seq0");
    assert_eq!(problems.len(), 1, "{problems:?}");
    let problem = problems[0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("with sequence number 0 outside its stream ignored"),
        "{problem}"
    );
    assert_eq!(done["seq"], 0);
    // The same messages as the capture without the RST (the sequence numbers moved changes none).
    let ours = in_stream_order(&messages);
    let original = in_stream_order(&inspect_json("v4-none", &[]));
    assert_eq!(ours.len(), original.len());
    assert!(ours == original);
}

#[test]
fn data_after_an_rst_that_closed_the_connection_is_reported() {
    let (messages, problems, _) = hostile("rst-then-data");
    let original = inspect_json("v4-none", &[]);
    // The RST is the client's exact next byte: the connection closes there, and what the
    // conversation sent after it is reported, not dropped in silence.
    assert!(messages.len() < original.len());
    assert_eq!(problems.len(), 1, "{problems:?}");
    let problem = problems[0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("after its connection was closed (by an RST or FIN) not decoded"),
        "{problem}"
    );
}

#[test]
fn redact_shows_no_word_of_server_text_it_does_not_know() {
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(fixture("hostile/manifest.json")).unwrap())
            .unwrap();
    let warning = manifest["warning-address"]["warning"].as_str().unwrap();
    assert!(warning.starts_with("Detected partition alice@example.com with"));
    let path = fixture("hostile/warning-address.pcap");
    let path = path.to_str().unwrap();
    // Unredacted, the warning is there as the server sent it.
    let (plain, _) = run(&[path, "--format", "json"]);
    assert!(plain.contains(warning), "the fixture lost its warning");
    for format in ["text", "json", "explain"] {
        let (out, err) = run(&[path, "--redact", "--format", format]);
        for leak in ["alice", "example"] {
            assert!(
                !out.contains(leak) && !err.contains(leak),
                "{format}: {leak} shown"
            );
        }
        // The server's own words stay.
        if format != "text" {
            assert!(out.contains("Detected partition ?:"), "{format}");
        }
    }
}

#[test]
fn a_tls_connection_given_as_raw_streams_is_named_as_tls() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/captures/tls13-aes256gcm-cql");
    let (client, server) = (dir.join("client.bin"), dir.join("server.bin"));
    let (client, server) = (client.to_str().unwrap(), server.to_str().unwrap());
    // Both directions: version, SNI and cipher; one: what its hello says (the ClientHello the
    // server name and the versions offered, the ServerHello the version and cipher).
    for (args, version, sni, cipher) in [
        (
            vec!["--client", client, "--server", server, "--format", "json"],
            "TLS 1.3",
            "cassandra.test",
            "TLS_AES_256_GCM_SHA384",
        ),
        (
            vec!["--raw", client, "--format", "json"],
            "",
            "cassandra.test",
            "",
        ),
        (
            vec!["--raw", server, "--format", "json"],
            "TLS 1.3",
            "",
            "TLS_AES_256_GCM_SHA384",
        ),
    ] {
        let (out, _) = run(&args);
        let lines = json_lines(&out);
        assert!(
            lines.iter().all(|l| l.get("opcode").is_none()),
            "{args:?}: not decrypted"
        );
        let tls = &lines[0]["tls"];
        assert_eq!(
            tls["version"].as_str().unwrap_or_default(),
            version,
            "{args:?}"
        );
        assert_eq!(tls["sni"].as_str().unwrap_or_default(), sni, "{args:?}");
        assert_eq!(
            tls["cipher"].as_str().unwrap_or_default(),
            cipher,
            "{args:?}"
        );
        assert_eq!(tls["decrypted"], false);
    }
}

#[test]
fn corrupt_v5_checksums_are_reported_and_decoding_resumes() {
    let original = inspect_json("v5-none", &[]);
    for (name, what) in [("crc24", "CRC24"), ("crc32", "CRC32")] {
        let (messages, problems, done) = hostile(name);
        assert_eq!(problems.len(), 1, "{name}: {problems:?}");
        let first = &problems[0];
        // At the segment, or at its payload (after the 6-byte header and CRC24).
        let at = first["offset"].as_u64().unwrap();
        let key = if name == "crc24" { "offset" } else { "segment" };
        let segment = done[key].as_u64().unwrap();
        assert!(at == segment || at == segment + 6, "{name}: {at}");
        assert!(first["problem"].as_str().unwrap().contains(what), "{first}");
        assert_eq!(first["dir"], done["dir"]);
        assert!(messages.len() <= original.len(), "{name}");
        assert!(
            messages.len() + 8 >= original.len(),
            "{name}: {}",
            messages.len()
        );
        assert_eq!(messages.last(), original.last(), "{name}");
    }
}

#[test]
fn a_truncated_frame_is_reported_at_its_offset() {
    let (messages, problems, done) = hostile("truncated");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["offset"], done["frame"]);
    assert!(problems[0]["problem"]
        .as_str()
        .unwrap()
        .contains("ends inside a frame"));
    assert!(!messages.is_empty());
}

#[test]
fn frames_that_lie_about_their_length_are_reported_and_skipped() {
    let original = inspect_json("v4-none", &[]);
    for name in ["lying-short", "lying-huge"] {
        let (messages, problems, done) = hostile(name);
        assert!(!problems.is_empty(), "{name}");
        assert!(
            problems.iter().all(|p| p["dir"] == done["dir"]),
            "{problems:?}"
        );
        let frame = done["frame"].as_u64().unwrap();
        let at = problems[0]["offset"].as_u64().unwrap();
        // Reported at the lying header, or where its false end puts the next one.
        assert!(
            at == frame || at == frame + 9 + done["declared"].as_u64().unwrap(),
            "{name}: {at}"
        );
        // The run goes on: the session's last message is there.
        assert_eq!(messages.last(), original.last(), "{name}");
    }
}

/// The two directions of the session connection of a capture, as the capture layer reassembles them.
fn session_streams(capture: &str) -> (Vec<u8>, Vec<u8>, String) {
    use cqlwire_inspect::capture::{Capture, Direction, Event};
    let file = std::fs::File::open(fixture(&format!("{capture}.pcap"))).unwrap();
    let mut streams: HashMap<u64, (Vec<u8>, Vec<u8>, String)> = HashMap::new();
    Capture::new(std::io::BufReader::new(file))
        .unwrap()
        .run(&mut |event| match event {
            Event::Opened { conn, .. } => {
                let label = format!("{}-{}", conn.initiator, conn.responder);
                streams.insert(conn.id, (Vec::new(), Vec::new(), label));
            }
            Event::Data {
                conn,
                direction,
                bytes,
                ..
            } => {
                let s = streams.get_mut(&conn).unwrap();
                match direction {
                    Direction::FromInitiator => s.0.extend_from_slice(bytes),
                    Direction::FromResponder => s.1.extend_from_slice(bytes),
                }
            }
            _ => {}
        })
        .unwrap();
    streams.into_values().max_by_key(|s| s.0.len()).unwrap()
}

/// Messages without what a raw stream cannot know (times, latencies, the connection's label).
fn stripped(messages: &[Json]) -> Vec<Json> {
    messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            for key in ["time", "latency_ms", "conn"] {
                m.as_object_mut().unwrap().remove(key);
            }
            m
        })
        .collect()
}

#[test]
fn raw_and_hex_streams_decode_as_the_capture() {
    for capture in ["v4-snappy", "v5-lz4"] {
        let (c2s, s2c, label) = session_streams(capture);
        let dir = tempfile::tempdir().unwrap();
        let (client, server) = (dir.path().join("c2s.bin"), dir.path().join("s2c.bin"));
        std::fs::write(&client, &c2s).unwrap();
        std::fs::write(&server, &s2c).unwrap();
        let expected: Vec<Json> = inspect_json(capture, &["--conn", &label]);
        let expected = stripped(&expected);
        let args = [
            "--format",
            "json",
            "--client",
            client.to_str().unwrap(),
            "--server",
        ];
        let mut raw = args.to_vec();
        raw.push(server.to_str().unwrap());
        let ours = json_lines(&run(&raw).0);
        assert_eq!(ours.len(), expected.len(), "{capture}");
        // Raw streams have no clock: requests and responses interleave by pairing, so compare
        // each direction in order.
        for dir in ["request", "response"] {
            let pick = |v: &[Json]| -> Vec<Json> {
                stripped(v)
                    .into_iter()
                    .filter(|m| m["dir"] == dir)
                    .collect()
            };
            let (a, b) = (pick(&ours), pick(&expected));
            for (x, y) in a.iter().zip(&b) {
                assert!(x == y, "{capture} {dir}:\n{x}\n!=\n{y}");
            }
        }
        // One direction alone, as hex text.
        let hex: String = c2s.iter().map(|b| format!("{b:02x}")).collect();
        let hex_file = dir.path().join("c2s.hex");
        std::fs::write(&hex_file, hex).unwrap();
        let requests =
            json_lines(&run(&["--format", "json", "--hex", hex_file.to_str().unwrap()]).0);
        let expected_requests = expected.iter().filter(|m| m["dir"] == "request").count();
        assert_eq!(requests.len(), expected_requests, "{capture}");
        assert!(requests.iter().all(|m| m["dir"] == "request"));
    }
}

/// A v4 RESULT Rows frame from the server (stream 1): one column `c` of the type option
/// `option`, `count` rows whose `[value]`s are `values`.
fn rows_frame(option: &[u8], count: usize, values: &[u8]) -> Vec<u8> {
    let string = |s: &str| [&(s.len() as u16).to_be_bytes()[..], s.as_bytes()].concat();
    let mut body = [2i32, 1, 1].map(i32::to_be_bytes).concat();
    body.extend([string("ks"), string("t"), string("c")].concat());
    body.extend(option);
    body.extend((count as i32).to_be_bytes());
    body.extend(values);
    let mut frame = vec![0x84, 0, 0, 1, 0x08];
    frame.extend((body.len() as u32).to_be_bytes());
    frame.extend(body);
    frame
}

#[test]
fn a_frame_near_the_default_limit_decodes_in_bounded_memory() {
    // 15 MiB frames (Cassandra's default native_transport_max_frame_size is 16 MiB) of one blob, of 1.9 M int cells and of
    // 5,000 vector<float, 768> rows: a decoder that keeps a value per cell, or writes a message's
    // JSON whole before writing it out, needs well over the 96 MiB of address space these runs get
    // (the body itself is held twice, as it arrives and decoded).
    let dir = tempfile::tempdir().unwrap();
    let blob_len: usize = 15 << 20;
    let blob: Vec<u8> = (0..blob_len).map(|i| (i * 7 % 251) as u8).collect();
    let ints = (15 << 20) / 8;
    let vector = b"org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 768)";
    let row: Vec<u8> = [&3072i32.to_be_bytes()[..], &[0x3f, 0x80, 0, 0].repeat(768)].concat();
    let rows = (15 << 20) / row.len();
    let cases = [
        (
            "blob",
            rows_frame(
                &[0, 3],
                1,
                &[&(blob_len as i32).to_be_bytes()[..], &blob].concat(),
            ),
            1,
        ),
        (
            "ints",
            rows_frame(&[0, 9], ints, &[0, 0, 0, 4, 0, 0, 0, 7].repeat(ints)),
            ints,
        ),
        (
            "vectors",
            rows_frame(
                &[&[0, 0, 0, vector.len() as u8][..], vector].concat(),
                rows,
                &row.repeat(rows),
            ),
            rows,
        ),
    ];
    let binary = assert_cmd::cargo::cargo_bin("cqlwire");
    for (name, frame, count) in cases {
        let input = dir.path().join(format!("{name}.bin"));
        let output = dir.path().join(format!("{name}.json"));
        std::fs::write(&input, frame).unwrap();
        let run = std::process::Command::new("bash")
            .arg("-c")
            .arg("ulimit -v 98304; \"$1\" inspect --server \"$2\" --format json > \"$3\"")
            .arg("bash")
            .arg(&binary)
            .arg(&input)
            .arg(&output)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let messages = json_lines(&std::fs::read_to_string(&output).unwrap());
        assert_eq!(messages.len(), 1, "{name}");
        let rows = messages[0]["body"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), count, "{name}");
        let last = &rows[count - 1][0];
        match name {
            "blob" => assert_eq!(last, &format!("0x{}", cqlwire_codec::hex::encode(&blob))),
            "ints" => assert_eq!(last, 7),
            _ => assert_eq!(last, &serde_json::json!(vec![1.0; 768])),
        }
    }
}

#[test]
fn a_conn_that_names_no_connection_is_a_usage_error() {
    let capture = fixture("v4-none.pcap");
    for (conn, says) in [
        ("0", "numbered from 1"),
        ("foo", "neither a connection number nor a label"),
        ("10.0.0.1:1-", "neither a connection number nor a label"),
    ] {
        let output = Command::cargo_bin("cqlwire")
            .unwrap()
            .args(["inspect", "--conn", conn])
            .arg(&capture)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "--conn {conn}: {stderr}");
        assert!(stderr.contains(says), "--conn {conn}: {stderr}");
        assert!(output.stdout.is_empty());
    }
    let capture = capture.to_str().unwrap();
    let (out, _) = run(&[capture, "--conn", "[::1]:1-[::1]:9042"]);
    assert!(
        out.is_empty(),
        "a well-formed label that matches nothing prints nothing"
    );
}

/// A request on a stream id whose earlier request got no response replaces it: both are shown,
/// and no bound is said to be exceeded (18 bytes are far from it).
#[test]
fn a_reused_stream_id_is_no_problem() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("two-options-on-stream-0.bin");
    let options = [4u8, 0, 0, 0, 5, 0, 0, 0, 0];
    std::fs::write(&stream, options.repeat(2)).unwrap();
    let (out, err) = run(&["--raw", stream.to_str().unwrap()]);
    assert_eq!(
        out.lines().filter(|l| l.contains("OPTIONS")).count(),
        2,
        "{out}"
    );
    assert!(!out.contains('!'), "{out}");
    assert!(
        !err.contains("problem") && !err.contains("forgotten"),
        "{err}"
    );
}

/// The two directions of fixtures/messages/refused-bound.*.bin (fixtures/messages/generate.py: the
/// Python driver's bytes for a list<int> [1, None] and a map<text, int> {'a': None}, which write the
/// empty int value inside a collection), in `format`.
fn inspect_refused_bound(format: &str, extra: &[&str]) -> String {
    let messages = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/messages");
    let client = messages.join("refused-bound.c2s.bin");
    let server = messages.join("refused-bound.s2c.bin");
    let mut args = vec!["--format", format, "--client"];
    args.push(client.to_str().expect("utf-8 path"));
    args.push("--server");
    args.push(server.to_str().expect("utf-8 path"));
    args.extend(extra);
    run(&args).0
}

const LIST_NOTE: &str = "bound value #1 (v): Apache Cassandra refuses an empty element in a list \
                         (it keeps no empty value inside a collection) at byte 12 (element 1)";
const MAP_NOTE: &str = "statement 0, bound value #1 (m): Apache Cassandra refuses an empty value \
                        in a map (it keeps no empty value inside a collection) at byte 9 (map value #0)";

#[test]
fn bound_values_cassandra_refuses_get_a_note_in_every_format() {
    for format in ["text", "explain"] {
        for extra in [&[][..], &["--redact"][..]] {
            let out = inspect_refused_bound(format, extra);
            let notes: Vec<&str> = out
                .lines()
                .filter_map(|line| line.strip_prefix("  note: "))
                .collect();
            assert_eq!(notes, [LIST_NOTE, MAP_NOTE], "{format} {extra:?}:\n{out}");
            // Each note follows its request (and, in explain, the request's explanation).
            let lines: Vec<&str> = out.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.ends_with(LIST_NOTE))
                .expect("note");
            let request = lines[..at]
                .iter()
                .rev()
                .find(|l| l.contains(" v4 s"))
                .expect("a message line before the note");
            assert!(request.contains(" EXECUTE 0x1234 "), "{request}");
        }
    }
    let messages = json_lines(&inspect_refused_bound("json", &[]));
    let noted: Vec<(&str, Vec<&str>)> = messages
        .iter()
        .filter_map(|m| {
            let notes = m.get("notes")?.as_array()?;
            Some((
                m["opcode"].as_str()?,
                notes.iter().filter_map(Json::as_str).collect(),
            ))
        })
        .collect();
    assert_eq!(
        noted,
        [("EXECUTE", vec![LIST_NOTE]), ("BATCH", vec![MAP_NOTE])]
    );
}

#[test]
fn the_scylladb_drivers_probes_in_cqlwires_own_traffic_are_notes_not_errors() {
    // cqlwire load against Apache Cassandra 5.0.9: the driver reads the schema of the keyspace,
    // including two tables only ScyllaDB has (as its source, scylla 1.9 metadata/fetching.rs,
    // writes them), and the server refuses both with 0x2200 "table … does not exist".
    let probes = [
        "PREPARE SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces where \
         keyspace_name in ?",
        "PREPARE SELECT keyspace_name, table_name, partitioner FROM system_schema.scylla_tables \
         where keyspace_name in ?",
    ];
    let path = fixture("cqlwire-load-v4-none.pcap");
    let messages = json_lines(&run(&[path.to_str().unwrap(), "--format", "json"]).0);
    let refusals: Vec<&Json> = messages
        .iter()
        .filter(|m| m["opcode"] == "ERROR")
        .map(|m| &m["body"])
        .collect();
    assert_eq!(refusals.len(), 2);
    assert!(refusals.iter().all(|body| body["code"] == 0x2200
        && body["message"]
            .as_str()
            .unwrap()
            .ends_with("does not exist")));

    let (text, _) = run(&[path.to_str().unwrap(), "--stats", "--format", "json"]);
    let stats: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(stats["error_codes"], serde_json::json!({}));
    for s in stats["statements"].as_array().unwrap() {
        assert_eq!(s["errors"], 0, "{s}");
    }
    let noted: Vec<(&str, u64)> = stats["driver_probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["statement"].as_str().unwrap(),
                p["refused"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(noted, [(probes[0], 1), (probes[1], 1)]);

    let (text, _) = run(&[path.to_str().unwrap(), "--stats"]);
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 2, "{text}");
    for (note, probe) in notes.iter().zip(probes) {
        assert!(note.ends_with(probe), "{note}");
        assert!(note.contains("not counted as errors"), "{note}");
    }
    assert!(!text.contains("error    0x2200"), "{text}");
}
