//! How a job runs under Python: on its own I/O threads, with the GIL released, Ctrl-C draining
//! the run before `KeyboardInterrupt` is raised.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting call looks for a signal (Ctrl-C) to handle.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Runs `work` on `runtime` with the GIL released, looking for signals every 100 ms: a pending
/// KeyboardInterrupt sets `stop` (the run drains: it stops reading and waits for the rows in
/// flight) and is raised once the run has ended.
pub(crate) fn run_interruptible<T: Send + 'static>(
    py: Python<'_>,
    runtime: &tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    match run_until_interrupted(py, runtime, stop, work)? {
        (_, Some(interrupt)) => Err(interrupt),
        (value, None) => Ok(value),
    }
}

/// [`run_interruptible`] that hands back what the drained run returned beside the pending
/// KeyboardInterrupt, so the caller can attach the run's report to it.
pub(crate) fn run_until_interrupted<T: Send + 'static>(
    py: Python<'_>,
    runtime: &tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<(T, Option<PyErr>)> {
    let mut handle = runtime.spawn(work);
    let mut interrupted: Option<PyErr> = None;
    loop {
        let waited = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(SIGNAL_POLL, &mut handle).await })
        });
        match waited {
            Ok(Ok(value)) => return Ok((value, interrupted)),
            Ok(Err(join)) => {
                return Err(PyRuntimeError::new_err(format!("the run failed: {join}")))
            }
            Err(_) => {
                if interrupted.is_none() {
                    if let Err(error) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        interrupted = Some(error);
                    }
                }
            }
        }
    }
}

/// The I/O threads of one call.
pub(crate) fn runtime() -> PyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the I/O threads: {e}")))
}
