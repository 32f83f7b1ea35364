//! Every line the binary writes to standard error, and the name of standard output in its write
//! errors. Nothing here panics: a line that cannot be written (`2>/dev/full`) is remembered, and
//! the command then ends with exit code 1 instead of 0, so no warning or summary is lost silently.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a line could not be written to standard error.
static LOST: AtomicBool = AtomicBool::new(false);

/// Writes one line (`text` and a newline) to standard error, as one write of a locked handle so
/// lines of several threads never interleave; the error is returned and remembered.
pub fn try_line(text: fmt::Arguments<'_>) -> io::Result<()> {
    let mut line = text.to_string();
    line.push('\n');
    let result = io::stderr().lock().write_all(line.as_bytes());
    if result.is_err() {
        LOST.store(true, Ordering::Relaxed);
    }
    result
}

/// Writes one line to standard error; a failure is remembered (see [`lost`]), never a panic.
pub fn line(text: fmt::Arguments<'_>) {
    let _ = try_line(text);
}

/// Whether a line could not be written to standard error.
pub fn lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

/// An error writing standard output, naming it (`cannot write standard output: No space left on
/// device`); a closed pipe keeps its kind, so that `| head` still ends quietly.
pub fn stdout_error(error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::BrokenPipe {
        return error;
    }
    io::Error::new(
        error.kind(),
        format!("cannot write standard output: {error}"),
    )
}

/// Standard output, with each write error named by [`stdout_error`].
pub struct Stdout<W>(pub W);

impl<W: Write> Write for Stdout<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(stdout_error)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(stdout_error)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(stdout_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_errors_name_standard_output_but_a_closed_pipe_stays_one() {
        let full = io::Error::new(io::ErrorKind::StorageFull, "No space left on device");
        assert_eq!(
            stdout_error(full).to_string(),
            "cannot write standard output: No space left on device"
        );
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(stdout_error(pipe).kind(), io::ErrorKind::BrokenPipe);
    }
}
