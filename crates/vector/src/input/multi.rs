//! Several files read as one input, in the order given: a training set split over files, such as
//! VectorDBBench's `train-00-of-10.parquet` … `train-09-of-10.parquet`. Rows are numbered across
//! the files (the second file's first row follows the first file's last), and a row range or a
//! shard applies to the whole set, not to each file. Every file must declare its row count (a
//! shard needs the total) and hold rows of the same element type, dimension (an empty file has
//! none), vector column and other columns. One file is open at a time.

use super::{
    open, resolve_selection, Batch, BatchReader, ElementType, Elements, InputError, InputOptions,
    RowSelection,
};
use arrow_schema::SchemaRef;
use std::collections::VecDeque;
use std::ops::Range;
use std::path::PathBuf;

/// The rows one file gives: `rows` of the file, whose first row is row `offset` of the whole set.
struct Part {
    path: PathBuf,
    offset: u64,
    rows: Range<u64>,
}

/// The reader of several files as one input.
struct MultiReader {
    parts: VecDeque<Part>,
    /// The open file's reader and the set's row number of the file's row 0.
    current: Option<(Box<dyn BatchReader>, u64)>,
    options: InputOptions,
    element_type: ElementType,
    dimension: usize,
    column: Option<String>,
    schema: Option<SchemaRef>,
    has_vectors: bool,
    rows: u64,
}

/// Opens `paths` as one input (see the module's documentation); `options.selection` picks rows of
/// the whole set.
pub fn open_files(
    paths: &[PathBuf],
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let [first_path, ..] = paths else {
        return Err(InputError::Options("no input files".to_owned()));
    };
    let whole = InputOptions {
        selection: RowSelection::All,
        ..options.clone()
    };
    let first = open(Some(first_path), &whole)?;
    let element_type = first.element_type();
    // From the first file with rows of elements: an empty file (or one of null rows) has none.
    let mut dimension = 0;
    let column = first.column_name().map(str::to_owned);
    let schema = first.passthrough_schema();
    let has_vectors = first.has_vectors();
    let mut counts = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let reader = if i == 0 {
            None
        } else {
            Some(open(Some(path), &whole)?)
        };
        let reader = reader.as_deref().unwrap_or(first.as_ref());
        let name = path.display();
        let Some(rows) = reader.rows() else {
            return Err(InputError::Unsupported(format!(
                "{name}: the file does not declare its row count, which reading it as part of \
                 several files needs"
            )));
        };
        if dimension == 0 {
            dimension = reader.dimension();
        }
        let shaped = reader.dimension() == dimension || reader.dimension() == 0;
        if reader.element_type() != element_type || !shaped {
            return Err(InputError::Data(format!(
                "{name}: rows of {} {} elements, but the files before it have rows of {dimension} \
                 {} elements",
                reader.dimension(),
                reader.element_type().name(),
                element_type.name(),
            )));
        }
        let fields = |schema: Option<SchemaRef>| {
            schema.map(|s| {
                let fields = s.fields().iter();
                fields
                    .map(|f| (f.name().clone(), f.data_type().clone()))
                    .collect::<Vec<_>>()
            })
        };
        if reader.column_name() != column.as_deref()
            || fields(reader.passthrough_schema()) != fields(schema.clone())
        {
            return Err(InputError::Data(format!(
                "{name}: its columns are not those of {}",
                first_path.display()
            )));
        }
        counts.push(rows);
    }
    drop(first);
    let total = counts
        .iter()
        .try_fold(0u64, |total, &rows| total.checked_add(rows))
        .ok_or_else(|| InputError::Data("the files hold more than 2^64 rows".to_owned()))?;
    let name = format!(
        "{} (and {} more files)",
        first_path.display(),
        paths.len() - 1
    );
    let wanted = resolve_selection(&options.selection, total, &name)?;
    let mut parts = VecDeque::new();
    let mut offset = 0u64;
    for (path, rows) in paths.iter().zip(counts) {
        let (start, end) = (wanted.start.max(offset), wanted.end.min(offset + rows));
        if start < end {
            parts.push_back(Part {
                path: path.clone(),
                offset,
                rows: start - offset..end - offset,
            });
        }
        offset += rows;
    }
    Ok(Box::new(MultiReader {
        parts,
        current: None,
        options: options.clone(),
        element_type,
        dimension,
        column,
        schema,
        has_vectors,
        rows: wanted.end - wanted.start,
    }))
}

impl BatchReader for MultiReader {
    fn element_type(&self) -> ElementType {
        self.element_type
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn rows(&self) -> Option<u64> {
        Some(self.rows)
    }

    fn column_name(&self) -> Option<&str> {
        self.column.as_deref()
    }

    fn passthrough_schema(&self) -> Option<SchemaRef> {
        self.schema.clone()
    }

    fn has_vectors(&self) -> bool {
        self.has_vectors
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        loop {
            if self.current.is_none() {
                let Some(part) = self.parts.pop_front() else {
                    return Ok(None);
                };
                let options = InputOptions {
                    selection: RowSelection::Range(part.rows),
                    ..self.options.clone()
                };
                self.current = Some((open(Some(&part.path), &options)?, part.offset));
            }
            let Some((reader, offset)) = &mut self.current else {
                continue;
            };
            match reader.next_batch()? {
                Some(mut batch) => {
                    batch.first_row += *offset;
                    for damaged in &mut batch.damaged {
                        damaged.row += *offset;
                    }
                    return Ok(Some(batch));
                }
                None => self.current = None,
            }
        }
    }

    fn recycle(&mut self, elements: Elements) {
        if let Some((reader, _)) = &mut self.current {
            reader.recycle(elements);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputFormat;
    use arrow_array::{ArrayRef, Float32Array, Int64Array, ListArray, RecordBatch};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;

    /// A Parquet file of `ids` (column `id`) and vectors of `dimension` elements, each element its
    /// row's id.
    fn write(dir: &std::path::Path, name: &str, ids: Range<i64>, dimension: usize) -> PathBuf {
        let item = Arc::new(Field::new("item", DataType::Float32, true));
        let values = ids
            .clone()
            .flat_map(|id| std::iter::repeat_n(id as f32, dimension));
        let rows = ids.clone().count();
        let emb = ListArray::new(
            item,
            OffsetBuffer::from_lengths(std::iter::repeat_n(dimension, rows)),
            Arc::new(Float32Array::from_iter_values(values)),
            None,
        );
        let id = Int64Array::from_iter_values(ids);
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(id) as ArrayRef),
            ("emb", Arc::new(emb) as ArrayRef),
        ])
        .unwrap();
        let path = dir.join(name);
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        path
    }

    fn options(selection: RowSelection) -> InputOptions {
        InputOptions {
            format: Some(InputFormat::Parquet),
            column: None,
            dataset: String::new(),
            selection,
            batch_rows: 2,
            vectors_optional: false,
        }
    }

    /// Every row read: (its number in the set, its first element, its id column).
    fn read(paths: &[PathBuf], selection: RowSelection) -> Vec<(u64, f64, i64)> {
        let mut reader = open_files(paths, &options(selection)).unwrap();
        let announced = reader.rows().unwrap();
        let mut rows = Vec::new();
        while let Some(batch) = reader.next_batch().unwrap() {
            let elements = batch.elements.to_f64();
            let columns = batch.columns.unwrap();
            let ids = columns
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            for i in 0..batch.rows {
                rows.push((batch.first_row + i as u64, elements[i * 3], ids.value(i)));
            }
        }
        assert_eq!(rows.len() as u64, announced);
        rows
    }

    fn set() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let paths = vec![
            write(dir.path(), "train-00-of-03.parquet", 0..3, 3),
            write(dir.path(), "train-01-of-03.parquet", 3..3, 3),
            write(dir.path(), "train-02-of-03.parquet", 3..8, 3),
        ];
        (dir, paths)
    }

    #[test]
    fn files_read_as_one_input_numbered_across_them() {
        let (_dir, paths) = set();
        let rows = read(&paths, RowSelection::All);
        let expected: Vec<(u64, f64, i64)> = (0..8).map(|i| (i, i as f64, i as i64)).collect();
        assert_eq!(rows, expected);
        // An empty file first: the dimension comes from the next one.
        let (dir, mut paths) = set();
        paths.insert(0, write(dir.path(), "empty.parquet", 0..0, 3));
        assert_eq!(read(&paths, RowSelection::All), expected);
    }

    #[test]
    fn ranges_and_shards_apply_to_the_whole_set() {
        let (_dir, paths) = set();
        let numbers = |selection| -> Vec<u64> {
            read(&paths, selection)
                .into_iter()
                .map(|(row, element, id)| {
                    assert_eq!((element, id), (row as f64, row as i64));
                    row
                })
                .collect()
        };
        assert_eq!(numbers(RowSelection::Range(2..5)), [2, 3, 4]);
        let shards: Vec<Vec<u64>> = (1..=3)
            .map(|k| numbers(RowSelection::Shard { k, n: 3 }))
            .collect();
        assert_eq!(shards, [vec![0, 1], vec![2, 3, 4], vec![5, 6, 7]]);
        assert!(open_files(&paths, &options(RowSelection::Range(8..9))).is_err());
    }

    #[test]
    fn files_that_do_not_match_are_refused_by_name() {
        let (dir, mut paths) = set();
        paths.push(write(dir.path(), "other.parquet", 0..2, 4));
        let error = open_files(&paths, &options(RowSelection::All))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("other.parquet: rows of 4 f4 elements"),
            "{error}"
        );
        assert!(open_files(&[], &options(RowSelection::All)).is_err());
        let missing = [dir.path().join("absent.parquet")];
        assert!(open_files(&missing, &options(RowSelection::All)).is_err());
    }
}
