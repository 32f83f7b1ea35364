//! `cqlwire._cqlwire`: the Python face of the cqlwire library (PyO3, abi3 for CPython ≥ 3.9).
//!
//! Thin wrappers only: vector conversion goes through [`cqlwire_vector::kernel::VectorEncoder`] and the
//! Arrow readers of [`cqlwire_vector::input`], values through [`cqlwire_codec::value`], LZ4 bodies through
//! [`cqlwire_protocol::lz4`], loads through [`cqlwire_client`]. Errors become `ValueError` (bad data) or
//! `TypeError` (a type or an object that cannot be used), with the library's one-line message.

mod arrow;
mod bench;
mod conversion;
mod errors;
mod layout;
mod load;
mod reports;
mod runtime;
mod search;
mod sources;
mod unload;
mod values;
mod vectors;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::borrow::Cow;

/// Bodies at least this large are compressed or decompressed with the GIL released (below it the
/// hand-over costs more than it lets other threads gain).
const DETACH_BYTES: usize = 16 << 10;

/// The LZ4 scratch buffer is kept between calls up to this capacity (one large body does not pin
/// its size for the thread's life).
const SCRATCH_KEEP: usize = 1 << 20;

thread_local! {
    /// Each thread's reused LZ4 output buffer: a call then neither allocates nor zero-fills (and
    /// page-faults) a fresh buffer, and copies only the result into its `bytes`.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `work` with this thread's scratch buffer (a fresh one if it is already in use).
fn with_scratch<T>(work: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            let result = work(&mut buffer);
            if buffer.capacity() > SCRATCH_KEEP {
                *buffer = Vec::new();
            }
            result
        }
        Err(_) => work(&mut Vec::new()),
    })
}

/// A `ValueError` with the message of a library error.
pub(crate) fn value_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A `TypeError` with the message of a library error.
pub(crate) fn type_error(error: impl std::fmt::Display) -> PyErr {
    PyTypeError::new_err(error.to_string())
}

/// A bytes-like argument (`bytes`, `bytearray` or `memoryview`) as bytes; anything else, a `str`
/// above all, is a `TypeError` naming the argument.
pub(crate) fn bytes_argument<'a>(
    object: &'a Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Cow<'a, [u8]>> {
    use pyo3::types::{PyByteArray, PyMemoryView, PyString};
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = object.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    if object.is_instance_of::<PyMemoryView>() {
        let bytes = object.call_method0("tobytes")?;
        return Ok(Cow::Owned(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    let hint = if object.is_instance_of::<PyString>() {
        " (for hex text use bytes.fromhex(...))"
    } else {
        ""
    };
    Err(PyTypeError::new_err(format!(
        "{name} must be bytes, bytearray or memoryview, not {}{hint}",
        object.get_type().name()?
    )))
}

/// Runs `work` with the GIL released when `detach`, else on the calling thread with it held.
pub(crate) fn maybe_detach<T: Send>(
    py: Python<'_>,
    detach: bool,
    work: impl FnOnce() -> T + Send,
) -> T {
    if detach {
        py.detach(work)
    } else {
        work()
    }
}

/// Compresses `body` into a CQL v4 LZ4 body: the 4-byte big-endian uncompressed length, then the
/// LZ4 block — byte-identical to the Python driver's `cassandra.connection.lz4_compress`.
///
/// >>> cqlwire.lz4_compress(b"hello hello hello hello").hex()
/// '000000176868656c6c6f2006005068656c6c6f'
#[pyfunction]
fn lz4_compress(py: Python<'_>, body: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    let body = bytes_argument(body, "body")?;
    if u32::try_from(body.len()).map_or(true, |n| n > i32::MAX as u32) {
        return Err(value_error(format!(
            "a body of {} bytes is over the 2 GiB a CQL v4 length prefix can declare",
            body.len()
        )));
    }
    with_scratch(|out| {
        maybe_detach(py, body.len() >= DETACH_BYTES, || {
            cqlwire_protocol::lz4::compress_body_into(&body, out)
        })
        .map_err(value_error)?;
        Ok(PyBytes::new(py, out).unbind())
    })
}

/// Decompresses a CQL v4 LZ4 body (4-byte big-endian length, then the block), as the driver's
/// `cassandra.connection.lz4_decompress` does. A declared length above `max_size` (default
/// 256 MiB), or more than the block could hold, is refused before anything is allocated; a corrupt
/// block or one of another length than declared raises `ValueError` naming the byte.
///
/// >>> cqlwire.lz4_decompress(cqlwire.lz4_compress(b"abc"))
/// b'abc'
#[pyfunction]
#[pyo3(signature = (body, *, max_size = cqlwire_protocol::lz4::DEFAULT_MAX_SIZE))]
fn lz4_decompress(
    py: Python<'_>,
    body: &Bound<'_, PyAny>,
    max_size: usize,
) -> PyResult<Py<PyBytes>> {
    let body = bytes_argument(body, "body")?;
    with_scratch(|out| {
        maybe_detach(py, body.len() >= DETACH_BYTES, || {
            cqlwire_protocol::lz4::decompress_body_into(&body, max_size, out)
        })
        .map_err(value_error)?;
        Ok(PyBytes::new(py, out).unbind())
    })
}

/// The native module, re-exported by the `cqlwire` package.
#[pymodule]
fn _cqlwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lz4_compress, m)?)?;
    m.add_function(wrap_pyfunction!(lz4_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(values::encode, m)?)?;
    m.add_function(wrap_pyfunction!(values::decode, m)?)?;
    m.add_function(wrap_pyfunction!(values::explain, m)?)?;
    m.add_function(wrap_pyfunction!(vectors::serialize_vectors, m)?)?;
    m.add_function(wrap_pyfunction!(vectors::deserialize_vectors, m)?)?;
    m.add_class::<vectors::VectorCodec>()?;
    m.add_class::<vectors::DriverSerializer>()?;
    m.add_function(wrap_pyfunction!(load::load, m)?)?;
    m.add_class::<reports::LoadReport>()?;
    m.add_function(wrap_pyfunction!(unload::unload, m)?)?;
    m.add_class::<reports::UnloadReport>()?;
    m.add_function(wrap_pyfunction!(search::search, m)?)?;
    m.add_class::<reports::SearchReport>()?;
    m.add_function(wrap_pyfunction!(bench::bench, m)?)?;
    let (usage, failed) = (
        m.py().get_type::<errors::UsageError>(),
        m.py().get_type::<errors::JobFailed>(),
    );
    m.add("UsageError", &usage)?;
    m.add("JobFailed", &failed)?;
    // The first names of the two, kept: one class each.
    m.add("LoadError", usage)?;
    m.add("LoadFailed", failed)?;
    m.add(
        "RefusedValueWarning",
        m.py().get_type::<values::RefusedValueWarning>(),
    )?;
    m.add("DEFAULT_MAX_SIZE", cqlwire_protocol::lz4::DEFAULT_MAX_SIZE)?;
    // Which of (list, tuple, float) VectorCodec reads in place (python/README.md, "Speed").
    m.add("_object_layout", layout::probe(m.py())?)?;
    Ok(())
}
