//! The conversion pipeline: embeddings read by an [`input`] reader, encoded as CQL vector values by the
//! [`kernel`] and written in order by an [`output`] writer into any [`Destination`] (a file, a
//! `Vec<u8>`, any `Write`).
//!
//! Fixed-size element types (float, double, int, bigint, ...) are read, converted and written batch by
//! batch on the calling thread: the conversion runs at memory speed, so the kernel's copies set the
//! pace and extra threads only add hand-offs. Variable-size element types are CPU-bound: a reader
//! thread feeds batches through a bounded queue, the calling thread converts each one on a rayon pool
//! of [`ConvertOptions::threads`] workers, and a writer thread writes them in order. Either way only a
//! few batches are in flight, so memory stays bounded whatever the input size; one thread runs
//! everything on the calling thread.
//!
//! Casts are the kernel's: a double to float rounds to the nearest float, tiny values gradually to
//! subnormals and ±0 (NumPy's `astype('>f4')`, the driver's `struct.pack('>f')`); a finite double
//! beyond the float range, an integer out of range or not exactly representable, a float with a
//! fraction for an integer type is a [`VectorError::Cast`] naming the row and element.
//!
//! ```no_run
//! use cqlwire_vector::convert::{self, ConvertOptions};
//! use cqlwire_vector::input::{InputOptions, RowSelection};
//! use cqlwire_vector::output::OutputFormat;
//!
//! let input = InputOptions { format: None, column: None, dataset: "train".into(), selection: RowSelection::All, batch_rows: 1024, vectors_optional: false };
//! let reader = convert::open(Some("train.parquet".as_ref()), input)?;
//! let options = ConvertOptions::new(OutputFormat::Framed);
//! let (bytes, totals) = convert::convert(reader, Vec::new(), &options, &|_| {})?;
//! println!("{} rows, {} bytes", totals.rows, bytes.len());
//! # Ok::<(), cqlwire_vector::convert::ConvertError>(())
//! ```

use crate::input::{self, Batch, BatchReader, Elements, InputError, InputOptions};
use crate::kernel::{self, EncodedBatch, VectorEncoder, VectorError};
use crate::output::{
    self, Destination, NullPolicy, OutputFormat, VectorWriter, WriteError, WriterOptions,
};
use crate::types::CqlType;
use std::path::Path;
use std::sync::mpsc;

/// Input bytes per batch the readers are asked for when reading a file ([`open`]).
const BATCH_BYTES: usize = 256 << 10;

/// Worker threads per core beyond which [`ConvertOptions::threads`] is capped.
pub const MAX_THREADS_PER_CORE: usize = 4;

/// Batches waiting between the reader and the converter, and between the converter and the writer.
const QUEUE: usize = 2;

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// Reading the input failed, or the input options do not fit it.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The target type is not supported, or an element does not convert.
    #[error(transparent)]
    Vector(#[from] VectorError),
    /// The output could not be written, or the writer options do not fit the format.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The requested target type is not a vector type.
    #[error(
        "the target type must be a vector type such as vector<float, {dimension}>, not {requested}"
    )]
    NotVector {
        /// The requested type.
        requested: CqlType,
        /// The input's row length.
        dimension: usize,
    },
    /// The requested vector type's dimension is not the input's row length.
    #[error(
        "the target type {requested} has dimension {declared} but the input's rows have {dimension} \
         elements"
    )]
    Dimension {
        /// The requested type.
        requested: CqlType,
        /// Its dimension.
        declared: usize,
        /// The input's row length.
        dimension: usize,
    },
    /// The input's rows have no elements (or, for `npy` output, there are no rows), so there is no
    /// default target type.
    #[error("the input's rows have no elements, so there is no vector type to derive from them")]
    Empty,
    /// The worker threads could not be started, or one of them failed.
    #[error("{0}")]
    Threads(String),
}

/// How to convert: everything besides the input and the destination.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// The target type (a vector type of the input's row length); None: the default for the input's
    /// element type ([`target_type`]).
    pub target: Option<CqlType>,
    /// The output format.
    pub format: OutputFormat,
    /// What to do with null rows.
    pub nulls: NullPolicy,
    /// A column of the input written before each hex value (and required to exist for tables).
    pub id_column: Option<String>,
    /// Worker threads for CPU-bound conversions, at most [`MAX_THREADS_PER_CORE`] per core; None: one
    /// per core.
    pub threads: Option<usize>,
}

impl ConvertOptions {
    /// Options for `format` with the defaults: the input's default type, null rows refused, no id
    /// column, one thread per core.
    pub fn new(format: OutputFormat) -> Self {
        ConvertOptions {
            target: None,
            format,
            nulls: NullPolicy::Error,
            id_column: None,
            threads: None,
        }
    }
}

/// What a conversion produced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Rows written (null rows left out are not counted).
    pub rows: u64,
    /// Null rows left out ([`NullPolicy::Skip`]).
    pub skipped: u64,
    /// Value bytes written.
    pub bytes: u64,
}

/// Opens `path` (standard input for `-` or None) for conversion: a file is read in batches of about
/// 256 KiB (`options.batch_rows` applies to standard input, whose row size is unknown up front).
pub fn open(
    path: Option<&Path>,
    mut options: InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let reader = input::open(path, &options)?;
    // Only a regular file can be opened again: a named pipe or `/dev/stdin` is read once.
    let regular = crate::input::named(path)
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.is_file());
    if !regular {
        return Ok(reader);
    }
    let row_bytes = reader
        .dimension()
        .saturating_mul(reader.element_type().size());
    // A file can be opened again, with batches of about BATCH_BYTES now that the row size is known.
    let batch_rows = (BATCH_BYTES / row_bytes.max(1)).max(1);
    if batch_rows == options.batch_rows {
        return Ok(reader);
    }
    options.batch_rows = batch_rows;
    input::open(path, &options)
}

/// Converts every row of `reader` into `destination` in the format of `options`, calling `progress`
/// with the totals so far after each batch; returns the destination (a file still to be committed)
/// and the totals.
pub fn convert<W: Destination + 'static>(
    reader: Box<dyn BatchReader>,
    destination: W,
    options: &ConvertOptions,
    progress: &(dyn Fn(&Totals) + Sync),
) -> Result<(W, Totals), ConvertError> {
    let target = target_type(options.target.clone(), reader.as_ref(), options.format)?;
    let encoder = VectorEncoder::new(&target)?;
    let writer_options = WriterOptions {
        format: options.format,
        nulls: options.nulls,
        id_column: options.id_column.clone(),
        column_name: reader.column_name().unwrap_or("vector").to_string(),
        passthrough: reader.passthrough_schema(),
        expected_rows: reader.rows(),
    };
    let writer = output::create(destination, &encoder, writer_options)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // More threads than a few per core only add start-up time and contention.
    let threads = options
        .threads
        .map_or(cores, |n| n.clamp(1, MAX_THREADS_PER_CORE * cores));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| ConvertError::Threads(e.to_string()))?;
    let pipeline = Pipeline {
        encoder: &encoder,
        nulls: options.nulls,
        format: options.format,
        id_column: options.id_column.as_deref(),
        pool: &pool,
        progress,
    };
    // Fixed-size conversion runs at memory speed on one core, so the copies in the kernel set the
    // pace: hand-offs between threads only add wake-ups and cache misses (measured: see
    // BATCH_BYTES). Variable-size elements are CPU-bound (about 50 ns each) and go through the
    // reader/converter/writer pipeline with the pool.
    if threads == 1 || encoder.value_size().is_some() {
        pipeline.run_inline(reader, writer)
    } else {
        pipeline.run_threaded(reader, writer)
    }
}

/// The target type: `requested` (a vector whose dimension is the input's), or the default for the
/// input's element type and row length (vector<float, N> for f16/f32, vector<double, N> for f64,
/// vector<bigint, N> for int64, vector<int, N> for other integers).
///
/// An input without rows (an empty shard) has no row length: any requested vector type fits it,
/// and without one every format but `npy` (whose header needs the dimension) gets its empty output
/// (then the type, a stand-in of dimension 1, writes nothing).
pub fn target_type(
    requested: Option<CqlType>,
    reader: &dyn BatchReader,
    format: OutputFormat,
) -> Result<CqlType, ConvertError> {
    let dimension = reader.dimension();
    let no_rows = dimension == 0 && reader.rows() == Some(0);
    match requested {
        Some(CqlType::Vector(element, declared)) => {
            if declared != dimension && !no_rows {
                return Err(ConvertError::Dimension {
                    requested: CqlType::Vector(element, declared),
                    declared,
                    dimension,
                });
            }
            Ok(CqlType::Vector(element, declared))
        }
        Some(requested) => Err(ConvertError::NotVector {
            requested,
            dimension,
        }),
        None => {
            if dimension == 0 && (!no_rows || format == OutputFormat::Npy) {
                return Err(ConvertError::Empty);
            }
            let element = kernel::default_element(reader.element_type());
            Ok(CqlType::Vector(
                Box::new(CqlType::Native(element)),
                dimension.max(1),
            ))
        }
    }
}

/// One conversion: the settings shared by the pipeline's stages.
struct Pipeline<'a> {
    encoder: &'a VectorEncoder,
    nulls: NullPolicy,
    format: OutputFormat,
    id_column: Option<&'a str>,
    pool: &'a rayon::ThreadPool,
    progress: &'a (dyn Fn(&Totals) + Sync),
}

impl Pipeline<'_> {
    /// Reads, converts and writes every batch in order on three threads, then completes the output.
    fn run_threaded<W: Destination + 'static>(
        &self,
        reader: Box<dyn BatchReader>,
        writer: Box<dyn VectorWriter<W>>,
    ) -> Result<(W, Totals), ConvertError> {
        let (batch_sender, batches) = mpsc::sync_channel::<Result<Batch, InputError>>(QUEUE);
        let (encoded_sender, encoded) = mpsc::sync_channel::<EncodedBatch>(QUEUE);
        let (recycle_sender, recycled) = mpsc::sync_channel::<Vec<u8>>(QUEUE + 1);
        let (spare_sender, spares) = mpsc::sync_channel::<Elements>(QUEUE + 1);
        std::thread::scope(|scope| {
            scope.spawn(move || read_batches(reader, batch_sender, spares));
            let writing = scope.spawn(move || write_batches(writer, encoded, recycle_sender));
            let converted = self.convert_batches(batches, encoded_sender, recycled, spare_sender);
            let written = writing
                .join()
                .map_err(|_| ConvertError::Threads("the writer thread failed".into()))?;
            // A writer error concerns earlier rows than anything the converter met since.
            let (writer, bytes) = written?;
            let mut totals = converted?;
            totals.bytes = bytes;
            Ok((writer.finish()?, totals))
        })
    }

    /// Reads, converts and writes every batch in order on the calling thread, then completes the
    /// output.
    fn run_inline<W: Destination + 'static>(
        &self,
        mut reader: Box<dyn BatchReader>,
        mut writer: Box<dyn VectorWriter<W>>,
    ) -> Result<(W, Totals), ConvertError> {
        let mut totals = Totals::default();
        let mut bytes = 0;
        let mut buffer = Vec::new();
        while let Some(mut batch) = reader.next_batch()? {
            let converted = self.convert(&mut batch, buffer, &mut totals)?;
            reader.recycle(batch.elements);
            bytes += writer.write(&converted)?;
            buffer = converted.bytes;
        }
        totals.bytes = bytes;
        Ok((writer.finish()?, totals))
    }

    /// Converts batches as they arrive and hands them to the writer, giving the input memory back to
    /// the reader (`spares`); returns the rows written and the null rows skipped.
    fn convert_batches(
        &self,
        batches: mpsc::Receiver<Result<Batch, InputError>>,
        encoded: mpsc::SyncSender<EncodedBatch>,
        recycled: mpsc::Receiver<Vec<u8>>,
        spares: mpsc::SyncSender<Elements>,
    ) -> Result<Totals, ConvertError> {
        let mut totals = Totals::default();
        for batch in batches {
            let mut batch = batch?;
            let buffer = recycled.try_recv().unwrap_or_default();
            let converted = self.convert(&mut batch, buffer, &mut totals)?;
            // If the reader has enough spare memory, this is simply freed.
            let _ = spares.try_send(batch.elements);
            if encoded.send(converted).is_err() {
                // The writer stopped with an error, which the caller reports.
                break;
            }
        }
        Ok(totals)
    }

    /// Converts one batch into `buffer` (reused), checking its null rows against the null policy,
    /// and counts it in `totals` (whose bytes are the bytes converted so far); the batch keeps its
    /// elements. Of a refused null row and a failed cast, the error names the earlier row.
    fn convert(
        &self,
        batch: &mut Batch,
        buffer: Vec<u8>,
        totals: &mut Totals,
    ) -> Result<EncodedBatch, ConvertError> {
        // A damaged value stops the conversion where the output would carry it.
        let written = |column: &str| match self.format {
            OutputFormat::Parquet | OutputFormat::Arrow => true,
            OutputFormat::Hex => self.id_column == Some(column),
            OutputFormat::Raw | OutputFormat::Framed | OutputFormat::Npy => false,
        };
        if let Some(damaged) = batch.damaged.iter().find(|d| written(&d.column)) {
            return Err(InputError::Data(damaged.to_string()).into());
        }
        let refused_null = output::check_nulls(
            batch.first_row,
            batch.validity.as_deref(),
            self.nulls,
            self.format,
        )
        .err();
        let nulls = batch
            .validity
            .as_ref()
            .map_or(0, |v| v.iter().filter(|valid| !**valid).count() as u64);
        let batch_rows = batch.rows as u64;
        let result = if self.encoder.worth_splitting(batch.rows) {
            self.pool
                .install(|| self.encoder.encode_batch(batch, buffer))
        } else {
            self.encoder.encode_batch(batch, buffer)
        };
        let converted = match (result, refused_null) {
            (Ok(converted), None) => converted,
            (Ok(_), Some((_, null_error))) => return Err(null_error.into()),
            (Err(cast), Some((null_row, null_error)))
                if cast.row().is_none_or(|row| null_row < row) =>
            {
                return Err(null_error.into())
            }
            (Err(cast), _) => return Err(cast.into()),
        };
        let skipped = if self.nulls == NullPolicy::Skip {
            nulls
        } else {
            0
        };
        totals.rows += batch_rows - skipped;
        totals.skipped += skipped;
        totals.bytes += converted.bytes.len() as u64;
        (self.progress)(totals);
        Ok(converted)
    }
}

/// The reader thread: sends batches in order until the end, an error, or the receiver leaving,
/// reading into the memory of converted batches (`spares`) when there is some.
fn read_batches(
    mut reader: Box<dyn BatchReader>,
    batches: mpsc::SyncSender<Result<Batch, InputError>>,
    spares: mpsc::Receiver<Elements>,
) {
    loop {
        if let Ok(spare) = spares.try_recv() {
            reader.recycle(spare);
        }
        let next = match reader.next_batch() {
            Ok(Some(batch)) => Ok(batch),
            Ok(None) => return,
            Err(error) => Err(error),
        };
        let failed = next.is_err();
        if batches.send(next).is_err() || failed {
            return;
        }
    }
}

/// The writer thread: writes batches in order, returning their buffers for reuse; returns the writer
/// (to be finished) and the value bytes written.
#[allow(clippy::type_complexity)]
fn write_batches<W: Destination>(
    mut writer: Box<dyn VectorWriter<W>>,
    batches: mpsc::Receiver<EncodedBatch>,
    recycle: mpsc::SyncSender<Vec<u8>>,
) -> Result<(Box<dyn VectorWriter<W>>, u64), WriteError> {
    let mut bytes = 0;
    for batch in batches {
        bytes += writer.write(&batch)?;
        // If the converter has enough spare buffers, this one is simply freed.
        let _ = recycle.try_send(batch.bytes);
    }
    Ok((writer, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::RowSelection;

    /// A reader of `fixtures/<relative>` (standard input's batch size: `batch_rows`).
    fn fixture(relative: &str, batch_rows: usize) -> Box<dyn BatchReader> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(relative);
        let options = InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection: RowSelection::All,
            batch_rows,
            vectors_optional: false,
        };
        open(Some(&path), options).unwrap()
    }

    fn sample(batch_rows: usize) -> Box<dyn BatchReader> {
        fixture("convert/sample/train.parquet", batch_rows)
    }

    #[test]
    fn converts_into_memory_the_same_on_one_thread_and_many() {
        let mut options = ConvertOptions::new(OutputFormat::Framed);
        // A variable-size element type, so that several threads run the reader/converter/writer
        // pipeline.
        let decimal = crate::types::parse_type("vector<decimal, 128>", &Default::default());
        options.target = Some(decimal.unwrap());
        options.threads = Some(1);
        let (one, totals) = convert(sample(7), Vec::new(), &options, &|_| {}).unwrap();
        options.threads = Some(3);
        let (many, _) = convert(sample(7), Vec::new(), &options, &|_| {}).unwrap();
        assert_eq!(one, many);
        assert_eq!(totals.rows, 1000);
        assert_eq!(one.len() as u64, totals.bytes + 4 * totals.rows);
    }

    #[test]
    fn npy_in_memory_fixes_its_header_and_a_stream_cannot() {
        let nulls = || fixture("convert/inputs/null_rows.parquet", 2);
        let mut options = ConvertOptions::new(OutputFormat::Npy);
        options.nulls = NullPolicy::Skip;
        let (bytes, totals) = convert(nulls(), Vec::new(), &options, &|_| {}).unwrap();
        assert_eq!((totals.rows, totals.skipped), (3, 2));
        let header = String::from_utf8_lossy(&bytes[..128]);
        assert!(header.contains("'shape': (3, 4)"), "{header}");
        let stream = output::Stream(Vec::new());
        let error = convert(nulls(), stream, &options, &|_| {}).unwrap_err();
        assert!(
            matches!(
                error,
                ConvertError::Write(WriteError::NpyHeader {
                    header_rows: 5,
                    rows: 3
                })
            ),
            "{error}"
        );
    }

    #[test]
    fn refuses_a_type_of_another_dimension() {
        let mut options = ConvertOptions::new(OutputFormat::Raw);
        options.target =
            Some(crate::types::parse_type("vector<float, 3>", &Default::default()).unwrap());
        let error = convert(sample(16), Vec::new(), &options, &|_| {}).unwrap_err();
        assert!(
            matches!(error, ConvertError::Dimension { declared: 3, .. }),
            "{error}"
        );
    }
}
