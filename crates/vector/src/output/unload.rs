//! Writers of `unload`'s outputs, from Arrow record batches of a table's rows: Parquet and Arrow
//! IPC (every column, typed), and the vector formats (`npy`, `fbin`, `raw`, `hex`) that hold one
//! vector column, with the partition keys of the same rows in an ids file beside them.

use std::io::{self, Write};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, FixedSizeListArray, RecordBatch};
use arrow_schema::{DataType, SchemaRef};

use super::npy::header as npy_header;
use super::table::TableSink;
use super::{Destination, WriteError};

crate::registry::registry! {
    /// The output formats of `unload`.
    pub enum UnloadFormat, error UnknownUnloadFormat ("unload format") {
        Parquet = "parquet", ["parquet", "pq"], "Parquet: every column read, typed (snappy)";
        Arrow = "arrow", ["arrow", "arrows", "ipc"], "Arrow IPC stream: every column read, typed";
        Npy = "npy", ["npy"], "A 2-D little-endian `.npy` array of the vector column's elements";
        Fbin = "fbin", ["fbin"], "big-ann-benchmarks `.fbin`: `u32` rows, `u32` dimension, little-endian float32 elements";
        Raw = "raw", ["raw", "bin"], "The vector column's CQL value bytes, concatenated";
        Hex = "hex", ["hex", "txt"], "The vector column's CQL value bytes, one `0x…` line per row";
    }
}

impl UnloadFormat {
    /// The format of an output named `path`, by its extension (see
    /// [`from_extension`](UnloadFormat::from_extension)); Parquet for any other name and for none.
    pub fn for_output(path: Option<&Path>) -> UnloadFormat {
        path.and_then(UnloadFormat::from_extension)
            .unwrap_or(UnloadFormat::Parquet)
    }

    /// Whether the format holds every column read (Parquet, Arrow), rather than one vector column.
    pub fn holds_columns(self) -> bool {
        matches!(self, UnloadFormat::Parquet | UnloadFormat::Arrow)
    }

    /// Whether the vector column is read as its CQL value bytes (`raw`, `hex`).
    pub fn wants_value_bytes(self) -> bool {
        matches!(self, UnloadFormat::Raw | UnloadFormat::Hex)
    }

    /// Whether the output is binary (refused on a terminal).
    pub fn is_binary(self) -> bool {
        self != UnloadFormat::Hex
    }

    /// Whether the output must be rewritable: its header holds the row count, known at the end.
    pub fn needs_rewrite(self) -> bool {
        matches!(self, UnloadFormat::Npy | UnloadFormat::Fbin)
    }
}

/// The format of an ids file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdsFormat {
    /// A 1-D `<i8` `.npy` array (one integer partition key column).
    Npy,
    /// CSV: one line per row, the partition key columns as text.
    Csv,
}

impl IdsFormat {
    /// The format of an ids file named `path`: `.npy`, else CSV.
    pub fn from_extension(path: &Path) -> IdsFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("npy") => IdsFormat::Npy,
            _ => IdsFormat::Csv,
        }
    }
}

/// Why an unload's outputs cannot be written with the columns read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnloadWriteError {
    /// An ids file was asked for a Parquet or Arrow output (a usage error).
    #[error(
        "an ids file goes with the vector formats (npy, fbin, raw, hex); Parquet and Arrow \
         outputs hold the key columns themselves"
    )]
    IdsWithColumns,
    /// The format's header holds the row count, and its output cannot be rewritten (a usage
    /// error).
    #[error("{} output holds the row count in its header, so it must go to a file", .0.name())]
    NotRewritable(UnloadFormat),
    /// A vector format with no column read (a usage error).
    #[error("no vector column")]
    NoVector,
    /// The column a vector format reads is no vector.
    #[error(
        "column {column} is not a vector (its Arrow form is {data_type}): the {} format holds a \
         vector column",
        .format.name()
    )]
    NotVector {
        /// The column's name.
        column: String,
        /// Its Arrow type.
        data_type: DataType,
        /// The format.
        format: UnloadFormat,
    },
    /// `npy` of vectors whose elements are not fixed-size numbers.
    #[error("npy output holds numbers, not vectors of {0}")]
    NpyElement(DataType),
    /// `fbin` of vectors whose elements are not float32.
    #[error("fbin output holds float vectors, not vectors of {0}")]
    FbinElement(DataType),
    /// `fbin` of vectors whose dimension does not fit its `u32` header (a usage error).
    #[error("the dimension does not fit an fbin header")]
    FbinDimension,
    /// `raw` or `hex` without the vector column's value bytes (a usage error).
    #[error("{} output needs the vector column's value bytes", .0.name())]
    NoValueBytes(UnloadFormat),
    /// An `.npy` ids file for partition keys that are not one integer column (a usage error).
    #[error(
        "an .npy ids file holds one integer partition key column; write the ids as CSV instead"
    )]
    IdsNotInteger,
    /// An `.npy` ids file to an output that cannot be rewritten (a usage error).
    #[error("an .npy ids file holds the row count in its header, so it must be a file")]
    IdsNotRewritable,
    /// Writing the headers failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl UnloadWriteError {
    /// Whether the error is about a column's type that the format cannot hold, rather than about
    /// the options or the writing.
    pub fn is_unsupported_type(&self) -> bool {
        matches!(
            self,
            UnloadWriteError::NotVector { .. }
                | UnloadWriteError::NpyElement(_)
                | UnloadWriteError::FbinElement(_)
        )
    }
}

/// A table writer's error as an I/O error: the one underneath, or the library's message.
fn io_error(error: WriteError) -> io::Error {
    match error {
        WriteError::Io(error) => error,
        other => io::Error::other(other.to_string()),
    }
}

/// Writes the pages of an unload, in order, into its output (and ids file).
pub struct UnloadWriter<W: Destination> {
    sink: Sink<W>,
    ids: Option<Ids<W>>,
    rows: u64,
    skipped: u64,
}

enum Sink<W: Destination> {
    Table(TableSink<W>),
    Npy {
        output: W,
        descr: &'static str,
        width: usize,
        dimension: usize,
    },
    Fbin {
        output: W,
        dimension: usize,
    },
    Raw(W),
    Hex(W),
}

enum Ids<W: Destination> {
    Npy(W),
    Csv(Box<csv::Writer<W>>),
}

impl<W: Destination> UnloadWriter<W> {
    /// A writer of `format` for batches of `schema` into `output`. For Parquet and Arrow every
    /// field is written. For the vector formats field 0 is the vector column and the fields after
    /// it are the partition key columns, written to `ids` when given.
    pub fn new(
        format: UnloadFormat,
        schema: &SchemaRef,
        mut output: W,
        ids: Option<(W, IdsFormat)>,
    ) -> Result<Self, UnloadWriteError> {
        if format.holds_columns() && ids.is_some() {
            return Err(UnloadWriteError::IdsWithColumns);
        }
        if format.needs_rewrite() && !output.can_rewrite() {
            return Err(UnloadWriteError::NotRewritable(format));
        }
        let vector = || {
            let field = schema.fields().first().ok_or(UnloadWriteError::NoVector)?;
            match field.data_type() {
                DataType::FixedSizeList(element, dimension) => {
                    Ok((element.data_type().clone(), *dimension as usize))
                }
                other => Err(UnloadWriteError::NotVector {
                    column: field.name().clone(),
                    data_type: other.clone(),
                    format,
                }),
            }
        };
        let sink = match format {
            UnloadFormat::Parquet => {
                let is_vector = |field: &arrow_schema::Field| {
                    matches!(field.data_type(), DataType::FixedSizeList(_, _))
                };
                Sink::Table(TableSink::parquet(output, schema, is_vector).map_err(io_error)?)
            }
            UnloadFormat::Arrow => Sink::Table(TableSink::arrow(output, schema).map_err(io_error)?),
            UnloadFormat::Npy => {
                let (element, dimension) = vector()?;
                let (descr, width) = match element {
                    DataType::Float32 => ("<f4", 4),
                    DataType::Float64 => ("<f8", 8),
                    DataType::Int8 => ("|i1", 1),
                    DataType::Int16 => ("<i2", 2),
                    DataType::Int32 => ("<i4", 4),
                    DataType::Int64 | DataType::Timestamp(_, _) => ("<i8", 8),
                    other => return Err(UnloadWriteError::NpyElement(other)),
                };
                output.write_all(&npy_header(descr, 0, Some(dimension)))?;
                Sink::Npy {
                    output,
                    descr,
                    width,
                    dimension,
                }
            }
            UnloadFormat::Fbin => {
                let (element, dimension) = vector()?;
                if element != DataType::Float32 {
                    return Err(UnloadWriteError::FbinElement(element));
                }
                let dimension_u32 =
                    u32::try_from(dimension).map_err(|_| UnloadWriteError::FbinDimension)?;
                output.write_all(&0u32.to_le_bytes())?;
                output.write_all(&dimension_u32.to_le_bytes())?;
                Sink::Fbin { output, dimension }
            }
            UnloadFormat::Raw | UnloadFormat::Hex => {
                let field = schema.fields().first().ok_or(UnloadWriteError::NoVector)?;
                if field.data_type() != &DataType::Binary {
                    return Err(UnloadWriteError::NoValueBytes(format));
                }
                if format == UnloadFormat::Raw {
                    Sink::Raw(output)
                } else {
                    Sink::Hex(output)
                }
            }
        };
        let ids = match ids {
            None => None,
            Some((mut output, IdsFormat::Npy)) => {
                let keys = &schema.fields()[1.min(schema.fields().len())..];
                let integer = keys.len() == 1
                    && matches!(
                        keys[0].data_type(),
                        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
                    );
                if !integer {
                    return Err(UnloadWriteError::IdsNotInteger);
                }
                if !output.can_rewrite() {
                    return Err(UnloadWriteError::IdsNotRewritable);
                }
                output.write_all(&npy_header("<i8", 0, None))?;
                Some(Ids::Npy(output))
            }
            Some((output, IdsFormat::Csv)) => {
                Some(Ids::Csv(Box::new(csv::Writer::from_writer(output))))
            }
        };
        Ok(UnloadWriter {
            sink,
            ids,
            rows: 0,
            skipped: 0,
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows left out of a vector format because their vector is null.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Writes one page.
    pub fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        let rows = batch.num_rows();
        let vector = batch.columns().first();
        let valid = |row: usize| vector.is_some_and(|v| v.is_valid(row));
        match &mut self.sink {
            Sink::Table(sink) => {
                sink.write(batch).map_err(io_error)?;
                self.rows += rows as u64;
                return Ok(());
            }
            Sink::Npy {
                output,
                width,
                dimension,
                ..
            } => write_elements(output, batch, *width * *dimension)?,
            Sink::Fbin { output, dimension } => write_elements(output, batch, 4 * *dimension)?,
            Sink::Raw(output) => {
                let values = batch.column(0).as_binary::<i32>();
                for row in (0..rows).filter(|&row| valid(row)) {
                    output.write_all(values.value(row))?;
                }
            }
            Sink::Hex(output) => {
                let values = batch.column(0).as_binary::<i32>();
                let mut line = Vec::new();
                for row in (0..rows).filter(|&row| valid(row)) {
                    line.clear();
                    line.extend_from_slice(b"0x");
                    cqlwire_codec::hex::encode_into(values.value(row), &mut line);
                    line.push(b'\n');
                    output.write_all(&line)?;
                }
            }
        }
        let written = (0..rows).filter(|&row| valid(row)).count() as u64;
        self.skipped += rows as u64 - written;
        self.rows += written;
        if let Some(ids) = &mut self.ids {
            write_ids(ids, batch, &valid)?;
        }
        Ok(())
    }

    /// Completes the outputs (footers, headers with the row count) and hands them back, still to
    /// be committed.
    pub fn finish(self) -> io::Result<(W, Option<W>)> {
        let rows = self.rows;
        let mut output = match self.sink {
            Sink::Table(sink) => sink.finish().map_err(io_error)?,
            Sink::Npy {
                mut output,
                descr,
                dimension,
                ..
            } => {
                output.write_at(0, &npy_header(descr, rows, Some(dimension)))?;
                output
            }
            Sink::Fbin { mut output, .. } => {
                let rows = u32::try_from(rows).map_err(|_| {
                    io::Error::other(format!("{rows} rows do not fit an fbin header"))
                })?;
                output.write_at(0, &rows.to_le_bytes())?;
                output
            }
            Sink::Raw(output) | Sink::Hex(output) => output,
        };
        output.flush()?;
        let ids = match self.ids {
            None => None,
            Some(Ids::Npy(mut ids)) => {
                ids.write_at(0, &npy_header("<i8", rows, None))?;
                ids.flush()?;
                Some(ids)
            }
            Some(Ids::Csv(writer)) => {
                let mut ids = writer
                    .into_inner()
                    .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string()))?;
                ids.flush()?;
                Some(ids)
            }
        };
        Ok((output, ids))
    }
}

/// Writes the elements of the non-null vectors of column 0 (little-endian, `row_bytes` a row).
fn write_elements(
    output: &mut impl Write,
    batch: &RecordBatch,
    row_bytes: usize,
) -> io::Result<()> {
    let vectors: &FixedSizeListArray = batch.column(0).as_fixed_size_list();
    let data = vectors.values().to_data();
    let values = data.buffers().first().map_or(&[][..], |b| b.as_slice());
    let width = row_bytes / (vectors.value_length().max(1) as usize);
    let base = (data.offset() + vectors.offset() * vectors.value_length() as usize) * width;
    let mut run: Option<usize> = None;
    let flush = |start: usize, end: usize, output: &mut dyn Write| {
        let bytes = values
            .get(base + start * row_bytes..base + end * row_bytes)
            .ok_or_else(|| io::Error::other("a page's vector buffer is shorter than its rows"))?;
        output.write_all(bytes)
    };
    for row in 0..vectors.len() {
        match (vectors.is_valid(row), run) {
            (true, None) => run = Some(row),
            (false, Some(start)) => {
                flush(start, row, output)?;
                run = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run {
        flush(start, vectors.len(), output)?;
    }
    Ok(())
}

/// Writes the keys (columns 1…) of the rows that `valid` keeps.
fn write_ids<W: Destination>(
    ids: &mut Ids<W>,
    batch: &RecordBatch,
    valid: &dyn Fn(usize) -> bool,
) -> io::Result<()> {
    let keys: &[ArrayRef] = &batch.columns()[1..];
    match ids {
        Ids::Npy(output) => {
            let key = &keys[0];
            let mut bytes = Vec::with_capacity(batch.num_rows() * 8);
            for row in (0..batch.num_rows()).filter(|&row| valid(row)) {
                let value: i64 = match key.data_type() {
                    DataType::Int8 => key.as_primitive::<Int8Type>().value(row).into(),
                    DataType::Int16 => key.as_primitive::<Int16Type>().value(row).into(),
                    DataType::Int32 => key.as_primitive::<Int32Type>().value(row).into(),
                    _ => key.as_primitive::<Int64Type>().value(row),
                };
                bytes.extend_from_slice(&value.to_le_bytes());
            }
            output.write_all(&bytes)
        }
        Ids::Csv(writer) => {
            for row in (0..batch.num_rows()).filter(|&row| valid(row)) {
                let record = keys
                    .iter()
                    .map(|key| key_text(key, row))
                    .collect::<io::Result<Vec<String>>>()?;
                writer
                    .write_record(&record)
                    .map_err(|e| io::Error::other(e.to_string()))?;
            }
            Ok(())
        }
    }
}

/// A key value as CSV text: numbers and text as they are, a uuid in its hyphenated form, a blob as
/// `0x…`, a timestamp as milliseconds since the epoch, a date as days since it; empty for null.
fn key_text(key: &ArrayRef, row: usize) -> io::Result<String> {
    use arrow_array::types::{
        Date32Type, Float32Type, Float64Type, Time64NanosecondType, TimestampMillisecondType,
    };
    if key.is_null(row) {
        return Ok(String::new());
    }
    Ok(match key.data_type() {
        DataType::Int8 => key.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => key.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => key.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => key.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float32 => key.as_primitive::<Float32Type>().value(row).to_string(),
        DataType::Float64 => key.as_primitive::<Float64Type>().value(row).to_string(),
        DataType::Boolean => key.as_boolean().value(row).to_string(),
        DataType::Utf8 => key.as_string::<i32>().value(row).to_owned(),
        DataType::Binary => format!(
            "0x{}",
            cqlwire_codec::hex::encode(key.as_binary::<i32>().value(row))
        ),
        DataType::FixedSizeBinary(16) => {
            let bytes = key.as_fixed_size_binary().value(row);
            uuid_text(bytes)
        }
        DataType::Timestamp(_, _) => key
            .as_primitive::<TimestampMillisecondType>()
            .value(row)
            .to_string(),
        DataType::Date32 => key.as_primitive::<Date32Type>().value(row).to_string(),
        DataType::Time64(_) => key
            .as_primitive::<Time64NanosecondType>()
            .value(row)
            .to_string(),
        other => {
            return Err(io::Error::other(format!(
                "a partition key of Arrow type {other} cannot be written to a CSV ids file"
            )))
        }
    })
}

/// 16 bytes in the 8-4-4-4-12 form.
fn uuid_text(bytes: &[u8]) -> String {
    let hex = cqlwire_codec::hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BinaryArray, Float32Array, Int64Array};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn vectors(rows: &[Option<[f32; 2]>]) -> ArrayRef {
        let field = Arc::new(Field::new("item", DataType::Float32, true));
        let values: Vec<f32> = rows.iter().flat_map(|r| r.unwrap_or_default()).collect();
        let nulls: Vec<bool> = rows.iter().map(Option::is_some).collect();
        Arc::new(FixedSizeListArray::new(
            field,
            2,
            Arc::new(Float32Array::from(values)),
            Some(nulls.into()),
        ))
    }

    fn batch(vector: ArrayRef, ids: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("v", vector.data_type().clone(), true),
            Field::new("id", DataType::Int64, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![vector, Arc::new(Int64Array::from(ids.to_vec()))],
        )
        .unwrap()
    }

    #[test]
    fn formats_follow_the_name_and_the_extension() {
        let format = |name: &str| UnloadFormat::for_output(Some(Path::new(name)));
        assert_eq!(format("a.ARROW"), UnloadFormat::Arrow);
        assert_eq!(format("a.npy"), UnloadFormat::Npy);
        assert_eq!(format("a.fbin"), UnloadFormat::Fbin);
        assert_eq!(format("a.txt"), UnloadFormat::Hex);
        assert_eq!(format("a.bin"), UnloadFormat::Raw);
        assert_eq!(format("a.csv"), UnloadFormat::Parquet);
        assert_eq!(UnloadFormat::for_output(None), UnloadFormat::Parquet);
        for name in ["parquet", "arrow", "npy", "fbin", "raw", "hex"] {
            assert_eq!(
                name.parse::<UnloadFormat>().map(UnloadFormat::name),
                Ok(name)
            );
        }
        assert_eq!("HEX".parse(), Ok(UnloadFormat::Hex));
        assert_eq!(
            IdsFormat::from_extension(Path::new("i.NPY")),
            IdsFormat::Npy
        );
        assert_eq!(
            IdsFormat::from_extension(Path::new("i.csv")),
            IdsFormat::Csv
        );
    }

    #[test]
    fn npy_and_fbin_hold_the_non_null_vectors_and_their_ids() {
        let page = batch(
            vectors(&[Some([1.0, 2.0]), None, Some([3.0, -4.0])]),
            &[10, 11, 12],
        );
        let mut writer = UnloadWriter::new(
            UnloadFormat::Npy,
            &page.schema(),
            Vec::new(),
            Some((Vec::new(), IdsFormat::Npy)),
        )
        .unwrap();
        writer.write(&page).unwrap();
        writer.write(&page.slice(2, 1)).unwrap();
        assert_eq!(writer.skipped(), 1);
        let (npy, ids) = writer.finish().unwrap();
        let header = npy_header("<f4", 3, Some(2));
        assert_eq!(npy[..header.len()], header[..]);
        let floats: Vec<f32> = npy[header.len()..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(floats, [1.0, 2.0, 3.0, -4.0, 3.0, -4.0]);
        let ids = ids.unwrap();
        let header = npy_header("<i8", 3, None);
        assert!(String::from_utf8_lossy(&header).contains("'shape': (3,)"));
        assert_eq!(ids[header.len()..].len(), 24);
        assert_eq!(
            ids[header.len() + 8..header.len() + 16],
            12i64.to_le_bytes()
        );

        let mut fbin =
            UnloadWriter::new(UnloadFormat::Fbin, &page.schema(), Vec::new(), None).unwrap();
        fbin.write(&page).unwrap();
        let (fbin, _) = fbin.finish().unwrap();
        assert_eq!(fbin[..8], [2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(fbin.len(), 8 + 16);
    }

    #[test]
    fn raw_and_hex_write_the_value_bytes_and_csv_ids() {
        let values: ArrayRef = Arc::new(BinaryArray::from(vec![
            Some(&[0x3f, 0x80][..]),
            None,
            Some(&[0xab][..]),
        ]));
        let page = batch(values, &[1, 2, -3]);
        let mut hex = UnloadWriter::new(
            UnloadFormat::Hex,
            &page.schema(),
            Vec::new(),
            Some((Vec::new(), IdsFormat::Csv)),
        )
        .unwrap();
        hex.write(&page).unwrap();
        let (text, ids) = hex.finish().unwrap();
        assert_eq!(text, b"0x3f80\n0xab\n");
        assert_eq!(ids.unwrap(), b"1\n-3\n");
        let mut raw =
            UnloadWriter::new(UnloadFormat::Raw, &page.schema(), Vec::new(), None).unwrap();
        raw.write(&page).unwrap();
        assert_eq!(raw.finish().unwrap().0, [0x3f, 0x80, 0xab]);
    }

    #[test]
    fn formats_refuse_columns_they_cannot_hold() {
        let page = batch(vectors(&[Some([1.0, 2.0])]), &[1]);
        let error = UnloadWriter::new(UnloadFormat::Raw, &page.schema(), Vec::new(), None)
            .err()
            .unwrap();
        assert!(matches!(
            error,
            UnloadWriteError::NoValueBytes(UnloadFormat::Raw)
        ));
        let error = UnloadWriter::new(
            UnloadFormat::Parquet,
            &page.schema(),
            Vec::new(),
            Some((Vec::new(), IdsFormat::Csv)),
        )
        .err()
        .unwrap();
        assert!(matches!(error, UnloadWriteError::IdsWithColumns));
        let ints = batch(Arc::new(Int64Array::from(vec![1])), &[1]);
        let error = UnloadWriter::new(UnloadFormat::Npy, &ints.schema(), Vec::new(), None)
            .err()
            .unwrap();
        assert!(error.is_unsupported_type());
        assert_eq!(
            error.to_string(),
            "column v is not a vector (its Arrow form is Int64): the npy format holds a vector column"
        );
    }
}
