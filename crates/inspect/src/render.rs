//! A message as the JSON object of `inspect --format json` (written straight into a
//! [`JsonWriter`]) and as a one-line gist, values in a [`ValueForm`]: [`RenderMessage`].

use super::ValueForm;
use cqlwire_codec::types::{CqlType, NativeType};
use cqlwire_codec::value::json::{write_json, JsonWriter};
use cqlwire_codec::value::print::{write_pieces, TextForm};
use cqlwire_protocol::frame::Opcode;
use cqlwire_protocol::message::{
    consistency_name, each_bit_name, each_flag_name, Body, BoundValues, Cell, ColumnType, Columns,
    ErrorBody, ErrorDetails, Event, Failures, Message, QueryParameters, ResultBody, RowsMetadata,
    SchemaChange, BATCH_REPEATED_QUERY_MAX, METADATA_FLAG_NAMES, QUERY_FLAG_NAMES,
};
use serde_json::Value as Json;
use std::ops::Range;
use std::sync::Arc;

/// The names of the bits of `flags` (from `names`, else `0x…`) as an array of strings.
fn names_json(w: &mut JsonWriter, flags: u32, names: &[(u32, &str)]) {
    w.begin_array();
    each_bit_name(flags, names, |name| w.str(name));
    w.end_array();
}

/// What the values of a message are written from, and how.
struct Values<'a> {
    /// The message's body, which its cells are ranges of.
    bytes: &'a [u8],
    /// Plain, masked or redacted.
    form: ValueForm<'a>,
    /// Called after each row and each [`SPILL_CHUNK`] bytes of a blob's hex with the JSON written
    /// so far, which it may take out of the writer's buffer (see
    /// [`RenderMessage::write_json_fields_spilling`]).
    spill: &'a mut dyn FnMut(&mut JsonWriter),
}

/// The bytes of a blob whose hex is written between two calls of [`Values::spill`].
const SPILL_CHUNK: usize = 64 << 10;

impl Values<'_> {
    /// The bytes of a cell's range (empty if it were out of the body).
    fn of(&self, range: &Range<usize>) -> &[u8] {
        self.bytes.get(range.clone()).unwrap_or_default()
    }

    /// Bytes as `"0x…"`, spilled along the way when long.
    fn hex(&mut self, w: &mut JsonWriter, range: &Range<usize>) {
        let bytes = self.bytes.get(range.clone()).unwrap_or_default();
        if bytes.len() <= SPILL_CHUNK {
            return w.hex(bytes);
        }
        w.hex_in_chunks(bytes, SPILL_CHUNK, &mut *self.spill);
    }
}

/// A cell as `decode --format json` prints its value; raw bytes (unknown type) as `"0x…"`;
/// redacted when the form says so and the cell has bytes.
fn cell_json(w: &mut JsonWriter, ty: Option<&ColumnType>, cell: &Cell, v: &mut Values<'_>) {
    if let Some(hash) = v.form.key() {
        if crate::redaction::values::write_redacted(w, ty, cell, v.bytes, hash) {
            return;
        }
    }
    match (cell, ty.and_then(ColumnType::cql)) {
        (Cell::Null, _) | (Cell::Value(_), None) => w.null(),
        (Cell::Unset, _) => {
            w.begin_object();
            w.key("$unset");
            w.bool(true);
            w.end_object();
        }
        (Cell::Value(range), Some(ty)) => value_json(w, ty, range, v),
        (Cell::Bytes(range), _) => v.hex(w, range),
    }
}

/// A value whose bytes do not decode as its type: `{"$invalid": "<why>", "bytes": "0x…"}`, so the
/// other values of its message still show.
fn invalid_json(w: &mut JsonWriter, ty: &CqlType, range: &Range<usize>, v: &mut Values<'_>) {
    let why = match cqlwire_codec::value::decode(ty, v.of(range)) {
        Err(error) => error.to_string(),
        Ok(_) => "does not decode".to_string(),
    };
    w.begin_object();
    w.key("$invalid");
    w.str(&why);
    w.key("bytes");
    v.hex(w, range);
    w.end_object();
}

/// A value's JSON from its bytes, decoded as it is written: blobs and text straight from the bytes,
/// other types through their [`cqlwire_codec::value::Value`], dropped after; bytes that do not decode as
/// the type are written by [`invalid_json`].
fn value_json(w: &mut JsonWriter, ty: &CqlType, range: &Range<usize>, v: &mut Values<'_>) {
    match ty {
        CqlType::Native(NativeType::Blob) => v.hex(w, range),
        CqlType::Native(NativeType::Text) => match std::str::from_utf8(v.of(range)) {
            Ok(text) => w.str(text),
            Err(_) => invalid_json(w, ty, range, v),
        },
        _ if range.len() <= SPILL_CHUNK => match cqlwire_codec::value::decode(ty, v.of(range)) {
            Ok(value) => write_json(w, ty, &value),
            Err(_) => invalid_json(w, ty, range, v),
        },
        // A long collection, tuple, UDT or vector piece by piece, spilled along the way: a value
        // of millions of elements is never held decoded nor as one JSON text.
        _ => {
            let bytes = v.bytes.get(range.clone()).unwrap_or_default();
            if cqlwire_codec::value::decode_pieces(ty, bytes, false, &mut drop).is_err() {
                return invalid_json(w, ty, range, v);
            }
            let spill = &mut *v.spill;
            w.raw_value(|w| {
                let mut out = Spilling { w, spill };
                // Checked just above: the pieces decode, and writing into a buffer cannot fail.
                let _ = write_pieces(ty, bytes, false, TextForm::Json, &|s| s.into(), &mut out);
            });
        }
    }
}

/// JSON text appended to a writer's buffer, handed to the spill callback every [`SPILL_CHUNK`]
/// bytes.
struct Spilling<'w, 's> {
    w: &'w mut JsonWriter,
    spill: &'s mut dyn FnMut(&mut JsonWriter),
}

impl std::io::Write for Spilling<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.w.buf.extend_from_slice(bytes);
        if self.w.buf.len() >= SPILL_CHUNK {
            (self.spill)(self.w);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `[{"name", "type", "value"}]`: name and type absent when unknown, `"bytes"` instead of `"value"`
/// when the type is unknown (unless redacted); spilled after each value.
fn values_json(w: &mut JsonWriter, values: &BoundValues, v: &mut Values<'_>) {
    w.begin_array();
    let body = v.bytes;
    for value in values.iter(body) {
        w.begin_object();
        if let Some(name) = value.name {
            w.key("name");
            w.str(name);
        }
        if let Some(ty) = value.ty {
            w.key("type");
            type_json(w, ty);
        }
        match &value.value {
            Cell::Bytes(range) if v.form.key().is_none() => {
                w.key("bytes");
                v.hex(w, range);
            }
            cell => {
                w.key("value");
                cell_json(w, value.ty, cell, v);
            }
        }
        w.end_object();
        (v.spill)(w);
    }
    w.end_array();
}

/// A type as its CQL text (a native type's name without going through `Display`).
fn type_json(w: &mut JsonWriter, ty: &ColumnType) {
    match ty {
        ColumnType::Cql(CqlType::Native(native)) => w.str(native.cql_name()),
        other => w.display(other),
    }
}

/// `[{"name", "type", "keyspace", "table"}]`.
/// Spilled every [`SPILL_COLUMNS`] columns.
fn columns_json(w: &mut JsonWriter, columns: &Columns, v: &mut Values<'_>) {
    w.begin_array();
    for (i, c) in columns.iter().enumerate() {
        w.begin_object();
        w.key("name");
        w.str(c.name);
        w.key("type");
        type_json(w, c.ty);
        w.key("keyspace");
        w.str(c.keyspace);
        w.key("table");
        w.str(c.table);
        w.end_object();
        if i % SPILL_COLUMNS == SPILL_COLUMNS - 1 {
            (v.spill)(w);
        }
    }
    w.end_array();
}

/// The columns whose JSON is written between two calls of [`Values::spill`].
const SPILL_COLUMNS: usize = 1024;

/// A consistency level's name.
fn consistency(w: &mut JsonWriter, level: u16) {
    w.str(&consistency_name(level));
}

/// Query parameters' fields.
fn parameters_json(
    w: &mut JsonWriter,
    p: &QueryParameters,
    form: ValueForm<'_>,
    values: Option<&mut Values<'_>>,
) {
    w.key("consistency");
    consistency(w, p.consistency);
    w.key("flags");
    names_json(w, p.flags, &QUERY_FLAG_NAMES);
    if let Some(v) = values {
        w.key("values");
        values_json(w, &p.values, v);
    }
    if let Some(size) = p.page_size {
        w.key("page_size");
        w.i64(i64::from(size));
    }
    if let Some(state) = &p.paging_state {
        w.key("paging_state");
        form.write_bytes(w, state.as_deref());
    }
    if let Some(level) = p.serial_consistency {
        w.key("serial_consistency");
        consistency(w, level);
    }
    if let Some(timestamp) = p.timestamp {
        w.key("timestamp");
        w.i64(timestamp);
    }
    if let Some(keyspace) = &p.keyspace {
        w.key("keyspace");
        w.str(keyspace);
    }
    if let Some(now) = p.now_in_seconds {
        w.key("now_in_seconds");
        w.i64(i64::from(now));
    }
}

/// Rows metadata fields.
fn metadata_json(w: &mut JsonWriter, m: &RowsMetadata, form: ValueForm<'_>) {
    w.key("metadata_flags");
    names_json(w, m.flags, &METADATA_FLAG_NAMES);
    w.key("column_count");
    w.u64(m.column_count as u64);
    if m.has_more_pages() {
        w.key("paging_state");
        form.write_bytes(w, m.paging_state.as_deref());
    }
    if let Some(id) = &m.new_metadata_id {
        w.key("new_metadata_id");
        w.hex(id);
    }
}

/// A schema change's fields.
fn schema_change_json(w: &mut JsonWriter, change: &SchemaChange) {
    w.key("change");
    w.str(&change.change);
    w.key("target");
    w.str(&change.target);
    w.key("keyspace");
    w.str(&change.keyspace);
    if let Some(name) = &change.name {
        w.key("name");
        w.str(name);
    }
    if let Some(types) = &change.argument_types {
        w.key("argument_types");
        w.strs(types);
    }
}

/// Failures: a count, or `[{"endpoint", "reason"}]`.
fn failures_json(w: &mut JsonWriter, failures: &Failures, v: &mut Values<'_>) {
    match failures {
        Failures::Count(n) => w.i64(i64::from(*n)),
        Failures::Reasons(reasons) => {
            w.begin_array();
            for (i, (ip, code)) in reasons.iter(v.bytes).enumerate() {
                w.begin_object();
                w.key("endpoint");
                w.display(&ip);
                w.key("reason");
                w.u64(u64::from(code));
                w.end_object();
                if i % 1024 == 1023 {
                    (v.spill)(w);
                }
            }
            w.end_array();
        }
    }
}

/// The `consistency`, `received` and `block_for` fields of a timeout or failure.
fn acknowledgements(w: &mut JsonWriter, level: u16, received: i32, block_for: i32) {
    w.key("consistency");
    consistency(w, level);
    w.key("received");
    w.i64(i64::from(received));
    w.key("block_for");
    w.i64(i64::from(block_for));
}

/// An ERROR body's fields.
fn error_json(w: &mut JsonWriter, e: &ErrorBody, v: &mut Values<'_>) {
    let form = v.form;
    w.key("code");
    w.i64(i64::from(e.code));
    w.key("error");
    w.str(e.name());
    w.key("message");
    w.str(&form.server_text(&e.message));
    match &e.details {
        ErrorDetails::None => {}
        ErrorDetails::Unavailable {
            consistency: level,
            required,
            alive,
        } => {
            w.key("consistency");
            consistency(w, *level);
            w.key("required");
            w.i64(i64::from(*required));
            w.key("alive");
            w.i64(i64::from(*alive));
        }
        ErrorDetails::WriteTimeout {
            consistency,
            received,
            block_for,
            write_type,
            contentions,
        } => {
            acknowledgements(w, *consistency, *received, *block_for);
            w.key("write_type");
            w.str(write_type);
            if let Some(contentions) = contentions {
                w.key("contentions");
                w.u64(u64::from(*contentions));
            }
        }
        ErrorDetails::ReadTimeout {
            consistency,
            received,
            block_for,
            data_present,
        } => {
            acknowledgements(w, *consistency, *received, *block_for);
            w.key("data_present");
            w.bool(*data_present);
        }
        ErrorDetails::ReadFailure {
            consistency,
            received,
            block_for,
            failures,
            data_present,
        } => {
            acknowledgements(w, *consistency, *received, *block_for);
            w.key("failures");
            failures_json(w, failures, v);
            w.key("data_present");
            w.bool(*data_present);
        }
        ErrorDetails::FunctionFailure {
            keyspace,
            function,
            argument_types,
        } => {
            w.key("keyspace");
            w.str(keyspace);
            w.key("function");
            w.str(function);
            w.key("argument_types");
            w.strs(argument_types);
        }
        ErrorDetails::WriteFailure {
            consistency,
            received,
            block_for,
            failures,
            write_type,
        } => {
            acknowledgements(w, *consistency, *received, *block_for);
            w.key("failures");
            failures_json(w, failures, v);
            w.key("write_type");
            w.str(write_type);
        }
        ErrorDetails::CasWriteUnknown {
            consistency,
            received,
            block_for,
        } => acknowledgements(w, *consistency, *received, *block_for),
        ErrorDetails::AlreadyExists { keyspace, table } => {
            w.key("keyspace");
            w.str(keyspace);
            w.key("table");
            w.str(table);
        }
        ErrorDetails::Unprepared { id } => {
            w.key("id");
            w.hex(id);
        }
    }
}

/// A RESULT body's fields.
fn result_json(w: &mut JsonWriter, result: &ResultBody, v: &mut Values<'_>) {
    w.key("kind");
    w.str(result.kind());
    match result {
        ResultBody::Void => {}
        ResultBody::Rows(rows) => {
            metadata_json(w, &rows.metadata, v.form);
            let columns = rows.columns();
            w.key("columns");
            match columns {
                Some(columns) => columns_json(w, columns, v),
                None => w.null(),
            }
            // Types by column index, looked up per cell: the column count is the server's word and
            // sizes nothing here (a body without metadata may claim any count with no rows).
            let ty = |j: usize| columns.and_then(|c| c.get(j)).map(|c| c.ty);
            w.key("rows");
            w.begin_array();
            let width = rows.metadata.column_count;
            let mut cells = rows.cells(v.bytes);
            for _ in 0..rows.count {
                w.begin_array();
                for (j, cell) in (0..width).zip(&mut cells) {
                    cell_json(w, ty(j), &cell, v);
                }
                w.end_array();
                (v.spill)(w);
            }
            w.end_array();
        }
        ResultBody::SetKeyspace(keyspace) => {
            w.key("keyspace");
            w.str(keyspace);
        }
        ResultBody::Prepared(p) => {
            w.key("id");
            w.hex(&p.id);
            if let Some(id) = &p.result_metadata_id {
                w.key("result_metadata_id");
                w.hex(id);
            }
            w.key("flags");
            names_json(w, p.flags, &METADATA_FLAG_NAMES);
            w.key("pk_indices");
            w.begin_array();
            for &index in &p.pk_indices {
                w.u64(u64::from(index));
            }
            w.end_array();
            w.key("variables");
            columns_json(w, &p.variables, v);
            metadata_json(w, &p.result, v.form);
            w.key("columns");
            columns_json(w, &p.result.columns, v);
        }
        ResultBody::SchemaChange(change) => schema_change_json(w, change),
    }
}

/// The `"body"` object of a message.
fn body_json(w: &mut JsonWriter, body: &Body, v: &mut Values<'_>) {
    w.begin_object();
    match body {
        Body::Error(e) => error_json(w, e, v),
        Body::Startup(options) => {
            w.key("options");
            w.object(options, |w, _, v| w.str(v));
        }
        Body::Ready | Body::Options => {}
        Body::Authenticate(class) => {
            w.key("authenticator");
            w.str(class);
        }
        Body::Supported(options) => {
            w.key("options");
            let entries: Vec<_> = options.iter(v.bytes).collect();
            w.object(&entries, |w, _, values| {
                w.begin_array();
                for value in values.clone() {
                    w.str(value);
                }
                w.end_array();
                (v.spill)(w);
            });
        }
        Body::Query(q) => {
            w.key("query");
            w.str(&v.form.query(&q.query));
            parameters_json(w, &q.parameters, v.form, Some(v));
        }
        Body::Result(result) => result_json(w, result, v),
        Body::Prepare(p) => {
            w.key("query");
            w.str(&v.form.query(&p.query));
            if let Some(flags) = p.flags {
                w.key("flags");
                w.u64(u64::from(flags));
            }
            if let Some(keyspace) = &p.keyspace {
                w.key("keyspace");
                w.str(keyspace);
            }
        }
        Body::Execute(e) => {
            w.key("id");
            w.hex(&e.id);
            if let Some(id) = &e.result_metadata_id {
                w.key("result_metadata_id");
                w.hex(id);
            }
            if let Some(query) = &e.query {
                w.key("query");
                w.str(&v.form.query(query));
            }
            parameters_json(w, &e.parameters, v.form, Some(v));
        }
        Body::Register(events) => {
            w.key("events");
            w.strs(events);
        }
        Body::Event(event) => {
            w.key("type");
            w.str(event.kind());
            match event {
                Event::TopologyChange { change, address }
                | Event::StatusChange { change, address } => {
                    w.key("change");
                    w.str(change);
                    w.key("address");
                    w.display(address);
                }
                Event::SchemaChange(change) => schema_change_json(w, change),
            }
        }
        Body::Batch(b) => {
            w.key("type");
            w.str(&b.kind_name());
            w.key("statements");
            w.begin_array();
            let mut written = std::collections::HashSet::new();
            for s in &b.statements {
                w.begin_object();
                if let Some(id) = &s.id {
                    w.key("id");
                    w.hex(id);
                }
                let shared = |q: &Arc<str>| s.id.is_some() && q.len() > BATCH_REPEATED_QUERY_MAX;
                match &s.query {
                    Some(q) if shared(q) && !written.insert(Arc::as_ptr(q).cast::<u8>()) => {}
                    Some(query) => {
                        w.key("query");
                        w.str(&v.form.query(query));
                    }
                    None => {}
                }
                w.key("values");
                values_json(w, &s.values, v);
                w.end_object();
            }
            w.end_array();
            parameters_json(w, &b.parameters, v.form, None);
        }
        Body::AuthChallenge(t) | Body::AuthResponse(t) | Body::AuthSuccess(t) => {
            w.key("token");
            v.form.write_token(w, body_opcode(body), t.as_deref());
        }
    }
    w.end_object();
}

/// The opcode of a body (each opcode has a body of its own).
fn body_opcode(body: &Body) -> Opcode {
    match body {
        Body::Error(_) => Opcode::Error,
        Body::Startup(_) => Opcode::Startup,
        Body::Ready => Opcode::Ready,
        Body::Authenticate(_) => Opcode::Authenticate,
        Body::Options => Opcode::Options,
        Body::Supported(_) => Opcode::Supported,
        Body::Query(_) => Opcode::Query,
        Body::Result(_) => Opcode::Result,
        Body::Prepare(_) => Opcode::Prepare,
        Body::Execute(_) => Opcode::Execute,
        Body::Register(_) => Opcode::Register,
        Body::Event(_) => Opcode::Event,
        Body::Batch(_) => Opcode::Batch,
        Body::AuthChallenge(_) => Opcode::AuthChallenge,
        Body::AuthResponse(_) => Opcode::AuthResponse,
        Body::AuthSuccess(_) => Opcode::AuthSuccess,
    }
}

/// Text cut to `max` characters with `…`.
fn cut(text: &str, max: usize) -> String {
    // Character by character up to `max`, whitespace runs as one space: a long text is never
    // scanned or copied whole.
    let mut out = String::new();
    let mut chars = 0;
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = chars > 0;
            continue;
        }
        for c in [' ', c].into_iter().skip(usize::from(!space)) {
            if chars == max {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
        space = false;
    }
    out
}

/// Longest query text shown in a gist.
const GIST_QUERY_CHARS: usize = 120;

/// Longest list of options or events in a gist, in bytes (a SUPPORTED of ScyllaDB takes about
/// 500); a longer one ends in `…`.
const GIST_LIST_BYTES: usize = 4096;

/// A gist of items separated by spaces, ended with `…` once it passes [`GIST_LIST_BYTES`] (so it
/// is longer than that only when ended).
#[derive(Default)]
struct CappedGist(String);

impl CappedGist {
    /// Starts an item made of `parts`.
    fn item(&mut self, parts: &[&str]) {
        if !self.0.is_empty() {
            self.push(" ");
        }
        for part in parts {
            self.push(part);
        }
    }

    /// Adds `text` to the current item.
    fn push(&mut self, text: &str) {
        if self.0.len() > GIST_LIST_BYTES {
            return;
        }
        if self.0.len() + text.len() <= GIST_LIST_BYTES {
            return self.0.push_str(text);
        }
        let mut end = GIST_LIST_BYTES - self.0.len();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.0.push_str(&text[..end]);
        self.0.push('…');
    }
}

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

/// A message written as `inspect` writes it: JSON fields and a one-line gist.
pub trait RenderMessage {
    /// The JSON object of `inspect --format json` without the connection fields: `version`,
    /// `opcode`, `flags` (names), the prefixes when present (`tracing_id`, `warnings`,
    /// `custom_payload`) and `body`.
    fn to_json(&self) -> Json;

    /// Writes the fields of [`RenderMessage::to_json`] after `version` (`opcode` to `body`) into
    /// the object `w` is in, values in `form`.
    fn write_json_fields(&self, w: &mut JsonWriter, form: ValueForm<'_>) {
        self.write_json_fields_spilling(w, form, &mut |_| {});
    }

    /// Writes like [`RenderMessage::write_json_fields`], calling `spill` after each row of a Rows
    /// result and each 64 KiB of a blob's hex with what was written so far: it may write out and
    /// empty `w.buf` (the writer's place in the document is kept), so a message of many rows or a
    /// long blob needs a bounded buffer.
    fn write_json_fields_spilling(
        &self,
        w: &mut JsonWriter,
        form: ValueForm<'_>,
        spill: &mut dyn FnMut(&mut JsonWriter),
    );

    /// One line saying what the message is about: the query text, the row count, the error, …
    fn gist(&self) -> String {
        self.gist_in(ValueForm::Plain)
    }

    /// The [`RenderMessage::gist`] with its query text, error message and token shown in `form`.
    fn gist_in(&self, form: ValueForm<'_>) -> String;

    /// What Apache Cassandra refuses among the bound values of a QUERY, EXECUTE or BATCH whose
    /// types are known (the rule of `cqlwire_codec::value::refused`, as `decode` says it), one
    /// note per finding: `bound value #1 (v): Apache Cassandra refuses a null element in a list
    /// (…) at byte 12 (element 1)`, offsets counting from the value's first byte, `statement 0,`
    /// before it in a BATCH. No value is quoted, so a note holds nothing `--redact` hides.
    fn refused_notes(&self) -> Vec<String>;
}

/// The notes of [`RenderMessage::refused_notes`] for one statement's values (`prefix` names the
/// statement in a BATCH).
fn refused_value_notes(values: &BoundValues, body: &[u8], prefix: &str, notes: &mut Vec<String>) {
    for (i, value) in values.iter(body).enumerate() {
        let (Cell::Value(range), Some(ty)) = (&value.value, value.ty.and_then(ColumnType::cql))
        else {
            continue;
        };
        let bytes = body.get(range.clone()).unwrap_or_default();
        // A value that does not decode is shown as invalid already.
        let Ok(found) = cqlwire_codec::value::refused::refusal_lines(ty, bytes, false) else {
            continue;
        };
        let name = value
            .name
            .map(|name| format!(" ({})", crate::printer::one_line(name)))
            .unwrap_or_default();
        for line in found.lines {
            notes.push(format!("{prefix}bound value #{i}{name}: {line}"));
        }
    }
}

impl RenderMessage for Message {
    fn to_json(&self) -> Json {
        let mut w = JsonWriter::new();
        w.begin_object();
        w.key("version");
        w.u64(u64::from(self.version));
        self.write_json_fields(&mut w, ValueForm::Plain);
        w.end_object();
        serde_json::from_slice(&w.buf).expect("the writer writes valid JSON")
    }

    fn write_json_fields_spilling(
        &self,
        w: &mut JsonWriter,
        form: ValueForm<'_>,
        spill: &mut dyn FnMut(&mut JsonWriter),
    ) {
        w.key("opcode");
        w.str(self.opcode_name());
        w.key("flags");
        w.begin_array();
        each_flag_name(self.flags, |name| w.str(name));
        w.end_array();
        if let Some(id) = self.tracing_id {
            w.key("tracing_id");
            w.str(
                id.hyphenated()
                    .encode_lower(&mut uuid::Uuid::encode_buffer()),
            );
        }
        if let Some(warnings) = &self.warnings {
            w.key("warnings");
            w.begin_array();
            for warning in warnings {
                w.str(&form.server_text(warning));
            }
            w.end_array();
        }
        if let Some(payload) = &self.custom_payload {
            w.key("custom_payload");
            w.object(payload, |w, _, v| form.write_bytes(w, v.as_deref()));
        }
        w.key("body");
        let mut values = Values {
            bytes: &self.bytes,
            form,
            spill,
        };
        body_json(w, &self.body, &mut values);
    }

    fn gist_in(&self, form: ValueForm<'_>) -> String {
        let mut gist = match &self.body {
            Body::Error(e) => format!(
                "{} (0x{:04x}): {}",
                e.name(),
                e.code,
                cut(&form.server_text(&e.message), 200)
            ),
            Body::Startup(options) => {
                let mut gist = CappedGist::default();
                for (key, value) in options {
                    gist.item(&[key, "=", value]);
                }
                gist.0
            }
            Body::Ready | Body::Options => String::new(),
            Body::Authenticate(class) => class.clone(),
            Body::Supported(options) => {
                let mut gist = CappedGist::default();
                for (key, values) in options.iter(&self.bytes) {
                    gist.item(&[key, "="]);
                    for (i, value) in values.enumerate() {
                        if i > 0 {
                            gist.push(",");
                        }
                        gist.push(value);
                    }
                }
                gist.0
            }
            Body::Query(q) => format!(
                "{:?} {}",
                cut(&form.query(&q.query), GIST_QUERY_CHARS),
                parameters_gist(&q.parameters)
            ),
            Body::Result(result) => match result {
                ResultBody::Rows(rows) => {
                    let mut gist = format!(
                        "Rows: {} × {}",
                        count(rows.count, "row"),
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
                    "Prepared 0x{} {}",
                    cqlwire_codec::hex::encode(&p.id),
                    count(p.variables.len(), "variable")
                ),
                ResultBody::SchemaChange(change) => {
                    format!("Schema_change {}", schema_gist(change))
                }
            },
            Body::Prepare(p) => format!("{:?}", cut(&form.query(&p.query), GIST_QUERY_CHARS)),
            Body::Execute(e) => {
                let query = e
                    .query
                    .as_deref()
                    .map(|q| format!(" {:?}", cut(&form.query(q), GIST_QUERY_CHARS)))
                    .unwrap_or_default();
                format!(
                    "0x{}{query} {}",
                    cqlwire_codec::hex::encode(&e.id),
                    parameters_gist(&e.parameters)
                )
            }
            Body::Register(events) => {
                let mut gist = CappedGist::default();
                for event in events {
                    gist.item(&[event]);
                }
                gist.0
            }
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
            Body::AuthChallenge(t) | Body::AuthResponse(t) | Body::AuthSuccess(t) => {
                form.token_gist(body_opcode(&self.body), t.as_deref())
            }
        };
        if let Some(warnings) = &self.warnings {
            gist.push_str(&format!(" [{}]", count(warnings.len(), "warning")));
        }
        gist
    }

    fn refused_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        match &self.body {
            Body::Query(q) => {
                refused_value_notes(&q.parameters.values, &self.bytes, "", &mut notes)
            }
            Body::Execute(e) => {
                refused_value_notes(&e.parameters.values, &self.bytes, "", &mut notes)
            }
            Body::Batch(b) => {
                for (i, s) in b.statements.iter().enumerate() {
                    let prefix = format!("statement {i}, ");
                    refused_value_notes(&s.values, &self.bytes, &prefix, &mut notes);
                }
            }
            _ => {}
        }
        notes
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
