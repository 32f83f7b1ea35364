//! Where cqlwire's outputs go: a file written atomically (the bytes go to a temporary file beside
//! the destination, renamed into place on commit, removed when dropped uncommitted or when the
//! process is interrupted by SIGINT, SIGTERM or SIGHUP), standard output, or a device or open
//! file's name written in place — every output file of cqlwire's commands and of its Python module
//! is an [`Output`] — and the [`Destination`] trait that the format writers write into (an
//! [`Output`], a `Vec<u8>`, any `Write` as a [`Stream`]).
//!
//! It needs no other cqlwire crate, so that commands that only write bytes (decode, encode,
//! compress, decompress) have atomic outputs without the format libraries.
//!
//! ```
//! use std::io::Write;
//! use cqlwire_output::Output;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.bin");
//! let mut output = Output::open(Some(&path), true)?;
//! output.write_all(b"abc")?;
//! assert!(!path.exists()); // only the temporary file exists until the commit
//! output.commit()?;
//! assert_eq!(std::fs::read(&path)?, b"abc");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod file;
#[cfg(unix)]
mod interrupt;

use std::io::{self, Write};
use std::path::Path;

pub use file::{refuse_same_file, same_destination, Output, OutputError};

/// Removes the temporary files of every atomic [`Output`] still open, leaving their destinations
/// as they were: for a process that ends at once without dropping them, such as a command whose
/// own handler of SIGINT, SIGTERM or SIGHUP calls `std::process::exit` on a second signal (the
/// outputs then leave those signals to it). Those outputs can no longer be committed.
pub fn remove_temporaries() {
    #[cfg(unix)]
    interrupt::remove_registered();
}

/// Returns `None` for a standard stream (`-` or no path), else the path.
pub fn named(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// Where a writer's bytes go: any `Write`, plus rewriting bytes already written where the destination
/// allows it (the `npy` writer fixes its header's row count that way when rows were skipped).
pub trait Destination: Write + Send {
    /// Whether [`Destination::write_at`] works.
    fn can_rewrite(&self) -> bool {
        false
    }

    /// Overwrites `bytes` at `offset`, within what was already written; an error of kind
    /// `Unsupported` where [`Destination::can_rewrite`] is false.
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let _ = (offset, bytes);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this destination cannot be rewritten",
        ))
    }
}

impl Destination for Vec<u8> {
    fn can_rewrite(&self) -> bool {
        true
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let start = usize::try_from(offset).ok().filter(|&start| {
            start
                .checked_add(bytes.len())
                .is_some_and(|end| end <= self.len())
        });
        let Some(start) = start else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "rewrite past the bytes written",
            ));
        };
        self[start..start + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
}

/// Any writer (a socket, a pipe, a caller's buffer) as a [`Destination`] that cannot be rewritten.
#[derive(Debug)]
pub struct Stream<W>(pub W);

impl<W: Write> Write for Stream<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write + Send> Destination for Stream<W> {}
