//! `encode` / `decode`: one CQL value between Python objects (the JSON shapes of
//! `cqlwire decode --format json`) and its wire bytes.

use crate::{type_error, value_error};
use cqlwire_codec::types::{parse_type, CqlType, NativeType, UdtRegistry};
use cqlwire_codec::value::{self, json, refused};
use pyo3::exceptions::{PyTypeError, PyUserWarning};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple,
};
use serde_json::{Map, Number, Value as Json};

/// Nesting accepted when turning Python objects into JSON (deeper values are refused, not a crash).
const MAX_DEPTH: usize = 256;

/// Parses `cql_type` after declaring `udts` (`name(field type, ...)`, later ones may use earlier).
pub(crate) fn cql_type(text: &str, udts: &[String]) -> PyResult<CqlType> {
    let mut registry = UdtRegistry::new();
    for declaration in udts {
        registry
            .declare(declaration)
            .map_err(|e| type_error(format!("invalid udt {declaration:?}: {e}")))?;
    }
    parse_type(text, &registry).map_err(|e| type_error(format!("invalid type {text:?}: {e}")))
}

/// Encodes `value` (JSON-shaped: numbers, strings, lists, dicts, None; big integers and decimals may
/// be `int` or `str`, blobs `bytes` or `"0x…"`, sets `set`s, maps dicts with any keys) as a value
/// of `cql_type`.
///
/// >>> cqlwire.encode("map<text, int>", [["a", 1]]).hex()
/// '0000000100000001610000000400000001'
#[pyfunction]
#[pyo3(signature = (cql_type, value, *, udts = None))]
pub(crate) fn encode(
    py: Python<'_>,
    cql_type: &str,
    value: &Bound<'_, PyAny>,
    udts: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyBytes>> {
    let ty = self::cql_type(cql_type, &declarations(udts)?)?;
    let document = to_json(value, Some(&ty), 0)?;
    let parsed = json::from_json(&ty, &document)
        .map_err(|e| value_error(format!("invalid {ty} value: {e}")))?;
    let bytes = value::encode(&ty, &parsed)
        .map_err(|e| value_error(format!("cannot encode as {ty}: {e}")))?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

pyo3::create_exception!(
    cqlwire,
    RefusedValueWarning,
    PyUserWarning,
    "Wire-legal bytes that Apache Cassandra refuses (a null or empty element in a list, set or map; \
     the empty value of smallint, tinyint, date, time, duration or counter): `decode` warns with \
     this category once per finding, and raises ValueError instead with `strict=True`."
);

/// Decodes the bytes of one value of `cql_type` into the JSON shapes of `decode --format json`
/// (lists, dicts for UDTs, `[key, value]` pairs for maps, strings for big numbers, blobs, dates,
/// uuids, NaN and infinities). Trailing bytes are an error.
///
/// Bytes Apache Cassandra refuses (a null or empty element in a list, set or map; the empty value
/// of smallint, tinyint, date, time, duration or counter) are decoded all the same, with one
/// `cqlwire.RefusedValueWarning` per finding (at most 100), worded as the command line's; with
/// `strict=True` they raise ValueError (the first finding's text) instead.
///
/// >>> cqlwire.decode("list<int>", bytes.fromhex("0000000200000004000000010000000400000002"))
/// [1, 2]
#[pyfunction]
#[pyo3(signature = (cql_type, data, *, udts = None, strict = false))]
pub(crate) fn decode<'py>(
    py: Python<'py>,
    cql_type: &str,
    data: &Bound<'py, PyAny>,
    udts: Option<&Bound<'py, PyAny>>,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = self::cql_type(cql_type, &declarations(udts)?)?;
    let data = crate::bytes_argument(data, "data")?;
    let decoded = value::decode(&ty, &data).map_err(value_error)?;
    let findings = refused::refusal_lines(&ty, &data, false).map_err(value_error)?;
    if strict {
        if let Some(first) = findings.lines.first() {
            let more = findings.total - 1;
            return Err(value_error(if more == 0 {
                first.clone()
            } else {
                format!("{first} (and {more} more; strict=False warns once for each)")
            }));
        }
    }
    let category = py.get_type::<RefusedValueWarning>();
    for finding in &findings.lines {
        let message = std::ffi::CString::new(finding.as_str()).map_err(value_error)?;
        PyErr::warn(py, &category, &message, 1)?;
    }
    from_json(py, &json::to_json(&ty, &decoded))
}

/// The `udts` argument: a list or tuple of declarations (`name(field type, ...)`); a lone string is
/// refused rather than read as a sequence of one-character declarations.
fn declarations(udts: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(udts) = udts else {
        return Ok(Vec::new());
    };
    let refused =
        || {
            PyTypeError::new_err(format!(
            "udts must be a list of declarations such as ['addr(street text, zip int)'], not a {}",
            udts.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
        };
    if udts.is_instance_of::<PyString>() || udts.is_instance_of::<PyBytes>() {
        return Err(refused());
    }
    let items = udts.try_iter().map_err(|_| refused())?;
    items
        .map(|item| item?.extract::<String>().map_err(|_| refused()))
        .collect()
}

/// The type of the items of a JSON array read as `ty`: a list, set or vector's element type, a
/// map's `[key, value]` pair (as a tuple of the two), else none known.
fn item_type(ty: Option<&CqlType>, index: usize) -> Option<CqlType> {
    match ty? {
        CqlType::List(element) | CqlType::Set(element) | CqlType::Vector(element, _) => {
            Some(element.as_ref().clone())
        }
        CqlType::Map(key, value) => Some(CqlType::Tuple(vec![
            key.as_ref().clone(),
            value.as_ref().clone(),
        ])),
        CqlType::Tuple(components) => components.get(index).cloned(),
        _ => None,
    }
}

/// The type of the value under `key` of a JSON object read as `ty`: a UDT's field, a map's value.
fn entry_type<'t>(ty: Option<&'t CqlType>, key: &str) -> Option<&'t CqlType> {
    match ty? {
        CqlType::Udt(udt) => udt.fields.iter().find(|(n, _)| n == key).map(|(_, t)| t),
        CqlType::Map(_, value) => Some(value),
        _ => None,
    }
}

/// A Python int as decimal text, through its bytes (no limit on the digits, unlike `str(int)`).
fn int_text(object: &Bound<'_, PyAny>) -> PyResult<String> {
    let bits: usize = object.call_method0("bit_length")?.extract()?;
    let signed = pyo3::types::PyDict::new(object.py());
    signed.set_item("signed", true)?;
    let bytes = object.call_method("to_bytes", (bits / 8 + 1, "big"), Some(&signed))?;
    let bytes = bytes.cast::<PyBytes>()?;
    Ok(num_bigint::BigInt::from_signed_bytes_be(bytes.as_bytes()).to_string())
}

/// A Python object as JSON for a value of `ty` (None where not known): bool, int (beyond 64 bits
/// as a decimal string), float (NaN and the infinities as their strings; for a float type rounded
/// to float first, as the driver's `struct.pack('>f')`), str, bytes or bytearray (as `0x…`, for a
/// blob only), None, list/tuple/set/frozenset, dict (with keys other than str only for a map:
/// then as `[key, value]` pairs).
fn to_json(object: &Bound<'_, PyAny>, ty: Option<&CqlType>, depth: usize) -> PyResult<Json> {
    if depth > MAX_DEPTH {
        return Err(value_error(format!(
            "the value nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if object.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = object.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(i) = object.extract::<i64>() {
            return Ok(Json::from(i));
        }
        if let Ok(u) = object.extract::<u64>() {
            return Ok(Json::from(u));
        }
        return Ok(Json::String(int_text(object)?));
    }
    if let Ok(f) = object.cast::<PyFloat>() {
        let mut x = f.value();
        if ty == Some(&CqlType::Native(NativeType::Float)) && (x as f32).is_finite() {
            // Rounded once, from the double (a float's shortest text read as float could round
            // the other way): the float it gives is exactly a double, written in full.
            x = f64::from(x as f32);
        }
        return Ok(Number::from_f64(x).map_or_else(
            || {
                Json::String(
                    if x.is_nan() {
                        "NaN"
                    } else if x > 0.0 {
                        "Infinity"
                    } else {
                        "-Infinity"
                    }
                    .to_string(),
                )
            },
            Json::Number,
        ));
    }
    if let Ok(s) = object.cast::<PyString>() {
        return Ok(Json::String(s.to_cow()?.into_owned()));
    }
    if object.is_instance_of::<PyBytes>() || object.is_instance_of::<PyByteArray>() {
        if let Some(other) = ty.filter(|t| **t != CqlType::Native(NativeType::Blob)) {
            return Err(PyTypeError::new_err(format!(
                "bytes are a blob value, not {other} (decode them to str first for text)"
            )));
        }
        let bytes: Vec<u8> = object.extract()?;
        return Ok(Json::String(format!(
            "0x{}",
            cqlwire_codec::hex::encode(&bytes)
        )));
    }
    if let Ok(d) = object.cast::<PyDict>() {
        if let Some(CqlType::Map(key_type, value_type)) = ty {
            if d.keys().iter().any(|k| !k.is_instance_of::<PyString>()) {
                // Keys other than text (`{1: 2}`) as `[key, value]` pairs, each by its type.
                let pairs = d.iter().map(|(key, item)| {
                    Ok(Json::Array(vec![
                        to_json(&key, Some(key_type), depth + 1)?,
                        to_json(&item, Some(value_type), depth + 1)?,
                    ]))
                });
                return Ok(Json::Array(pairs.collect::<PyResult<_>>()?));
            }
        }
        let mut map = Map::new();
        for (key, item) in d.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err("dict keys must be str (use [key, value] pairs for maps)")
            })?;
            let key = key.to_cow()?.into_owned();
            let value = to_json(&item, entry_type(ty, &key), depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Json::Object(map));
    }
    let sequence = object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>();
    // A set's elements in its iteration order, as the driver writes them.
    let set = object.is_instance_of::<PySet>() || object.is_instance_of::<PyFrozenSet>();
    if sequence || set {
        let items = object
            .try_iter()?
            .enumerate()
            .map(|(i, item)| to_json(&item?, item_type(ty, i).as_ref(), depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Json::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "cannot encode a {} (use None, bool, int, float, str, bytes, list, tuple, set or dict)",
        object.get_type().name()?
    )))
}

/// JSON as Python objects.
fn from_json<'py>(py: Python<'py>, json: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match json {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            (None, None) => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Json::String(s) => PyString::new(py, s).into_any(),
        Json::Array(items) => {
            let items = items
                .iter()
                .map(|item| from_json(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Json::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, from_json(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// An annotated dump of the bytes of one value of `cql_type`, as `cqlwire decode --format explain`
/// prints it: one line per wire item (offset, bytes, meaning, path in the value). Malformed bytes
/// are explained up to the fault, then a last line `cqlwire: error: …` says what is wrong. Bytes
/// Apache Cassandra refuses get a last line `cqlwire: warning: …` per finding, as `decode` warns.
///
/// >>> print(cqlwire.explain("list<int>", bytes.fromhex("00000001000000040000002a")), end="")
/// 0000  00000001                  element count 1
/// 0004  00000004                    element length 4 [element 0]
/// 0008  0000002a                    int 42 [element 0]
#[pyfunction]
#[pyo3(signature = (cql_type, data, *, udts = None))]
pub(crate) fn explain(
    cql_type: &str,
    data: &Bound<'_, PyAny>,
    udts: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let ty = self::cql_type(cql_type, &declarations(udts)?)?;
    let data = crate::bytes_argument(data, "data")?;
    let explanation = value::explain(&ty, &data);
    let mut text = Vec::new();
    value::explain::write_lines(&mut text, &explanation.lines, &data, 0, 0).map_err(value_error)?;
    let mut text = String::from_utf8_lossy(&text).into_owned();
    match explanation.result {
        Err(error) => text.push_str(&format!("cqlwire: error: {error}\n")),
        Ok(_) => {
            let findings = refused::refusal_lines(&ty, &data, false).map_err(value_error)?;
            for finding in findings.lines {
                text.push_str(&format!("cqlwire: warning: {finding}\n"));
            }
        }
    }
    Ok(text)
}
