//! `serialize_vectors` / `deserialize_vectors` and the per-value `VectorCodec`: NumPy arrays,
//! Arrow arrays and sequences to the bytes of CQL `vector<T, N>` values, through the library's
//! kernel ([`VectorEncoder`]), and fixed-size vector bytes back to NumPy arrays: the NumPy
//! arrays read in place here, [`serialize`] and [`deserialize`] the two directions, [`driver`] the
//! per-value codec a driver calls.

use crate::{arrow, layout, maybe_detach, type_error, value_error, values};
use cqlwire_codec::types::{CqlType, NativeType};
use cqlwire_vector::arrays::elements_to_native;
use cqlwire_vector::convert::{self, ConvertError, ConvertOptions};
use cqlwire_vector::input::{self, ElementType, InputError};
use cqlwire_vector::kernel::{self, Rows, VectorEncoder, VectorError};
use cqlwire_vector::output::{NullPolicy, OutputFormat};
use numpy::{PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

mod deserialize;
mod driver;
mod serialize;

pub(crate) use deserialize::deserialize_vectors;
pub(crate) use driver::{DriverSerializer, VectorCodec};
pub(crate) use serialize::serialize_vectors;

/// Elements of output at least this large are converted with the GIL released.
const DETACH_ELEMENTS: usize = 4096;

/// Rows per batch asked of the Arrow reader.
const ARROW_BATCH_ROWS: usize = 16 << 10;

/// The shapes `serialize_vectors` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// One `bytes` per row (`None` for a null row).
    List,
    /// One `bytes` of every value concatenated.
    Raw,
    /// One `bytes` of every value as a protocol `[bytes]` (`[int length][value]`, -1 for null).
    Framed,
}

impl Format {
    /// Parses the `format` argument.
    fn parse(text: &str) -> PyResult<Format> {
        match text {
            "list" => Ok(Format::List),
            "raw" => Ok(Format::Raw),
            "framed" => Ok(Format::Framed),
            other => Err(value_error(format!(
                "unknown format {other:?} (use \"list\", \"raw\" or \"framed\")"
            ))),
        }
    }
}

/// The element type of a NumPy dtype that the converter reads (bool as unsigned bytes).
fn element_type(kind: u8, size: usize) -> Option<ElementType> {
    Some(match (kind, size) {
        (b'f', 2) => ElementType::F16,
        (b'f', 4) => ElementType::F32,
        (b'f', 8) => ElementType::F64,
        (b'i', 1) => ElementType::I8,
        (b'u', 1) | (b'b', 1) => ElementType::U8,
        (b'i', 2) => ElementType::I16,
        (b'i', 4) => ElementType::I32,
        (b'i', 8) => ElementType::I64,
        _ => return None,
    })
}

/// A C-contiguous, aligned, native-order NumPy array's elements, kept alive by `array`.
pub(crate) struct Borrowed<'py> {
    array: Bound<'py, PyUntypedArray>,
    element: ElementType,
    /// Rows × dimension (a 1-D array is one row).
    pub(crate) shape: (usize, usize),
}

impl<'py> Borrowed<'py> {
    /// Reads `array` in place when it is C-contiguous, aligned and in native byte order; else a
    /// copy that is (`numpy.require`), which is what reading a Fortran-order, strided or
    /// big-endian array costs.
    pub(crate) fn new(
        array: &Bound<'py, PyUntypedArray>,
        dimensions: usize,
    ) -> PyResult<Borrowed<'py>> {
        let shape = array.shape().to_vec();
        if array.ndim() != dimensions {
            return Err(value_error(format!(
                "expected a {dimensions}-D array, got a {}-D array of shape {shape:?}",
                array.ndim()
            )));
        }
        let dtype = array.dtype();
        let element = element_type(dtype.kind(), dtype.itemsize()).ok_or_else(|| {
            type_error(format!(
                "unsupported dtype {} (supported: float16, float32, float64, int8, uint8, \
                 int16, int32, int64 and bool, in either byte order)",
                dtype.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        })?;
        let native = dtype.is_native_byteorder().unwrap_or(true);
        let array = if array.is_c_contiguous() && array.is_aligned() && native {
            array.clone()
        } else {
            let py = array.py();
            let numpy = py.import("numpy")?;
            let native = dtype.call_method1("newbyteorder", ("=",))?;
            numpy
                .call_method1("require", (array, native, "CA"))?
                .cast_into::<PyUntypedArray>()?
        };
        let shape = match shape[..] {
            [rows, dimension] => (rows, dimension),
            [dimension] => (1, dimension),
            _ => (0, 0),
        };
        Ok(Borrowed {
            array,
            element,
            shape,
        })
    }

    /// The elements, row-major.
    pub(crate) fn rows(&self) -> Rows<'_> {
        let count = self.shape.0 * self.shape.1;
        // SAFETY: the array is C-contiguous, aligned and native-order (checked or made so in
        // `new`), of `count` elements of the matching type, and `self.array` keeps it alive for
        // the borrow's lifetime. Another thread writing to the array meanwhile is a data race
        // that NumPy itself does not prevent either.
        unsafe {
            let data = (*self.array.as_array_ptr()).fields.data;
            if count == 0 || data.is_null() {
                return empty_rows(self.element);
            }
            match self.element {
                ElementType::F16 => Rows::F16(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::F32 => Rows::F32(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::F64 => Rows::F64(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::I8 => Rows::I8(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::U8 => Rows::U8(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::I16 => Rows::I16(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::I32 => Rows::I32(std::slice::from_raw_parts(data.cast(), count)),
                ElementType::I64 => Rows::I64(std::slice::from_raw_parts(data.cast(), count)),
            }
        }
    }
}

/// No elements, of the given type.
fn empty_rows(element: ElementType) -> Rows<'static> {
    match element {
        ElementType::F16 => Rows::F16(&[]),
        ElementType::F32 => Rows::F32(&[]),
        ElementType::F64 => Rows::F64(&[]),
        ElementType::I8 => Rows::I8(&[]),
        ElementType::U8 => Rows::U8(&[]),
        ElementType::I16 => Rows::I16(&[]),
        ElementType::I32 => Rows::I32(&[]),
        ElementType::I64 => Rows::I64(&[]),
    }
}
