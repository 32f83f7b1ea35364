//! Removal of the temporary output files when the process is interrupted (SIGINT from Ctrl-C,
//! SIGTERM, SIGHUP): the signal handler unlinks every registered temporary file, then lets the
//! signal end the process as it would have. SIGKILL cannot be caught; the next run cleans up after
//! it (see `remove_stale_temporaries`).
//!
//! The handler may run on any thread at any moment, so it only reads atomics and calls the
//! async-signal-safe `unlink`, `signal` and `raise`. Registered paths are never freed (a few bytes
//! per output file), so the handler can never read freed memory.

use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

/// Temporary files open at once that the handler knows of (a command writes one; further ones
/// are left to the next run's clean-up).
const SLOTS: usize = 8;

/// The registered paths (NUL-terminated, leaked), null for a free slot.
static PENDING: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];

/// The signals after which the temporary files are removed.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A temporary file known to the signal handler until this is dropped.
pub(crate) struct Registration {
    slot: Option<usize>,
}

impl Registration {
    /// Registers `path` for removal on interruption (installing the handler the first time).
    pub(crate) fn new(path: &Path) -> Registration {
        let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
            return Registration { slot: None };
        };
        install_handler();
        let raw = c_path.into_raw();
        let slot = PENDING.iter().position(|entry| {
            entry
                .compare_exchange(ptr::null_mut(), raw, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        if slot.is_none() {
            // SAFETY: `raw` came from `CString::into_raw` above and was not published anywhere.
            drop(unsafe { CString::from_raw(raw) });
        }
        Registration { slot }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(entry) = self.slot.and_then(|slot| PENDING.get(slot)) {
            // The path is leaked on purpose: a handler on another thread may still be reading it.
            entry.store(ptr::null_mut(), Ordering::SeqCst);
        }
    }
}

/// Installs [`on_signal`] for [`SIGNALS`], once, leaving alone a signal that is ignored (as `nohup`
/// arranges for SIGHUP) or already handled by someone else.
fn install_handler() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for signal in SIGNALS {
            // SAFETY: sigaction with valid pointers to zero-initialised (valid) structs; the new
            // handler is async-signal-safe.
            unsafe {
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, ptr::null(), &mut previous) != 0
                    || previous.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, ptr::null_mut());
            }
        }
    });
}

/// Unlinks every registered temporary file (async-signal-safe): for a process about to end without
/// dropping its outputs, from a signal handler or from a caller that handles the signals itself.
pub(crate) fn remove_registered() {
    for entry in &PENDING {
        let path = entry.swap(ptr::null_mut(), Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: a registered path is a NUL-terminated string that is never freed.
            unsafe { libc::unlink(path) };
        }
    }
}

/// Unlinks every registered temporary file, then ends the process by the same signal.
extern "C" fn on_signal(signal: c_int) {
    remove_registered();
    // SAFETY: async-signal-safe calls; the default action ends the process with this signal.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
