//! What every command that runs against a live server (`load`, `unload`, `search`, `bench`) shares:
//! its I/O runtime with the stop signals already registered, and the ticker that moves its
//! progress display.
//!
//! SIGINT, SIGTERM and SIGHUP set the run's stop flag (the run drains and the command reports where
//! it got to); a second one of them removes the temporary files of the outputs still open and ends
//! the process at once with the signal's conventional status (128 + its number).

use super::CliError;
use cqlwire_client::{ProgressSnapshot, RunControl};
use indicatif::ProgressBar;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// How often a ticker moves its progress display.
const TICK: Duration = Duration::from_millis(200);

/// The threads of a run's I/O runtime.
#[derive(Debug, Clone, Copy)]
pub(super) enum Threads {
    /// One thread (a run whose work is the server's).
    One,
    /// One per core.
    All,
}

/// The I/O runtime of a run whose stop flag is `stop`, with SIGINT, SIGTERM and SIGHUP already
/// setting it: call it before opening any output file, since the atomic outputs leave a signal
/// that already has a handler to it (and remove their temporary files when the command ends
/// instead).
pub(super) fn runtime(threads: Threads, stop: &Arc<AtomicBool>) -> Result<Runtime, CliError> {
    let runtime = match threads {
        Threads::One => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::data(format!("cannot start the I/O thread: {e}")))?,
        Threads::All => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::data(format!("cannot start the I/O threads: {e}")))?,
    };
    {
        let _context = runtime.enter();
        stop_on_signals(stop.clone());
    }
    Ok(runtime)
}

/// Calls `update` every 200 ms until the returned task is aborted (when the run or its stage
/// ends). Must be called within the run's runtime.
pub(super) fn ticker(update: impl Fn() + Send + 'static) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(TICK).await;
            update();
        }
    })
}

/// A [`ticker`] moving `bar` to the rows or queries counted by `control` (written and rejected),
/// with `message` of its counters beside it.
pub(super) fn watch(
    control: &RunControl,
    bar: &ProgressBar,
    message: impl Fn(&ProgressSnapshot) -> String + Send + 'static,
) -> JoinHandle<()> {
    let progress = control.progress.clone();
    let bar = bar.clone();
    ticker(move || {
        let now = progress.snapshot();
        bar.set_position(now.written + now.rejected);
        bar.set_message(message(&now));
    })
}

/// Makes SIGINT, SIGTERM and SIGHUP set `stop`; the handlers are registered before this returns.
/// Must be called within a Tokio runtime.
fn stop_on_signals(stop: Arc<AtomicBool>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut interrupt), Ok(mut terminate), Ok(mut hangup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::spawn(async move {
            loop {
                let number = tokio::select! {
                    _ = interrupt.recv() => libc::SIGINT,
                    _ = terminate.recv() => libc::SIGTERM,
                    _ = hangup.recv() => libc::SIGHUP,
                };
                if stop.swap(true, Ordering::Relaxed) {
                    // The outputs are not dropped on the way out: their temporary files go first.
                    cqlwire_output::remove_temporaries();
                    std::process::exit(128 + number);
                }
            }
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.store(true, Ordering::Relaxed);
            if tokio::signal::ctrl_c().await.is_ok() {
                cqlwire_output::remove_temporaries();
                std::process::exit(130);
            }
        }
    });
}
