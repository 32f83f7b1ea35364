//! `--redact`: row and bound values replaced by a short stable hash of their bytes, with their
//! length, so a decode can be shared without its data. Names, types, nulls and unsets stay.

use crate::protocol::message::{Body, BoundValue, Cell, ColumnType, Message, ResultBody};
use serde_json::{json, Value as Json};

/// FNV-1a (64 bits) of `bytes`: stable across runs, machines and versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The redacted form of a cell: `{"$redacted": "<8 hex digits>", "len": <bytes>}`; `None` for
/// null and unset, which stay as they are.
pub fn redacted(ty: Option<&ColumnType>, cell: &Cell) -> Option<Json> {
    let bytes = match (cell, ty.and_then(ColumnType::cql)) {
        (Cell::Null | Cell::Unset, _) => return None,
        (Cell::Bytes(bytes), _) => bytes.clone(),
        (Cell::Value(value), Some(ty)) => crate::value::encode(ty, value).unwrap_or_default(),
        (Cell::Value(_), None) => Vec::new(),
    };
    let hash = format!("{:08x}", fnv1a(&bytes) >> 32);
    Some(json!({"$redacted": hash, "len": bytes.len()}))
}

/// Replaces the values of a bound-values JSON array.
fn values(values: &[BoundValue], json: Option<&mut Json>) {
    let Some(Json::Array(items)) = json else {
        return;
    };
    for (value, item) in values.iter().zip(items) {
        if let (Some(r), Json::Object(object)) = (redacted(value.ty.as_ref(), &value.value), item) {
            object.remove("value");
            object.remove("bytes");
            object.insert("value".into(), r);
        }
    }
}

/// Redacts the `body` of a message's JSON ([`Message::to_json`]) in place: the rows of a Rows
/// result, the bound values of QUERY, EXECUTE and each BATCH statement.
pub fn redact_json(message: &Message, json: &mut Json) {
    let Some(body) = json.get_mut("body") else {
        return;
    };
    match &message.body {
        Body::Result(ResultBody::Rows(rows)) => {
            let columns = rows.columns.as_ref().unwrap_or(&rows.metadata.columns);
            let Some(Json::Array(out)) = body.get_mut("rows") else {
                return;
            };
            for (row, out) in rows.rows.iter().zip(out) {
                let Json::Array(out) = out else { continue };
                for (c, (cell, out)) in row.iter().zip(out).enumerate() {
                    if let Some(r) = redacted(columns.get(c).map(|col| &col.ty), cell) {
                        *out = r;
                    }
                }
            }
        }
        Body::Query(q) => values(&q.parameters.values, body.get_mut("values")),
        Body::Execute(e) => values(&e.parameters.values, body.get_mut("values")),
        Body::Batch(b) => {
            let Some(Json::Array(out)) = body.get_mut("statements") else {
                return;
            };
            for (statement, out) in b.statements.iter().zip(out) {
                values(&statement.values, out.get_mut("values"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_reference_vectors() {
        // The published FNV-1a 64-bit test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
