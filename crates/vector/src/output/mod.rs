//! Writers of converted vectors for `cqlwire convert`: `raw` (values concatenated), `framed`
//! (protocol `[bytes]`), `hex` (one line per row, optionally `id,0x…` CSV), `npy` (a big-endian 2-D
//! array), `parquet` and `arrow` (the input's other columns plus a binary `<column>_cql` column).
//! The writers of an unload ([`UnloadWriter`]: a table's rows as Arrow record batches into Parquet,
//! Arrow, `npy`, `fbin`, `raw` or `hex`, and an ids file) share their `.npy` header and their
//! Parquet/Arrow sink.
//!
//! A writer writes into any [`Destination`]: a `Vec<u8>` in memory, any `Write` wrapped in [`Stream`],
//! or a file that appears only when the caller commits the destination
//! that `VectorWriter::finish` hands back. Null rows reach a writer only under [`NullPolicy::Skip`] (dropped) or
//! [`NullPolicy::Null`] with a format that can hold them; [`check_nulls`] rejects the other cases.

mod hex;
mod npy;
mod table;
mod unload;

use crate::kernel::{EncodedBatch, VectorEncoder};
use std::io;

/// The destinations of the writers, from `cqlwire-output`: any `Write` ([`Stream`]), a `Vec<u8>`,
/// or an atomic file ([`Output`]).
pub use cqlwire_output::{
    refuse_same_file, same_destination, Destination, Output, OutputError, Stream,
};
pub use unload::{IdsFormat, UnknownUnloadFormat, UnloadFormat, UnloadWriteError, UnloadWriter};

crate::registry::registry! {
    /// The output formats of `convert`.
    pub enum OutputFormat, error UnknownOutputFormat ("output format") {
        Raw = "raw", [], "The values concatenated";
        Framed = "framed", [], "Each value as a protocol `[bytes]`: a 4-byte big-endian length, then the value; -1 for null";
        Hex = "hex", [], "One `0x…` line per row (`id,0x…` with `--id-column`)";
        Npy = "npy", ["npy"], "A 2-D `.npy` array of the big-endian element type (fixed-size element types only)";
        Parquet = "parquet", ["parquet", "pq"], "Parquet: the input's other columns plus a binary `<column>_cql` column";
        Arrow = "arrow", ["arrow", "arrows", "ipc"], "Arrow IPC stream: the same columns as `parquet`";
    }
}

impl OutputFormat {
    /// Whether the format is binary (refused on a terminal).
    pub fn is_binary(self) -> bool {
        self != OutputFormat::Hex
    }

    /// Whether the format can represent a null row.
    pub(crate) fn holds_nulls(self) -> bool {
        !matches!(self, OutputFormat::Raw | OutputFormat::Npy)
    }
}

/// What to do with a null row (a null list in a Parquet or Arrow input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NullPolicy {
    /// Stop with an error naming the row.
    Error,
    /// Leave the row out.
    Skip,
    /// Write a null: `-1` in `framed`, a `null` line in `hex`, a null cell in `parquet`/`arrow`.
    Null,
}

/// Why output could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The options do not fit the format (a usage error).
    #[error("{0}")]
    Usage(String),
    /// A row cannot be written (e.g. a null row in a format without nulls).
    #[error("{0}")]
    Data(String),
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The Parquet or Arrow library failed.
    #[error("{0}")]
    Table(String),
    /// An id column was asked for a format without one (a usage error).
    #[error("an id column applies to the hex, parquet and arrow formats, not {}", .0.name())]
    IdColumnFormat(OutputFormat),
    /// The id column is not a column of the input (a usage error).
    #[error("id column {id}: {}", match .columns {
        None => "this input has no columns besides the vectors (only Parquet and Arrow inputs have \
                 id columns)".to_string(),
        Some(names) => format!("no such column in the input (columns: {names})"),
    })]
    IdColumnMissing {
        /// The requested column.
        id: String,
        /// The input's other columns, comma-separated (`none besides the vectors` when there are
        /// none), or None when the input has no columns but the vectors.
        columns: Option<String>,
    },
    /// The id column's values cannot be printed (a usage error).
    #[error(
        "id column {id}: cannot print values of type {data_type} (use an integer, floating-point, \
         boolean, string or binary column)"
    )]
    IdColumnType {
        /// The requested column.
        id: String,
        /// Its Arrow type.
        data_type: String,
    },
    /// A null row that the null policy refuses, or that the format cannot hold.
    #[error("null vector at row {row}{}", match .format {
        Some(format) => format!(": the {} format cannot hold nulls", format.name()),
        None => String::new(),
    })]
    NullRow {
        /// Absolute (0-based) row index.
        row: u64,
        /// The format, when the policy is to write nulls but the format cannot hold them.
        format: Option<OutputFormat>,
    },
    /// The `npy` format with a variable-size element type (a usage error).
    #[error(
        "the npy format needs a fixed-size element type (float, double, int, bigint, timestamp, \
         boolean), not {0}"
    )]
    NpyElement(String),
    /// `npy` to a destination that cannot be rewritten, from an input that does not declare its row
    /// count (a usage error).
    #[error(
        "npy output to a destination that cannot be rewritten needs the row count up front, which \
         this input does not give"
    )]
    NpyRowCount,
    /// The `npy` header already written (to a destination that cannot be rewritten) has the wrong
    /// row count, because null rows were skipped.
    #[error(
        "the npy header already written says {header_rows} rows but {rows} were written (null rows \
         skipped)"
    )]
    NpyHeader {
        /// The row count in the header.
        header_rows: u64,
        /// The rows written.
        rows: u64,
    },
}

impl WriteError {
    /// Whether the error is about options that do not fit the format or input, rather than about
    /// the data or the writing.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            WriteError::Usage(_)
                | WriteError::IdColumnFormat(_)
                | WriteError::IdColumnMissing { .. }
                | WriteError::IdColumnType { .. }
                | WriteError::NpyElement(_)
                | WriteError::NpyRowCount
        )
    }
}

/// Everything a writer needs to know besides its output.
#[derive(Debug, Clone)]
pub(crate) struct WriterOptions {
    /// The output format.
    pub format: OutputFormat,
    /// What to do with null rows (they arrive only under `Skip` or `Null`, see [`check_nulls`]).
    pub nulls: NullPolicy,
    /// The passed-through column written before each hex value, and required to exist
    /// for `parquet`/`arrow`.
    pub id_column: Option<String>,
    /// Name of the input's vector column; the output column is `<name>_cql`.
    pub column_name: String,
    /// The input's other columns (Parquet and Arrow inputs).
    pub passthrough: Option<arrow_schema::SchemaRef>,
    /// The rows the input will yield, when known up front (sizes the `npy` header).
    pub expected_rows: Option<u64>,
}

/// A sink for encoded batches, in row order, writing into a destination `W`.
pub(crate) trait VectorWriter<W>: Send {
    /// Writes the batch's rows (dropping null rows under [`NullPolicy::Skip`]); returns the number of
    /// value bytes written.
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError>;
    /// Completes the output (headers, footers, flushed) and hands the destination back (a file
    /// [`Output`] still to be committed, the bytes of a `Vec<u8>`).
    fn finish(self: Box<Self>) -> Result<W, WriteError>;
}

/// Creates the writer for `options.format` on `output`.
pub(crate) fn create<W: Destination + 'static>(
    output: W,
    encoder: &VectorEncoder,
    options: WriterOptions,
) -> Result<Box<dyn VectorWriter<W>>, WriteError> {
    if options.id_column.is_some()
        && matches!(
            options.format,
            OutputFormat::Raw | OutputFormat::Framed | OutputFormat::Npy
        )
    {
        return Err(WriteError::IdColumnFormat(options.format));
    }
    if let Some(id) = &options.id_column {
        let has_id = options
            .passthrough
            .as_ref()
            .is_some_and(|schema| schema.column_with_name(id).is_some());
        if !has_id {
            return Err(id_column_missing(id, &options));
        }
    }
    let skip = options.nulls == NullPolicy::Skip;
    Ok(match options.format {
        OutputFormat::Raw => Box::new(RawWriter { output }),
        OutputFormat::Framed => Box::new(FramedWriter { output, skip }),
        OutputFormat::Hex => Box::new(hex::HexWriter::new(output, &options)?),
        OutputFormat::Npy => Box::new(npy::NpyWriter::new(output, encoder, &options)?),
        OutputFormat::Parquet | OutputFormat::Arrow => {
            Box::new(table::TableWriter::new(output, &options)?)
        }
    })
}

/// The error for an id column that the input does not have.
fn id_column_missing(id: &str, options: &WriterOptions) -> WriteError {
    let columns = options.passthrough.as_ref().map(|schema| {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        if names.is_empty() {
            "none besides the vectors".to_string()
        } else {
            names.join(", ")
        }
    });
    WriteError::IdColumnMissing {
        id: id.to_string(),
        columns,
    }
}

/// Checks a batch's null rows (`validity`, rows counted from `first_row`) against the policy: under
/// `Error`, and under `Null` with a format that cannot hold nulls, the first null row is an error;
/// returns its absolute index with the error.
pub fn check_nulls(
    first_row: u64,
    validity: Option<&[bool]>,
    nulls: NullPolicy,
    format: OutputFormat,
) -> Result<(), (u64, WriteError)> {
    let Some(index) = validity.and_then(|v| v.iter().position(|valid| !valid)) else {
        return Ok(());
    };
    let row = first_row + index as u64;
    let format = match nulls {
        NullPolicy::Skip => return Ok(()),
        NullPolicy::Null if format.holds_nulls() => return Ok(()),
        NullPolicy::Null => Some(format),
        NullPolicy::Error => None,
    };
    Err((row, WriteError::NullRow { row, format }))
}

/// The runs of consecutive valid rows of a batch, as `start..end` row ranges (relative).
fn valid_runs(batch: &EncodedBatch) -> Vec<std::ops::Range<usize>> {
    let Some(validity) = &batch.validity else {
        return std::iter::once(0..batch.rows).collect();
    };
    let mut runs = Vec::new();
    let mut start = None;
    for (index, &valid) in validity.iter().enumerate().take(batch.rows) {
        match (valid, start) {
            (true, None) => start = Some(index),
            (false, Some(s)) => {
                runs.push(s..index);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push(s..batch.rows.min(validity.len()));
    }
    runs
}

/// `raw`: the values of the valid rows, concatenated.
struct RawWriter<W> {
    output: W,
}

impl<W: Destination> VectorWriter<W> for RawWriter<W> {
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError> {
        let mut written = 0;
        for run in valid_runs(batch) {
            let bytes = batch.rows_bytes(run);
            self.output.write_all(bytes)?;
            written += bytes.len() as u64;
        }
        Ok(written)
    }

    fn finish(mut self: Box<Self>) -> Result<W, WriteError> {
        self.output.flush()?;
        Ok(self.output)
    }
}

/// `framed`: each row as `[int length][value]`, `-1` for a null row.
struct FramedWriter<W> {
    output: W,
    skip: bool,
}

impl<W: Destination> VectorWriter<W> for FramedWriter<W> {
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError> {
        let mut written = 0;
        for index in 0..batch.rows {
            if !batch.is_valid(index) {
                if !self.skip {
                    self.output.write_all(&(-1i32).to_be_bytes())?;
                }
                continue;
            }
            let value = batch.row(index);
            let length = i32::try_from(value.len()).map_err(|_| {
                WriteError::Data(format!(
                    "the value of row {} is {} bytes, more than a [bytes] length can say",
                    batch.first_row + index as u64,
                    value.len()
                ))
            })?;
            self.output.write_all(&length.to_be_bytes())?;
            self.output.write_all(value)?;
            written += value.len() as u64;
        }
        Ok(written)
    }

    fn finish(mut self: Box<Self>) -> Result<W, WriteError> {
        self.output.flush()?;
        Ok(self.output)
    }
}
