//! Arrow IPC inputs: the stream format (read forward, so standard input works) and the file format
//! (`ARROW1` magic). Row ranges are applied by skipping rows as they arrive; shards need a row
//! count, which neither format declares up front.

use super::columnar::{choose_column, ColumnarReader, RecordBatches, Span};
use super::source::Source;
use super::{check_shard, BatchReader, InputError, InputOptions, RowSelection};
use arrow_ipc::reader::{FileReader, StreamReader};

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
    let (schema, batches): (_, RecordBatches) = if source.prefix(FILE_MAGIC.len())? == FILE_MAGIC {
        let reader = FileReader::try_new_buffered(source.into_file()?, None).map_err(invalid)?;
        (reader.schema(), Box::new(reader))
    } else {
        let reader = StreamReader::try_new_buffered(source.into_reader(), None).map_err(invalid)?;
        (reader.schema(), Box::new(reader))
    };
    let column = choose_column(&schema, options.column.as_deref(), &input)?;
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
            return Err(InputError::Options(format!(
                "{input}: --shard needs the row count, which an Arrow IPC input does not declare \
                 (use Parquet or --rows)"
            )));
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
