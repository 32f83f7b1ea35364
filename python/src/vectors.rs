//! `serialize_vectors` / `deserialize_vectors` and the per-value `VectorCodec`: NumPy arrays,
//! Arrow arrays and sequences to the bytes of CQL `vector<T, N>` values, through the library's
//! kernel ([`VectorEncoder`]), and fixed-size vector bytes back to NumPy arrays.

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

/// The encoder for `cql_type`, or for the default type of `element` rows of `dimension` elements
/// (as `convert` picks it: float for f16/f32, double for f64, bigint for i64, int for the rest).
fn encoder_for(
    cql_type: Option<&str>,
    element: ElementType,
    dimension: usize,
) -> PyResult<VectorEncoder> {
    let ty = match cql_type {
        Some(text) => {
            let ty = values::cql_type(text, &[])?;
            match &ty {
                CqlType::Vector(_, declared) if *declared != dimension => {
                    return Err(convert_error(ConvertError::Dimension {
                        declared: *declared,
                        requested: ty,
                        dimension,
                    }))
                }
                CqlType::Vector(..) => ty,
                _ => {
                    return Err(convert_error(ConvertError::NotVector {
                        requested: ty,
                        dimension,
                    }))
                }
            }
        }
        None if dimension == 0 => return Err(convert_error(ConvertError::Empty)),
        None => CqlType::Vector(
            Box::new(CqlType::Native(kernel::default_element(element))),
            dimension,
        ),
    };
    VectorEncoder::new(&ty).map_err(type_error)
}

/// A new `bytes` object of `len` bytes whose content is to be written through the returned
/// address before anyone else sees the object.
fn uninit_bytes(py: Python<'_>, len: usize) -> PyResult<(Bound<'_, PyBytes>, usize)> {
    let size = isize::try_from(len).map_err(|_| value_error("the output is too large"))?;
    // SAFETY: PyBytes_FromStringAndSize with a null source allocates `size` bytes (plus the
    // terminating zero) and returns a new reference or null with an exception set; the data
    // address stays valid as long as the object lives.
    unsafe {
        let object = ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
        let bytes = Bound::from_owned_ptr_or_err(py, object)?.cast_into_unchecked::<PyBytes>();
        let data = ffi::PyBytes_AsString(bytes.as_ptr());
        if data.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok((bytes, data as usize))
    }
}

/// The writable bytes at `address` (from [`uninit_bytes`]).
///
/// # Safety
/// `address` must come from [`uninit_bytes`] for an object of at least `len` bytes that is still
/// alive and not yet visible to other code.
unsafe fn destination<'a>(address: usize, len: usize) -> &'a mut [u8] {
    // SAFETY: `address` is the start of a live, writable buffer of at least `len` bytes that no
    // other code sees yet (the caller's promise).
    unsafe { std::slice::from_raw_parts_mut(address as *mut u8, len) }
}

/// Converts every row of a borrowed array of fixed-size values straight into new `bytes` objects
/// (when the array is large, the rows split across the library's thread pool and the GIL released
/// while converting, except, for a list, while its objects are still being allocated: see
/// `VectorEncoder::encode_fixed_into`, `encode_fixed_values` and `encode_fixed_values_produced`).
fn fixed_output<'py>(
    py: Python<'py>,
    encoder: &VectorEncoder,
    elements: Rows<'_>,
    (rows, dimension): (usize, usize),
    value_size: usize,
    format: Format,
) -> PyResult<Bound<'py, PyAny>> {
    let detach = rows * dimension >= DETACH_ELEMENTS;
    let encode = |values: &mut [&mut [u8]]| {
        maybe_detach(py, detach, || {
            encoder.encode_fixed_values(elements, 0, values)
        })
        .map_err(value_error)
    };
    match format {
        Format::List => {
            // The objects are allocated here (the GIL held) while, for a large array, the pool
            // converts the rows whose objects exist; the rest is converted after, with the GIL
            // released for a large array.
            let mut objects = Vec::with_capacity(rows);
            let produce = |_| {
                let (object, address) = uninit_bytes(py, value_size)?;
                objects.push(object);
                // SAFETY: a fresh bytes object of `value_size` bytes, kept alive by `objects`
                // and seen by no one else until the list is returned.
                Ok(unsafe { destination(address, value_size) })
            };
            let finish = |rest: &(dyn Fn() + Sync)| maybe_detach(py, detach, rest);
            match encoder.encode_fixed_values_produced(elements, 0, rows, produce, finish) {
                Ok(()) => Ok(PyList::new(py, objects)?.into_any()),
                Err(Ok(error)) => Err(error),
                Err(Err(error)) => Err(value_error(error)),
            }
        }
        Format::Raw => {
            let total = rows * value_size;
            let (object, address) = uninit_bytes(py, total)?;
            maybe_detach(py, detach, || {
                // SAFETY: a fresh bytes object of `total` bytes, kept alive by `object`.
                let dst = unsafe { destination(address, total) };
                encoder.encode_fixed_into(elements, 0, dst)
            })
            .map_err(value_error)?;
            Ok(object.into_any())
        }
        Format::Framed => {
            let record = value_size + 4;
            let total = rows * record;
            let (object, address) = uninit_bytes(py, total)?;
            let prefix = i32::try_from(value_size)
                .map_err(|_| value_error("a value is over the 2 GiB a [bytes] can hold"))?
                .to_be_bytes();
            // SAFETY: a fresh bytes object of `total` bytes, kept alive by `object`.
            let dst = unsafe { destination(address, total) };
            let mut values: Vec<&mut [u8]> = dst
                .chunks_exact_mut(record)
                .map(|out| {
                    let (length, value) = out.split_at_mut(4);
                    length.copy_from_slice(&prefix);
                    value
                })
                .collect();
            encode(&mut values)?;
            Ok(object.into_any())
        }
    }
}

/// The rows' values in `format`: one `bytes` each, or one `bytes` of them all (framed: each
/// after its 4-byte length).
fn emit<'py, 'a>(
    py: Python<'py>,
    format: Format,
    values: impl Iterator<Item = &'a [u8]>,
) -> PyResult<Bound<'py, PyAny>> {
    if format == Format::List {
        let objects = values.map(|value| PyBytes::new(py, value));
        return Ok(PyList::new(py, objects)?.into_any());
    }
    let mut out = Vec::new();
    for value in values {
        if format == Format::Framed {
            let length = i32::try_from(value.len())
                .map_err(|_| value_error("a value is over the 2 GiB a [bytes] can hold"))?;
            out.extend_from_slice(&length.to_be_bytes());
        }
        out.extend_from_slice(value);
    }
    Ok(PyBytes::new(py, &out).into_any())
}

/// Serializes `rows × dimension` elements (row-major) with `encoder`.
fn serialize_rows<'py>(
    py: Python<'py>,
    encoder: &VectorEncoder,
    elements: Rows<'_>,
    (rows, dimension): (usize, usize),
    format: Format,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(size) = encoder.value_size() {
        return fixed_output(py, encoder, elements, (rows, dimension), size, format);
    }
    let mut bytes = Vec::new();
    let mut ends = Vec::with_capacity(rows);
    maybe_detach(py, rows * dimension >= DETACH_ELEMENTS, || {
        (0..rows).try_for_each(|i| {
            let row = elements.slice(i * dimension, (i + 1) * dimension);
            encoder.encode_rows(row, i as u64, &mut bytes)?;
            ends.push(bytes.len());
            Ok::<(), kernel::VectorError>(())
        })
    })
    .map_err(value_error)?;
    let starts = std::iter::once(0).chain(ends.iter().copied());
    let values = starts
        .zip(ends.iter().copied())
        .map(|(start, end)| bytes.get(start..end).unwrap_or_default());
    emit(py, format, values)
}

/// Serializes an Arrow object's vector column with the library's conversion pipeline (the Arrow
/// reader, the kernel and the `framed` or `raw` writer into memory); the list format splits the
/// framed output into one `bytes` per row, None for a null row.
fn serialize_arrow<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    cql_type: Option<&str>,
    format: Format,
) -> PyResult<Bound<'py, PyAny>> {
    let Some((schema, batches)) = arrow::record_batches(data)? else {
        return Ok(match format {
            Format::List => PyList::empty(py).into_any(),
            Format::Raw | Format::Framed => PyBytes::new(py, &[]).into_any(),
        });
    };
    let reader = input::open_record_batches(
        "the Arrow input",
        &schema,
        batches.into_iter().map(Ok),
        None,
        0,
        ARROW_BATCH_ROWS,
        false,
    )
    .map_err(type_error)?;
    let mut options = ConvertOptions::new(match format {
        Format::Raw => OutputFormat::Raw,
        Format::List | Format::Framed => OutputFormat::Framed,
    });
    options.target = cql_type
        .map(|text| values::cql_type(text, &[]))
        .transpose()?;
    options.nulls = NullPolicy::Null;
    let (bytes, _) = py
        .detach(|| convert::convert(reader, Vec::new(), &options, &|_| {}))
        .map_err(convert_error)?;
    if format != Format::List {
        return Ok(PyBytes::new(py, &bytes).into_any());
    }
    let mut values = Vec::new();
    let mut rest = bytes.as_slice();
    while let Some((length, tail)) = rest.split_first_chunk::<4>() {
        let length = i32::from_be_bytes(*length);
        match usize::try_from(length) {
            Ok(length) if length <= tail.len() => {
                let (value, tail) = tail.split_at(length);
                values.push(PyBytes::new(py, value).into_any());
                rest = tail;
            }
            _ => {
                values.push(py.None().into_bound(py));
                rest = tail;
            }
        }
    }
    Ok(PyList::new(py, values)?.into_any())
}

/// A conversion error as a `TypeError` (a type or an input that cannot be used) or a `ValueError`
/// (the data).
fn convert_error(error: ConvertError) -> PyErr {
    match error {
        ConvertError::NotVector { .. }
        | ConvertError::Vector(VectorError::Unsupported(_))
        | ConvertError::Input(InputError::Unsupported(_) | InputError::Options(_)) => {
            type_error(error)
        }
        _ => value_error(error),
    }
}

/// Serializes rows of numbers into the bytes of CQL `vector<T, N>` values, as `cqlwire convert`
/// does: the same types, checked casts and error messages.
///
/// `data` is a 2-D NumPy array (float16/32/64, int8/16/32/64, uint8 or bool, either byte order,
/// C or Fortran order; a C-contiguous native-order array is read in place), a pyarrow `Array`,
/// `ChunkedArray`, `RecordBatch` or `Table` with a list / large_list / fixed_size_list column
/// (through the Arrow C data interface), or a sequence of equally long sequences of numbers.
/// `cql_type` defaults to `vector<float, N>` for float16/32, `vector<double, N>` for float64,
/// `vector<bigint, N>` for int64 and `vector<int, N>` for other integers.
///
/// A null row (a null Arrow row, a `None` row of a sequence, a fully masked row of a `numpy.ma`
/// array) is None in a list, -1 when framed and an error in raw bytes; a masked element is an error.
///
/// `format="list"` returns one `bytes` per row (None for a null row), `"raw"` one `bytes` of
/// every value, `"framed"` each value as a protocol `[bytes]` (4-byte length, -1 for null).
///
/// >>> import numpy as np
/// >>> cqlwire.serialize_vectors(np.array([[1.0, 2.0]], dtype=np.float32))
/// [b'?\x80\x00\x00@\x00\x00\x00']
/// >>> cqlwire.serialize_vectors([[1, 2]], "vector<smallint, 2>", format="raw").hex()
/// '020001020002'
#[pyfunction]
#[pyo3(signature = (data, cql_type = None, *, format = "list"))]
pub(crate) fn serialize_vectors<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    cql_type: Option<&str>,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let format = Format::parse(format)?;
    if arrow::is_arrow(data) && data.cast::<PyUntypedArray>().is_err() {
        return serialize_arrow(py, data, cql_type, format);
    }
    let numpy = py.import("numpy")?;
    let (array, validity) = match data.cast::<PyUntypedArray>() {
        Ok(array) => unmasked(&numpy, array)?,
        Err(_) => {
            if data.is_instance_of::<pyo3::types::PyString>() || data.is_instance_of::<PyBytes>() {
                return Err(type_error(
                    "data must be a 2-D array, an Arrow array or a sequence of sequences of \
                     numbers, not a string",
                ));
            }
            let (rows, validity) =
                if data.is_instance_of::<PyList>() || data.is_instance_of::<PyTuple>() {
                    let (rows, validity) = filled_rows(data, cql_type)?;
                    (PyList::new(py, rows)?.into_any(), validity)
                } else {
                    (data.clone(), None)
                };
            let array = numpy
                .call_method1("asarray", (rows,))?
                .cast_into::<PyUntypedArray>()?;
            (array, validity)
        }
    };
    let source = Borrowed::new(&array, 2)?;
    let encoder = encoder_for(cql_type, source.element, source.shape.1)?;
    let Some(validity) = validity else {
        return serialize_rows(py, &encoder, source.rows(), source.shape, format);
    };
    if let Err((_, error)) = cqlwire_vector::output::check_nulls(
        0,
        Some(&validity),
        NullPolicy::Null,
        match format {
            Format::Raw => OutputFormat::Raw,
            Format::List | Format::Framed => OutputFormat::Framed,
        },
    ) {
        return Err(value_error(error));
    }
    let values = serialize_rows(py, &encoder, source.rows(), source.shape, Format::List)?;
    let values = values.cast_into::<PyList>()?;
    let rows: Vec<Option<Bound<'py, PyBytes>>> = values
        .iter()
        .zip(&validity)
        .map(|(value, &valid)| valid.then(|| value.cast_into::<PyBytes>()).transpose())
        .collect::<Result<_, _>>()?;
    match format {
        Format::List => Ok(PyList::new(py, rows)?.into_any()),
        _ => {
            let mut out = Vec::new();
            for row in &rows {
                match row {
                    Some(value) => {
                        let length = i32::try_from(value.as_bytes().len()).map_err(|_| {
                            value_error("a value is over the 2 GiB a [bytes] can hold")
                        })?;
                        out.extend_from_slice(&length.to_be_bytes());
                        out.extend_from_slice(value.as_bytes());
                    }
                    None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                }
            }
            Ok(PyBytes::new(py, &out).into_any())
        }
    }
}

/// Which rows are valid (not null), when some are not; None when every row is.
type Validity = Option<Vec<bool>>;

/// A NumPy array without its mask: a masked array's data and which rows are valid (a row whose
/// every element is masked is a null row, as an Arrow null; a row with some masked elements is an
/// error naming the first, as a null element of an Arrow row is); a plain array as it is.
fn unmasked<'py>(
    numpy: &Bound<'py, PyModule>,
    array: &Bound<'py, PyUntypedArray>,
) -> PyResult<(Bound<'py, PyUntypedArray>, Validity)> {
    let masked = numpy.getattr("ma")?.getattr("MaskedArray")?;
    if !array.is_instance(&masked)? || array.ndim() != 2 {
        return Ok((array.clone(), None));
    }
    let mask = numpy
        .getattr("ma")?
        .call_method1("getmaskarray", (array,))?;
    let whole: Vec<bool> = mask.call_method1("all", (1,))?.extract()?;
    let any: Vec<bool> = mask.call_method1("any", (1,))?.extract()?;
    if let Some(row) = (0..whole.len()).find(|&i| any[i] && !whole[i]) {
        let element: usize = mask.get_item(row)?.call_method0("argmax")?.extract()?;
        return Err(value_error(format!(
            "row {row} element {element} is masked (a masked row is a null row only when all \
             its elements are masked)"
        )));
    }
    let data = numpy
        .getattr("ma")?
        .call_method1("getdata", (array,))?
        .cast_into::<PyUntypedArray>()?;
    let validity = whole.iter().map(|masked| !masked).collect::<Vec<bool>>();
    Ok((data, validity.contains(&false).then_some(validity)))
}

/// The rows of a sequence of sequences, each checked to have the first row's length, with a
/// `None` row (a null row) filled with zeros and marked invalid.
fn filled_rows<'py>(
    data: &Bound<'py, PyAny>,
    cql_type: Option<&str>,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Validity)> {
    let py = data.py();
    let rows = data
        .try_iter()?
        .collect::<PyResult<Vec<Bound<'py, PyAny>>>>()?;
    let mut dimension = None;
    for (i, row) in rows.iter().enumerate() {
        if row.is_none() {
            continue;
        }
        let Ok(len) = row.len() else {
            return Err(type_error(format!(
                "row {i} is a {}, not a sequence of numbers",
                row.get_type().name()?
            )));
        };
        match dimension {
            None => dimension = Some((i, len)),
            Some((first, expected)) if expected != len => {
                return Err(value_error(format!(
                    "row {i} has {len} elements, but row {first} has {expected}"
                )))
            }
            Some(_) => {}
        }
    }
    let validity: Vec<bool> = rows.iter().map(|row| !row.is_none()).collect();
    if !validity.contains(&false) {
        return Ok((rows, None));
    }
    // A null row takes the place of a copy of the first valid row (so the element type read is
    // that of the valid rows), or of zeros when every row is null.
    let filler = match dimension {
        Some((first, _)) => rows[first].clone(),
        None => match cql_type
            .map(|text| values::cql_type(text, &[]))
            .transpose()?
        {
            Some(CqlType::Vector(_, n)) => PyList::new(py, std::iter::repeat_n(0, n))?.into_any(),
            _ => return Err(convert_error(ConvertError::Empty)),
        },
    };
    let rows = rows
        .into_iter()
        .map(|row| if row.is_none() { filler.clone() } else { row })
        .collect();
    Ok((rows, Some(validity)))
}

/// The NumPy dtype that holds the elements of a vector type, for reading values back.
#[derive(Debug, Clone, Copy)]
enum Reading {
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
    fn of(ty: &CqlType) -> PyResult<(Reading, usize)> {
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
