//! Lossless JSON for values: [`to_json`] and its inverse [`from_json`], guided by the type.
//!
//! | CQL type | JSON |
//! | --- | --- |
//! | tinyint, smallint, int, bigint, counter | number |
//! | varint, decimal | string (`"-12"`, `"1.50"`, `"1E+3"`) |
//! | float, double | number in shortest round-trip form; `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | boolean | `true` / `false` |
//! | text, ascii, varchar | string |
//! | blob | `"0x…"` |
//! | uuid, timeuuid, inet, duration | string in the CQL form |
//! | timestamp, date, time | string in the CQL form; a number (raw millis, wire days, nanos) when out of range |
//! | list, set, vector, tuple | array (a tuple that ended early is shorter) |
//! | map | array of `[key, value]` pairs |
//! | UDT | object in field order (fields missing at the end are omitted) |
//! | null / empty | `null` / `{"$empty": true}` |
//!
//! [`from_json`] also accepts numbers as strings and vice versa where unambiguous, and a JSON object
//! for a map (keys read as the key type's text form).

use super::cql::{
    date_text, decimal_text, double_text, duration_text, element_type, entry_types, float_text,
    native_from_text, time_text, timestamp_text, LiteralError, MAX_LITERAL_DEPTH,
};
use crate::types::{CqlType, NativeType};
use crate::value::Value;
use serde_json::{json, Map, Number, Value as Json};

/// The key of the object that stands for the empty value: `{"$empty": true}`.
const EMPTY_KEY: &str = "$empty";

/// A finite float as a JSON number, else its `NaN`/`Infinity` string.
fn float_json(text: String, x: f64) -> Json {
    if !x.is_finite() {
        return Json::String(text);
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or(Json::String(text), Json::Number)
}

/// A JSON object key (a UDT field name) as JSON text: quoted and escaped.
pub(crate) fn to_json_string(name: &str) -> String {
    Json::String(name.to_owned()).to_string()
}

/// Converts a value to lossless JSON (see the module documentation for the mapping).
pub fn to_json(ty: &CqlType, value: &Value) -> Json {
    json_of(Some(ty), value)
}

fn json_of(ty: Option<&CqlType>, value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Empty => json!({ EMPTY_KEY: true }),
        Value::Boolean(b) => Json::Bool(*b),
        Value::TinyInt(n) => json!(n),
        Value::SmallInt(n) => json!(n),
        Value::Int(n) => json!(n),
        Value::BigInt(n) => json!(n),
        Value::Varint(n) => Json::String(n.to_string()),
        Value::Float(x) => float_json(float_text(*x), f64::from(*x)),
        Value::Double(x) => float_json(double_text(*x), *x),
        Value::Decimal { unscaled, scale } => Json::String(decimal_text(unscaled, *scale)),
        Value::Text(s) => Json::String(s.clone()),
        Value::Blob(b) => Json::String(format!("0x{}", crate::hex::encode(b))),
        Value::Uuid(u) => Json::String(u.hyphenated().to_string()),
        Value::Inet(ip) => Json::String(ip.to_string()),
        Value::Timestamp(ms) => timestamp_text(*ms).map_or_else(|| json!(ms), Json::String),
        Value::Date(d) => date_text(*d).map_or_else(|| json!(d), Json::String),
        Value::Time(n) => time_text(*n).map_or_else(|| json!(n), Json::String),
        Value::Duration {
            months,
            days,
            nanoseconds,
        } => Json::String(duration_text(*months, *days, *nanoseconds)),
        Value::List(items) => {
            let element = element_type(ty);
            Json::Array(items.iter().map(|v| json_of(element, v)).collect())
        }
        Value::Map(entries) => {
            let (key_type, value_type) = entry_types(ty);
            Json::Array(
                entries
                    .iter()
                    .map(|(k, v)| Json::Array(vec![json_of(key_type, k), json_of(value_type, v)]))
                    .collect(),
            )
        }
        Value::Tuple(components) => Json::Array(
            components
                .iter()
                .enumerate()
                .map(|(i, v)| json_of(super::cql::component_type(ty, i), v))
                .collect(),
        ),
        Value::Udt(fields) => Json::Object(
            fields
                .iter()
                .map(|(name, v)| (name.clone(), json_of(super::cql::field_type(ty, name), v)))
                .collect::<Map<String, Json>>(),
        ),
    }
}

/// Reads a value of the type from JSON (the inverse of [`to_json`]); refuses what the binary codec
/// cannot encode, as [`super::cql::parse_cql`] does. Errors name the path in the value.
pub fn from_json(ty: &CqlType, json: &Json) -> Result<Value, LiteralError> {
    let mut reader = Reader { path: Vec::new() };
    super::cql::encodable(ty, reader.value(ty, json, 0)?)
}

/// The path to the JSON value being read, for error messages.
struct Reader {
    path: Vec<String>,
}

/// A short description of a JSON value's kind, for error messages.
fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

impl Reader {
    fn error(&self, message: impl Into<String>) -> LiteralError {
        LiteralError {
            message: message.into(),
            position: None,
            path: self.path.join(" / "),
        }
    }

    /// Reads `json` as `ty` with `segment` pushed on the path.
    fn nested(
        &mut self,
        segment: String,
        ty: &CqlType,
        json: &Json,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        self.path.push(segment);
        let value = self.value(ty, json, depth + 1)?;
        self.path.pop();
        Ok(value)
    }

    fn array<'j>(&self, ty: &CqlType, json: &'j Json) -> Result<&'j Vec<Json>, LiteralError> {
        json.as_array()
            .ok_or_else(|| self.error(format!("expected an array for {ty}, found {}", kind(json))))
    }

    fn value(&mut self, ty: &CqlType, json: &Json, depth: usize) -> Result<Value, LiteralError> {
        if depth > MAX_LITERAL_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_LITERAL_DEPTH} levels")));
        }
        if json.is_null() {
            return Ok(Value::Null);
        }
        if let Some(object) = json.as_object() {
            if object.len() == 1 && object.get(EMPTY_KEY) == Some(&Json::Bool(true)) {
                return if super::cql::has_empty_value(ty) {
                    Ok(Value::Empty)
                } else {
                    Err(self.error(format!("a {ty} value cannot be empty")))
                };
            }
        }
        match ty {
            CqlType::Native(native) => self.native(*native, json),
            CqlType::List(element) | CqlType::Set(element) => {
                self.elements(element, ty, json, depth)
            }
            CqlType::Vector(element, dimension) => {
                let value = self.elements(element, ty, json, depth)?;
                match &value {
                    Value::List(items) if items.len() != *dimension => Err(self.error(format!(
                        "{ty} needs {dimension} elements, found {}",
                        items.len()
                    ))),
                    _ => Ok(value),
                }
            }
            CqlType::Map(key_type, value_type) => {
                let mut entries = Vec::new();
                if let Some(object) = json.as_object() {
                    for (i, (key, value)) in object.iter().enumerate() {
                        let key = self.nested(
                            format!("map key #{i}"),
                            key_type,
                            &Json::String(key.clone()),
                            depth,
                        )?;
                        let value =
                            self.nested(format!("map value #{i}"), value_type, value, depth)?;
                        entries.push((key, value));
                    }
                    return Ok(Value::Map(entries));
                }
                for (i, pair) in self.array(ty, json)?.iter().enumerate() {
                    let (key, value) = match pair.as_array().map(Vec::as_slice) {
                        Some([key, value]) => (key, value),
                        _ => {
                            self.path.push(format!("map entry #{i}"));
                            return Err(self.error(format!(
                                "expected a [key, value] pair, found {}",
                                kind(pair)
                            )));
                        }
                    };
                    let key = self.nested(format!("map key #{i}"), key_type, key, depth)?;
                    let value = self.nested(format!("map value #{i}"), value_type, value, depth)?;
                    entries.push((key, value));
                }
                Ok(Value::Map(entries))
            }
            CqlType::Tuple(component_types) => {
                let items = self.array(ty, json)?;
                if items.len() > component_types.len() {
                    return Err(self.error(format!(
                        "{ty} has {} components, found {}",
                        component_types.len(),
                        items.len()
                    )));
                }
                let mut components = Vec::new();
                for (i, (item, component_type)) in items.iter().zip(component_types).enumerate() {
                    components.push(self.nested(
                        format!("component {i}"),
                        component_type,
                        item,
                        depth,
                    )?);
                }
                Ok(Value::Tuple(components))
            }
            CqlType::Udt(udt) => {
                let object = json.as_object().ok_or_else(|| {
                    self.error(format!(
                        "expected an object for {}, found {}",
                        udt.name,
                        kind(json)
                    ))
                })?;
                if let Some(unknown) = object
                    .keys()
                    .find(|k| !udt.fields.iter().any(|(n, _)| n == *k))
                {
                    return Err(self.error(format!("{} has no field {unknown:?}", udt.name)));
                }
                let present = udt
                    .fields
                    .iter()
                    .rposition(|(name, _)| object.contains_key(name))
                    .map_or(0, |i| i + 1);
                let mut fields = Vec::new();
                for (name, field_type) in udt.fields.iter().take(present) {
                    let value = match object.get(name) {
                        Some(field) => {
                            self.nested(format!("field {name}"), field_type, field, depth)?
                        }
                        None => Value::Null,
                    };
                    fields.push((name.clone(), value));
                }
                Ok(Value::Udt(fields))
            }
        }
    }

    /// Reads the elements of a list, set or vector.
    fn elements(
        &mut self,
        element: &CqlType,
        ty: &CqlType,
        json: &Json,
        depth: usize,
    ) -> Result<Value, LiteralError> {
        let mut items = Vec::new();
        for (i, item) in self.array(ty, json)?.iter().enumerate() {
            items.push(self.nested(format!("element {i}"), element, item, depth)?);
        }
        Ok(Value::List(items))
    }

    /// Reads a native value: JSON booleans and numbers directly, strings through the CQL text forms.
    fn native(&self, native: NativeType, json: &Json) -> Result<Value, LiteralError> {
        use NativeType as N;
        let text = match (native, json) {
            (N::Boolean, Json::Bool(b)) => return Ok(Value::Boolean(*b)),
            (N::Float, Json::Number(n)) if !n.is_i64() && !n.is_u64() => {
                let x = n.as_f64().ok_or_else(|| self.error("invalid float"))?;
                let narrowed = x as f32;
                if narrowed.is_infinite() {
                    return Err(self.error(format!("{x} is out of range for float")));
                }
                return Ok(Value::Float(narrowed));
            }
            (N::Double, Json::Number(n)) if !n.is_i64() && !n.is_u64() => {
                return n
                    .as_f64()
                    .map(Value::Double)
                    .ok_or_else(|| self.error("invalid double"));
            }
            (N::Text | N::Ascii | N::Blob, Json::String(s)) => s.clone(),
            (N::Text | N::Ascii | N::Blob, other) => {
                return Err(self.error(format!(
                    "expected a string for {native}, found {}",
                    kind(other)
                )))
            }
            (_, Json::Number(n)) => n.to_string(),
            (_, Json::String(s)) => s.clone(),
            (_, other) => {
                return Err(self.error(format!("expected {native}, found {}", kind(other))));
            }
        };
        native_from_text(native, &text).map_err(|message| self.error(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    fn native(n: NativeType) -> CqlType {
        CqlType::Native(n)
    }

    fn round_trip(ty: &CqlType, value: Value) -> Json {
        let json = to_json(ty, &value);
        assert_eq!(from_json(ty, &json), Ok(value), "{json}");
        json
    }

    #[test]
    fn scalars() {
        assert_eq!(
            round_trip(&native(NativeType::Float), Value::Float(0.1)),
            json!(0.1)
        );
        assert_eq!(
            round_trip(&native(NativeType::Double), Value::Double(f64::NAN)),
            json!("NaN")
        );
        assert_eq!(
            round_trip(&native(NativeType::Float), Value::Float(f32::NEG_INFINITY)),
            json!("-Infinity")
        );
        round_trip(&native(NativeType::Double), Value::Double(-0.0));
        round_trip(&native(NativeType::Double), Value::Double(1.0));
        assert_eq!(
            round_trip(
                &native(NativeType::Varint),
                Value::Varint(BigInt::from(i128::MIN))
            ),
            json!(i128::MIN.to_string())
        );
        assert_eq!(
            round_trip(&native(NativeType::Int), Value::Empty),
            json!({"$empty": true})
        );
        assert_eq!(
            round_trip(&native(NativeType::Date), Value::Date(7)),
            json!(7)
        );
        assert_eq!(
            round_trip(&native(NativeType::Blob), Value::Blob(vec![1, 0xab])),
            json!("0x01ab")
        );
        round_trip(&native(NativeType::BigInt), Value::BigInt(i64::MIN));
        assert!(from_json(&native(NativeType::TinyInt), &json!(128)).is_err());
        assert!(from_json(&native(NativeType::Text), &json!(1)).is_err());
    }

    #[test]
    fn floats_survive_the_trip_through_a_json_double() {
        // A stride across the whole bit space: finite floats, subnormals, both signs.
        let ty = native(NativeType::Float);
        for bits in (0..=u32::MAX).step_by(40_009) {
            let x = f32::from_bits(bits);
            let back = from_json(&ty, &to_json(&ty, &Value::Float(x)));
            assert_eq!(back, Ok(Value::Float(x)), "{bits:#010x}");
        }
    }

    #[test]
    fn composites() {
        let ty = CqlType::Map(
            Box::new(native(NativeType::Text)),
            Box::new(CqlType::Tuple(vec![
                native(NativeType::Int),
                native(NativeType::Text),
            ])),
        );
        let value = Value::Map(vec![(
            Value::Text("k".into()),
            Value::Tuple(vec![Value::Int(1)]),
        )]);
        assert_eq!(round_trip(&ty, value), json!([["k", [1]]]));
        assert_eq!(
            from_json(&ty, &json!({"k": [1, "x"]})),
            Ok(Value::Map(vec![(
                Value::Text("k".into()),
                Value::Tuple(vec![Value::Int(1), Value::Text("x".into())])
            )]))
        );
        let udt = CqlType::Udt(crate::types::UdtType {
            keyspace: None,
            name: "addr".into(),
            fields: vec![
                ("street".into(), native(NativeType::Text)),
                ("zip".into(), native(NativeType::Int)),
            ],
        });
        assert_eq!(
            round_trip(&udt, Value::Udt(vec![("street".into(), Value::Null)])),
            json!({"street": null})
        );
        assert_eq!(
            from_json(&udt, &json!({"zip": 5})),
            Ok(Value::Udt(vec![
                ("street".into(), Value::Null),
                ("zip".into(), Value::Int(5))
            ]))
        );
        let error =
            from_json(&CqlType::List(Box::new(udt)), &json!([{}, {"zip": "x"}])).unwrap_err();
        assert_eq!(error.path, "element 1 / field zip");
    }
}
