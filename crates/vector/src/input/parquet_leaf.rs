//! The fast path for the common Parquet vector column: a standard 3-level list of `FLOAT`,
//! `DOUBLE`, `INT32` or `INT64` (what pyarrow writes for `list`, `large_list` and
//! `fixed_size_list` of float32/float64/int32/int64). Its values are decoded by the low-level column
//! reader straight into the batch's vector, and the levels are checked with simple loops — about
//! twice as fast as building Arrow list arrays. The other columns still come from the Arrow reader,
//! batch by batch in step with the vector column.

use super::columnar::{RecordBatches, VectorColumn};
use super::guard::fenced;
use super::text;
use super::{Batch, BatchReader, ElementType, Elements, InputError};
use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{DataType, DoubleType, FloatType, Int32Type, Int64Type};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::SchemaDescriptor;
use std::fs::File;
use std::ops::Range;

/// What the definition levels of a standard list column mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Levels {
    /// Below this, the row (the list) is null.
    list_present: i16,
    /// Below this (and not null), the list is empty.
    list_not_empty: i16,
    /// The level of a present element (below it and not empty: a null element).
    element_present: i16,
}

/// Where the leaf column is and how to read it; None when the fast path does not apply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leaf {
    index: usize,
    levels: Levels,
}

/// Finds the single leaf of root column `root` when it is a standard 3-level list of a physical
/// type that maps to `element_type` without conversion.
pub(crate) fn leaf_of(
    schema: &SchemaDescriptor,
    root: usize,
    element_type: ElementType,
) -> Option<Leaf> {
    let mut leaves = (0..schema.num_columns()).filter(|&i| schema.get_column_root_idx(i) == root);
    let (index, None) = (leaves.next()?, leaves.next()) else {
        return None;
    };
    let descriptor = schema.column(index);
    let wanted = match element_type {
        ElementType::F32 => PhysicalType::FLOAT,
        ElementType::F64 => PhysicalType::DOUBLE,
        ElementType::I32 => PhysicalType::INT32,
        ElementType::I64 => PhysicalType::INT64,
        _ => return None,
    };
    if descriptor.physical_type() != wanted || descriptor.max_rep_level() != 1 {
        return None;
    }
    // root (optional or required group) → repeated group → element (optional or required).
    let list = schema.root_schema().get_fields().get(root)?;
    let [repeated] = list.get_fields() else {
        return None;
    };
    let [element] = repeated.get_fields() else {
        return None;
    };
    let repetition = |t: &parquet::schema::types::Type| {
        let info = t.get_basic_info();
        info.has_repetition().then(|| info.repetition())
    };
    if !list.is_group() || !repeated.is_group() || element.is_group() {
        return None;
    }
    let list_present = i16::from(repetition(list)? == Repetition::OPTIONAL);
    if repetition(repeated)? != Repetition::REPEATED {
        return None;
    }
    let list_not_empty = list_present + 1;
    let element_present = list_not_empty + i16::from(repetition(element)? == Repetition::OPTIONAL);
    if element_present != descriptor.max_def_level() {
        return None;
    }
    Some(Leaf {
        index,
        levels: Levels {
            list_present,
            list_not_empty,
            element_present,
        },
    })
}

/// A typed column reader and the vector its values go into.
trait LeafValues: Send {
    /// Starts reading a row group's column chunk.
    fn start(&mut self, reader: ColumnReader) -> Option<()>;
    /// Skips up to `records` rows; returns how many were skipped.
    fn skip(&mut self, records: usize) -> parquet::errors::Result<usize>;
    /// Reads up to `records` rows, appending levels and values; returns how many rows were
    /// completed and how many levels were read. A row may be counted in a later call than the
    /// one that read its levels (pages need not end at row boundaries); (0, 0) = the end of the
    /// column chunk.
    fn read(
        &mut self,
        records: usize,
        definition: &mut Vec<i16>,
        repetition: &mut Vec<i16>,
    ) -> parquet::errors::Result<(usize, usize)>;
    /// Number of values read so far.
    fn len(&self) -> usize;
    /// Makes room for `additional` more values.
    fn reserve(&mut self, additional: usize);
    /// The values read so far, taking `spare`'s memory for the next ones when it fits.
    fn take(&mut self, spare: Option<Elements>) -> Elements;
    /// Builds the row-major elements of rows with null rows and gaps: `rows` entries of (start in
    /// the values, valid), each valid row `dimension` values long (rows × dimension fits in a
    /// usize: checked by the caller).
    fn scatter(&mut self, rows: &[Option<usize>], dimension: usize) -> Elements;
}

/// [`LeafValues`] for one parquet data type.
struct Typed<T: DataType> {
    reader: Option<ColumnReaderImpl<T>>,
    values: Vec<T::T>,
    wrap: fn(Vec<T::T>) -> Elements,
    unwrap: fn(Elements) -> Option<Vec<T::T>>,
}

impl<T: DataType> LeafValues for Typed<T>
where
    T::T: Copy + Default + Send,
{
    fn start(&mut self, reader: ColumnReader) -> Option<()> {
        self.reader = Some(T::get_column_reader(reader)?);
        Some(())
    }

    fn skip(&mut self, records: usize) -> parquet::errors::Result<usize> {
        self.reader
            .as_mut()
            .map_or(Ok(0), |r| r.skip_records(records))
    }

    fn read(
        &mut self,
        records: usize,
        definition: &mut Vec<i16>,
        repetition: &mut Vec<i16>,
    ) -> parquet::errors::Result<(usize, usize)> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok((0, 0));
        };
        let (read, _, levels) = reader.read_records(
            records,
            Some(definition),
            Some(repetition),
            &mut self.values,
        )?;
        Ok((read, levels))
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn reserve(&mut self, additional: usize) {
        self.values.reserve(additional);
    }

    fn take(&mut self, spare: Option<Elements>) -> Elements {
        let mut next = spare.and_then(self.unwrap).unwrap_or_default();
        next.clear();
        (self.wrap)(std::mem::replace(&mut self.values, next))
    }

    fn scatter(&mut self, rows: &[Option<usize>], dimension: usize) -> Elements {
        let mut out = vec![T::T::default(); rows.len() * dimension];
        for (row, target) in rows.iter().zip(out.chunks_exact_mut(dimension.max(1))) {
            let range = row.and_then(|start| Some(start..start.checked_add(dimension)?));
            if let Some(source) = range.and_then(|range| self.values.get(range)) {
                target.copy_from_slice(source);
            }
        }
        self.values.clear();
        (self.wrap)(out)
    }
}

fn typed_values(element_type: ElementType) -> Option<Box<dyn LeafValues>> {
    Some(match element_type {
        ElementType::F32 => Box::new(Typed::<FloatType> {
            reader: None,
            values: Vec::new(),
            wrap: Elements::F32,
            unwrap: |e| match e {
                Elements::F32(v) => Some(v),
                _ => None,
            },
        }),
        ElementType::F64 => Box::new(Typed::<DoubleType> {
            reader: None,
            values: Vec::new(),
            wrap: Elements::F64,
            unwrap: |e| match e {
                Elements::F64(v) => Some(v),
                _ => None,
            },
        }),
        ElementType::I32 => Box::new(Typed::<Int32Type> {
            reader: None,
            values: Vec::new(),
            wrap: Elements::I32,
            unwrap: |e| match e {
                Elements::I32(v) => Some(v),
                _ => None,
            },
        }),
        ElementType::I64 => Box::new(Typed::<Int64Type> {
            reader: None,
            values: Vec::new(),
            wrap: Elements::I64,
            unwrap: |e| match e {
                Elements::I64(v) => Some(v),
                _ => None,
            },
        }),
        _ => return None,
    })
}

/// Whether every level equals `level`; written without early exit inside blocks so that it
/// compiles to vector instructions.
fn all_equal(levels: &[i16], level: i16) -> bool {
    levels
        .chunks(256)
        .all(|block| block.iter().fold(0u16, |acc, &l| acc | (l ^ level) as u16) == 0)
}

/// Batches of a Parquet vector column read through its leaf column.
pub(crate) struct LeafReader {
    input: String,
    file: SerializedFileReader<File>,
    leaf: Leaf,
    column: VectorColumn,
    values: Box<dyn LeafValues>,
    /// Row groups still to start, in order.
    groups: Range<usize>,
    /// Rows to skip at the start of the first group.
    skip: u64,
    /// Rows still to read.
    left: u64,
    rows: u64,
    next_row: u64,
    batch_rows: usize,
    dimension: usize,
    /// The other columns, read by the Arrow reader over the same rows; None when there are none.
    passthrough: Option<RecordBatches>,
    definition: Vec<i16>,
    repetition: Vec<i16>,
    spare: Option<Elements>,
}

/// Where a [`LeafReader`] reads.
pub(crate) struct LeafSpan {
    /// The selected row groups.
    pub groups: Range<usize>,
    /// Rows to skip at the start of the first selected group.
    pub skip: u64,
    /// Rows to read.
    pub rows: u64,
    /// Input row number of the first row read.
    pub first_row: u64,
}

impl LeafReader {
    /// Opens the leaf column (the dimension must be known: see `VectorColumn::known_dimension`).
    pub(crate) fn new(
        input: &str,
        file: File,
        leaf: Leaf,
        column: VectorColumn,
        span: LeafSpan,
        passthrough: Option<RecordBatches>,
        batch_rows: usize,
    ) -> Result<LeafReader, InputError> {
        let invalid = |e| InputError::Data(format!("{input}: not a readable Parquet file: {e}"));
        let file = fenced(input, "the Parquet footer", || {
            SerializedFileReader::new(file)
        })?
        .map_err(invalid)?;
        let values = typed_values(column.element_type).ok_or_else(|| {
            InputError::Unsupported(format!(
                "{input}: no direct reading of {} elements",
                column.element_type.name()
            ))
        })?;
        Ok(LeafReader {
            input: input.to_string(),
            file,
            leaf,
            values,
            groups: span.groups,
            skip: span.skip,
            left: span.rows,
            rows: span.rows,
            next_row: span.first_row,
            batch_rows: batch_rows.max(1),
            dimension: column.known_dimension.unwrap_or(0),
            column,
            passthrough,
            definition: Vec::new(),
            repetition: Vec::new(),
            spare: None,
        })
    }

    /// What is being read, for messages.
    fn what(&self) -> String {
        format!("Parquet rows from row {}", self.next_row)
    }

    fn error(&self, e: parquet::errors::ParquetError) -> InputError {
        InputError::Data(format!(
            "{}: cannot read Parquet rows from row {}: {e}",
            self.input, self.next_row
        ))
    }

    /// Reads `rows` rows' levels and values, moving across row groups.
    fn read_levels(&mut self, rows: usize) -> Result<(), InputError> {
        let mut read = 0;
        while read < rows {
            let what = self.what();
            let (values, definition, repetition) =
                (&mut self.values, &mut self.definition, &mut self.repetition);
            let (got, levels) = fenced(&self.input, &what, || {
                values.read(rows - read, definition, repetition)
            })?
            .map_err(|e| self.error(e))?;
            read += got;
            if got == 0 && levels == 0 {
                self.start_next_group()?;
            }
        }
        Ok(())
    }

    /// Starts the next selected row group (skipping the selection's first rows in the first one).
    fn start_next_group(&mut self) -> Result<(), InputError> {
        let Some(group) = self.groups.next() else {
            return Err(InputError::Data(format!(
                "{}: Parquet column '{}' ends at row {} before the rows its metadata declares",
                self.input, self.column.name, self.next_row
            )));
        };
        let (file, leaf) = (&self.file, self.leaf.index);
        let column = fenced(&self.input, &self.what(), || {
            file.get_row_group(group)
                .and_then(|g| g.get_column_reader(leaf))
        })?
        .map_err(|e| self.error(e))?;
        self.values.start(column).ok_or_else(|| {
            InputError::Data(format!("{}: unexpected Parquet column type", self.input))
        })?;
        let skip = std::mem::take(&mut self.skip);
        if skip > 0 {
            let wanted = usize::try_from(skip).unwrap_or(usize::MAX);
            let what = self.what();
            let values = &mut self.values;
            let skipped =
                fenced(&self.input, &what, || values.skip(wanted))?.map_err(|e| self.error(e))?;
            if skipped != wanted {
                return Err(self.error(parquet::errors::ParquetError::General(format!(
                    "row group {group} has fewer than {skip} rows"
                ))));
            }
        }
        Ok(())
    }

    /// Turns the levels and values of `rows` rows into elements and validity.
    fn convert(&mut self, rows: usize) -> Result<(Elements, Option<Vec<bool>>), InputError> {
        let levels = self.leaf.levels;
        let dimension = self.dimension;
        let Some(elements) = rows.checked_mul(dimension) else {
            return Err(InputError::Data(format!(
                "{}: {rows} rows of {dimension} elements do not fit in memory",
                self.input
            )));
        };
        let dense = elements == self.values.len()
            && self.definition.len() == self.values.len()
            && all_equal(&self.definition, levels.element_present)
            && self
                .repetition
                .chunks(dimension.max(1))
                .all(|row| matches!(row.split_first(), Some((0, rest)) if all_equal(rest, 1)));
        if dense {
            return Ok((self.values.take(self.spare.take()), None));
        }
        // Rows with nulls, empty lists, null elements or other lengths: walk the levels.
        let mut starts: Vec<Option<usize>> = Vec::new();
        let mut value = 0;
        let mut current: Option<(usize, usize)> = None; // (start, length) of the row being read
        let finish = |current: &mut Option<(usize, usize)>,
                      starts: &mut Vec<Option<usize>>,
                      row: u64|
         -> Result<(), InputError> {
            if let Some((start, len)) = current.take() {
                if len != dimension {
                    return Err(InputError::Data(format!(
                        "{}: row {row} has {len} elements, but the first row has {dimension} \
                         (column '{}')",
                        self.input, self.column.name
                    )));
                }
                starts.push(Some(start));
            }
            Ok(())
        };
        for (&d, &r) in self.definition.iter().zip(&self.repetition) {
            if r == 0 {
                let row = self.next_row + starts.len() as u64;
                finish(&mut current, &mut starts, row)?;
                if d < levels.list_present {
                    starts.push(None);
                    continue;
                }
                current = Some((value, 0));
                if d < levels.list_not_empty {
                    continue;
                }
            }
            let row = self.next_row + starts.len() as u64;
            if let Some((_, len)) = &mut current {
                if d < levels.element_present {
                    return Err(InputError::Data(format!(
                        "{}: row {row} element {len} is null (column '{}')",
                        self.input, self.column.name
                    )));
                }
                *len += 1;
                value += 1;
            }
        }
        let row = self.next_row + starts.len() as u64;
        finish(&mut current, &mut starts, row)?;
        let validity = starts.iter().map(Option::is_some).collect();
        Ok((self.values.scatter(&starts, dimension), Some(validity)))
    }
}

impl BatchReader for LeafReader {
    fn element_type(&self) -> ElementType {
        self.column.element_type
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn rows(&self) -> Option<u64> {
        Some(self.rows)
    }

    fn column_name(&self) -> Option<&str> {
        Some(&self.column.name)
    }

    fn passthrough_schema(&self) -> Option<SchemaRef> {
        Some(self.column.passthrough.clone())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        if self.left == 0 {
            return Ok(None);
        }
        let what = self.what();
        let columns = match &mut self.passthrough {
            Some(reader) => match fenced(&self.input, &what, || reader.next())? {
                Some(batch) => batch.map_err(|e| {
                    InputError::Data(format!(
                        "{}: cannot read Parquet rows from row {}: {e}",
                        self.input, self.next_row
                    ))
                })?,
                None => {
                    return Err(InputError::Data(format!(
                        "{}: Parquet columns end at row {} before the rows the metadata declares",
                        self.input, self.next_row
                    )))
                }
            },
            None => {
                let rows =
                    usize::try_from(self.left).map_or(self.batch_rows, |l| l.min(self.batch_rows));
                let options = RecordBatchOptions::new().with_row_count(Some(rows));
                RecordBatch::try_new_with_options(self.column.passthrough.clone(), vec![], &options)
                    .map_err(|e| InputError::Data(format!("{}: {e}", self.input)))?
            }
        };
        let mut damaged = Vec::new();
        let columns = text::restore(
            columns,
            &self.column.passthrough,
            &self.input,
            self.next_row,
            &mut damaged,
        )
        .map_err(|e| InputError::Data(format!("{}: {e}", self.input)))?;
        let rows = columns.num_rows();
        self.definition.clear();
        self.repetition.clear();
        // Room for the rows of the usual case (every row valid), so reading never reallocates.
        self.values.reserve(rows.saturating_mul(self.dimension));
        self.read_levels(rows)?;
        let (elements, validity) = self.convert(rows)?;
        let first_row = self.next_row;
        self.next_row += rows as u64;
        self.left = self.left.saturating_sub(rows as u64);
        Ok(Some(Batch {
            first_row,
            rows,
            elements,
            validity,
            columns: Some(columns),
            damaged,
        }))
    }

    fn recycle(&mut self, elements: Elements) {
        self.spare = Some(elements);
    }
}
