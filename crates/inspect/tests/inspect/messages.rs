//! Message bodies against cassandra-driver 3.30.1: requests its encoder wrote (fixtures/messages/
//! cases.jsonl) and every message of two real Apache Cassandra 5.0.9 sessions (fixtures/messages/
//! v{4,5}-none.jsonl, cut from fixtures/inspect's captures), checked against what the driver's decoder
//! read and against the values the driver sent and got back (fixtures/inspect/v{4,5}-none.json).

use cqlwire_codec::hex;
use cqlwire_inspect::RenderMessage;
use cqlwire_protocol::message::{Body, DecodeContext, Message, Registry};
use serde_json::{json, Value as Json};
use std::collections::HashMap;

/// The fields of a case line.
fn header(case: &Json) -> (u8, u8, u8, Vec<u8>) {
    let byte = |key: &str| case[key].as_u64().expect(key) as u8;
    let body = hex::parse(case["body"].as_str().expect("body")).expect("hex body");
    (byte("version"), byte("flags"), byte("opcode"), body)
}

/// Asserts that every key of `expected` has the same value in `actual` (objects compared by their
/// keys recursively, arrays element by element).
fn assert_subset(actual: &Json, expected: &Json, context: &str) {
    match (actual, expected) {
        (Json::Object(actual), Json::Object(expected)) => {
            for (key, value) in expected {
                let found = actual.get(key).unwrap_or(&Json::Null);
                assert_subset(found, value, &format!("{context}.{key}"));
            }
        }
        (Json::Array(actual), Json::Array(expected)) => {
            assert_eq!(actual.len(), expected.len(), "{context}: {actual:?}");
            for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
                assert_subset(a, e, &format!("{context}[{i}]"));
            }
        }
        _ => assert_eq!(actual, expected, "{context}"),
    }
}

/// Decodes a case with no registry: the whole body is used and `explain` agrees, its lines within
/// the body.
fn decode_alone(case: &Json) -> (&str, Message) {
    let name = case["name"].as_str().unwrap();
    let (version, flags, opcode, body) = header(case);
    let registry = Registry::new();
    let context = DecodeContext {
        version,
        flags,
        opcode,
        registry: &registry,
        request: None,
    };
    let message = Message::decode(&context, &body).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(message.trailing, 0, "{name}");
    let explained = Message::explain(&context, &body);
    assert_eq!(explained.result.as_ref(), Ok(&message), "{name}");
    for line in &explained.lines {
        assert!(line.offset + line.len <= body.len(), "{name}: {line:?}");
    }
    (name, message)
}

#[test]
fn requests_written_by_the_driver_decode_to_what_it_was_given() {
    let cases = cqlwire_testkit::jsonl_cases("messages");
    assert!(cases.len() >= 30);
    for case in &cases {
        let (name, message) = decode_alone(case);
        let json = message.to_json();
        assert_subset(&json["body"], &case["expect"], name);
        if name.starts_with("query traced") {
            assert_eq!(
                json["flags"],
                json!(["TRACING", "CUSTOM_PAYLOAD"]),
                "{name}"
            );
            assert_eq!(
                json["custom_payload"],
                json!({"k1": "0x00ff", "empty": "0x"}),
                "{name}"
            );
        }
        assert!(
            !message.gist().is_empty() || matches!(message.body, Body::Options),
            "{name}"
        );
    }
}

/// The messages of one capture, decoded in capture order with a registry and the pending requests
/// of each connection; every response is checked against the driver's reading of it.
fn decode_capture(name: &str) -> Vec<(Json, Message, Option<Message>)> {
    let lines = cqlwire_testkit::jsonl(&format!("messages/{name}.jsonl"));
    let mut registries: HashMap<u64, Registry> = HashMap::new();
    let mut pending: HashMap<(u64, i64), Message> = HashMap::new();
    let mut decoded = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let conn = line["conn"].as_u64().unwrap();
        let stream = line["stream"].as_i64().unwrap();
        let (version, flags, opcode, body) = header(line);
        let registry = registries.entry(conn).or_default();
        let request = if line["dir"] == "response" {
            pending.remove(&(conn, stream))
        } else {
            None
        };
        let context = DecodeContext {
            version,
            flags,
            opcode,
            registry,
            request: request.as_ref(),
        };
        let message =
            Message::decode(&context, &body).unwrap_or_else(|e| panic!("{name} message {i}: {e}"));
        assert_eq!(message.trailing, 0, "{name} message {i}");
        let explained = Message::explain(&context, &body);
        assert_eq!(
            explained.result.as_ref(),
            Ok(&message),
            "{name} message {i}"
        );
        if line["dir"] == "request" {
            assert!(!message.is_response());
            pending.insert((conn, stream), message.clone());
        } else {
            assert!(message.is_response());
            check_against_driver(&message, &line["driver"], &format!("{name} message {i}"));
            registry.learn(request.as_ref(), &message);
        }
        decoded.push((line.clone(), message, request));
    }
    decoded
}

/// Compares a response with what the driver's decoder read from the same bytes.
fn check_against_driver(message: &Message, driver: &Json, context: &str) {
    let json = message.to_json();
    assert_eq!(json["opcode"], driver["opcode"], "{context}");
    let body = &json["body"];
    if let Some(warnings) = driver.get("warnings") {
        assert_eq!(&json["warnings"], warnings, "{context}");
    }
    if let Some(id) = driver.get("tracing_id") {
        assert_eq!(&json["tracing_id"], id, "{context}");
    }
    if let Some(payload) = driver.get("custom_payload") {
        assert_eq!(&json["custom_payload"], payload, "{context}");
    }
    match driver["opcode"].as_str().unwrap() {
        "ERROR" => {
            assert_eq!(body["code"], driver["code"], "{context}");
            assert_eq!(body["message"], driver["message"], "{context}");
        }
        "RESULT" => {
            assert_eq!(body["kind"], driver["kind"], "{context}");
            match driver["kind"].as_str().unwrap() {
                "Rows" => {
                    let rows = body["rows"].as_array().unwrap();
                    assert_eq!(rows.len() as u64, driver["row_count"].as_u64().unwrap());
                    // Without metadata (and no statement known) the columns are unknown.
                    let names: Vec<&Json> = match body["columns"].as_array() {
                        Some(columns) => columns.iter().map(|c| &c["name"]).collect(),
                        None => driver["column_names"].as_array().unwrap().iter().collect(),
                    };
                    let expected: Vec<&Json> =
                        driver["column_names"].as_array().unwrap().iter().collect();
                    assert_eq!(names, expected, "{context}");
                    if let Some(state) = driver.get("paging_state") {
                        assert_eq!(&body["paging_state"], state, "{context}");
                    }
                }
                "Prepared" => {
                    assert_eq!(body["id"], driver["id"], "{context}");
                    assert_eq!(body["pk_indices"], driver["pk_indices"], "{context}");
                    let names: Vec<&Json> = body["variables"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| &c["name"])
                        .collect();
                    let expected: Vec<&Json> =
                        driver["variables"].as_array().unwrap().iter().collect();
                    assert_eq!(names, expected, "{context}");
                    if let Some(id) = driver.get("result_metadata_id") {
                        assert_eq!(&body["result_metadata_id"], id, "{context}");
                    }
                }
                "Set_keyspace" => assert_eq!(body["keyspace"], driver["keyspace"], "{context}"),
                "Schema_change" => {
                    for key in ["change", "target", "keyspace"] {
                        assert_eq!(body[key], driver[key], "{context}: {key}");
                    }
                }
                _ => {}
            }
        }
        "EVENT" => assert_eq!(body["type"], driver["type"], "{context}"),
        "SUPPORTED" => {
            assert_eq!(
                body["options"]["CQL_VERSION"], driver["cql_versions"],
                "{context}"
            )
        }
        _ => {}
    }
}

/// The rows of a Rows response as JSON.
fn rows_of(message: &Message) -> Json {
    message.to_json()["body"]["rows"].clone()
}

/// Checks every EXECUTE's bound values and every page of rows against what the driver sent and got
/// back in the session (fixtures/inspect/<name>.json).
fn check_session(name: &str) {
    let decoded = decode_capture(name);
    let session: Json = serde_json::from_str(
        &std::fs::read_to_string(cqlwire_testkit::fixture(&format!("inspect/{name}.json")))
            .unwrap(),
    )
    .unwrap();
    // Each request with its response, in capture order of the responses.
    let exchanges: Vec<(&Message, &Message)> = decoded
        .iter()
        .filter_map(|(_, response, request)| request.as_ref().map(|r| (r, response)))
        .collect();
    let mut used = vec![false; exchanges.len()];
    let mut take = |matches: &dyn Fn(&Message) -> bool| -> (&Message, &Message) {
        let index = (0..exchanges.len())
            .find(|&i| !used[i] && matches(exchanges[i].0))
            .expect("a matching request");
        used[index] = true;
        exchanges[index]
    };
    let (mut executes, mut pages, mut batches) = (0, 0, 0);
    for statement in session["statements"].as_array().unwrap() {
        let query = statement["query"].as_str().unwrap_or_default();
        let page_count = statement["pages"].as_array().map_or(1, |p| p.len().max(1));
        match statement["kind"].as_str().unwrap() {
            "execute" => {
                let id = hex::parse(statement["id"].as_str().unwrap()).unwrap();
                for page in 0..page_count {
                    let (request, response) =
                        take(&|m| matches!(&m.body, Body::Execute(e) if e.id == id));
                    let json = request.to_json();
                    assert_eq!(json["body"]["query"], query);
                    if page == 0 {
                        assert_eq!(
                            json["body"]["values"], statement["values"],
                            "{name}: {query}"
                        );
                    }
                    executes += 1;
                    if let Some(expected) = statement["pages"].get(page) {
                        assert_eq!(
                            rows_of(response),
                            expected["rows"],
                            "{name}: {query} page {page}"
                        );
                        let columns = &response.to_json()["body"]["columns"];
                        for (c, e) in columns
                            .as_array()
                            .unwrap()
                            .iter()
                            .zip(statement["columns"].as_array().unwrap())
                        {
                            assert_eq!(c["name"], e["name"]);
                            assert_eq!(c["type"], e["type"], "{name}: {query}");
                        }
                        pages += 1;
                    }
                }
            }
            "query" => {
                for page in 0..page_count {
                    let (_, response) =
                        take(&|m| matches!(&m.body, Body::Query(q) if q.query == query));
                    if let Some(expected) = statement["pages"].get(page) {
                        assert_eq!(
                            rows_of(response),
                            expected["rows"],
                            "{name}: {query} page {page}"
                        );
                        pages += 1;
                    }
                    if let Some(error) = statement.get("error") {
                        let body = &response.to_json()["body"];
                        assert_eq!(body["code"], error["code"], "{name}: {query}");
                        assert_eq!(body["message"], error["message"], "{name}: {query}");
                    }
                    if let Some(id) = statement.get("tracing_id") {
                        assert_eq!(&response.to_json()["tracing_id"], id);
                    }
                }
            }
            "batch" => {
                let (request, response) = take(&|m| matches!(&m.body, Body::Batch(_)));
                let json = request.to_json();
                assert_eq!(json["body"]["type"], statement["type"]);
                assert_subset(&json["body"]["statements"], &statement["statements"], name);
                assert_eq!(
                    response.to_json()["warnings"],
                    statement["warnings"],
                    "{name}"
                );
                batches += 1;
            }
            _ => {}
        }
    }
    assert_eq!(batches, 1, "{name}: BATCHes checked");
    assert_eq!(executes, 15, "{name}: EXECUTEs checked");
    // Every EXECUTE of the capture found its PREPARED result: every bound value has a name and a type.
    let all_executes: Vec<Json> = exchanges
        .iter()
        .filter(|(request, _)| matches!(request.body, Body::Execute(_)))
        .map(|(request, _)| request.to_json())
        .collect();
    assert_eq!(all_executes.len(), 15, "{name}");
    for execute in &all_executes {
        for value in execute["body"]["values"].as_array().unwrap() {
            assert!(
                value.get("name").is_some() && value.get("type").is_some(),
                "{value}"
            );
            assert!(value.get("bytes").is_none(), "{value}");
        }
    }
    assert!(pages >= 12, "{name}: only {pages} pages checked");
}

#[test]
fn a_real_v4_session_decodes_value_by_value() {
    check_session("v4-none");
}

#[test]
fn a_real_v5_session_decodes_value_by_value() {
    check_session("v5-none");
}

#[test]
fn every_truncation_of_a_real_body_is_an_error_with_an_offset_inside_it() {
    let lines = cqlwire_testkit::jsonl("messages/v5-none.jsonl");
    let mut checked = 0;
    for line in lines
        .iter()
        .filter(|l| l["body"].as_str().unwrap().len() <= 3000)
    {
        let (version, flags, opcode, body) = header(line);
        let registry = Registry::new();
        let context = DecodeContext {
            version,
            flags,
            opcode,
            registry: &registry,
            request: None,
        };
        if Message::decode(&context, &body).is_err() {
            continue; // an EXECUTE's values need no registry; nothing else should fail
        }
        for cut in 0..body.len() {
            let Err(error) = Message::decode(&context, &body[..cut]) else {
                continue; // e.g. a string list cut after its last item leaves a shorter valid body
            };
            assert!(error.offset <= cut, "{error} (cut at {cut})");
            assert!(
                error.message.contains("truncated")
                    || error.message.contains("exceeds")
                    || error.message.contains("needs"),
                "{error}"
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} truncations failed");
}

#[test]
fn counts_larger_than_the_body_are_refused_before_anything_is_allocated() {
    // A Rows result claiming 2^31-1 rows of one int column, and a QUERY claiming 65535 values.
    let rows =
        hex::parse("00000002 00000001 00000001 0001 6b 0001 74 0001 78 0009 7fffffff").unwrap();
    let error = Message::decode(
        &DecodeContext {
            version: 4,
            flags: 0,
            opcode: 0x08,
            registry: &Registry::new(),
            request: None,
        },
        &rows,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "row count 2147483647 needs at least 8589934588 bytes but only 0 are left at byte 23"
    );
    let query = hex::parse("00000001 78 0001 01 ffff 00000001").unwrap();
    let error = Message::decode(
        &DecodeContext {
            version: 4,
            flags: 0,
            opcode: 0x07,
            registry: &Registry::new(),
            request: None,
        },
        &query,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "value count 65535 needs at least 262140 bytes but only 4 are left at byte 8"
    );
}

/// A registry that knows prepared id 0xabcd as `a int, b text` returning `a int, b text`, and an
/// EXECUTE of it (for Rows results without metadata).
fn statement_for_rows_without_metadata(version: u8) -> (Registry, Message) {
    // The statement's own bytes only set up the registry; what is checked is the Rows decoding.
    let mut registry = Registry::new();
    let prepared = hex::parse(&format!(
        "00000004 0002abcd {} 00000001 00000000 {} 0001 6b 0001 74 \
         00000001 00000002 0001 6b 0001 74 0001 61 0009 0001 62 000d",
        if version >= 5 { "0001 56" } else { "" },
        if version >= 4 { "00000000" } else { "" },
    ))
    .unwrap();
    let prepared = Message::decode(
        &DecodeContext {
            version,
            flags: 0,
            opcode: 0x08,
            registry: &registry,
            request: None,
        },
        &prepared,
    )
    .unwrap();
    registry.learn(None, &prepared);
    let execute = hex::parse(&format!(
        "0002abcd {} 0001 {}",
        if version >= 5 { "0001 56" } else { "" },
        if version >= 5 { "00000000" } else { "00" }
    ))
    .unwrap();
    let execute = Message::decode(
        &DecodeContext {
            version,
            flags: 0,
            opcode: 0x0a,
            registry: &registry,
            request: None,
        },
        &execute,
    )
    .unwrap();
    (registry, execute)
}

#[test]
fn responses_written_with_the_drivers_notation_writers_decode_as_the_driver_reads_them() {
    let cases = cqlwire_testkit::jsonl("messages/responses.jsonl");
    assert!(cases.len() >= 80);
    for case in &cases {
        let (name, message) = decode_alone(case);
        check_against_driver(&message, &case["driver"], name);
        assert_subset(&message.to_json()["body"], &case["expect"], name);
        assert!(!message.gist().is_empty(), "{name}");
    }
}

#[test]
fn rows_without_metadata_take_the_executed_statements_columns() {
    let cases = cqlwire_testkit::jsonl("messages/responses.jsonl");
    for version in 3..=5u8 {
        let case = cases
            .iter()
            .find(|c| c["name"] == format!("rows without metadata v{version}"))
            .unwrap();
        let (_, flags, opcode, body) = header(case);
        let alone = Message::decode(
            &DecodeContext {
                version,
                flags,
                opcode,
                registry: &Registry::new(),
                request: None,
            },
            &body,
        )
        .unwrap();
        let json = alone.to_json();
        assert_eq!(json["body"]["columns"], Json::Null);
        assert_eq!(json["body"]["rows"], json!([["0x00000007", "0x78"]]));
        let (registry, execute) = statement_for_rows_without_metadata(version);
        let paired = Message::decode(
            &DecodeContext {
                version,
                flags,
                opcode,
                registry: &registry,
                request: Some(&execute),
            },
            &body,
        )
        .unwrap();
        let json = paired.to_json();
        assert_eq!(json["body"]["rows"], json!([[7, "x"]]));
        assert_eq!(json["body"]["columns"][1]["name"], "b");
    }
}

#[test]
fn a_v5_rows_result_with_changed_metadata_updates_the_statement() {
    let cases = cqlwire_testkit::jsonl("messages/responses.jsonl");
    let case = cases
        .iter()
        .find(|c| c["name"] == "rows of custom, udt and tuple types v5")
        .unwrap();
    let (version, flags, opcode, body) = header(case);
    let (mut registry, execute) = statement_for_rows_without_metadata(version);
    let rows = Message::decode(
        &DecodeContext {
            version,
            flags,
            opcode,
            registry: &registry,
            request: Some(&execute),
        },
        &body,
    )
    .unwrap();
    registry.learn(Some(&execute), &rows);
    let statement = registry.get(&[0xab, 0xcd]).unwrap();
    assert_eq!(
        statement.result_metadata_id.as_deref(),
        Some(&[0x0f, 0x0e][..])
    );
    let names: Vec<&str> = statement.columns.iter().map(|c| c.name).collect();
    assert_eq!(names, ["v", "d", "u", "tp"]);
}
