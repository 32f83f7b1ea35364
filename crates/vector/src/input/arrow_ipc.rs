//! Arrow IPC inputs: the stream format (read forward, so standard input works) and the file format
//! (`ARROW1` magic). Row ranges are applied by skipping rows as they arrive; shards need a row
//! count, which neither format declares up front.

use super::columnar::{choose_column, ColumnarReader, RecordBatches, Span};
use super::guard::fenced;
use super::ipc_claims::{check_file, CheckedStream, TaggedFile};
use super::source::Source;
use super::{check_shard, BatchReader, InputError, InputOptions, RowSelection};
use arrow_ipc::reader::{FileReader, StreamReader};
use std::sync::Arc;

/// The magic bytes of the Arrow IPC file format.
pub(crate) const FILE_MAGIC: &[u8] = b"ARROW1";

/// The continuation marker that starts each message of an Arrow IPC stream.
pub(crate) const STREAM_MARKER: &[u8] = &[0xff; 4];

/// Opens an Arrow IPC stream or file.
pub(crate) fn open(
    mut source: Source,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let input = source.name().to_string();
    let invalid = |e| InputError::Data(format!("{input}: not a readable Arrow IPC input: {e}"));
    let invalid_claim = |e| InputError::Data(format!("{input}: corrupt Arrow IPC input: {e}"));
    // The schema as declared: text columns are read as binary and turned back into text row by row.
    let (schema, batches): (_, RecordBatches) = if source.prefix(FILE_MAGIC.len())? == FILE_MAGIC {
        let mut file = source.into_file()?;
        check_file(&mut file).map_err(invalid_claim)?;
        let (file, declared) = TaggedFile::open(file).map_err(|source| InputError::Io {
            input: input.clone(),
            source,
        })?;
        let reader = fenced(&input, "the Arrow IPC schema", || {
            FileReader::try_new_buffered(file, None)
        })?
        .map_err(invalid)?;
        (
            declared.map_or_else(|| reader.schema(), Arc::new),
            Box::new(reader),
        )
    } else {
        let stream = CheckedStream::new(source.into_reader());
        let reader = fenced(&input, "the Arrow IPC schema", || {
            StreamReader::try_new_buffered(stream, None)
        })?
        .map_err(invalid)?;
        let declared = reader.get_ref().get_ref().declared_schema().cloned();
        (
            declared.map_or_else(|| reader.schema(), Arc::new),
            Box::new(reader),
        )
    };
    let column = choose_column(
        &schema,
        options.column.as_deref(),
        &input,
        options.vectors_optional,
    )?;
    let span = match &options.selection {
        RowSelection::All => Span {
            first_row: 0,
            skip: 0,
            limit: None,
            rows: None,
        },
        RowSelection::Range(range) => {
            if range.start > range.end {
                return Err(InputError::Options(format!(
                    "{input}: the row range {}..{} is reversed",
                    range.start, range.end
                )));
            }
            Span {
                first_row: 0,
                skip: range.start,
                limit: Some(range.end - range.start),
                rows: None,
            }
        }
        &RowSelection::Shard { k, n } => {
            check_shard(k, n, &input)?;
            return Err(InputError::ShardNeedsRowCount {
                input,
                what: "an Arrow IPC input".into(),
                instead: "Parquet",
            });
        }
    };
    Ok(Box::new(ColumnarReader::new(
        &input,
        "Arrow IPC",
        batches,
        column,
        span,
        options.batch_rows,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, FixedSizeListArray, Int16Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    /// An Arrow IPC stream of `fixed_size_list<int16, 2>` rows, one record batch per slice.
    fn stream(batches: &[&[i16]]) -> Vec<u8> {
        let item = Arc::new(Field::new("item", DataType::Int16, true));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "v",
            DataType::FixedSizeList(item.clone(), 2),
            true,
        )]));
        let mut bytes = Vec::new();
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &schema).unwrap();
        for values in batches {
            let list = FixedSizeListArray::new(
                item.clone(),
                2,
                Arc::new(Int16Array::from(values.to_vec())),
                None,
            );
            let batch =
                RecordBatch::try_new(schema.clone(), vec![Arc::new(list) as ArrayRef]).unwrap();
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    fn read(bytes: Vec<u8>, selection: RowSelection) -> Result<Vec<(u64, Vec<f64>)>, InputError> {
        let options = InputOptions {
            format: None,
            column: None,
            dataset: "train".to_string(),
            selection,
            batch_rows: 2,
            vectors_optional: false,
        };
        let source = Source::from_stream("t", Box::new(std::io::Cursor::new(bytes)));
        let mut reader = open(source, &options)?;
        assert_eq!(reader.column_name(), Some("v"));
        let mut rows = Vec::new();
        while let Some(batch) = reader.next_batch()? {
            rows.push((batch.first_row, batch.elements.to_f64()));
        }
        Ok(rows)
    }

    #[test]
    fn ranges_cross_record_batches_and_large_batches_are_split() {
        let bytes = stream(&[&[1, 2, 3, 4, 5, 6], &[7, 8]]);
        let all = read(bytes.clone(), RowSelection::All).unwrap();
        assert_eq!(
            all,
            [
                (0, vec![1.0, 2.0, 3.0, 4.0]),
                (2, vec![5.0, 6.0]),
                (3, vec![7.0, 8.0])
            ]
        );
        let range = read(bytes.clone(), RowSelection::Range(2..4)).unwrap();
        assert_eq!(range, [(2, vec![5.0, 6.0]), (3, vec![7.0, 8.0])]);
        assert!(read(bytes.clone(), RowSelection::Range(9..10)).is_err());
        assert!(read(bytes.clone(), RowSelection::Range(4..10)).is_err());
        assert_eq!(
            read(bytes.clone(), RowSelection::Range(3..10))
                .unwrap()
                .len(),
            1
        );
        let shard = read(bytes.clone(), RowSelection::Shard { k: 1, n: 2 });
        assert!(matches!(shard, Err(InputError::ShardNeedsRowCount { .. })));
        let mut cut = bytes;
        cut.truncate(cut.len() - 20);
        assert!(read(cut, RowSelection::All).is_err());
    }
}
