//! Reading exact `list`, `tuple` and `float` objects through CPython's object layout (the item
//! pointers of a list or tuple, the `double` of a float) instead of one C API call per element,
//! which is what keeps `VectorCodec.serialize` of a 768-float list under a microsecond.
//!
//! The limited API (abi3) hides these layouts, so they are used only once [`probe`] has proved
//! them on the running interpreter at import: CPython (not PyPy or GraalPy), not a free-threaded
//! build (another thread may resize a list there while it is read), the sizes the types report
//! (`__basicsize__`, `__itemsize__`) equal to the structs below, and every item pointer and
//! float value read in place equal to what the C API returns for probe objects. Otherwise, or
//! with `CQLWIRE_OBJECT_LAYOUT=0` in the environment, every read goes through the C API.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyList, PyTuple};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The reused buffer of [`with_exact_floats`] is kept up to this many numbers (one long list
/// does not pin its size for the thread's life).
const KEEP_DOUBLES: usize = 1 << 16;

/// `PyListObject`: the variable-size header, then the address of the item pointers.
#[repr(C)]
struct ListLayout {
    head: ffi::PyVarObject,
    items: *mut *mut ffi::PyObject,
    allocated: ffi::Py_ssize_t,
}

/// `PyFloatObject`: the header, then the value.
#[repr(C)]
struct FloatLayout {
    head: ffi::PyObject,
    value: f64,
}

/// Whether exact lists are read through [`ListLayout`].
static LIST: AtomicBool = AtomicBool::new(false);
/// Whether exact floats are read through [`FloatLayout`].
static FLOAT: AtomicBool = AtomicBool::new(false);
/// Where an exact tuple's item pointers start, in bytes from its address (`tuple.__basicsize__`:
/// newer CPythons keep a cached hash before the items); 0 while unproven.
static TUPLE_ITEMS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Each thread's buffer for [`with_exact_floats`], reused so that a call does not allocate.
    static DOUBLES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` on the numbers of an exact list or tuple of exact floats, read in place; `None`
/// when the layouts are unproven, for any other container, or when an item is not an exact float
/// (a subclass, an int, a NumPy scalar...): then read it through the C API.
pub(crate) fn with_exact_floats<R>(
    value: &Bound<'_, PyAny>,
    work: impl FnOnce(&[f64]) -> R,
) -> Option<R> {
    if !FLOAT.load(Ordering::Relaxed) {
        return None;
    }
    DOUBLES.with(|cell| {
        // A nested call (`work` does not make one today) gets a buffer of its own.
        let mut fresh = Vec::new();
        let mut kept = cell.try_borrow_mut();
        let numbers = kept.as_deref_mut().unwrap_or(&mut fresh);
        numbers.clear();
        // SAFETY: `value` is alive and the GIL held; no Python code runs until the loop ends
        // (nothing is called on the items), so the container's storage stays as `items` found
        // it. Each item is a live object it holds, read as a float only if its type is exactly
        // float; the buffer's length is set to the items written.
        unsafe {
            let items = items(value)?;
            numbers.reserve(items.len());
            for (slot, &item) in numbers.spare_capacity_mut().iter_mut().zip(items) {
                if ffi::Py_TYPE(item) != &raw mut ffi::PyFloat_Type {
                    return None;
                }
                slot.write((*item.cast::<FloatLayout>()).value);
            }
            numbers.set_len(items.len());
        }
        let result = work(numbers);
        if numbers.capacity() > KEEP_DOUBLES {
            *numbers = Vec::new();
        }
        Some(result)
    })
}

/// The item pointers of an exact list or tuple, borrowed, when its layout is proven; `None` for
/// anything else.
///
/// # Safety
/// The slice is valid only while no Python code runs (the GIL is held through `value`, but any
/// Python code may resize or free the list's storage).
unsafe fn items<'a>(value: &'a Bound<'_, PyAny>) -> Option<&'a [*mut ffi::PyObject]> {
    let object = value.as_ptr();
    let (start, len) = if value.is_exact_instance_of::<PyList>() {
        if !LIST.load(Ordering::Relaxed) {
            return None;
        }
        // SAFETY: `object` is an exact list (checked above) and the probe proved that an exact
        // list starts with `ListLayout` on this interpreter.
        let list = unsafe { &*object.cast::<ListLayout>() };
        (list.items.cast_const(), list.head.ob_size)
    } else if value.is_exact_instance_of::<PyTuple>() {
        let offset = TUPLE_ITEMS.load(Ordering::Relaxed);
        if offset == 0 {
            return None;
        }
        // SAFETY: every tuple starts with a `PyVarObject` header, and the probe proved that its
        // item pointers start `offset` bytes into the object (`tuple.__basicsize__`).
        unsafe {
            let head = &*object.cast::<ffi::PyVarObject>();
            (
                object.cast::<u8>().add(offset).cast_const().cast(),
                head.ob_size,
            )
        }
    } else {
        return None;
    };
    let len = usize::try_from(len).ok()?;
    if len == 0 || start.is_null() {
        return Some(&[]);
    }
    // SAFETY: `start` points at the container's `len` item pointers (non-null, checked above), which
    // stay in place while no Python code runs, as the caller promises.
    Some(unsafe { std::slice::from_raw_parts(start, len) })
}

/// Proves the layouts on the running interpreter (see the module's doc) and turns on the reads
/// that passed; returns which (list, tuple, float) did.
pub(crate) fn probe(py: Python<'_>) -> PyResult<(bool, bool, bool)> {
    LIST.store(false, Ordering::Relaxed);
    FLOAT.store(false, Ordering::Relaxed);
    TUPLE_ITEMS.store(0, Ordering::Relaxed);
    if !usable(py)? {
        return Ok((false, false, false));
    }
    let sizes = |name: &str| -> PyResult<(usize, usize)> {
        let ty = py.import("builtins")?.getattr(name)?;
        Ok((
            ty.getattr("__basicsize__")?.extract()?,
            ty.getattr("__itemsize__")?.extract()?,
        ))
    };
    let pointer = std::mem::size_of::<*mut ffi::PyObject>();
    // Floats of every class of value (signed zero, subnormal, huge, NaN, infinity), interleaved
    // with other objects; the list grows by appends, so its storage moved at least once.
    let numbers = [0.5, -0.0, 5e-324, -f64::MAX, f64::NAN, f64::INFINITY, 3.25];
    let list = PyList::empty(py);
    for (i, &x) in numbers.iter().cycle().take(100).enumerate() {
        list.append(x)?;
        if i % 7 == 3 {
            list.append(i)?;
            list.append(py.None())?;
        }
    }
    let tuple = list.to_tuple();
    let list_ok = sizes("list")? == (std::mem::size_of::<ListLayout>(), 0) && {
        // SAFETY: `list` is an exact list (made above), read with the GIL held and no Python code
        // running; `items` reads within its reported size only if the header checks hold.
        unsafe {
            LIST.store(true, Ordering::Relaxed);
            let same = same_items(list.as_any(), ffi::PyList_GetItem);
            LIST.store(false, Ordering::Relaxed);
            same
        }
    };
    let (tuple_start, tuple_item) = sizes("tuple")?;
    let tuple_ok = tuple_item == pointer
        && tuple_start >= std::mem::size_of::<ffi::PyVarObject>()
        && tuple_start.is_multiple_of(pointer)
        && tuple_start <= 8 * pointer
        && {
            // SAFETY: as for the list; the offset is at most 8 pointers into a tuple of 100+ items.
            unsafe {
                TUPLE_ITEMS.store(tuple_start, Ordering::Relaxed);
                let same = same_items(tuple.as_any(), ffi::PyTuple_GetItem);
                TUPLE_ITEMS.store(0, Ordering::Relaxed);
                same
            }
        };
    let float_ok = sizes("float")? == (std::mem::size_of::<FloatLayout>(), 0)
        && list.iter().all(|item| {
            let Ok(float) = item.cast_exact::<PyFloat>() else {
                return true;
            };
            // SAFETY: `float` is an exact float object of `float.__basicsize__` bytes, the size of
            // `FloatLayout` (checked above), kept alive by the list.
            let direct = unsafe { (*float.as_ptr().cast::<FloatLayout>()).value };
            direct.to_bits() == float.value().to_bits()
        });
    LIST.store(list_ok, Ordering::Relaxed);
    TUPLE_ITEMS.store(if tuple_ok { tuple_start } else { 0 }, Ordering::Relaxed);
    FLOAT.store(float_ok, Ordering::Relaxed);
    Ok((list_ok, tuple_ok, float_ok))
}

/// CPython, not free-threaded, and not turned off by `CQLWIRE_OBJECT_LAYOUT=0`.
fn usable(py: Python<'_>) -> PyResult<bool> {
    if std::env::var_os("CQLWIRE_OBJECT_LAYOUT").is_some_and(|v| v == "0") {
        return Ok(false);
    }
    let sys = py.import("sys")?;
    if sys
        .getattr("implementation")?
        .getattr("name")?
        .extract::<String>()?
        != "cpython"
    {
        return Ok(false);
    }
    // Free-threaded builds exist from 3.13 on; the question needs sysconfig only there.
    if py.version_info() >= (3, 13) {
        let disabled = py
            .import("sysconfig")?
            .call_method1("get_config_var", ("Py_GIL_DISABLED",))?;
        if disabled.is_truthy()? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether [`items`] reads `container` as `get` (the C API) does: the same length, the same
/// object at every index.
///
/// # Safety
/// `container` must be an exact list (for `PyList_GetItem`) or tuple (for `PyTuple_GetItem`),
/// and the layout flag under test set.
unsafe fn same_items(
    container: &Bound<'_, PyAny>,
    get: unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject,
) -> bool {
    let Ok(len) = container.len() else {
        return false;
    };
    // SAFETY: the caller passes an exact list or tuple, which starts with a `PyVarObject` header.
    let head = unsafe { &*container.as_ptr().cast::<ffi::PyVarObject>() };
    if usize::try_from(head.ob_size).ok() != Some(len) {
        return false;
    }
    if container.is_exact_instance_of::<PyList>() {
        // SAFETY: an exact list, whose layout flag the caller set for this test.
        let list = unsafe { &*container.as_ptr().cast::<ListLayout>() };
        if list.items.is_null()
            || !list.items.cast_const().is_aligned()
            || list.allocated < head.ob_size
            || list.allocated > 2 * head.ob_size + 64
        {
            return false;
        }
    }
    // SAFETY: no Python code runs while `read` is used: `get` is `PyList_GetItem` or
    // `PyTuple_GetItem`, which return a borrowed item and run no Python code.
    let Some(read) = (unsafe { items(container) }) else {
        return false;
    };
    read.len() == len
        && read.iter().enumerate().all(|(i, &item)| {
            // SAFETY: `get` matches the container's type (the caller's promise) and `i` is within
            // its length.
            item == unsafe { get(container.as_ptr(), i as ffi::Py_ssize_t) }
        })
}
