//! A message as the JSON object of `inspect --format json` and as a one-line gist.

use super::requests::QueryParameters;
use super::responses::{ErrorBody, ErrorDetails, Event, Failures};
use super::results::{ResultBody, RowsMetadata, SchemaChange};
use super::types::{BoundValue, Cell, Column, ColumnType};
use super::{consistency_name, flag_names, Body, Message};
use crate::value::json::to_json;
use serde_json::{json, Map, Value as Json};

/// `0x…` hex of bytes.
fn hex(bytes: &[u8]) -> Json {
    Json::String(format!("0x{}", crate::hex::encode(bytes)))
}

/// Hex of optional bytes, JSON null for `None`.
fn hex_or_null(bytes: Option<&[u8]>) -> Json {
    bytes.map_or(Json::Null, hex)
}

/// A cell as `decode --format json` prints its value; raw bytes (unknown type) as `"0x…"`.
fn cell_json(ty: Option<&ColumnType>, cell: &Cell) -> Json {
    match (cell, ty.and_then(ColumnType::cql)) {
        (Cell::Null, _) => Json::Null,
        (Cell::Unset, _) => json!({"$unset": true}),
        (Cell::Value(value), Some(ty)) => to_json(ty, value),
        (Cell::Value(_), None) => Json::Null,
        (Cell::Bytes(bytes), _) => hex(bytes),
    }
}

/// `[{"name", "type", "value"}]`: name and type absent when unknown, `"bytes"` instead of `"value"`
/// when the type is unknown.
fn values_json(values: &[BoundValue]) -> Json {
    Json::Array(
        values
            .iter()
            .map(|v| {
                let mut object = Map::new();
                if let Some(name) = &v.name {
                    object.insert("name".into(), json!(name));
                }
                if let Some(ty) = &v.ty {
                    object.insert("type".into(), json!(ty.to_string()));
                }
                match &v.value {
                    Cell::Bytes(bytes) => object.insert("bytes".into(), hex(bytes)),
                    cell => object.insert("value".into(), cell_json(v.ty.as_ref(), cell)),
                };
                Json::Object(object)
            })
            .collect(),
    )
}

/// `[{"name", "type"}]` (plus keyspace and table).
fn columns_json(columns: &[Column]) -> Json {
    Json::Array(
        columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.ty.to_string(), "keyspace": c.keyspace, "table": c.table})
            })
            .collect(),
    )
}

/// Query parameters into `object`.
fn parameters_json(p: &QueryParameters, object: &mut Map<String, Json>, with_values: bool) {
    object.insert("consistency".into(), json!(consistency_name(p.consistency)));
    object.insert("flags".into(), json!(p.flag_names()));
    if with_values {
        object.insert("values".into(), values_json(&p.values));
    }
    if let Some(size) = p.page_size {
        object.insert("page_size".into(), json!(size));
    }
    if let Some(state) = &p.paging_state {
        object.insert("paging_state".into(), hex_or_null(state.as_deref()));
    }
    if let Some(level) = p.serial_consistency {
        object.insert("serial_consistency".into(), json!(consistency_name(level)));
    }
    if let Some(timestamp) = p.timestamp {
        object.insert("timestamp".into(), json!(timestamp));
    }
    if let Some(keyspace) = &p.keyspace {
        object.insert("keyspace".into(), json!(keyspace));
    }
    if let Some(now) = p.now_in_seconds {
        object.insert("now_in_seconds".into(), json!(now));
    }
}

/// Rows metadata fields into `object`.
fn metadata_json(m: &RowsMetadata, object: &mut Map<String, Json>) {
    object.insert("metadata_flags".into(), json!(m.flag_names()));
    object.insert("column_count".into(), json!(m.column_count));
    if m.has_more_pages() {
        object.insert(
            "paging_state".into(),
            hex_or_null(m.paging_state.as_deref()),
        );
    }
    if let Some(id) = &m.new_metadata_id {
        object.insert("new_metadata_id".into(), hex(id));
    }
}

/// A schema change's fields into `object`.
fn schema_change_json(change: &SchemaChange, object: &mut Map<String, Json>) {
    object.insert("change".into(), json!(change.change));
    object.insert("target".into(), json!(change.target));
    object.insert("keyspace".into(), json!(change.keyspace));
    if let Some(name) = &change.name {
        object.insert("name".into(), json!(name));
    }
    if let Some(types) = &change.argument_types {
        object.insert("argument_types".into(), json!(types));
    }
}

/// Failures as JSON: a count, or `[{"endpoint", "reason"}]`.
fn failures_json(failures: &Failures) -> Json {
    match failures {
        Failures::Count(n) => json!(n),
        Failures::Reasons(reasons) => Json::Array(
            reasons
                .iter()
                .map(|(ip, code)| json!({"endpoint": ip.to_string(), "reason": code}))
                .collect(),
        ),
    }
}

/// An ERROR body's fields.
fn error_json(e: &ErrorBody) -> Json {
    let mut object = Map::new();
    object.insert("code".into(), json!(e.code));
    object.insert("error".into(), json!(e.name()));
    object.insert("message".into(), json!(e.message));
    let extra = match &e.details {
        ErrorDetails::None => json!({}),
        ErrorDetails::Unavailable {
            consistency,
            required,
            alive,
        } => {
            json!({"consistency": consistency_name(*consistency), "required": required, "alive": alive})
        }
        ErrorDetails::WriteTimeout {
            consistency,
            received,
            block_for,
            write_type,
            contentions,
        } => {
            json!({"consistency": consistency_name(*consistency), "received": received, "block_for": block_for,
                   "write_type": write_type, "contentions": contentions})
        }
        ErrorDetails::ReadTimeout {
            consistency,
            received,
            block_for,
            data_present,
        } => {
            json!({"consistency": consistency_name(*consistency), "received": received, "block_for": block_for,
                     "data_present": data_present})
        }
        ErrorDetails::ReadFailure {
            consistency,
            received,
            block_for,
            failures,
            data_present,
        } => {
            json!({"consistency": consistency_name(*consistency), "received": received, "block_for": block_for,
                     "failures": failures_json(failures), "data_present": data_present})
        }
        ErrorDetails::FunctionFailure {
            keyspace,
            function,
            argument_types,
        } => json!({"keyspace": keyspace, "function": function, "argument_types": argument_types}),
        ErrorDetails::WriteFailure {
            consistency,
            received,
            block_for,
            failures,
            write_type,
        } => {
            json!({"consistency": consistency_name(*consistency), "received": received, "block_for": block_for,
                     "failures": failures_json(failures), "write_type": write_type})
        }
        ErrorDetails::CasWriteUnknown {
            consistency,
            received,
            block_for,
        } => {
            json!({"consistency": consistency_name(*consistency), "received": received, "block_for": block_for})
        }
        ErrorDetails::AlreadyExists { keyspace, table } => {
            json!({"keyspace": keyspace, "table": table})
        }
        ErrorDetails::Unprepared { id } => json!({"id": hex(id)}),
    };
    if let Json::Object(extra) = extra {
        object.extend(extra.into_iter().filter(|(_, v)| !v.is_null()));
    }
    Json::Object(object)
}

/// A RESULT body's fields.
fn result_json(result: &ResultBody) -> Json {
    let mut object = Map::new();
    object.insert("kind".into(), json!(result.kind()));
    match result {
        ResultBody::Void => {}
        ResultBody::Rows(rows) => {
            metadata_json(&rows.metadata, &mut object);
            let columns = rows.columns.as_deref();
            object.insert("columns".into(), columns.map_or(Json::Null, columns_json));
            let types: Vec<Option<&ColumnType>> = (0..rows.metadata.column_count)
                .map(|j| columns.and_then(|c| c.get(j)).map(|c| &c.ty))
                .collect();
            let rows = rows
                .rows
                .iter()
                .map(|row| {
                    Json::Array(
                        row.iter()
                            .enumerate()
                            .map(|(j, cell)| cell_json(types.get(j).copied().flatten(), cell))
                            .collect(),
                    )
                })
                .collect();
            object.insert("rows".into(), Json::Array(rows));
        }
        ResultBody::SetKeyspace(keyspace) => {
            object.insert("keyspace".into(), json!(keyspace));
        }
        ResultBody::Prepared(p) => {
            object.insert("id".into(), hex(&p.id));
            if let Some(id) = &p.result_metadata_id {
                object.insert("result_metadata_id".into(), hex(id));
            }
            object.insert("flags".into(), json!(p.flag_names()));
            object.insert("pk_indices".into(), json!(p.pk_indices));
            object.insert("variables".into(), columns_json(&p.variables));
            metadata_json(&p.result, &mut object);
            object.insert("columns".into(), columns_json(&p.result.columns));
        }
        ResultBody::SchemaChange(change) => schema_change_json(change, &mut object),
    }
    Json::Object(object)
}

/// The `"body"` object of a message.
fn body_json(body: &Body) -> Json {
    let token = |t: &Option<Vec<u8>>| json!({"token": hex_or_null(t.as_deref())});
    match body {
        Body::Error(e) => error_json(e),
        Body::Startup(options) => {
            let map: Map<String, Json> =
                options.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            json!({ "options": map })
        }
        Body::Ready | Body::Options => json!({}),
        Body::Authenticate(class) => json!({ "authenticator": class }),
        Body::Supported(options) => {
            let map: Map<String, Json> =
                options.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            json!({ "options": map })
        }
        Body::Query(q) => {
            let mut object = Map::new();
            object.insert("query".into(), json!(q.query));
            parameters_json(&q.parameters, &mut object, true);
            Json::Object(object)
        }
        Body::Result(result) => result_json(result),
        Body::Prepare(p) => {
            let mut object = Map::new();
            object.insert("query".into(), json!(p.query));
            if let Some(flags) = p.flags {
                object.insert("flags".into(), json!(flags));
            }
            if let Some(keyspace) = &p.keyspace {
                object.insert("keyspace".into(), json!(keyspace));
            }
            Json::Object(object)
        }
        Body::Execute(e) => {
            let mut object = Map::new();
            object.insert("id".into(), hex(&e.id));
            if let Some(id) = &e.result_metadata_id {
                object.insert("result_metadata_id".into(), hex(id));
            }
            if let Some(query) = &e.query {
                object.insert("query".into(), json!(query));
            }
            parameters_json(&e.parameters, &mut object, true);
            Json::Object(object)
        }
        Body::Register(events) => json!({ "events": events }),
        Body::Event(event) => {
            let mut object = Map::new();
            object.insert("type".into(), json!(event.kind()));
            match event {
                Event::TopologyChange { change, address }
                | Event::StatusChange { change, address } => {
                    object.insert("change".into(), json!(change));
                    object.insert("address".into(), json!(address.to_string()));
                }
                Event::SchemaChange(change) => schema_change_json(change, &mut object),
            }
            Json::Object(object)
        }
        Body::Batch(b) => {
            let statements = b
                .statements
                .iter()
                .map(|s| {
                    let mut object = Map::new();
                    if let Some(id) = &s.id {
                        object.insert("id".into(), hex(id));
                    }
                    if let Some(query) = &s.query {
                        object.insert("query".into(), json!(query));
                    }
                    object.insert("values".into(), values_json(&s.values));
                    Json::Object(object)
                })
                .collect();
            let mut object = Map::new();
            object.insert("type".into(), json!(b.kind_name()));
            object.insert("statements".into(), Json::Array(statements));
            parameters_json(&b.parameters, &mut object, false);
            Json::Object(object)
        }
        Body::AuthChallenge(t) | Body::AuthResponse(t) | Body::AuthSuccess(t) => token(t),
    }
}

/// Text cut to `max` characters with `…`.
fn cut(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Longest query text shown in a gist.
const GIST_QUERY_CHARS: usize = 120;

/// "1 value", "2 values".
fn count(n: usize, what: &str) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{n} {what}{plural}")
}

/// The gist of query parameters: consistency, value count, page size, paging.
fn parameters_gist(p: &QueryParameters) -> String {
    let mut gist = consistency_name(p.consistency);
    if !p.values.is_empty() {
        gist.push_str(&format!(", {}", count(p.values.len(), "value")));
    }
    if let Some(size) = p.page_size {
        gist.push_str(&format!(", page size {size}"));
    }
    if p.paging_state.is_some() {
        gist.push_str(", with paging state");
    }
    gist
}

impl Message {
    /// The JSON object of `inspect --format json` without the connection fields: `version`,
    /// `opcode`, `flags` (names), the prefixes when present (`tracing_id`, `warnings`,
    /// `custom_payload`) and `body`.
    pub fn to_json(&self) -> Json {
        let mut object = Map::new();
        object.insert("version".into(), json!(self.version));
        object.insert("opcode".into(), json!(self.opcode_name()));
        object.insert("flags".into(), json!(flag_names(self.flags)));
        if let Some(id) = self.tracing_id {
            object.insert("tracing_id".into(), json!(id.to_string()));
        }
        if let Some(warnings) = &self.warnings {
            object.insert("warnings".into(), json!(warnings));
        }
        if let Some(payload) = &self.custom_payload {
            let map: Map<String, Json> = payload
                .iter()
                .map(|(k, v)| (k.clone(), hex_or_null(v.as_deref())))
                .collect();
            object.insert("custom_payload".into(), Json::Object(map));
        }
        object.insert("body".into(), body_json(&self.body));
        Json::Object(object)
    }

    /// One line saying what the message is about: the query text, the row count, the error, …
    pub fn gist(&self) -> String {
        let mut gist = match &self.body {
            Body::Error(e) => format!("{} (0x{:04x}): {}", e.name(), e.code, cut(&e.message, 200)),
            Body::Startup(options) => options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            Body::Ready | Body::Options => String::new(),
            Body::Authenticate(class) => class.clone(),
            Body::Supported(options) => options
                .iter()
                .map(|(k, v)| format!("{k}={}", v.join(",")))
                .collect::<Vec<_>>()
                .join(" "),
            Body::Query(q) => format!(
                "{:?} {}",
                cut(&q.query, GIST_QUERY_CHARS),
                parameters_gist(&q.parameters)
            ),
            Body::Result(result) => match result {
                ResultBody::Rows(rows) => {
                    let mut gist = format!(
                        "Rows: {} × {}",
                        count(rows.rows.len(), "row"),
                        count(rows.metadata.column_count, "column")
                    );
                    if rows.metadata.has_more_pages() {
                        gist.push_str(", more pages");
                    }
                    gist
                }
                ResultBody::Void => "Void".into(),
                ResultBody::SetKeyspace(keyspace) => format!("Set_keyspace {keyspace}"),
                ResultBody::Prepared(p) => format!(
                    "Prepared {} {}",
                    hex(&p.id).as_str().unwrap_or_default(),
                    count(p.variables.len(), "variable")
                ),
                ResultBody::SchemaChange(change) => {
                    format!("Schema_change {}", schema_gist(change))
                }
            },
            Body::Prepare(p) => format!("{:?}", cut(&p.query, GIST_QUERY_CHARS)),
            Body::Execute(e) => {
                let id = hex(&e.id);
                let query = e
                    .query
                    .as_deref()
                    .map(|q| format!(" {:?}", cut(q, GIST_QUERY_CHARS)))
                    .unwrap_or_default();
                format!(
                    "{}{query} {}",
                    id.as_str().unwrap_or_default(),
                    parameters_gist(&e.parameters)
                )
            }
            Body::Register(events) => events.join(" "),
            Body::Event(event) => match event {
                Event::TopologyChange { change, address }
                | Event::StatusChange { change, address } => {
                    format!("{} {change} {address}", event.kind())
                }
                Event::SchemaChange(change) => format!("SCHEMA_CHANGE {}", schema_gist(change)),
            },
            Body::Batch(b) => format!(
                "{} {} {}",
                b.kind_name(),
                count(b.statements.len(), "statement"),
                consistency_name(b.parameters.consistency)
            ),
            Body::AuthChallenge(t) | Body::AuthResponse(t) | Body::AuthSuccess(t) => match t {
                Some(token) => count(token.len(), "byte"),
                None => "null token".into(),
            },
        };
        if let Some(warnings) = &self.warnings {
            gist.push_str(&format!(" [{}]", count(warnings.len(), "warning")));
        }
        gist
    }
}

/// `CREATED TABLE ks.t`.
fn schema_gist(change: &SchemaChange) -> String {
    match &change.name {
        Some(name) => format!(
            "{} {} {}.{name}",
            change.change, change.target, change.keyspace
        ),
        None => format!("{} {} {}", change.change, change.target, change.keyspace),
    }
}
