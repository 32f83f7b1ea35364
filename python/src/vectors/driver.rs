//! The per-value codec a driver binds with, and the hook that puts it in the driver's
//! `VectorType.serialize`.

use super::deserialize::Reading;
use super::serialize::{destination, uninit_bytes};
use super::*;

/// One vector type's codec, for many single values (what a driver binds per row): parses the type
/// once, then serializes a 1-D NumPy array (read in place) or a sequence of numbers per call.
///
/// >>> codec = cqlwire.VectorCodec("vector<float, 2>")
/// >>> codec.serialize([1.0, 2.0])
/// b'?\x80\x00\x00@\x00\x00\x00'
#[pyclass(frozen, module = "cqlwire")]
pub(crate) struct VectorCodec {
    encoder: VectorEncoder,
    /// The element type when fixed-size, for reading values back.
    reading: Option<Reading>,
    ty: CqlType,
}

#[pymethods]
impl VectorCodec {
    #[new]
    fn new(cql_type: &str) -> PyResult<Self> {
        let ty = values::cql_type(cql_type, &[])?;
        let encoder = VectorEncoder::new(&ty).map_err(type_error)?;
        let reading = Reading::of(&ty).ok().map(|(reading, _)| reading);
        Ok(VectorCodec {
            encoder,
            reading,
            ty,
        })
    }

    /// The vector's dimension.
    #[getter]
    fn dimension(&self) -> usize {
        self.encoder.dimension()
    }

    /// The bytes of one value: `value` is a 1-D NumPy array or a sequence of numbers of the
    /// vector's dimension. Integer element types take integers only (as the driver does).
    fn serialize<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let integral = matches!(
            self.reading,
            Some(Reading::I32 | Reading::I64 | Reading::I8 | Reading::I16)
        );
        if let Some(bytes) = self.serialize_exact_floats(py, value) {
            return bytes;
        }
        if let Ok(array) = value.cast::<PyUntypedArray>() {
            let source = Borrowed::new(array, 1)?;
            let floating = matches!(
                source.element,
                ElementType::F16 | ElementType::F32 | ElementType::F64
            );
            if integral && floating {
                return Err(type_error(format!(
                    "{} takes integers, not floats",
                    self.ty
                )));
            }
            return self.serialize_one(py, source.rows());
        }
        if integral {
            let numbers = match items(value, ffi::PyLong_AsLongLong, &raw mut ffi::PyLong_Type) {
                Some(numbers) => numbers?,
                None => value.extract::<Vec<i64>>()?,
            };
            self.serialize_one(py, Rows::I64(&numbers))
        } else {
            let numbers = match items(value, ffi::PyFloat_AsDouble, &raw mut ffi::PyFloat_Type) {
                Some(numbers) => numbers?,
                None => value.extract::<Vec<f64>>()?,
            };
            self.serialize_one(py, Rows::F64(&numbers))
        }
    }

    /// One value back as a list of Python numbers (what the driver's `deserialize` returns), for
    /// fixed-size element types.
    fn deserialize<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let dimension = self.encoder.dimension();
        let size = self.encoder.element_size().unwrap_or(0);
        if size == 0 || data.len() != size * dimension {
            return Err(value_error(format!(
                "{} takes {} bytes, not {}",
                self.ty,
                size * dimension,
                data.len()
            )));
        }
        let items = data.chunks_exact(size);
        match self.reading {
            Some(Reading::F32) => PyList::new(
                py,
                items.map(|c| be::<4, _>(c, |b| f64::from(f32::from_be_bytes(b)))),
            ),
            Some(Reading::F64) => PyList::new(py, items.map(|c| be::<8, _>(c, f64::from_be_bytes))),
            Some(Reading::I32) => PyList::new(
                py,
                items.map(|c| be::<4, _>(c, |b| i64::from(i32::from_be_bytes(b)))),
            ),
            Some(Reading::I64) => PyList::new(py, items.map(|c| be::<8, _>(c, i64::from_be_bytes))),
            _ => Err(type_error(format!(
                "{} is not read back by VectorCodec",
                self.ty
            ))),
        }
    }
}

/// The driver's `VectorType.serialize` for one parameterized vector class (see `cqlwire.driver`):
/// the class's codec, and the driver's own code for what the codec refuses (a `TypeError`,
/// `ValueError` or `OverflowError`), which then gives the driver's bytes or its error. Its bound
/// `serialize` method is set on the class, so a call runs no Python code in between.
#[pyclass(frozen, module = "cqlwire")]
pub(crate) struct DriverSerializer {
    codec: Py<VectorCodec>,
    /// The driver's `serialize` bound to the class: `fallback(value, protocol_version)`.
    fallback: Py<PyAny>,
}

#[pymethods]
impl DriverSerializer {
    #[new]
    fn new(codec: Py<VectorCodec>, fallback: Py<PyAny>) -> Self {
        DriverSerializer { codec, fallback }
    }

    /// The bytes of `value` from the codec, else from the driver's own code.
    fn serialize<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
        protocol_version: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.codec.get().serialize(py, value) {
            Err(error)
                if error.is_instance_of::<PyTypeError>(py)
                    || error.is_instance_of::<PyValueError>(py)
                    || error.is_instance_of::<PyOverflowError>(py) =>
            {
                self.fallback.bind(py).call1((value, protocol_version))
            }
            result => result,
        }
    }
}

/// The numbers of a `list` or `tuple` (what a driver is given per row), each read by `read` (the C
/// API's `PyFloat_AsDouble` or `PyLong_AsLongLong`, which take the same objects as PyO3's
/// extraction) straight from the container, without an iterator or a new reference per item of
/// the `exact` type; `None` for any other container.
fn items<T: Copy + PartialEq + From<i8>>(
    value: &Bound<'_, PyAny>,
    read: unsafe extern "C" fn(*mut ffi::PyObject) -> T,
    exact: *mut ffi::PyTypeObject,
) -> Option<PyResult<Vec<T>>> {
    let (get, len): (unsafe extern "C" fn(_, _) -> _, _) =
        if let Ok(list) = value.cast_exact::<PyList>() {
            (ffi::PyList_GetItem, list.len())
        } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            (ffi::PyTuple_GetItem, tuple.len())
        } else {
            return None;
        };
    let py = value.py();
    let mut numbers = Vec::with_capacity(len);
    for index in 0..len {
        // SAFETY: `value` is an exact list or tuple kept alive by the caller and read with the GIL
        // held; `get` checks the index (an object's `__float__`/`__index__` may have shrunk the
        // list: then it fails). The borrowed item of the exact type is read
        // without running Python code; any other item is held by a new reference while `read`
        // may run its code.
        let number = unsafe {
            let item = get(value.as_ptr(), index as ffi::Py_ssize_t);
            if item.is_null() {
                drop(PyErr::fetch(py));
                return Some(Err(value_error(
                    "the sequence changed size while it was read",
                )));
            }
            if ffi::Py_TYPE(item) == exact {
                read(item)
            } else {
                ffi::Py_IncRef(item);
                let number = read(item);
                ffi::Py_DecRef(item);
                number
            }
        };
        if number == T::from(-1) {
            if let Some(error) = PyErr::take(py) {
                return Some(Err(error));
            }
        }
        numbers.push(number);
    }
    Some(Ok(numbers))
}

/// An `N`-byte big-endian chunk through `convert`.
fn be<const N: usize, T>(chunk: &[u8], convert: impl Fn([u8; N]) -> T) -> T {
    let mut bytes = [0; N];
    bytes.copy_from_slice(chunk);
    convert(bytes)
}

impl VectorCodec {
    /// The bytes of a list or tuple of exact floats (what a driver is usually given) for a float or
    /// double vector, read in place ([`layout::with_exact_floats`]); `None` for anything else.
    fn serialize_exact_floats<'py>(
        &self,
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> Option<PyResult<Bound<'py, PyAny>>> {
        match self.reading {
            Some(Reading::F64) => layout::with_exact_floats(value, |doubles| {
                self.serialize_one(py, Rows::F64(doubles))
            }),
            Some(Reading::F32) => layout::with_exact_floats(value, |doubles| {
                // Rounded to nearest as struct.pack('>f') does; a finite double that overflows
                // to infinity is left to the path that reports it. The passes have no early
                // exit, so they vectorize; the exact test runs only when there is an infinity.
                let singles: Vec<f32> = doubles.iter().map(|&x| x as f32).collect();
                let overflow = singles.iter().fold(false, |seen, y| seen | y.is_infinite())
                    && doubles
                        .iter()
                        .zip(&singles)
                        .any(|(x, y)| y.is_infinite() && x.is_finite());
                (!overflow).then(|| self.serialize_one(py, Rows::F32(&singles)))
            })
            .flatten(),
            _ => None,
        }
    }

    /// The bytes of the one value in `elements`.
    fn serialize_one<'py>(
        &self,
        py: Python<'py>,
        elements: Rows<'_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let dimension = self.encoder.dimension();
        if elements.len() != dimension {
            return Err(value_error(format!(
                "{} takes {dimension} elements, not {}",
                self.ty,
                elements.len()
            )));
        }
        match self.encoder.value_size() {
            Some(size) => {
                let (object, address) = uninit_bytes(py, size)?;
                // SAFETY: a fresh bytes object of `size` bytes, kept alive by `object`.
                let dst = unsafe { destination(address, size) };
                self.encoder
                    .encode_fixed_into(elements, 0, dst)
                    .map_err(value_error)?;
                Ok(object.into_any())
            }
            None => {
                let mut bytes = Vec::new();
                self.encoder
                    .encode_rows(elements, 0, &mut bytes)
                    .map_err(value_error)?;
                Ok(PyBytes::new(py, &bytes).into_any())
            }
        }
    }
}
