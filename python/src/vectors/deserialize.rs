//! The bytes of CQL `vector<T, N>` values back to NumPy arrays.

use super::*;

/// The NumPy dtype that holds the elements of a vector type, for reading values back.
#[derive(Debug, Clone, Copy)]
pub(super) enum Reading {
    F32,
    F64,
    I32,
    I64,
    Bool,
    /// Variable-size elements (tinyint, smallint): decoded value by value.
    I8,
    I16,
}

impl Reading {
    pub(super) fn of(ty: &CqlType) -> PyResult<(Reading, usize)> {
        let unsupported = || {
            type_error(format!(
                "deserialize_vectors reads vectors of float, double, int, bigint, timestamp, \
                 boolean, smallint or tinyint, not {ty} (use decode() for other types)"
            ))
        };
        let CqlType::Vector(element, dimension) = ty else {
            return Err(unsupported());
        };
        if *dimension == 0 {
            return Err(value_error(format!("{ty} has no elements")));
        }
        let reading = match element.as_ref() {
            CqlType::Native(NativeType::Float) => Reading::F32,
            CqlType::Native(NativeType::Double) => Reading::F64,
            CqlType::Native(NativeType::Int) => Reading::I32,
            CqlType::Native(NativeType::BigInt | NativeType::Timestamp) => Reading::I64,
            CqlType::Native(NativeType::Boolean) => Reading::Bool,
            CqlType::Native(NativeType::TinyInt) => Reading::I8,
            CqlType::Native(NativeType::SmallInt) => Reading::I16,
            _ => return Err(unsupported()),
        };
        Ok((reading, *dimension))
    }
}

/// The numbers whose NumPy arrays are filled straight from vector values' bytes: no padding, every
/// bit pattern a value.
trait PlainNumber: numpy::Element + Send + Copy {}

impl PlainNumber for f32 {}
impl PlainNumber for f64 {}
impl PlainNumber for i32 {}
impl PlainNumber for i64 {}

/// The bytes of `out`, to be filled in place.
fn number_bytes<T: PlainNumber>(out: &mut [T]) -> &mut [u8] {
    // SAFETY: a `PlainNumber` has no padding and every bit pattern is one of its values, so its
    // slice is as many initialized bytes, which any byte written keeps valid.
    unsafe {
        std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(out))
    }
}

/// A new `rows × dimension` NumPy array of `T` filled by `fill` (the GIL released when large).
fn new_array<'py, T: numpy::Element + Send>(
    py: Python<'py>,
    rows: usize,
    dimension: usize,
    fill: impl FnOnce(&mut [T]) + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let array = PyArray2::<T>::zeros(py, [rows, dimension], false);
    {
        let mut view = array.readwrite();
        let out = view.as_slice_mut().map_err(value_error)?;
        maybe_detach(py, rows * dimension >= DETACH_ELEMENTS, || fill(out));
    }
    Ok(array.into_any())
}

/// A new `rows × dimension` NumPy array of the big-endian elements of `bytes`, in native order.
fn read_be<'py, T: PlainNumber>(
    py: Python<'py>,
    (rows, dimension): (usize, usize),
    bytes: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    new_array(py, rows, dimension, |out: &mut [T]| {
        elements_to_native(bytes, number_bytes(out), std::mem::size_of::<T>())
    })
}

/// Reads CQL `vector<T, N>` values back into a `rows × N` NumPy array in native byte order.
///
/// `data` is the values concatenated (`bytes`, as `serialize_vectors(..., format="raw")` makes
/// them) or a sequence of `bytes`, one value each. `T` is float (float32), double (float64), int
/// (int32), bigint or timestamp (int64), boolean (bool), smallint (int16) or tinyint (int8).
///
/// >>> cqlwire.deserialize_vectors(bytes.fromhex("3f80000040000000"), "vector<float, 2>")
/// array([[1., 2.]], dtype=float32)
#[pyfunction]
pub(crate) fn deserialize_vectors<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    cql_type: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let ty = values::cql_type(cql_type, &[])?;
    let (reading, dimension) = Reading::of(&ty)?;
    let joined;
    let bytes: &[u8] = match data.cast::<PyBytes>() {
        Ok(bytes) => bytes.as_bytes(),
        Err(_) => {
            let mut all = Vec::new();
            for (i, item) in data.try_iter()?.enumerate() {
                let item = item?;
                let value = item.cast::<PyBytes>().map_err(|_| {
                    type_error(format!(
                        "value {i} is not bytes (data: bytes or a sequence of bytes)"
                    ))
                })?;
                all.extend_from_slice(value.as_bytes());
            }
            joined = all;
            &joined
        }
    };
    let size = match reading {
        Reading::F32 | Reading::I32 => Some(4),
        Reading::F64 | Reading::I64 => Some(8),
        Reading::Bool => Some(1),
        Reading::I8 | Reading::I16 => None,
    };
    let Some(size) = size else {
        return deserialize_variable(py, &ty, reading, dimension, bytes);
    };
    let value_size = size * dimension;
    if !bytes.len().is_multiple_of(value_size) {
        return Err(value_error(format!(
            "{} bytes are not a whole number of {ty} values ({value_size} bytes each)",
            bytes.len()
        )));
    }
    let rows = bytes.len() / value_size;
    let shape = (rows, dimension);
    match reading {
        Reading::F32 => read_be::<f32>(py, shape, bytes),
        Reading::F64 => read_be::<f64>(py, shape, bytes),
        Reading::I32 => read_be::<i32>(py, shape, bytes),
        Reading::I64 => read_be::<i64>(py, shape, bytes),
        Reading::Bool => new_array(py, rows, dimension, |out: &mut [bool]| {
            out.iter_mut().zip(bytes).for_each(|(x, &b)| *x = b != 0)
        }),
        Reading::I8 | Reading::I16 => deserialize_variable(py, &ty, reading, dimension, bytes),
    }
}

/// Reads values of a variable-size element type (tinyint, smallint) one after another.
fn deserialize_variable<'py>(
    py: Python<'py>,
    ty: &CqlType,
    reading: Reading,
    dimension: usize,
    bytes: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    let mut numbers: Vec<i64> = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let rest = bytes.get(offset..).unwrap_or_default();
        let (value, used) = cqlwire_codec::value::decode_prefix(ty, rest)
            .map_err(|e| value_error(format!("{e} (value starting at byte {offset})")))?;
        let cqlwire_codec::value::Value::List(elements) = value else {
            return Err(value_error(format!("not a {ty} value at byte {offset}")));
        };
        for element in elements {
            numbers.push(match element {
                cqlwire_codec::value::Value::TinyInt(x) => i64::from(x),
                cqlwire_codec::value::Value::SmallInt(x) => i64::from(x),
                _ => return Err(value_error(format!("not a {ty} value at byte {offset}"))),
            });
        }
        offset += used.max(1);
    }
    let rows = numbers.len() / dimension.max(1);
    match reading {
        Reading::I8 => new_array::<i8>(py, rows, dimension, |out| {
            out.iter_mut()
                .zip(&numbers)
                .for_each(|(o, &n)| *o = n as i8)
        }),
        _ => new_array::<i16>(py, rows, dimension, |out| {
            out.iter_mut()
                .zip(&numbers)
                .for_each(|(o, &n)| *o = n as i16)
        }),
    }
}
