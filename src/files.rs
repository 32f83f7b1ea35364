//! Input and output handling shared by every command: `-` for standard streams, atomic file output,
//! and the refusal to write binary bytes to a terminal.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Size of the write buffer in front of every output.
const WRITE_BUFFER: usize = 1 << 20;

/// Why an output could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Binary output was requested while standard output is a terminal.
    #[error(
        "refusing to write binary output to a terminal (use -o FILE or a text format such as hex)"
    )]
    BinaryToTerminal,
    /// The temporary file beside the destination could not be created.
    #[error("cannot create output in {dir}: {source}")]
    Create {
        /// The destination's folder.
        dir: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
}

/// Returns `None` for standard input/output (`-` or no path), else the path.
pub fn named(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// Opens an input: standard input for `-` or no path, else the file.
pub fn open_input(path: Option<&Path>) -> io::Result<Box<dyn Read>> {
    match named(path) {
        None => Ok(Box::new(io::stdin().lock())),
        Some(p) => Ok(Box::new(File::open(p).map_err(|e| annotate(p, e))?)),
    }
}

/// Reads a whole input (see [`open_input`]) into memory.
pub fn read_input(path: Option<&Path>) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_input(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| match named(path) {
            Some(p) => annotate(p, e),
            None => e,
        })?;
    Ok(bytes)
}

/// Adds the path to an I/O error's message.
fn annotate(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// A buffered output: standard output, or a file written atomically.
///
/// A file is written to a temporary file in the destination's folder and renamed into place by
/// [`Output::commit`]; dropping an `Output` without committing removes the temporary file and leaves
/// the destination as it was.
pub struct Output {
    target: Target,
    /// Whether [`Output::commit`] syncs the file to disk before the rename.
    sync: bool,
}

enum Target {
    Stdout(BufWriter<io::Stdout>),
    File {
        writer: BufWriter<tempfile::NamedTempFile>,
        destination: PathBuf,
    },
}

impl Output {
    /// Opens standard output (`-` or no path) or a temporary file beside `path`.
    ///
    /// `binary` output is refused when it would go to a terminal.
    pub fn open(path: Option<&Path>, binary: bool) -> Result<Self, OutputError> {
        let target = match named(path) {
            None => {
                let stdout = io::stdout();
                if binary && stdout.is_terminal() {
                    return Err(OutputError::BinaryToTerminal);
                }
                Target::Stdout(BufWriter::with_capacity(WRITE_BUFFER, stdout))
            }
            Some(p) => {
                let dir = match p.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let file = tempfile::Builder::new()
                    .prefix(".cqlwire-")
                    .suffix(".tmp")
                    .tempfile_in(&dir)
                    .map_err(|source| OutputError::Create { dir, source })?;
                Target::File {
                    writer: BufWriter::with_capacity(WRITE_BUFFER, file),
                    destination: p.to_path_buf(),
                }
            }
        };
        Ok(Output { target, sync: true })
    }

    /// Makes [`Output::commit`] skip the sync to disk before the rename: the rename stays atomic, but
    /// durability after a crash is left to the operating system, like `cp` or `cat > file`. For large
    /// outputs, where a sync costs far more than the writing (gigabytes at disk speed).
    pub fn without_sync(mut self) -> Self {
        self.sync = false;
        self
    }

    /// Returns whether this output goes to standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout(_))
    }

    /// Overwrites `bytes` at `offset` of an output file (after flushing what is buffered) and goes
    /// back to the end, e.g. to fix a header once the final size is known. Standard output cannot
    /// seek: an error of kind `Unsupported`.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "standard output cannot be rewritten",
            )),
            Target::File { writer, .. } => {
                writer.flush()?;
                let file = writer.get_mut();
                file.seek(SeekFrom::Start(offset))?;
                file.write_all(bytes)?;
                file.seek(SeekFrom::End(0))?;
                Ok(())
            }
        }
    }

    /// Flushes everything and, for a file, renames the temporary file onto the destination.
    pub fn commit(self) -> io::Result<()> {
        match self.target {
            Target::Stdout(mut w) => w.flush(),
            Target::File {
                writer,
                destination,
            } => {
                let file = writer.into_inner().map_err(|e| e.into_error())?;
                if self.sync {
                    file.as_file().sync_data()?;
                }
                file.persist(&destination)
                    .map_err(|e| annotate(&destination, e.error))?;
                Ok(())
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Stdout(w) => w.write(buf),
            Target::File { writer, .. } => writer.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(w) => w.write_all(buf),
            Target::File { writer, .. } => writer.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(w) => w.flush(),
            Target::File { writer, .. } => writer.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_renames_into_place_and_drop_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"abc").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"abc");

        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        assert_eq!(std::fs::read(&dest).unwrap(), b"abc");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_at_rewrites_a_file_and_continues_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut out = Output::open(Some(&dest), true).unwrap();
        out.write_all(b"header:?;").unwrap();
        out.write_at(7, b"9").unwrap();
        out.write_all(b"data").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"header:9;data");
    }
}
