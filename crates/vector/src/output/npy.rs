//! `npy` output: a version 1.0 `.npy` file holding a C-order 2-D array of the big-endian element type,
//! whose data section is byte for byte the `raw` output; and the header that unload's `.npy` files
//! (2-D vectors, 1-D ids) share with it.

use super::{valid_runs, Destination, VectorWriter, WriteError, WriterOptions};
use crate::kernel::{EncodedBatch, VectorEncoder};
use crate::types::{CqlType, NativeType};

/// Magic bytes and version 1.0 of the format.
const MAGIC: &[u8] = b"\x93NUMPY\x01\x00";

/// Digits reserved in the header for the row count, so it can be rewritten in place.
const ROW_DIGITS: usize = 20;

/// Writes rows as an `.npy` array, fixing the row count in the header at the end.
pub(super) struct NpyWriter<W> {
    output: W,
    descr: &'static str,
    dimension: usize,
    /// The row count written in the header so far.
    header_rows: u64,
    /// Rows written.
    rows: u64,
}

impl<W: Destination> NpyWriter<W> {
    /// Writes the header (with the expected row count, or 0 when unknown) and returns the writer.
    pub(super) fn new(
        mut output: W,
        encoder: &VectorEncoder,
        options: &WriterOptions,
    ) -> Result<Self, WriteError> {
        let descr = match encoder.element() {
            CqlType::Native(NativeType::Float) => ">f4",
            CqlType::Native(NativeType::Double) => ">f8",
            CqlType::Native(NativeType::Int) => ">i4",
            CqlType::Native(NativeType::BigInt | NativeType::Timestamp) => ">i8",
            CqlType::Native(NativeType::Boolean) => "|b1",
            other => return Err(WriteError::NpyElement(other.to_string())),
        };
        if !output.can_rewrite() && options.expected_rows.is_none() {
            return Err(WriteError::NpyRowCount);
        }
        let header_rows = options.expected_rows.unwrap_or(0);
        output.write_all(&header(descr, header_rows, Some(encoder.dimension())))?;
        Ok(NpyWriter {
            output,
            descr,
            dimension: encoder.dimension(),
            header_rows,
            rows: 0,
        })
    }
}

/// The complete header (magic, version, length, dictionary padded to a multiple of 64 bytes) for an
/// array of `rows` × `dimension`, or of `rows` elements when `dimension` is None (a 1-D array);
/// always the same size, whatever `rows`, so that it can be rewritten in place.
pub(super) fn header(descr: &str, rows: u64, dimension: Option<usize>) -> Vec<u8> {
    let dictionary = |rows: &str| {
        let shape = match dimension {
            Some(dimension) => format!("({rows}, {dimension})"),
            None => format!("({rows},)"),
        };
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
    };
    // Size the header for the longest row count, so a rewrite fits exactly.
    let longest = dictionary(&"9".repeat(ROW_DIGITS)).len();
    let total = (MAGIC.len() + 2 + longest + 1).div_ceil(64) * 64;
    let text = dictionary(&rows.to_string());
    let header_len = total - MAGIC.len() - 2;
    let mut bytes = Vec::with_capacity(total);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(header_len as u16).to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
    bytes.resize(total - 1, b' ');
    bytes.push(b'\n');
    bytes
}

impl<W: Destination> VectorWriter<W> for NpyWriter<W> {
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError> {
        let mut written = 0;
        for run in valid_runs(batch) {
            self.rows += run.len() as u64;
            let bytes = batch.rows_bytes(run);
            self.output.write_all(bytes)?;
            written += bytes.len() as u64;
        }
        Ok(written)
    }

    fn finish(mut self: Box<Self>) -> Result<W, WriteError> {
        if self.rows != self.header_rows {
            if !self.output.can_rewrite() {
                return Err(WriteError::NpyHeader {
                    header_rows: self.header_rows,
                    rows: self.rows,
                });
            }
            let fixed = header(self.descr, self.rows, Some(self.dimension));
            self.output.write_at(0, &fixed)?;
        }
        self.output.flush()?;
        Ok(self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_size_does_not_depend_on_the_row_count() {
        let small = header(">f4", 0, Some(768));
        let large = header(">f4", u64::MAX, Some(768));
        assert_eq!(small.len(), large.len());
        assert_eq!(small.len() % 64, 0);
        assert_eq!(small.last(), Some(&b'\n'));
        let text = String::from_utf8_lossy(&small[10..]);
        assert!(text.starts_with("{'descr': '>f4', 'fortran_order': False, 'shape': (0, 768), }"));
        let declared = u16::from_le_bytes([small[8], small[9]]) as usize;
        assert_eq!(declared + 10, small.len());
        let ids = header("<i8", 3, None);
        assert_eq!(ids.len() % 64, 0);
        assert!(String::from_utf8_lossy(&ids).contains("'shape': (3,), }"));
    }
}
