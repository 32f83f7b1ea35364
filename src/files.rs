//! Input handling shared by every command: `-` for standard input, inputs named in read errors,
//! and whole inputs read into memory with a limit. Outputs are [`Output`]s of `cqlwire-output`
//! (atomic files, standard output, devices), re-exported here with their checks.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

pub use cqlwire_output::{named, refuse_same_file, Output, OutputError};
pub use cqlwire_vector::input::open_file;

/// Opens an input: standard input for `-` or no path, else the file. Read errors name the input
/// (`standard input: Is a directory (os error 21)`).
pub fn open_input(path: Option<&Path>) -> io::Result<Box<dyn Read>> {
    match named(path) {
        None => Ok(Box::new(NamedReader {
            name: "standard input".to_string(),
            inner: io::stdin().lock(),
        })),
        Some(p) => Ok(Box::new(NamedReader {
            name: p.display().to_string(),
            inner: open_file(p).map_err(|e| annotate(p, e))?,
        })),
    }
}

/// A reader whose errors name the input they come from (and keep their kind).
struct NamedReader<R> {
    name: String,
    inner: R,
}

impl<R: Read> Read for NamedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner
            .read(buf)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.name)))
    }
}

/// Reads a whole input (see [`open_input`]) into memory; one of more than `limit` bytes is an error
/// (of kind `FileTooLarge`), so `/dev/zero` or an endless pipe cannot exhaust memory. A larger
/// regular file is refused before it is read.
pub fn read_input(path: Option<&Path>, limit: u64) -> io::Result<Vec<u8>> {
    let name =
        named(path).map_or_else(|| "standard input".to_string(), |p| p.display().to_string());
    let too_large = || {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("{name}: more than {limit} bytes, the most this command reads into memory"),
        )
    };
    let mut input = open_input(path)?;
    // A regular file's size is known: over the limit it is refused unread, else read into a buffer
    // of its size (growing by doubling would hold up to twice the input).
    let size = named(path)
        .and_then(|p| fs::metadata(p).ok())
        .filter(fs::Metadata::is_file)
        .map(|m| m.len());
    if size.is_some_and(|len| len > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(size.unwrap_or(0) as usize);
    input
        .by_ref()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Adds the path to an I/O error's message.
fn annotate(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_as_input() {
        let dir = tempfile::tempdir().unwrap();
        let error = open_file(dir.path()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::IsADirectory);
        let error = read_input(Some(dir.path()), 1).unwrap_err().to_string();
        assert!(error.contains("is a directory"), "{error}");
    }
}
