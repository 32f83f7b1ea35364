//! The one rule of both text forms (CQL literals and JSON) for repeats: a map key or a set element
//! given twice is an error, as is a UDT field (refused where the field names are read).
//!
//! Apache Cassandra keeps one of the repeats (the last map value) and ScyllaDB may keep another,
//! so writing them all, or picking one, would give bytes that do not say what the server stores.
//! Two keys are the same when their bytes are: `{1: 1, 01: 2}` repeats the key `1`.

use super::cql::{format_cql, LiteralError, LiteralErrorKind};
use crate::types::CqlType;
use crate::value::Value;
use std::collections::HashMap;

/// Longest key or element text quoted in the error (longer ones end with `…`).
const QUOTED_CHARS: usize = 64;

/// Checks every map, set and nested value of `value` for a key or element given twice (what the
/// text forms refuse; a decoded payload may hold such repeats).
pub fn check_no_repeats(ty: &CqlType, value: &Value) -> Result<(), LiteralError> {
    let mut path = Vec::new();
    walk(ty, value, &mut path)
}

/// Checks `value` (of `ty`) with `path` leading to it.
fn walk(ty: &CqlType, value: &Value, path: &mut Vec<String>) -> Result<(), LiteralError> {
    match (ty, value) {
        (CqlType::Set(element), Value::List(items)) => {
            first_repeat(element, items.iter(), path, "set element")?;
            each(
                items.iter().map(|item| (element.as_ref(), item)),
                path,
                |i| format!("element {i}"),
            )
        }
        (CqlType::List(element) | CqlType::Vector(element, _), Value::List(items)) => each(
            items.iter().map(|item| (element.as_ref(), item)),
            path,
            |i| format!("element {i}"),
        ),
        (CqlType::Map(key, item), Value::Map(entries)) => {
            first_repeat(key, entries.iter().map(|(k, _)| k), path, "map key")?;
            each(entries.iter().map(|(k, _)| (key.as_ref(), k)), path, |i| {
                format!("map key #{i}")
            })?;
            each(entries.iter().map(|(_, v)| (item.as_ref(), v)), path, |i| {
                format!("map value #{i}")
            })
        }
        (CqlType::Tuple(types), Value::Tuple(components)) => {
            each(types.iter().zip(components), path, |i| {
                format!("component {i}")
            })
        }
        (CqlType::Udt(udt), Value::Udt(fields)) => {
            for (name, field) in fields {
                if let Some((_, field_type)) = udt.fields.iter().find(|(n, _)| n == name) {
                    path.push(format!("field {name}"));
                    walk(field_type, field, path)?;
                    path.pop();
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Walks each `(type, value)` with the path segment `segment(index)` pushed.
fn each<'a>(
    items: impl Iterator<Item = (&'a CqlType, &'a Value)>,
    path: &mut Vec<String>,
    segment: impl Fn(usize) -> String,
) -> Result<(), LiteralError> {
    for (i, (ty, value)) in items.enumerate() {
        path.push(segment(i));
        walk(ty, value, path)?;
        path.pop();
    }
    Ok(())
}

/// Fails on the first of `keys` (of type `ty`) whose bytes equal an earlier one's; `what` names
/// them in the error (`map key`, `set element`).
fn first_repeat<'a>(
    ty: &CqlType,
    keys: impl Iterator<Item = &'a Value>,
    path: &[String],
    what: &'static str,
) -> Result<(), LiteralError> {
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for (i, key) in keys.enumerate() {
        // A key the codec refuses is reported by the codec, with its own message.
        let Ok(bytes) = super::encode(ty, key) else {
            continue;
        };
        if let Some(first) = seen.insert(bytes, i) {
            let mut text = format_cql(ty, key);
            if let Some((cut, _)) = text.char_indices().nth(QUOTED_CHARS) {
                text.truncate(cut);
                text.push('…');
            }
            return Err(LiteralError {
                kind: LiteralErrorKind::Repeated {
                    what,
                    text,
                    first,
                    second: i,
                },
                position: None,
                path: path.join(" / "),
            });
        }
    }
    Ok(())
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use crate::types::{parse_type, UdtRegistry};
    use crate::value::cql::parse_cql;
    use crate::value::json::{from_json, parse_document};

    /// The error of reading `text` as `ty` in the CQL form, or with `json` in the JSON form.
    fn refusal(ty: &str, text: &str, json: bool) -> String {
        let ty = parse_type(ty, &UdtRegistry::new()).unwrap();
        let result = if json {
            from_json(&ty, &parse_document(text).unwrap())
        } else {
            parse_cql(&ty, text)
        };
        result.unwrap_err().to_string()
    }

    #[test]
    fn repeats_are_named_with_both_places_and_the_path() {
        assert_eq!(
            refusal("map<int, text>", "{1: 'a', 2: 'b', +1: 'c'}", false),
            "key 1 given twice (map key #0 and #2)"
        );
        assert_eq!(
            refusal("tuple<int, set<blob>>", "[1, [\"0x00\", \"0X00\"]]", true),
            "element 0x00 given twice (set element #0 and #1) (component 1)"
        );
        let long = format!("{{'{0}', '{0}'}}", "x".repeat(100));
        let message = refusal("set<text>", &long, false);
        assert!(message.starts_with(&format!("element '{}…", "x".repeat(63))));
    }

    #[test]
    fn an_object_with_a_repeated_key_is_refused_at_any_depth() {
        assert!(parse_document(r#"[1, {"a": {"b": 1, "c": 2}}]"#).is_ok());
        let error = parse_document(r#"[1, {"a": {"b": 1, "b": 2}}]"#).unwrap_err();
        assert!(error
            .to_string()
            .starts_with(r#"key "b" given twice in an object"#));
    }
}
