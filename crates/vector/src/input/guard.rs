//! A fence around the third-party decoders (arrow-ipc, parquet): a panic inside them on corrupt
//! input (which they do not always avoid) becomes an [`InputError`] instead of ending the process,
//! and prints nothing, so the user sees one error line.

use super::InputError;
use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`fenced`] (its panics are reported as errors, not printed).
    static FENCED: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once, a panic hook that stays silent inside [`fenced`] and otherwise defers to the
/// hook that was installed before.
fn install_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !FENCED.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `decode`; a panic inside it becomes a data error about `input` (what was being read is
/// said by `what`, e.g. "Arrow IPC rows from row 12").
pub(crate) fn fenced<T>(
    input: &str,
    what: &str,
    decode: impl FnOnce() -> T,
) -> Result<T, InputError> {
    install_hook();
    let outer = FENCED.with(|f| f.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(decode));
    FENCED.with(|f| f.set(outer));
    result.map_err(|payload| {
        InputError::Data(format!(
            "{input}: corrupt data: the decoder failed reading {what}: {}",
            panic_message(payload.as_ref())
        ))
    })
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "unknown failure"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        let error = fenced("x.arrow", "rows", || -> u8 { panic!("offset too large") });
        let text = error.unwrap_err().to_string();
        assert!(
            text.contains("x.arrow") && text.contains("offset too large"),
            "{text}"
        );
        assert_eq!(fenced("x", "rows", || 7).unwrap(), 7);
    }
}
