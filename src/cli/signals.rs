//! One way for every command that talks to a server to stop: SIGINT, SIGTERM and SIGHUP set the
//! run's stop flag (the run drains and the command reports where it got to); a second one of them
//! ends the process at once with the signal's conventional status (128 + its number).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Makes SIGINT, SIGTERM and SIGHUP set `stop`. The handlers are registered before this returns,
/// so call it before opening any output file: the atomic outputs leave a signal that already has
/// a handler to it (and remove their temporary files when the command ends instead). Must be
/// called within a Tokio runtime (inside `block_on`, or under `Runtime::enter`).
pub(super) fn stop_on_signals(stop: Arc<AtomicBool>) {
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
                std::process::exit(130);
            }
        }
    });
}
