//! `encode` / `decode`: one CQL value between Python objects (the JSON shapes of
//! `cqlwire decode --format json`) and its wire bytes.

use crate::{type_error, value_error};
use cqlwire_codec::types::{parse_type, CqlType, UdtRegistry};
use cqlwire_codec::value::{self, json};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value as Json};
use std::borrow::Cow;

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
/// be `int` or `str`, blobs `bytes` or `"0x…"`) as a value of `cql_type`.
///
/// >>> cqlwire.encode("map<text, int>", [["a", 1]]).hex()
/// '0000000100000001610000000400000001'
#[pyfunction]
#[pyo3(signature = (cql_type, value, *, udts = Vec::new()))]
pub(crate) fn encode(
    py: Python<'_>,
    cql_type: &str,
    value: &Bound<'_, PyAny>,
    udts: Vec<String>,
) -> PyResult<Py<PyBytes>> {
    let ty = self::cql_type(cql_type, &udts)?;
    let document = to_json(value, 0)?;
    let parsed = json::from_json(&ty, &document)
        .map_err(|e| value_error(format!("invalid {ty} value: {e}")))?;
    let bytes = value::encode(&ty, &parsed)
        .map_err(|e| value_error(format!("cannot encode as {ty}: {e}")))?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

/// Decodes the bytes of one value of `cql_type` into the JSON shapes of `decode --format json`
/// (lists, dicts for UDTs, `[key, value]` pairs for maps, strings for big numbers, blobs, dates,
/// uuids, NaN and infinities). Trailing bytes are an error.
///
/// >>> cqlwire.decode("list<int>", bytes.fromhex("0000000200000004000000010000000400000002"))
/// [1, 2]
#[pyfunction]
#[pyo3(signature = (cql_type, data, *, udts = Vec::new()))]
pub(crate) fn decode<'py>(
    py: Python<'py>,
    cql_type: &str,
    data: Cow<'_, [u8]>,
    udts: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = self::cql_type(cql_type, &udts)?;
    let decoded = value::decode(&ty, &data).map_err(value_error)?;
    from_json(py, &json::to_json(&ty, &decoded))
}

/// A Python object as JSON: bool, int (beyond 64 bits as a decimal string), float (NaN and the
/// infinities as their strings), str, bytes (as `0x…`), None, list/tuple, dict with str keys.
fn to_json(object: &Bound<'_, PyAny>, depth: usize) -> PyResult<Json> {
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
        return Ok(Json::String(object.str()?.to_cow()?.into_owned()));
    }
    if let Ok(f) = object.cast::<PyFloat>() {
        let x = f.value();
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
    if let Ok(b) = object.cast::<PyBytes>() {
        return Ok(Json::String(format!(
            "0x{}",
            cqlwire_codec::hex::encode(b.as_bytes())
        )));
    }
    if let Ok(d) = object.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in d.iter() {
            let key = key.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err("dict keys must be str (use [key, value] pairs for maps)")
            })?;
            map.insert(key.to_cow()?.into_owned(), to_json(&item, depth + 1)?);
        }
        return Ok(Json::Object(map));
    }
    if object.is_instance_of::<PyList>() || object.is_instance_of::<PyTuple>() {
        let items = object
            .try_iter()?
            .map(|item| to_json(&item?, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Json::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "cannot encode a {} (use None, bool, int, float, str, bytes, list, tuple or dict)",
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
/// are explained up to the fault, then a last line `cqlwire: error: …` says what is wrong.
///
/// >>> print(cqlwire.explain("list<int>", bytes.fromhex("00000001000000040000002a")), end="")
/// 0000  00000001                  element count 1
/// 0004  00000004                    element length 4 [element 0]
/// 0008  0000002a                    int 42 [element 0]
#[pyfunction]
#[pyo3(signature = (cql_type, data, *, udts = Vec::new()))]
pub(crate) fn explain(cql_type: &str, data: Cow<'_, [u8]>, udts: Vec<String>) -> PyResult<String> {
    let ty = self::cql_type(cql_type, &udts)?;
    let explanation = value::explain(&ty, &data);
    let mut text = Vec::new();
    value::explain::write_lines(&mut text, &explanation.lines, &data, 0, 0).map_err(value_error)?;
    let mut text = String::from_utf8_lossy(&text).into_owned();
    if let Err(error) = explanation.result {
        text.push_str(&format!("cqlwire: error: {error}\n"));
    }
    Ok(text)
}
