//! pyarrow (or any Arrow producer) inputs through the Arrow PyCapsule interface: an object's
//! `__arrow_c_array__()` hands over one array and its schema, without pyarrow being needed to build
//! this module, and the array memory is shared, not copied; and record batches back to a
//! `pyarrow.Table` through the Arrow C data interface.

use crate::type_error;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, RecordBatch, StructArray};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CStr;
use std::sync::Arc;

/// Name of the vector column when the input is a bare list array.
const BARE_COLUMN: &str = "vector";

/// Whether `object` speaks the Arrow PyCapsule interface (an array, a record batch, a chunked array
/// or a table).
pub(crate) fn is_arrow(object: &Bound<'_, PyAny>) -> bool {
    object.hasattr("__arrow_c_array__").unwrap_or(false)
        || object.hasattr("__arrow_c_stream__").unwrap_or(false)
}

/// The record batches of an Arrow object, with the schema of the first (None when there is no
/// chunk): a struct-typed array or record batch as its columns, a list array as one column named
/// `vector`; chunked arrays and tables chunk by chunk (through their `chunks` or `to_batches()`).
pub(crate) fn record_batches(
    object: &Bound<'_, PyAny>,
) -> PyResult<Option<(Schema, Vec<RecordBatch>)>> {
    let chunks: Vec<Bound<'_, PyAny>> = if object.hasattr("__arrow_c_array__")? {
        vec![object.clone()]
    } else if object.hasattr("chunks")? {
        object
            .getattr("chunks")?
            .try_iter()?
            .collect::<PyResult<_>>()?
    } else if object.hasattr("to_batches")? {
        object
            .call_method0("to_batches")?
            .try_iter()?
            .collect::<PyResult<_>>()?
    } else {
        return Err(type_error(
            "an Arrow stream without chunks or to_batches() is not supported; pass an array, \
             record batch, chunked array or table",
        ));
    };
    let batches = chunks.iter().map(import).collect::<PyResult<Vec<_>>>()?;
    Ok(batches
        .first()
        .map(|first| first.schema().as_ref().clone())
        .map(|schema| (schema, batches)))
}

/// The schema of a table or stream that has no chunk (a pyarrow Table of no rows), through its
/// `schema`'s `__arrow_c_schema__`; None when it has none.
pub(crate) fn empty_schema(object: &Bound<'_, PyAny>) -> PyResult<Option<Schema>> {
    let Ok(schema) = object.getattr("schema") else {
        return Ok(None);
    };
    if !schema.hasattr("__arrow_c_schema__")? {
        return Ok(None);
    }
    let capsule = schema.call_method0("__arrow_c_schema__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let pointer = capsule_pointer::<FFI_ArrowSchema>(capsule, c"arrow_schema")?;
    // SAFETY: the capsule follows the Arrow PyCapsule interface: it holds a valid ArrowSchema for
    // as long as it lives; it is only borrowed here.
    let schema = Schema::try_from(unsafe { &*pointer }).map_err(arrow_error)?;
    Ok(Some(schema))
}

/// Imports one object with `__arrow_c_array__` as a record batch.
fn import(object: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let capsules = object.call_method0("__arrow_c_array__")?;
    let (schema_capsule, array_capsule): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
        capsules.extract()?;
    let schema_ptr = capsule_pointer::<FFI_ArrowSchema>(&schema_capsule, c"arrow_schema")?;
    let array_ptr = capsule_pointer::<FFI_ArrowArray>(&array_capsule, c"arrow_array")?;
    // SAFETY: the capsules follow the Arrow PyCapsule interface: they hold a valid ArrowSchema and
    // ArrowArray that stay alive as long as the capsules. The array is moved out (its release
    // callback now belongs to us) and an empty, already released array left in its place, so the
    // capsule's destructor does not release it a second time; the schema is only borrowed.
    let data = unsafe {
        let array = std::ptr::replace(array_ptr, FFI_ArrowArray::empty());
        from_ffi(array, &*schema_ptr)
    }
    .map_err(arrow_error)?;
    // SAFETY: the schema capsule holds a valid ArrowSchema for as long as the capsule lives (see
    // above); it is only borrowed here.
    let field = Field::try_from(unsafe { &*schema_ptr }).map_err(arrow_error)?;
    let array = make_array(data);
    if let Some(columns) = array.as_any().downcast_ref::<StructArray>() {
        if columns.null_count() == 0 {
            return Ok(RecordBatch::from(columns.clone()));
        }
    }
    let schema = Schema::new(vec![Field::new(
        BARE_COLUMN,
        field.data_type().clone(),
        true,
    )]);
    RecordBatch::try_new(Arc::new(schema), vec![array]).map_err(arrow_error)
}

/// The pointer a capsule holds, checking the capsule's name.
fn capsule_pointer<T>(capsule: &Bound<'_, PyCapsule>, name: &CStr) -> PyResult<*mut T> {
    let pointer = capsule.pointer_checked(Some(name))?;
    Ok(pointer.as_ptr().cast::<T>())
}

/// An Arrow import error as a `TypeError`.
fn arrow_error(error: ArrowError) -> PyErr {
    type_error(format!("cannot import the Arrow data: {error}"))
}

/// An Arrow error of the hand-over to pyarrow as a `ValueError`.
fn export_error(error: ArrowError) -> PyErr {
    PyValueError::new_err(format!("cannot hand the rows to pyarrow: {error}"))
}

/// The pages as one `pyarrow.Table` of `schema`. pyarrow takes each exported array and schema
/// over (it moves their release callbacks out), so nothing is copied or released twice.
pub(crate) fn to_pyarrow<'py>(
    py: Python<'py>,
    schema: &SchemaRef,
    pages: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = py.import("pyarrow")?;
    let exported = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(export_error)?;
    let py_schema = pyarrow
        .getattr("Schema")?
        .call_method1("_import_from_c", (std::ptr::addr_of!(exported) as usize,))?;
    let batch_type = pyarrow.getattr("RecordBatch")?;
    let mut batches = Vec::with_capacity(pages.len());
    for page in pages {
        let (array, array_schema) =
            to_ffi(&StructArray::from(page).into_data()).map_err(export_error)?;
        batches.push(batch_type.call_method1(
            "_import_from_c",
            (
                std::ptr::addr_of!(array) as usize,
                std::ptr::addr_of!(array_schema) as usize,
            ),
        )?);
    }
    pyarrow
        .getattr("Table")?
        .call_method1("from_batches", (batches, py_schema))
}
