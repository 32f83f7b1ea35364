//! Where rows the server will never accept are listed.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use crate::error::one_line;

/// Receives each row that cannot be loaded: its number, its key and why, once.
pub trait RejectSink: Send {
    /// Records one rejected row.
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()>;

    /// Makes what was recorded durable (called once at the end of a run, also after an error).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One rejected row, as kept by `Vec<Reject>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// Row number in the input.
    pub row: u64,
    /// The row's printable key.
    pub key: String,
    /// Why it was rejected, on one line.
    pub error: String,
}

impl RejectSink for Vec<Reject> {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        self.push(Reject {
            row,
            key: key.to_owned(),
            error: one_line(error),
        });
        Ok(())
    }
}

/// The header line of a rejects file.
const HEADER: [&str; 3] = ["row", "key", "error"];

/// Writes rejects as CSV with the header `row,key,error` (RFC 4180 quoting; errors on one line).
///
/// Each record is handed to the output (flushed) before [`RejectSink::reject`] returns, so a row
/// counts as listed only once its line is written: a full disk fails the reject that did not fit.
pub struct CsvRejects<W: Write> {
    writer: csv::Writer<W>,
}

impl<W: Write> CsvRejects<W> {
    /// Writes the header to `output`.
    pub fn new(output: W) -> io::Result<Self> {
        let mut writer = csv::Writer::from_writer(output);
        writer.write_record(HEADER)?;
        writer.flush()?;
        Ok(CsvRejects { writer })
    }
}

impl CsvRejects<File> {
    /// Opens a rejects file to add to: a new or empty file gets the header; an existing one must
    /// start with it (the rejects of an earlier run, e.g. the one this run resumes), so that a file
    /// that is not a rejects file — an input named by mistake — is refused, never overwritten.
    /// A device or pipe (`/dev/stderr`, a FIFO) is written to as it is.
    pub fn append(path: &Path) -> io::Result<Self> {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return CsvRejects::new(OpenOptions::new().append(true).open(path)?);
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let mut first = Vec::new();
        (&mut file)
            .take(HEADER.join(",").len() as u64 + 1)
            .read_to_end(&mut first)?;
        if first.is_empty() {
            return CsvRejects::new(file);
        }
        let header = format!("{}\n", HEADER.join(","));
        if first != header.as_bytes() && first != header.replace('\n', "\r").as_bytes() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a rejects file (its first line is not {}): rejected \
                     rows are added to a rejects file, never written over another file",
                    path.display(),
                    HEADER.join(",")
                ),
            ));
        }
        Ok(CsvRejects {
            writer: csv::WriterBuilder::new().from_writer(file),
        })
    }
}

impl<W: Write> CsvRejects<W> {
    /// Flushes and returns the output.
    pub fn into_inner(self) -> io::Result<W> {
        self.writer
            .into_inner()
            .map_err(|error| io::Error::new(error.error().kind(), error.error().to_string()))
    }
}

impl<W: Write + Send> RejectSink for CsvRejects<W> {
    fn reject(&mut self, row: u64, key: &str, error: &str) -> io::Result<()> {
        self.writer
            .write_record([row.to_string().as_str(), key, one_line(error).as_str()])?;
        self.writer.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_rejects_file_is_added_to_and_any_other_file_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rejects.csv");
        let mut first = CsvRejects::append(&path).unwrap();
        first.reject(1, "id=1", "first run").unwrap();
        drop(first);
        let mut second = CsvRejects::append(&path).unwrap();
        second.reject(9, "id=9", "second run").unwrap();
        drop(second);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "row,key,error\n1,id=1,first run\n9,id=9,second run\n"
        );

        let input = dir.path().join("input.parquet");
        std::fs::write(&input, b"PAR1\x15\x00").unwrap();
        let error = CsvRejects::append(&input).err().unwrap();
        assert!(error.to_string().contains("not a rejects file"), "{error}");
        assert_eq!(std::fs::read(&input).unwrap(), b"PAR1\x15\x00");
    }

    /// A writer that takes `room` bytes, then fails like a full disk.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = bytes.len().min(self.room);
            self.room -= n;
            self.taken.extend_from_slice(&bytes[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_reject_that_does_not_fit_is_an_error_at_once() {
        let mut rejects = CsvRejects::new(Full {
            room: 40,
            taken: Vec::new(),
        })
        .unwrap();
        rejects.reject(1, "id=1", "fits").unwrap();
        let error = rejects.reject(2, "id=2", "does not fit").unwrap_err();
        assert_eq!(error.raw_os_error(), Some(28));
    }

    #[test]
    fn rejects_are_quoted_csv_with_one_line_errors() {
        let mut rejects = CsvRejects::new(Vec::new()).unwrap();
        rejects.reject(7, "id=7", "plain").unwrap();
        rejects
            .reject(12, "a,\"b\"", "Invalid: \"x\",\nsecond line")
            .unwrap();
        let text = String::from_utf8(rejects.into_inner().unwrap()).unwrap();
        assert_eq!(
            text,
            "row,key,error\n7,id=7,plain\n12,\"a,\"\"b\"\"\",\"Invalid: \"\"x\"\", second line\"\n"
        );
    }
}
