//! The encoded values of a batch and where each row's value lies.

/// The byte layout of an encoded batch's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Every row is this many bytes (element types of one encoded size).
    Fixed(usize),
    /// Row `i` ends at byte `ends[i]` (variable-size element types).
    Variable(Vec<usize>),
}

/// The CQL values of a batch's rows, concatenated, with the batch's validity and passed-through
/// columns. Null rows are encoded as zero vectors here; writers decide what to do with them.
#[derive(Debug, Clone)]
pub struct EncodedBatch {
    /// Absolute index of the first row.
    pub first_row: u64,
    /// Number of rows.
    pub rows: usize,
    /// The values, concatenated.
    pub bytes: Vec<u8>,
    /// Where each row's value lies in `bytes`.
    pub layout: Layout,
    /// Per-row validity (false = null row); None when every row is valid.
    pub validity: Option<Vec<bool>>,
    /// The input's other columns for these rows (Parquet and Arrow inputs).
    pub columns: Option<arrow_array::RecordBatch>,
}

impl EncodedBatch {
    /// Where the value of row `index` (relative to the batch) lies in `bytes`.
    pub(super) fn byte_range(&self, index: usize) -> Option<std::ops::Range<usize>> {
        match &self.layout {
            Layout::Fixed(size) => {
                let start = index.checked_mul(*size)?;
                Some(start..start.checked_add(*size)?)
            }
            Layout::Variable(ends) => {
                let start = match index.checked_sub(1) {
                    None => 0,
                    Some(previous) => *ends.get(previous)?,
                };
                Some(start..*ends.get(index)?)
            }
        }
    }

    /// The value of row `index` (relative to the batch), or an empty slice when out of range.
    pub fn row(&self, index: usize) -> &[u8] {
        self.rows_bytes(index..index.saturating_add(1))
    }

    /// The values of the consecutive rows `rows` (relative to the batch), which are contiguous;
    /// an empty slice when the range is empty or out of range.
    pub fn rows_bytes(&self, rows: std::ops::Range<usize>) -> &[u8] {
        let Some(last) = rows.end.checked_sub(1).filter(|&last| last >= rows.start) else {
            return &[];
        };
        self.byte_range(rows.start)
            .zip(self.byte_range(last))
            .and_then(|(first, last)| self.bytes.get(first.start..last.end))
            .unwrap_or(&[])
    }

    /// Whether row `index` (relative to the batch) is a value rather than null.
    pub fn is_valid(&self, index: usize) -> bool {
        match &self.validity {
            None => true,
            Some(valid) => valid.get(index).copied().unwrap_or(false),
        }
    }
}
