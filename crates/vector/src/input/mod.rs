//! Embedding inputs for `cqlwire convert`: NPY, Parquet, TEXMEX (`.fvecs/.ivecs/.bvecs`),
//! big-ann-benchmarks (`.fbin/.ibin/.u8bin/.i8bin`), Arrow IPC and HDF5, read as bounded batches of
//! rows.
//!
//! [`open`] picks the reader (from [`InputOptions::format`], else the file extension, else the magic
//! bytes) and returns a [`BatchReader`] that yields [`Batch`]es in row order; memory stays bounded by a
//! few batches whatever the input size (file readers cap a batch at 8 MiB; Parquet decodes batches of
//! about 16 MiB of all the columns read; an Arrow IPC record batch is held whole, as its writer made
//! it, and handed out in slices of at most 16 MiB).
//!
//! ```no_run
//! use cqlwire_vector::input::{self, InputOptions, RowSelection};
//!
//! let options = InputOptions {
//!     format: None,
//!     column: None,
//!     dataset: "train".to_string(),
//!     selection: RowSelection::Shard { k: 1, n: 4 },
//!     batch_rows: 4096,
//!     vectors_optional: false,
//! };
//! let mut reader = input::open(Some("train.parquet".as_ref()), &options)?;
//! println!("{:?} × {}", reader.element_type(), reader.dimension());
//! while let Some(batch) = reader.next_batch()? {
//!     // ... use batch.elements (rows × dimension, row-major) and batch.validity ...
//!     reader.recycle(batch.elements); // optional: the next batch reuses the memory
//! }
//! # Ok::<(), cqlwire_vector::input::InputError>(())
//! ```
//!
//! Errors: [`InputError::Options`] is about the command line (no such column, rows past the end, a
//! shard of a stream); the other variants are about the data or the file.

mod arrow_ipc;
mod bigann;
mod columnar;
mod elements;
mod flat;
mod guard;
mod hdf5;
mod ipc_claims;
mod multi;
mod neighbors;
mod npy;
mod parquet;
mod parquet_leaf;
mod source;
mod texmex;
mod text;

pub use hdf5::{
    read_integer_dataset, read_root_string_attribute, IntegerDataset, MAX_ATTRIBUTE_BYTES,
};
pub use multi::open_files;
pub use neighbors::{
    read_neighbors, read_neighbors_stream, read_neighbors_stream_to, read_neighbors_to, Neighbors,
    NeighborsFormat,
};
use source::Source;
pub use source::{named, open_file};
use std::io;
use std::ops::Range;
use std::path::Path;

/// Largest row accepted, in bytes (a guard against absurd dimensions in headers).
const MAX_ROW_BYTES: usize = 64 << 20;

/// Largest batch produced by the file readers, in bytes, whatever `batch_rows` asks for.
const MAX_BATCH_BYTES: usize = 8 << 20;

/// Decoded bytes of a Parquet or Arrow batch (all the columns read), whatever `batch_rows` asks for:
/// the Parquet reader aims at this and shrinks its batches when one is larger; a larger Arrow record
/// batch is handed out in slices of at most this.
pub(crate) const MAX_DECODED_BATCH_BYTES: usize = 16 << 20;

/// Bytes read to recognise a format by its magic bytes.
const MAGIC_PREFIX: usize = 8;

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
    /// Rows whose other columns hold a value that cannot be read, in row order (usually none).
    pub damaged: Vec<DamagedRow>,
}

/// A row whose other columns hold a value that cannot be read (text that is not UTF-8 in a
/// Parquet input): the value is a null cell in [`Batch::columns`], and the row must be refused
/// rather than used, while the batch's other rows are whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedRow {
    /// The input's name.
    pub input: String,
    /// 0-based index of the row in the whole input.
    pub row: u64,
    /// The column holding the value.
    pub column: String,
    /// Why the value cannot be read.
    pub reason: String,
}

impl std::fmt::Display for DamagedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: row {}, column '{}': {}",
            self.input, self.row, self.column, self.reason
        )
    }
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

/// Parses a row range as `START..END` (0-based, END exclusive; either bound may be omitted).
pub fn parse_rows(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| format!("expected START..END, e.g. 0..1000, not '{text}'"))?;
    let bound = |s: &str, default: u64| -> Result<u64, String> {
        let s = s.trim();
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse()
                .map_err(|_| format!("'{s}' is not a row number (in '{text}')"))
        }
    };
    let range = bound(start, 0)?..bound(end, u64::MAX)?;
    if range.start > range.end {
        return Err(format!("the range {text} ends before it starts"));
    }
    Ok(range)
}

/// Parses a part of an input as `K/N` with 1 ≤ K ≤ N.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!(
            "expected K/N with 1 ≤ K ≤ N, e.g. 2/8, not '{text}'"
        )),
    }
}

impl RowSelection {
    /// The rows a range or a shard (K-th of N) selects: the range when both are given, every row
    /// when neither is.
    pub fn of(rows: Option<Range<u64>>, shard: Option<(u64, u64)>) -> RowSelection {
        match (rows, shard) {
            (Some(range), _) => RowSelection::Range(range),
            (None, Some((k, n))) => RowSelection::Shard { k, n },
            (None, None) => RowSelection::All,
        }
    }
}

crate::registry::registry! {
    /// Input formats.
    pub enum InputFormat, error UnknownInputFormat ("input format") {
        Npy = "npy", ["npy"], "NumPy `.npy`";
        Parquet = "parquet", ["parquet", "pq", "parq"], "Apache Parquet";
        Fvecs = "fvecs", ["fvecs"], "TEXMEX float vectors";
        Ivecs = "ivecs", ["ivecs"], "TEXMEX int32 vectors";
        Bvecs = "bvecs", ["bvecs"], "TEXMEX byte vectors";
        Fbin = "fbin", ["fbin"], "big-ann-benchmarks float32";
        Ibin = "ibin", ["ibin"], "big-ann-benchmarks int32";
        U8bin = "u8bin", ["u8bin"], "big-ann-benchmarks uint8";
        I8bin = "i8bin", ["i8bin"], "big-ann-benchmarks int8";
        Arrow = "arrow", ["arrow", "arrows", "ipc", "feather"], "Arrow IPC stream (or file)";
        Hdf5 = "hdf5", ["hdf5", "h5"], "HDF5 (one 2-D dataset of it)";
    }
}

/// How to open an input.
#[derive(Debug, Clone)]
pub struct InputOptions {
    /// The format; None = by extension, then magic bytes.
    pub format: Option<InputFormat>,
    /// The vector column (Parquet/Arrow); None = the only list-typed column, else
    /// emb/embedding/vector.
    pub column: Option<String>,
    /// The dataset of an HDF5 input (each command picks its default: `train` to convert and load
    /// the base vectors, `test` for query vectors); other formats ignore it.
    pub dataset: String,
    /// Rows to read.
    pub selection: RowSelection,
    /// Target rows per batch (readers may use natural units: a Parquet row group is split into
    /// batches of at most this many rows).
    pub batch_rows: usize,
    /// Whether a Parquet or Arrow input without a list-typed column (and no `column` asked for) is
    /// read for its other columns alone, with no vectors: rows for a table without a vector
    /// column (counters, scalars). False refuses such an input, as commands that need vectors do.
    pub vectors_optional: bool,
}

/// Why an input could not be read: one line, naming the file offset / row / element where it applies.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    #[error("{}", one_line(.0))]
    Data(String),
    /// The format, element type, shape or column type is not supported (or not recognised).
    #[error("{}", one_line(.0))]
    Unsupported(String),
    /// The options do not fit the input (no such column, rows past the end, ...).
    #[error("{}", one_line(.0))]
    Options(String),
    /// Several list columns could hold the vectors and none was chosen (an options error).
    #[error("{input}: several list columns ({}); choose one", .columns.join(", "))]
    AmbiguousColumn {
        /// The input's name.
        input: String,
        /// The candidate columns, in the input's order.
        columns: Vec<String>,
    },
    /// A shard was asked of an input that does not declare its row count (an options error).
    #[error(
        "{input}: a shard needs the row count, which {what} does not declare (read {instead} or a \
         row range)"
    )]
    ShardNeedsRowCount {
        /// The input's name.
        input: String,
        /// What the input is, e.g. `a fvecs stream`.
        what: String,
        /// What declares it, e.g. `a file`.
        instead: &'static str,
    },
    /// The format was not given and neither the name nor the first bytes tell it.
    #[error(
        "{input}: cannot tell the input format from the file name or the first bytes (supported: \
         {})",
        InputFormat::NAMES.join(", ")
    )]
    UnknownFormat {
        /// The input's name.
        input: String,
    },
}

/// The message on one line (decoder errors may span several).
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A stream of batches from one input.
pub trait BatchReader: Send {
    /// Element type as stored.
    fn element_type(&self) -> ElementType;
    /// Elements per row (known at open; for list columns, from the first non-null row).
    fn dimension(&self) -> usize;
    /// Rows that this reader will yield (after selection), when known up front.
    fn rows(&self) -> Option<u64>;
    /// Name of the vector column (Parquet/Arrow), used to name the `<column>_cql` output column;
    /// None for inputs without columns (the default).
    fn column_name(&self) -> Option<&str> {
        None
    }
    /// Schema of the passed-through columns (Parquet/Arrow inputs), None otherwise (the default).
    fn passthrough_schema(&self) -> Option<arrow_schema::SchemaRef> {
        None
    }
    /// Whether the rows carry vectors; false only for an input read for its other columns alone
    /// (see [`InputOptions::vectors_optional`]), whose batches hold no elements.
    fn has_vectors(&self) -> bool {
        true
    }
    /// The next batch in row order, or None at the end. A ragged row is an error naming the row.
    fn next_batch(&mut self) -> Result<Option<Batch>, InputError>;
    /// Gives back the elements of a finished batch, so that the reader can read a later batch
    /// into the same memory instead of newly allocated, zeroed memory (saves a pass over the
    /// memory per batch). Optional; readers that cannot reuse it simply drop it.
    fn recycle(&mut self, elements: Elements) {
        drop(elements);
    }
}

/// Opens an input file (`None` or `-` = standard input; then the format needs [`InputOptions::format`]
/// or magic bytes). An unknown format is an error listing what is supported.
pub fn open(
    path: Option<&Path>,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let source = Source::open(path)?;
    let by_name = named(path).and_then(InputFormat::from_extension);
    open_source(source, options.format.or(by_name), options)
}

/// Opens an input from an already open stream, read forward only (as standard input is): the
/// format comes from `options.format`, else the magic bytes. Parquet and Arrow IPC files (which need
/// random access) are first copied to a temporary file.
pub fn open_stream(
    name: &str,
    stream: Box<dyn io::Read + Send>,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    open_source(Source::from_stream(name, stream), options.format, options)
}

/// Reads the vector column of Arrow record batches already in memory (e.g. handed over by a Python
/// caller through the Arrow C data interface), every row in order: the column is chosen as for
/// Parquet and Arrow files (`column`, else the only list column, else emb/embedding/vector) and
/// checked the same way (ragged rows, null elements). `name` stands for the input in messages;
/// `first_row` is the number of the first row (batches of a larger dataset keep their numbers);
/// `vectors_optional` as in [`InputOptions::vectors_optional`].
pub fn open_record_batches(
    name: &str,
    schema: &arrow_schema::Schema,
    batches: impl Iterator<Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>>
        + Send
        + 'static,
    column: Option<&str>,
    first_row: u64,
    batch_rows: usize,
    vectors_optional: bool,
) -> Result<Box<dyn BatchReader>, InputError> {
    let column = columnar::choose_column(schema, column, name, vectors_optional)?;
    let span = columnar::Span {
        first_row,
        skip: 0,
        limit: None,
        rows: None,
    };
    let reader =
        columnar::ColumnarReader::new(name, "Arrow", Box::new(batches), column, span, batch_rows)?;
    Ok(Box::new(reader))
}

/// Opens a source in `format`, or the format its magic bytes show.
fn open_source(
    mut source: Source,
    format: Option<InputFormat>,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let format = match format {
        Some(format) => format,
        None => detect(&mut source)?,
    };
    match format {
        InputFormat::Npy => npy::open(source, options),
        InputFormat::Fvecs | InputFormat::Ivecs | InputFormat::Bvecs => {
            texmex::open(source, format, options)
        }
        InputFormat::Fbin | InputFormat::Ibin | InputFormat::U8bin | InputFormat::I8bin => {
            bigann::open(source, format, options)
        }
        InputFormat::Parquet => parquet::open(source, options),
        InputFormat::Arrow => arrow_ipc::open(source, options),
        InputFormat::Hdf5 => hdf5::open(source, options),
    }
}

/// Recognises the format from the first bytes (`\x93NUMPY`, `PAR1`, `ARROW1`, the `ff ff ff ff`
/// continuation marker of an Arrow IPC stream, or the HDF5 signature, also behind a user block).
fn detect(source: &mut Source) -> Result<InputFormat, InputError> {
    let prefix = source.prefix(MAGIC_PREFIX)?;
    if prefix.starts_with(npy::MAGIC) {
        Ok(InputFormat::Npy)
    } else if prefix.starts_with(parquet::MAGIC) {
        Ok(InputFormat::Parquet)
    } else if prefix.starts_with(arrow_ipc::FILE_MAGIC)
        || prefix.starts_with(arrow_ipc::STREAM_MARKER)
    {
        Ok(InputFormat::Arrow)
    } else if hdf5::recognised(source, &prefix)? {
        Ok(InputFormat::Hdf5)
    } else {
        Err(InputError::UnknownFormat {
            input: source.name().to_string(),
        })
    }
}

impl InputFormat {
    /// The element type of the fixed-layout ANN formats (fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin),
    /// which their names carry; `None` for formats that describe their own elements.
    pub fn fixed_element_type(self) -> Option<ElementType> {
        match self {
            InputFormat::Fvecs | InputFormat::Fbin => Some(ElementType::F32),
            InputFormat::Ivecs | InputFormat::Ibin => Some(ElementType::I32),
            InputFormat::Bvecs | InputFormat::U8bin => Some(ElementType::U8),
            InputFormat::I8bin => Some(ElementType::I8),
            InputFormat::Npy | InputFormat::Parquet | InputFormat::Arrow | InputFormat::Hdf5 => {
                None
            }
        }
    }
}

/// The rows a selection picks out of `total` rows.
pub(crate) fn resolve_selection(
    selection: &RowSelection,
    total: u64,
    input: &str,
) -> Result<Range<u64>, InputError> {
    match selection {
        RowSelection::All => Ok(0..total),
        RowSelection::Range(range) => {
            if range.start > range.end {
                return Err(InputError::Options(format!(
                    "{input}: the row range {}..{} is reversed",
                    range.start, range.end
                )));
            }
            if range.start >= total && range.start > 0 {
                return Err(InputError::Options(format!(
                    "{input}: the row range starts at row {} but the input has {total} rows",
                    range.start
                )));
            }
            Ok(range.start..range.end.min(total))
        }
        &RowSelection::Shard { k, n } => {
            check_shard(k, n, input)?;
            Ok(shard_bound(total, k - 1, n)..shard_bound(total, k, n))
        }
    }
}

/// Checks that 1 ≤ K ≤ N.
pub(crate) fn check_shard(k: u64, n: u64, input: &str) -> Result<(), InputError> {
    if k == 0 || k > n {
        return Err(InputError::Options(format!(
            "{input}: shard {k}/{n} does not exist (1 ≤ K ≤ N)"
        )));
    }
    Ok(())
}

/// Where the J-th of N balanced parts of `total` rows ends (`total × j / n`, rounded down).
pub(crate) fn shard_bound(total: u64, j: u64, n: u64) -> u64 {
    let bound = u128::from(total) * u128::from(j) / u128::from(n.max(1));
    u64::try_from(bound).unwrap_or(total)
}

/// Bytes per row; an error when rows are empty or absurdly large.
pub(crate) fn row_bytes(
    input: &str,
    dimension: usize,
    element_type: ElementType,
) -> Result<usize, InputError> {
    match dimension.checked_mul(element_type.size()) {
        Some(0) => Err(InputError::Unsupported(format!(
            "{input}: rows have no elements (dimension 0)"
        ))),
        Some(bytes) if bytes <= MAX_ROW_BYTES => Ok(bytes),
        _ => Err(InputError::Unsupported(format!(
            "{input}: rows of {dimension} elements are larger than the {MAX_ROW_BYTES}-byte limit"
        ))),
    }
}

/// Rows per batch: `batch_rows`, at least 1, capped so a batch stays under [`MAX_BATCH_BYTES`].
pub(crate) fn rows_per_batch(options: &InputOptions, row_bytes: usize) -> usize {
    let cap = (MAX_BATCH_BYTES / row_bytes.max(1)).max(1);
    options.batch_rows.clamp(1, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name_and_extension() {
        for (format, &name) in InputFormat::ALL.iter().zip(InputFormat::NAMES) {
            assert_eq!(name.parse::<InputFormat>(), Ok(*format));
            assert_eq!(format.name(), name);
        }
        assert_eq!("NPY".parse::<InputFormat>(), Ok(InputFormat::Npy));
        assert!("csv"
            .parse::<InputFormat>()
            .unwrap_err()
            .to_string()
            .contains("fvecs"));
        let by_extension = |p: &str| InputFormat::from_extension(Path::new(p));
        assert_eq!(by_extension("a/b.PQ"), Some(InputFormat::Parquet));
        assert_eq!(by_extension("x.u8bin"), Some(InputFormat::U8bin));
        assert_eq!(by_extension("x.arrows"), Some(InputFormat::Arrow));
        assert_eq!(by_extension("x.H5"), Some(InputFormat::Hdf5));
        assert_eq!(by_extension("x.bin"), None);
        assert_eq!(by_extension("npy"), None);
    }

    #[test]
    fn selections_resolve_against_the_row_count() {
        let resolve = |s: RowSelection, total| resolve_selection(&s, total, "t");
        assert_eq!(resolve(RowSelection::All, 7).unwrap(), 0..7);
        assert_eq!(resolve(RowSelection::Range(2..100), 7).unwrap(), 2..7);
        assert_eq!(resolve(RowSelection::Range(0..5), 0).unwrap(), 0..0);
        assert!(resolve(RowSelection::Range(7..9), 7).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = RowSelection::Range(5..2);
        assert!(resolve(reversed, 7).is_err());
        let shards: Vec<_> = (1..=3)
            .map(|k| resolve(RowSelection::Shard { k, n: 3 }, 7).unwrap())
            .collect();
        assert_eq!(shards, [0..2, 2..4, 4..7]);
        assert!(resolve(RowSelection::Shard { k: 0, n: 3 }, 7).is_err());
        assert!(resolve(RowSelection::Shard { k: 4, n: 3 }, 7).is_err());
        assert_eq!(shard_bound(u64::MAX, 3, 4), u64::MAX / 4 * 3 + 2);
    }

    #[test]
    fn streams_are_recognised_by_magic_bytes() {
        let options = InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection: RowSelection::All,
            batch_rows: 1,
            vectors_optional: false,
        };
        let garbage = Box::new(io::Cursor::new(b"garbage".to_vec()));
        let error = open_stream("stdin", garbage, &options)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("cannot tell the input format"), "{error}");
        assert!(error.contains("fvecs"), "{error}");
    }
}
