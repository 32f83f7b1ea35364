//! Reader for inputs whose data is one row-major block of fixed-size rows after a header: C-order
//! NPY and the big-ann-benchmarks `.fbin` family. Each batch is one large sequential read straight
//! into the batch's typed vector.

use super::source::Source;
use super::{
    resolve_selection, row_bytes, rows_per_batch, Batch, BatchReader, ElementType, Elements,
    InputError, InputOptions,
};
use std::ops::Range;

/// Where the rows are and how they are stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlatLayout {
    /// Format name for messages (`NPY`, `fbin`, ...).
    pub format: &'static str,
    /// Element type as stored.
    pub element_type: ElementType,
    /// Whether the stored byte order differs from this machine's.
    pub swap: bool,
    /// Rows in the file.
    pub rows: u64,
    /// Elements per row.
    pub dimension: usize,
    /// Byte offset of the first row.
    pub data_start: u64,
    /// Whether bytes after the last row are an error (a file's size is checked at open; a stream
    /// is checked when its last row has been read).
    pub nothing_after: bool,
}

/// Batches of rows from a [`FlatLayout`].
pub(crate) struct FlatReader {
    source: Source,
    layout: FlatLayout,
    row_bytes: usize,
    range: Range<u64>,
    next_row: u64,
    batch_rows: usize,
    /// Memory of a finished batch, given back by [`BatchReader::recycle`].
    spare: Option<Elements>,
    /// The damage found after the rows of the last batch, reported by the next call.
    damage: Option<InputError>,
}

impl FlatReader {
    /// Resolves the selection and, for a file, checks that the data is complete.
    pub(crate) fn new(
        source: Source,
        layout: FlatLayout,
        options: &InputOptions,
    ) -> Result<FlatReader, InputError> {
        let row_bytes = row_bytes(source.name(), layout.dimension, layout.element_type)?;
        if let Some(len) = source.len() {
            let end = (row_bytes as u64)
                .checked_mul(layout.rows)
                .and_then(|data| data.checked_add(layout.data_start));
            if end.is_none_or(|end| len < end) {
                let complete = len.saturating_sub(layout.data_start) / row_bytes as u64;
                return Err(truncated(&source, &layout, row_bytes, complete, len));
            }
        }
        let range = resolve_selection(&options.selection, layout.rows, source.name())?;
        Ok(FlatReader {
            batch_rows: rows_per_batch(options, row_bytes),
            next_row: range.start,
            source,
            layout,
            row_bytes,
            range,
            spare: None,
            damage: None,
        })
    }

    /// Byte offset of a row (saturating: a stream's header may declare absurd sizes).
    fn offset_of(&self, row: u64) -> u64 {
        let offset = row.saturating_mul(self.row_bytes as u64);
        self.layout.data_start.saturating_add(offset)
    }

    /// After the last row of a stream (whose size is not known up front), errors when more bytes
    /// follow, as a file of that size is refused at open. The stream must be at the end of the data.
    fn check_nothing_after(&mut self) -> Result<(), InputError> {
        if self.source.len().is_some() {
            return Ok(());
        }
        let end = self.source.position();
        if self.source.read_full(&mut [0u8; 1])? == 0 {
            return Ok(());
        }
        Err(InputError::Data(format!(
            "{}: {} data continues after the {} rows × {} elements its header declares (the data \
             ends at byte {end})",
            self.source.name(),
            self.layout.format,
            self.layout.rows,
            self.layout.dimension
        )))
    }
}

/// The error for data that ends inside row `row` (`end` = where the bytes end).
fn truncated(
    source: &Source,
    layout: &FlatLayout,
    row_bytes: usize,
    row: u64,
    end: u64,
) -> InputError {
    let row_start = layout
        .data_start
        .saturating_add(row.saturating_mul(row_bytes as u64));
    InputError::Data(format!(
        "{}: truncated {} data: row {row} at byte {row_start} is incomplete (the header declares \
         {} rows of {row_bytes} bytes; the input ends at byte {end})",
        source.name(),
        layout.format,
        layout.rows
    ))
}

impl BatchReader for FlatReader {
    fn element_type(&self) -> ElementType {
        self.layout.element_type
    }

    fn dimension(&self) -> usize {
        self.layout.dimension
    }

    fn rows(&self) -> Option<u64> {
        Some(self.range.end - self.range.start)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        if let Some(damage) = self.damage.take() {
            return Err(damage);
        }
        let left = self.range.end - self.next_row;
        if left == 0 {
            if self.layout.nothing_after && self.next_row == self.layout.rows {
                self.check_nothing_after()?;
            }
            return Ok(None);
        }
        let rows = usize::try_from(left).map_or(self.batch_rows, |l| l.min(self.batch_rows));
        let first_row = self.next_row;
        let start = self.offset_of(first_row);
        if !self.source.move_to(start)? {
            let end = self.source.position();
            let row = end.saturating_sub(self.layout.data_start) / self.row_bytes as u64;
            return Err(truncated(
                &self.source,
                &self.layout,
                self.row_bytes,
                row,
                end,
            ));
        }
        let mut elements = Elements::reuse_or_zeroed(
            self.spare.take(),
            self.layout.element_type,
            rows * self.layout.dimension,
        );
        let got = self.source.read_full(elements.bytes_mut())?;
        let mut rows = rows;
        if got < rows * self.row_bytes {
            // The rows before the end are handed over first, the damage on the next call.
            let complete = got / self.row_bytes;
            let row = first_row + complete as u64;
            let end = self.source.position();
            let damage = truncated(&self.source, &self.layout, self.row_bytes, row, end);
            if complete == 0 {
                return Err(damage);
            }
            self.damage = Some(damage);
            rows = complete;
            elements.truncate(rows * self.layout.dimension);
        }
        if self.layout.swap {
            elements.swap_bytes();
        }
        self.next_row += rows as u64;
        Ok(Some(Batch {
            first_row,
            rows,
            elements,
            validity: None,
            columns: None,
            damaged: Vec::new(),
        }))
    }

    fn recycle(&mut self, elements: Elements) {
        self.spare = Some(elements);
    }
}
