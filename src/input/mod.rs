//! Embedding inputs for `cqlwire convert`: NPY, Parquet, TEXMEX (`.fvecs/.ivecs/.bvecs`),
//! big-ann-benchmarks (`.fbin/.ibin/.u8bin/.i8bin`) and Arrow IPC, read as bounded batches of rows.
//!
//! [`open`] picks the reader (from [`InputOptions::format`], else the file extension, else the magic
//! bytes) and returns a [`BatchReader`] that yields [`Batch`]es in row order; memory stays bounded by a
//! few batches whatever the input size.

use std::io;
use std::path::Path;

/// Element type of an input as stored in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    /// IEEE 754 half precision.
    F16,
    /// IEEE 754 single precision.
    F32,
    /// IEEE 754 double precision.
    F64,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
}

/// Row-major elements of a batch, in native byte order (readers convert big-endian inputs).
#[derive(Debug, Clone)]
pub enum Elements {
    /// Half-precision floats.
    F16(Vec<half::f16>),
    /// Single-precision floats.
    F32(Vec<f32>),
    /// Double-precision floats.
    F64(Vec<f64>),
    /// Signed bytes.
    I8(Vec<i8>),
    /// Unsigned bytes.
    U8(Vec<u8>),
    /// 16-bit integers.
    I16(Vec<i16>),
    /// 32-bit integers.
    I32(Vec<i32>),
    /// 64-bit integers.
    I64(Vec<i64>),
}

/// A batch of consecutive rows.
#[derive(Debug, Clone)]
pub struct Batch {
    /// 0-based index, in the whole input file, of this batch's first row.
    pub first_row: u64,
    /// Number of rows in the batch.
    pub rows: usize,
    /// rows × dimension elements; the elements of a null row are zeros.
    pub elements: Elements,
    /// Per-row validity (false = null row); None when every row is valid.
    pub validity: Option<Vec<bool>>,
    /// The input's other (non-vector) columns for these rows — Parquet and Arrow inputs only.
    pub columns: Option<arrow_array::RecordBatch>,
}

/// Which rows to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowSelection {
    /// Every row.
    All,
    /// Rows START..END (END clamped to the row count; START past the end → error).
    Range(std::ops::Range<u64>),
    /// The K-th (1-based) of N contiguous balanced parts; by Parquet row group where possible.
    /// Concatenating the N parts gives every row exactly once, in order.
    Shard {
        /// Which part, 1-based.
        k: u64,
        /// How many parts.
        n: u64,
    },
}

/// Input formats (PRODUCT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// NumPy `.npy`.
    Npy,
    /// Apache Parquet.
    Parquet,
    /// TEXMEX float vectors.
    Fvecs,
    /// TEXMEX int32 vectors.
    Ivecs,
    /// TEXMEX byte vectors.
    Bvecs,
    /// big-ann-benchmarks float32.
    Fbin,
    /// big-ann-benchmarks int32.
    Ibin,
    /// big-ann-benchmarks uint8.
    U8bin,
    /// big-ann-benchmarks int8.
    I8bin,
    /// Arrow IPC stream (or file).
    Arrow,
}

/// How to open an input.
#[derive(Debug, Clone)]
pub struct InputOptions {
    /// `--input-format`; None = by extension, then magic bytes.
    pub format: Option<InputFormat>,
    /// `--column` (Parquet/Arrow); None = the only list-typed column, else emb/embedding/vector.
    pub column: Option<String>,
    /// Rows to read.
    pub selection: RowSelection,
    /// Target rows per batch (readers may use natural units: a Parquet row group is split into
    /// batches of at most this many rows).
    pub batch_rows: usize,
}

/// Why an input could not be read: one line, naming the file offset / row / element where it applies.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input could not be opened or read.
    #[error("{input}: {source}")]
    Io {
        /// The input's name (path or `standard input`).
        input: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The bytes are not a valid input (truncated, corrupt, ragged rows, null elements, ...).
    #[error("{0}")]
    Data(String),
    /// The format, element type, shape or column type is not supported (or not recognised).
    #[error("{0}")]
    Unsupported(String),
    /// The options do not fit the input (no such column, ambiguous column, rows past the end, ...).
    #[error("{0}")]
    Options(String),
}

/// A stream of batches from one input.
pub trait BatchReader: Send {
    /// Element type as stored.
    fn element_type(&self) -> ElementType;
    /// Elements per row (known at open; for list columns, from the first non-null row).
    fn dimension(&self) -> usize;
    /// Rows that this reader will yield (after selection), when known up front.
    fn rows(&self) -> Option<u64>;
    /// Name of the vector column (Parquet/Arrow), used to name the `<column>_cql` output column.
    fn column_name(&self) -> Option<&str>;
    /// Schema of the passed-through columns (Parquet/Arrow inputs), None otherwise.
    fn passthrough_schema(&self) -> Option<arrow_schema::SchemaRef>;
    /// The next batch in row order, or None at the end. A ragged row is an error naming the row.
    fn next_batch(&mut self) -> Result<Option<Batch>, InputError>;
}

/// Opens an input file (`None` or `-` = standard input; then the format needs `--input-format` or
/// magic bytes). An unknown format is an error listing what is supported.
pub fn open(
    path: Option<&Path>,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let _ = (path, options);
    Err(InputError::Unsupported(
        "no input reader is available yet".to_string(),
    ))
}
