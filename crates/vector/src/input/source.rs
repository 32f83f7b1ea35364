//! The bytes of one input: a seekable file, or a stream (standard input) that is only read forward.

use super::InputError;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Returns `None` for standard input (`-` or no path), else the path.
pub use cqlwire_output::named;

/// Opens a named input file for reading. A directory is refused (reading one fails only later, with a
/// less clear message). Errors do not name the path: callers add it in their own way.
pub fn open_file(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory, not a file",
        ));
    }
    Ok(file)
}

/// A readable input that tracks its byte position, for error messages and for skipping.
pub(crate) struct Source {
    /// How the input is named in messages: its path, or `standard input`.
    name: String,
    reader: Reader,
    /// Byte offset of the next byte to read.
    position: u64,
}

enum Reader {
    File { file: File, len: u64 },
    Stream(Box<dyn Read + Send>),
}

impl Source {
    /// Opens a file, or standard input for `None` or `-`; a path that is not a regular file (a
    /// named pipe, a device) is read as a stream.
    pub(crate) fn open(path: Option<&Path>) -> Result<Source, InputError> {
        match named(path) {
            None => Ok(match stdin_file() {
                Some((file, len)) => Source {
                    name: STDIN.to_string(),
                    reader: Reader::File { file, len },
                    position: 0,
                },
                None => Source::from_stream(STDIN, Box::new(io::stdin())),
            }),
            Some(p) => {
                let name = p.display().to_string();
                let file = open_file(p).map_err(io_error(&name))?;
                let metadata = file.metadata().map_err(io_error(&name))?;
                // A named pipe, `/dev/stdin` on a pipe, `<(…)` or a device: read forward only,
                // like standard input (its size says nothing and it cannot seek).
                if !metadata.is_file() {
                    return Ok(Source::from_stream(&name, Box::new(file)));
                }
                let len = metadata.len();
                Ok(Source {
                    name,
                    reader: Reader::File { file, len },
                    position: 0,
                })
            }
        }
    }

    /// Wraps an open file, read from its start (`name` stands for it in messages).
    pub(crate) fn from_file(name: &str, file: File) -> Result<Source, InputError> {
        let len = file.metadata().map_err(io_error(name))?.len();
        let mut source = Source {
            name: name.to_string(),
            reader: Reader::File { file, len },
            position: u64::MAX,
        };
        source.move_to(0)?;
        Ok(source)
    }

    /// Wraps a stream that can only be read forward.
    pub(crate) fn from_stream(name: &str, stream: Box<dyn Read + Send>) -> Source {
        Source {
            name: name.to_string(),
            reader: Reader::Stream(stream),
            position: 0,
        }
    }

    /// The input's name for messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The input's size in bytes, when it is a file.
    pub(crate) fn len(&self) -> Option<u64> {
        match &self.reader {
            Reader::File { len, .. } => Some(*len),
            Reader::Stream(_) => None,
        }
    }

    /// Byte offset of the next byte to read.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    /// Fills `buf` unless the input ends first; returns how many bytes were read.
    pub(crate) fn read_full(&mut self, buf: &mut [u8]) -> Result<usize, InputError> {
        let mut filled = 0;
        while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
            let result = match &mut self.reader {
                Reader::File { file, .. } => file.read(rest),
                Reader::Stream(stream) => stream.read(rest),
            };
            match result {
                Ok(0) => break,
                Ok(n) => {
                    filled += n;
                    self.position += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&self.name)(e)),
            }
        }
        Ok(filled)
    }

    /// Moves to byte `offset`: a seek on a file, reading and discarding on a stream (which cannot
    /// go back). Returns false when a stream ends before `offset`.
    pub(crate) fn move_to(&mut self, offset: u64) -> Result<bool, InputError> {
        if offset == self.position {
            return Ok(true);
        }
        match &mut self.reader {
            Reader::File { file, .. } => {
                file.seek(SeekFrom::Start(offset))
                    .map_err(io_error(&self.name))?;
                self.position = offset;
                Ok(true)
            }
            Reader::Stream(stream) => {
                let Some(gap) = offset.checked_sub(self.position) else {
                    return Err(InputError::Unsupported(format!(
                        "{}: cannot go back to byte {offset} in a stream (use a file)",
                        self.name
                    )));
                };
                let skipped = io::copy(&mut stream.take(gap), &mut io::sink())
                    .map_err(io_error(&self.name))?;
                self.position += skipped;
                Ok(skipped == gap)
            }
        }
    }

    /// Up to `n` bytes from the start of the input, leaving the position at 0 (a stream keeps the
    /// bytes to replay them). Only valid before anything else was read.
    pub(crate) fn prefix(&mut self, n: usize) -> Result<Vec<u8>, InputError> {
        let mut bytes = vec![0; n];
        let got = self.read_full(&mut bytes)?;
        bytes.truncate(got);
        match &mut self.reader {
            Reader::File { .. } => {
                self.move_to(0)?;
            }
            Reader::Stream(stream) => {
                let rest = std::mem::replace(stream, Box::new(io::empty()));
                *stream = Box::new(io::Cursor::new(bytes.clone()).chain(rest));
                self.position = 0;
            }
        }
        Ok(bytes)
    }

    /// The open file (positioned at 0), or for a stream, a temporary file holding all of it (so
    /// formats that need random access, like Parquet, work on standard input with bounded memory).
    pub(crate) fn into_file(mut self) -> Result<File, InputError> {
        self.move_to(0)?;
        match self.reader {
            Reader::File { file, .. } => Ok(file),
            Reader::Stream(mut stream) => {
                let mut spool = tempfile::tempfile()
                    .map_err(|e| spool_error(&self.name, "cannot make a temporary file", e))?;
                io::copy(&mut stream, &mut spool).map_err(|e| {
                    spool_error(&self.name, "cannot copy it to a temporary file", e)
                })?;
                spool
                    .seek(SeekFrom::Start(0))
                    .map_err(io_error(&self.name))?;
                Ok(spool)
            }
        }
    }

    /// The input as a forward-only reader from the current position.
    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        match self.reader {
            Reader::File { file, .. } => Box::new(file),
            Reader::Stream(stream) => stream,
        }
    }
}

/// How standard input is named in messages.
const STDIN: &str = "standard input";

/// Standard input as a seekable file when it is redirected from a regular file and still at its
/// start (`cqlwire convert - < x.npy`), with its size; None for pipes and terminals.
#[cfg(unix)]
fn stdin_file() -> Option<(File, u64)> {
    use std::os::fd::AsFd;
    let mut file = File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
    let metadata = file.metadata().ok()?;
    let at_start = file.stream_position().ok()? == 0;
    (metadata.is_file() && at_start).then_some((file, metadata.len()))
}

/// Standard input is read as a stream on this platform.
#[cfg(not(unix))]
fn stdin_file() -> Option<(File, u64)> {
    None
}

/// The error of spooling a stream to a temporary file (`what` failed): names the folder, and
/// TMPDIR when that chose it, since the input itself is fine.
fn spool_error(name: &str, what: &str, error: io::Error) -> InputError {
    let dir = std::env::temp_dir();
    let folder = if std::env::var_os("TMPDIR").is_some() {
        format!("TMPDIR={}", dir.display())
    } else {
        dir.display().to_string()
    };
    InputError::Io {
        input: name.to_string(),
        source: io::Error::new(
            error.kind(),
            format!(
                "{what} in {folder} to read it with random access: {error} (set TMPDIR to a \
                 writable folder, or give the input as a file)"
            ),
        ),
    }
}

/// Turns an I/O error into an [`InputError`] about the input called `name`.
fn io_error(name: &str) -> impl Fn(io::Error) -> InputError + '_ {
    move |source| InputError::Io {
        input: name.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_prefix_is_replayed_and_skipping_counts_bytes() {
        let data: Vec<u8> = (0..100).collect();
        let mut source = Source::from_stream("test", Box::new(io::Cursor::new(data)));
        assert_eq!(source.prefix(4).unwrap(), [0, 1, 2, 3]);
        assert!(source.move_to(10).unwrap());
        let mut buf = [0; 3];
        assert_eq!(source.read_full(&mut buf).unwrap(), 3);
        assert_eq!(buf, [10, 11, 12]);
        assert_eq!(source.position(), 13);
        assert!(source.move_to(5).is_err());
        assert!(!source.move_to(200).unwrap());
        assert_eq!(source.position(), 100);
    }
}
