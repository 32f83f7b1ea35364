//! Numbers to the bytes of CQL `vector<T, N>` values: NumPy arrays, Arrow arrays, sequences.

use super::*;

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
pub(super) fn uninit_bytes(py: Python<'_>, len: usize) -> PyResult<(Bound<'_, PyBytes>, usize)> {
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
pub(super) unsafe fn destination<'a>(address: usize, len: usize) -> &'a mut [u8] {
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
