//! `parquet` and `arrow` output: the input's other columns passed through, plus a nullable binary
//! column `<column>_cql` holding each row's CQL value; and the Parquet or Arrow IPC sink that
//! unload's table formats write through too.

use super::{valid_runs, Destination, OutputFormat, VectorWriter, WriteError, WriterOptions};
use crate::kernel::EncodedBatch;
use arrow_array::{ArrayRef, BinaryArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::sync::Arc;

/// Row groups are closed when their encoded size passes this, to bound memory.
const ROW_GROUP_BYTES: usize = 32 << 20;

/// The Parquet or Arrow IPC writer underneath a table output.
pub(super) enum TableSink<W: Destination> {
    /// Parquet file.
    Parquet(Box<ArrowWriter<W>>),
    /// Arrow IPC stream.
    Arrow(Box<arrow_ipc::writer::StreamWriter<W>>),
}

impl<W: Destination> TableSink<W> {
    /// A Parquet writer of `schema` into `output`: snappy, row groups closed at
    /// [`ROW_GROUP_BYTES`], and the leaves of the fields that `plain` picks (vectors: unique and
    /// incompressible) without dictionary and min/max statistics.
    pub(super) fn parquet(
        output: W,
        schema: &SchemaRef,
        plain: impl Fn(&Field) -> bool,
    ) -> Result<Self, WriteError> {
        let descriptor = ArrowSchemaConverter::new()
            .convert(schema)
            .map_err(table_error)?;
        let mut builder = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES));
        for column in descriptor.columns() {
            let path = column.path();
            let is_plain = schema
                .fields()
                .iter()
                .any(|field| plain(field) && path.parts().first() == Some(field.name()));
            if is_plain {
                builder = builder
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_statistics_enabled(path.clone(), EnabledStatistics::None);
            }
        }
        let writer = ArrowWriter::try_new(output, schema.clone(), Some(builder.build()))
            .map_err(table_error)?;
        Ok(TableSink::Parquet(Box::new(writer)))
    }

    /// An Arrow IPC stream writer of `schema` into `output`.
    pub(super) fn arrow(output: W, schema: &SchemaRef) -> Result<Self, WriteError> {
        let writer =
            arrow_ipc::writer::StreamWriter::try_new(output, schema).map_err(table_error)?;
        Ok(TableSink::Arrow(Box::new(writer)))
    }

    /// Writes one batch of the sink's schema.
    pub(super) fn write(&mut self, batch: &RecordBatch) -> Result<(), WriteError> {
        match self {
            TableSink::Parquet(writer) => writer.write(batch).map_err(table_error),
            TableSink::Arrow(writer) => writer.write(batch).map_err(table_error),
        }
    }

    /// Writes the footer (Parquet) or end of stream (Arrow) and hands the output back, unflushed.
    pub(super) fn finish(self) -> Result<W, WriteError> {
        match self {
            TableSink::Parquet(writer) => writer.into_inner().map_err(table_error),
            TableSink::Arrow(writer) => writer.into_inner().map_err(table_error),
        }
    }
}

/// Writes record batches of passed-through columns plus the value column.
pub(super) struct TableWriter<W: Destination> {
    sink: TableSink<W>,
    schema: SchemaRef,
    skip: bool,
}

impl<W: Destination> TableWriter<W> {
    /// Creates the writer and its schema: the passed-through fields, then `<column>_cql`.
    pub(super) fn new(output: W, options: &WriterOptions) -> Result<Self, WriteError> {
        let value_column = format!("{}_cql", options.column_name);
        let mut fields: Vec<Arc<Field>> = match &options.passthrough {
            Some(schema) => schema.fields().iter().cloned().collect(),
            None => Vec::new(),
        };
        if fields.iter().any(|f| f.name() == &value_column) {
            return Err(WriteError::Usage(format!(
                "the input already has a column named {value_column}"
            )));
        }
        fields.push(Arc::new(Field::new(&value_column, DataType::Binary, true)));
        let schema = Arc::new(Schema::new(fields));
        let sink = if options.format == OutputFormat::Parquet {
            TableSink::parquet(output, &schema, |field| field.name() == &value_column)?
        } else {
            TableSink::arrow(output, &schema)?
        };
        Ok(TableWriter {
            sink,
            schema,
            skip: options.nulls == super::NullPolicy::Skip,
        })
    }

    /// The record batch of rows `range` (relative): passed-through columns and values.
    fn record_batch(
        &self,
        batch: &EncodedBatch,
        range: std::ops::Range<usize>,
    ) -> Result<RecordBatch, WriteError> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.schema.fields().len());
        if let Some(passthrough) = &batch.columns {
            if passthrough.num_rows() != batch.rows {
                return Err(WriteError::Data(format!(
                    "the batch at row {} has {} rows of other columns for {} vectors",
                    batch.first_row,
                    passthrough.num_rows(),
                    batch.rows
                )));
            }
            let part = passthrough.slice(range.start, range.len());
            columns.extend(part.columns().iter().cloned());
        }
        let values: BinaryArray = range
            .map(|index| batch.is_valid(index).then(|| batch.row(index)))
            .collect();
        columns.push(Arc::new(values));
        RecordBatch::try_new(self.schema.clone(), columns).map_err(table_error)
    }
}

/// A Parquet or Arrow library error as a write error.
fn table_error(error: impl std::error::Error + 'static) -> WriteError {
    // A write error underneath stays an I/O error: a closed pipe must still end the run quietly.
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(current) = cause {
        if let Some(io_error) = current.downcast_ref::<std::io::Error>() {
            return WriteError::Io(std::io::Error::new(io_error.kind(), io_error.to_string()));
        }
        cause = current.source();
    }
    WriteError::Table(error.to_string())
}

impl<W: Destination> VectorWriter<W> for TableWriter<W> {
    fn write(&mut self, batch: &EncodedBatch) -> Result<u64, WriteError> {
        let runs = if self.skip {
            valid_runs(batch)
        } else {
            std::iter::once(0..batch.rows).collect()
        };
        let mut written = 0;
        for run in runs {
            written += run
                .clone()
                .filter(|&index| batch.is_valid(index))
                .map(|index| batch.row(index).len() as u64)
                .sum::<u64>();
            let record_batch = self.record_batch(batch, run)?;
            self.sink.write(&record_batch)?;
        }
        Ok(written)
    }

    fn finish(self: Box<Self>) -> Result<W, WriteError> {
        let mut output = self.sink.finish()?;
        output.flush()?;
        Ok(output)
    }
}
