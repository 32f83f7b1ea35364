//! Parquet inputs through the parquet crate's Arrow reader. Only the selected row groups are read
//! (a shard is a run of whole row groups where possible; a row range selects whole row groups and a
//! row selection inside the first and last), in batches of at most `batch_rows` rows and about
//! [`MAX_DECODED_BATCH_BYTES`] of decoded columns: the first batch is a small probe (sized from the
//! footer's uncompressed column sizes), later batches are sized from the decoded bytes per row it
//! showed, and the reader is rebuilt with fewer rows whenever a decoded batch still exceeds the budget
//! (dictionary pages decode to far more than the footer counts).

use super::columnar::{choose_column, scan_dimension, ColumnarReader, RecordBatches, Span};
use super::guard::fenced;
use super::parquet_leaf::{leaf_of, LeafReader, LeafSpan};
use super::source::Source;
use super::text;
use super::{
    check_shard, resolve_selection, shard_bound, BatchReader, InputError, InputOptions,
    RowSelection, MAX_DECODED_BATCH_BYTES,
};
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection as RowsWithinGroups, RowSelector,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::errors::ParquetError;
use parquet::file::metadata::{FileMetaData, ParquetMetaData, ParquetMetaDataBuilder};
use parquet::schema::types::{SchemaDescriptor, Type as SchemaType};
use std::fs::File;
use std::ops::Range;
use std::sync::Arc;

/// The magic bytes at both ends of a Parquet file.
pub(crate) const MAGIC: &[u8] = b"PAR1";

/// Most rows of the first (probe) batch, whose decoded bytes size the later batches.
const PROBE_ROWS: usize = 64;

/// Which row groups to read, and which rows in them.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    groups: Range<usize>,
    /// Rows to keep within the selected groups; None = all of them.
    within: Option<Vec<RowSelector>>,
    /// Rows of the first selected group before the selection.
    skip_in_first_group: u64,
    first_row: u64,
    rows: u64,
}

/// Opens a Parquet input (standard input is first copied to a temporary file: Parquet needs its
/// footer first).
pub(crate) fn open(
    source: Source,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let input = source.name().to_string();
    let file = source.into_file()?;
    let io_error = |source| InputError::Io {
        input: input.clone(),
        source,
    };
    let invalid = |e| InputError::Data(format!("{input}: not a readable Parquet file: {e}"));
    let metadata = fenced(&input, "the Parquet footer", || {
        ArrowReaderMetadata::load(&file, Default::default())
    })?
    .map_err(invalid)?;
    let mut column = choose_column(
        metadata.schema(),
        options.column.as_deref(),
        &input,
        options.vectors_optional,
    )?;
    let metadata = text_as_bytes(metadata, column.index).map_err(invalid)?;
    let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
        file.try_clone().map_err(io_error)?,
        metadata.clone(),
    );
    let group_rows: Vec<u64> = builder
        .metadata()
        .row_groups()
        .iter()
        .map(|group| u64::try_from(group.num_rows()).unwrap_or(0))
        .collect();
    let plan = plan(&options.selection, &group_rows, &input)?;
    let batch_rows = options.batch_rows.max(1);
    let schema = builder.parquet_schema();
    let root_matches = |index: &usize| {
        let root = schema.root_schema().get_fields().get(*index);
        root.is_some_and(|root| root.name() == column.name)
    };
    let leaf = column
        .index
        .filter(root_matches)
        .and_then(|index| leaf_of(schema, index, column.element_type));
    let others: Vec<usize> = (0..schema.root_schema().get_fields().len())
        .filter(|&i| Some(i) != column.index)
        .collect();
    let projection = ProjectionMask::roots(schema, others.iter().copied());
    // Builds the Arrow reader over the planned rows after the first `offset`, `rows` at a time.
    let build = {
        let (input, plan) = (input.clone(), plan.clone());
        move |builder: ParquetRecordBatchReaderBuilder<File>, offset: usize, rows: usize| {
            let mut builder = builder
                .with_row_groups(plan.groups.clone().collect())
                .with_batch_size(rows)
                .with_offset(offset);
            if let Some(within) = &plan.within {
                builder = builder.with_row_selection(RowsWithinGroups::from(within.clone()));
            }
            fenced(&input, "the Parquet row groups", || builder.build())?
                .map_err(|e| InputError::Data(format!("{input}: cannot read Parquet rows: {e}")))
        }
    };
    let footer_row_bytes = footer_row_bytes(metadata.metadata(), plan.groups.clone());
    let reopen_error = {
        let input = input.clone();
        move |source| InputError::Io {
            input: input.clone(),
            source,
        }
    };
    if let (None, Some(index)) = (column.known_dimension, column.index) {
        // From the whole file, so that every shard and range agrees on it.
        let scan = ParquetRecordBatchReaderBuilder::new_with_metadata(
            file.try_clone().map_err(io_error)?,
            metadata.clone(),
        )
        .with_projection(ProjectionMask::roots(schema, [index]))
        .with_batch_size(64);
        let scan = fenced(&input, "the Parquet row groups", || scan.build())?
            .map_err(|e| InputError::Data(format!("{input}: cannot read Parquet rows: {e}")))?;
        let mut scanned = column.clone();
        scanned.index = Some(0);
        column.known_dimension = Some(scan_dimension(Box::new(scan), &scanned, &input)?);
    }
    if let Some(leaf) = leaf {
        // The vector column through its leaf; the other columns (if any) through Arrow.
        let vector_row_bytes = column
            .known_dimension
            .unwrap_or(0)
            .saturating_mul(column.element_type.size());
        let passthrough = if others.is_empty() {
            None
        } else {
            let (file, metadata) = (file.try_clone().map_err(io_error)?, metadata.clone());
            let open = move |offset, rows| {
                let file = file.try_clone().map_err(&reopen_error)?;
                let builder =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
                        .with_projection(projection.clone());
                build(builder, offset, rows)
            };
            let bounded = Bounded::new(
                Box::new(open),
                batch_rows,
                footer_row_bytes,
                vector_row_bytes,
            )?;
            Some(Box::new(bounded) as RecordBatches)
        };
        let span = LeafSpan {
            groups: plan.groups.clone(),
            skip: plan.skip_in_first_group,
            rows: plan.rows,
            first_row: plan.first_row,
        };
        return Ok(Box::new(LeafReader::new(
            &input,
            file,
            leaf,
            column,
            span,
            passthrough,
            batch_rows,
        )?));
    }
    let span = Span {
        first_row: plan.first_row,
        skip: 0,
        limit: None,
        rows: Some(plan.rows),
    };
    let reopen = file.try_clone().map_err(io_error)?;
    let open = move |offset, rows| {
        let file = reopen.try_clone().map_err(&reopen_error)?;
        build(
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone()),
            offset,
            rows,
        )
    };
    let bounded = Bounded::new(Box::new(open), batch_rows, footer_row_bytes, 0)?;
    Ok(Box::new(ColumnarReader::new(
        &input,
        "Parquet",
        Box::new(bounded),
        column,
        span,
        batch_rows,
    )?))
}

/// `metadata` read with its text (but the vector column `vector`'s) as binary, top-level or nested
/// in lists, maps and structs, so that a value that is not UTF-8 damages its row only (the readers
/// turn it back into text, checking each value): the Parquet schema's leaves lose their `STRING`
/// annotation, which is what makes the decoder check a whole page at once, and the Arrow schema
/// takes binary types. Should the Arrow reader refuse that for a nested layout, only the top-level
/// text columns are read as binary.
fn text_as_bytes(
    metadata: ArrowReaderMetadata,
    vector: Option<usize>,
) -> Result<ArrowReaderMetadata, ParquetError> {
    let texts = text::text_fields(metadata.schema(), vector);
    let root = metadata
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema();
    let fields = root.get_fields();
    if texts.is_empty() || fields.len() != metadata.schema().fields().len() {
        return Ok(metadata);
    }
    rewritten(&metadata, &texts).or_else(|_| {
        // A nested layout the Arrow reader does not take as binary: its top-level text only.
        let top = texts.iter().copied();
        let primitive = |i: usize| fields.get(i).is_some_and(|field| field.is_primitive());
        let top: Vec<usize> = top.filter(|&i| primitive(i)).collect();
        if top.is_empty() {
            return Ok(metadata.clone());
        }
        rewritten(&metadata, &top)
    })
}

/// `metadata` with the top-level fields `texts` (as [`text::text_fields`] gives them, whose
/// indices are those of the Parquet root's fields) read as binary: see [`text_as_bytes`].
fn rewritten(
    metadata: &ArrowReaderMetadata,
    texts: &[usize],
) -> Result<ArrowReaderMetadata, ParquetError> {
    let parquet = metadata.metadata();
    let root = parquet.file_metadata().schema_descr().root_schema();
    let mut plain = Vec::with_capacity(root.get_fields().len());
    for (i, field) in root.get_fields().iter().enumerate() {
        plain.push(if texts.contains(&i) {
            without_text_annotation(field, true)?
        } else {
            field.clone()
        });
    }
    let mut root_builder = SchemaType::group_type_builder(root.name()).with_fields(plain);
    if root.get_basic_info().has_id() {
        root_builder = root_builder.with_id(Some(root.get_basic_info().id()));
    }
    let schema = SchemaDescriptor::new(Arc::new(root_builder.build()?));
    let file = parquet.file_metadata();
    let file = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_owned),
        file.key_value_metadata().cloned(),
        Arc::new(schema),
        file.column_orders().cloned(),
    );
    let mut old = ParquetMetaDataBuilder::new_from_metadata(parquet.as_ref().clone());
    let parquet = ParquetMetaDataBuilder::new(file)
        .set_row_groups(old.take_row_groups())
        .set_page_index(old.take_page_index())
        .build();
    let binary = Arc::new(text::as_binary(metadata.schema(), texts));
    ArrowReaderMetadata::try_new(
        Arc::new(parquet),
        ArrowReaderOptions::new().with_schema(binary),
    )
}

/// `field` with its leaves (itself, or those of its groups at any depth) annotated as text (`STRING`,
/// `JSON`, `ENUM`: read as Arrow text) turned into plain byte arrays; `top`: `field` is a top-level
/// text column, turned plain whatever its annotation.
fn without_text_annotation(
    field: &Arc<SchemaType>,
    top: bool,
) -> Result<Arc<SchemaType>, ParquetError> {
    let info = field.get_basic_info();
    if field.is_primitive() {
        let text = matches!(
            info.converted_type(),
            ConvertedType::UTF8 | ConvertedType::JSON | ConvertedType::ENUM
        ) || matches!(
            info.logical_type_ref(),
            Some(LogicalType::String | LogicalType::Json | LogicalType::Enum)
        );
        if !top && (!text || field.get_physical_type() != PhysicalType::BYTE_ARRAY) {
            return Ok(field.clone());
        }
        let mut bytes = SchemaType::primitive_type_builder(info.name(), field.get_physical_type())
            .with_repetition(info.repetition());
        if info.has_id() {
            bytes = bytes.with_id(Some(info.id()));
        }
        return Ok(Arc::new(bytes.build()?));
    }
    let fields = field
        .get_fields()
        .iter()
        .map(|field| without_text_annotation(field, false));
    let mut group = SchemaType::group_type_builder(info.name())
        .with_fields(fields.collect::<Result<_, _>>()?)
        .with_converted_type(info.converted_type())
        .with_logical_type(info.logical_type_ref().cloned());
    if info.has_repetition() {
        group = group.with_repetition(info.repetition());
    }
    if info.has_id() {
        group = group.with_id(Some(info.id()));
    }
    Ok(Arc::new(group.build()?))
}

/// The most uncompressed bytes per row, by the footer, of the row groups `groups` (all columns).
/// Dictionary-encoded columns count their indices, not the values they stand for.
fn footer_row_bytes(metadata: &ParquetMetaData, groups: Range<usize>) -> usize {
    let groups = metadata.row_groups().get(groups).unwrap_or_default();
    groups
        .iter()
        .filter_map(|group| {
            let rows = u64::try_from(group.num_rows()).ok().filter(|&r| r > 0)?;
            let bytes: u64 = group
                .columns()
                .iter()
                .map(|c| u64::try_from(c.uncompressed_size()).unwrap_or(0))
                .sum();
            usize::try_from(bytes / rows).ok()
        })
        .max()
        .unwrap_or(0)
}

/// Opens the Arrow reader over the planned rows after the first `offset`, `rows` per batch.
type Open = Box<dyn Fn(usize, usize) -> Result<ParquetRecordBatchReader, InputError> + Send>;

/// Rows per batch that keep `row_bytes`-byte rows within [`MAX_DECODED_BATCH_BYTES`], at most `most`.
fn rows_within_budget(row_bytes: usize, most: usize) -> usize {
    (MAX_DECODED_BATCH_BYTES / row_bytes.max(1)).clamp(1, most.max(1))
}

/// Record batches of about [`MAX_DECODED_BATCH_BYTES`] decoded bytes (the Arrow columns plus
/// `extra_row_bytes` a row read elsewhere): a probe batch of at most [`PROBE_ROWS`] rows sizes the
/// next ones; a batch over the budget makes the reader start again after it, with fewer rows.
struct Bounded {
    open: Open,
    reader: ParquetRecordBatchReader,
    /// Most rows per batch, whatever the budget allows.
    most: usize,
    /// Rows per batch of `reader`.
    rows: usize,
    /// Rows read so far.
    read: usize,
    /// Bytes a row takes besides its Arrow columns.
    extra_row_bytes: usize,
    probed: bool,
}

impl Bounded {
    fn new(
        open: Open,
        most: usize,
        footer_row_bytes: usize,
        extra_row_bytes: usize,
    ) -> Result<Self, InputError> {
        let estimate = footer_row_bytes.saturating_add(extra_row_bytes);
        let rows = rows_within_budget(estimate, most.min(PROBE_ROWS));
        Ok(Bounded {
            reader: open(0, rows)?,
            open,
            most,
            rows,
            read: 0,
            extra_row_bytes,
            probed: false,
        })
    }

    /// The rows per batch after `batch`: sized from it after the probe, else smaller if it was over.
    fn resize(&self, batch: &RecordBatch) -> usize {
        let rows = batch.num_rows().max(1);
        let bytes = batch
            .get_array_memory_size()
            .saturating_add(self.extra_row_bytes.saturating_mul(rows));
        let row_bytes = bytes.div_ceil(rows);
        if !self.probed {
            rows_within_budget(row_bytes, self.most)
        } else if bytes > MAX_DECODED_BATCH_BYTES {
            // Half the fitting size, so that rows growing slowly rebuild the reader rarely.
            (rows_within_budget(row_bytes, self.rows) / 2).clamp(1, self.rows)
        } else {
            self.rows
        }
    }
}

impl Iterator for Bounded {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.reader.next()? {
            Ok(batch) => batch,
            Err(e) => return Some(Err(e)),
        };
        self.read = self.read.saturating_add(batch.num_rows());
        let rows = self.resize(&batch);
        self.probed = true;
        if rows != self.rows {
            match (self.open)(self.read, rows) {
                Ok(reader) => {
                    self.reader = reader;
                    self.rows = rows;
                }
                Err(e) => return Some(Err(ArrowError::ExternalError(Box::new(e)))),
            }
        }
        Some(Ok(batch))
    }
}

/// Plans a selection over row groups of `group_rows` rows each.
fn plan(selection: &RowSelection, group_rows: &[u64], input: &str) -> Result<Plan, InputError> {
    let starts: Vec<u64> = std::iter::once(0)
        .chain(group_rows.iter().scan(0u64, |total, &rows| {
            *total = total.saturating_add(rows);
            Some(*total)
        }))
        .collect();
    let total = starts.last().copied().unwrap_or(0);
    if let &RowSelection::Shard { k, n } = selection {
        check_shard(k, n, input)?;
        if let Some(plan) = shard_by_groups(&starts, k, n) {
            return Ok(plan);
        }
    }
    let range = resolve_selection(selection, total, input)?;
    Ok(plan_rows(&starts, range))
}

/// The K-th of N shards as a run of whole row groups: each shard boundary is the row-group
/// boundary nearest to the balanced one. None when that would leave a shard empty, which N above
/// the number of row groups always does: so the work and memory follow the file's row groups,
/// never N (which may be up to 2^64 − 1).
fn shard_by_groups(starts: &[u64], k: u64, n: u64) -> Option<Plan> {
    let total = starts.last().copied()?;
    let groups = u64::try_from(starts.len().saturating_sub(1)).ok()?;
    if n > groups {
        return None;
    }
    // The boundary nearest to the balanced bound (the earlier of two equally near ones).
    let nearest = |j: u64| {
        let target = shard_bound(total, j, n);
        let after = starts.partition_point(|&s| s < target);
        let before = after.saturating_sub(1);
        match (starts.get(before), starts.get(after)) {
            (Some(&b), Some(&a)) if a.abs_diff(target) < b.abs_diff(target) => after,
            // The first of equal starts (empty row groups repeat one).
            (Some(&b), _) => starts.partition_point(|&s| s < b),
            _ => after,
        }
    };
    let bounds: Vec<usize> = (0..=n).map(nearest).collect();
    if bounds.windows(2).any(|w| w.first() >= w.last()) {
        return None;
    }
    let k = usize::try_from(k).ok()?;
    let (&from, &to) = (bounds.get(k - 1)?, bounds.get(k)?);
    let (&first_row, &end_row) = (starts.get(from)?, starts.get(to)?);
    Some(Plan {
        groups: from..to,
        within: None,
        skip_in_first_group: 0,
        first_row,
        rows: end_row - first_row,
    })
}

/// The row groups overlapping `range` and the row selection inside them.
fn plan_rows(starts: &[u64], range: Range<u64>) -> Plan {
    let empty = Plan {
        groups: 0..0,
        within: None,
        skip_in_first_group: 0,
        first_row: range.start,
        rows: 0,
    };
    if range.is_empty() {
        return empty;
    }
    // Groups whose rows overlap the range: from the last group starting at or before its start
    // to the last group starting before its end.
    let first = starts
        .partition_point(|&s| s <= range.start)
        .saturating_sub(1);
    let last = starts.partition_point(|&s| s < range.end);
    let (Some(&groups_start), Some(&groups_end)) = (starts.get(first), starts.get(last)) else {
        return empty;
    };
    let mut within = Vec::new();
    for (skip, count) in [
        (true, range.start - groups_start),
        (false, range.end - range.start),
        (true, groups_end.saturating_sub(range.end)),
    ] {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        if count > 0 {
            within.push(if skip {
                RowSelector::skip(count)
            } else {
                RowSelector::select(count)
            });
        }
    }
    let whole = within.len() == 1;
    Plan {
        groups: first..last,
        within: (!whole).then_some(within),
        skip_in_first_group: range.start - groups_start,
        first_row: range.start,
        rows: range.end - range.start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(plan: &Plan, group_rows: &[u64]) -> Vec<u64> {
        let start: u64 = group_rows.iter().take(plan.groups.start).sum();
        let mut all: Vec<u64> = (start
            ..start
                + group_rows
                    .get(plan.groups.clone())
                    .unwrap()
                    .iter()
                    .sum::<u64>())
            .collect();
        if let Some(within) = &plan.within {
            let mut kept = Vec::new();
            let mut rows = all.into_iter();
            for selector in within {
                let taken: Vec<u64> = rows.by_ref().take(selector.row_count).collect();
                if !selector.skip {
                    kept.extend(taken);
                }
            }
            all = kept;
        }
        assert_eq!(
            all.first().copied().unwrap_or(plan.first_row),
            plan.first_row
        );
        assert_eq!(all.len() as u64, plan.rows);
        all
    }

    #[test]
    fn shards_concatenate_to_every_row() {
        for group_rows in [
            vec![100],
            vec![10, 10, 10],
            vec![7, 30, 1, 1, 50, 3],
            vec![1, 1000],
            vec![5, 0, 0, 5, 0, 5],
            vec![],
        ] {
            let total: u64 = group_rows.iter().sum();
            for n in 1..=8 {
                let mut seen = Vec::new();
                for k in 1..=n {
                    let plan = plan(&RowSelection::Shard { k, n }, &group_rows, "t").unwrap();
                    seen.extend(rows_of(&plan, &group_rows));
                }
                assert_eq!(seen, (0..total).collect::<Vec<_>>(), "{group_rows:?} n={n}");
            }
        }
    }

    #[test]
    fn shards_of_huge_counts_take_no_memory_of_their_count() {
        let group_rows = [10, 0, 10, 10];
        for n in [1 << 32, 1_000_000_000, u64::MAX] {
            for k in [1, n / 2, n] {
                let plan = plan(&RowSelection::Shard { k, n }, &group_rows, "t").unwrap();
                let expected = shard_bound(30, k - 1, n)..shard_bound(30, k, n);
                assert_eq!(rows_of(&plan, &group_rows), expected.collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn shards_follow_row_groups_when_there_are_enough() {
        let group_rows = [10, 10, 10, 10];
        let plan = plan(&RowSelection::Shard { k: 2, n: 2 }, &group_rows, "t").unwrap();
        assert_eq!(plan.groups, 2..4);
        assert_eq!(plan.within, None);
    }

    #[test]
    fn ranges_select_inside_groups() {
        let group_rows = [10, 10, 10];
        let middle = plan(&RowSelection::Range(12..25), &group_rows, "t").unwrap();
        assert_eq!(middle.groups, 1..3);
        assert_eq!(rows_of(&middle, &group_rows), (12..25).collect::<Vec<_>>());
        let clamped = plan(&RowSelection::Range(5..100), &group_rows, "t").unwrap();
        assert_eq!(rows_of(&clamped, &group_rows), (5..30).collect::<Vec<_>>());
        assert!(super::plan(&RowSelection::Range(30..40), &group_rows, "t").is_err());
    }
}
