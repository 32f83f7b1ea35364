//! Where rows the server will never accept are listed.

use std::io::{self, Write};

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

/// Writes rejects as CSV with the header `row,key,error` (RFC 4180 quoting; errors on one line).
pub struct CsvRejects<W: Write> {
    writer: csv::Writer<W>,
}

impl<W: Write> CsvRejects<W> {
    /// Writes the header to `output`.
    pub fn new(output: W) -> io::Result<Self> {
        let mut writer = csv::Writer::from_writer(output);
        writer.write_record(["row", "key", "error"])?;
        Ok(CsvRejects { writer })
    }

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
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
