//! The `scylla` crate's offline codec (1.9.0: `DeserializeValue` / `SerializeValue` of `CqlValue`, from
//! scylla-cql-core, which `scylla` re-exports) on the conformance corpus: reads conformance/cases.jsonl on
//! standard input and writes, per case, the raw line that conformance/drivers/judge.py takes:
//! "unsupported", or "decode_error", or "decoded" and "reencoded" / "reencode_error".

use std::borrow::Cow;
use std::io::{self, BufRead, BufWriter, Write};
use std::sync::Arc;

use scylla_cql_core::deserialize::value::DeserializeValue;
use scylla_cql_core::deserialize::FrameSlice;
use scylla_cql_core::frame::response::result::{
    CollectionType, ColumnType, NativeType, UserDefinedType,
};
use scylla_cql_core::serialize::value::SerializeValue;
use scylla_cql_core::serialize::writers::CellWriter;
use scylla_cql_core::value::CqlValue;
use serde_json::{json, Value};

/// The driver's column type for a `type_tree`.
fn column_type(tree: &Value) -> Result<ColumnType<'static>, String> {
    if let Some(name) = tree.as_str() {
        let native = match name {
            "ascii" => NativeType::Ascii,
            "bigint" => NativeType::BigInt,
            "blob" => NativeType::Blob,
            "boolean" => NativeType::Boolean,
            "counter" => NativeType::Counter,
            "date" => NativeType::Date,
            "decimal" => NativeType::Decimal,
            "double" => NativeType::Double,
            "duration" => NativeType::Duration,
            "float" => NativeType::Float,
            "inet" => NativeType::Inet,
            "int" => NativeType::Int,
            "smallint" => NativeType::SmallInt,
            "text" | "varchar" => NativeType::Text,
            "time" => NativeType::Time,
            "timestamp" => NativeType::Timestamp,
            "timeuuid" => NativeType::Timeuuid,
            "tinyint" => NativeType::TinyInt,
            "uuid" => NativeType::Uuid,
            "varint" => NativeType::Varint,
            other => return Err(format!("unknown type {other}")),
        };
        return Ok(ColumnType::Native(native));
    }
    let parts = tree.as_array().ok_or("bad type tree")?;
    let child = |i: usize| column_type(&parts[i]).map(Box::new);
    let collection = |typ| ColumnType::Collection { frozen: true, typ };
    Ok(match parts[0].as_str().ok_or("bad type tree")? {
        "list" => collection(CollectionType::List(child(1)?)),
        "set" => collection(CollectionType::Set(child(1)?)),
        "map" => collection(CollectionType::Map(child(1)?, child(2)?)),
        "tuple" => ColumnType::Tuple(
            parts[1]
                .as_array()
                .ok_or("bad tuple")?
                .iter()
                .map(column_type)
                .collect::<Result<_, _>>()?,
        ),
        "udt" => {
            let mut field_types = Vec::new();
            for field in parts[2].as_array().ok_or("bad udt")? {
                let name = field[0].as_str().ok_or("bad field")?.to_string();
                field_types.push((Cow::Owned(name), column_type(&field[1])?));
            }
            ColumnType::UserDefinedType {
                frozen: true,
                definition: Arc::new(UserDefinedType {
                    name: Cow::Owned(parts[1].as_str().ok_or("bad udt")?.to_string()),
                    keyspace: Cow::Borrowed("conformance"),
                    field_types,
                }),
            }
        }
        "vector" => ColumnType::Vector {
            typ: child(1)?,
            dimensions: u16::try_from(parts[2].as_u64().ok_or("bad dimension")?)
                .map_err(|e| e.to_string())?,
        },
        other => return Err(format!("unknown type {other}")),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

fn shorten(text: String) -> String {
    text.chars().take(200).collect()
}

fn run(case: &Value) -> Value {
    let id = case["id"].as_str().unwrap_or("?");
    let mut line = json!({"case": id, "driver": "scylla crate 1.9.0 (scylla-cql-core 1.9.0)"});
    let typ = match column_type(&case["type_tree"]) {
        Ok(typ) => typ,
        Err(why) => {
            line["unsupported"] = json!(why);
            return line;
        }
    };
    let data = unhex(case["hex"].as_str().unwrap_or(""));
    let decoded = match CqlValue::deserialize(&typ, Some(FrameSlice::new_borrowed(&data))) {
        Ok(value) => value,
        Err(error) => {
            line["decode_error"] = json!(shorten(error.to_string()));
            return line;
        }
    };
    line["decoded"] = json!(shorten(format!("{decoded:?}")));
    let mut buffer = Vec::new();
    let written = decoded
        .serialize(&typ, CellWriter::new(&mut buffer))
        .map(|_| ())
        .map_err(|error| shorten(error.to_string()));
    match written {
        Err(error) => line["reencode_error"] = json!(error),
        // The writer puts the value's [int length] before it, -1 for null.
        Ok(()) if buffer.len() >= 4 && buffer[..4] == [0xff; 4] => {
            line["reencode_error"] = json!("encoded as null (no value)");
        }
        Ok(()) => line["reencoded"] = json!(hex(&buffer[4.min(buffer.len())..])),
    }
    line
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    for text in stdin.lock().lines() {
        let case: Value = serde_json::from_str(&text?).map_err(io::Error::other)?;
        writeln!(out, "{}", run(&case))?;
        out.flush()?; // one line per case even if the driver brings the process down later
    }
    out.flush()
}
