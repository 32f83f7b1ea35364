//! TEXMEX / SIFT files (`.fvecs`, `.ivecs`, `.bvecs`): each row is a little-endian i32 dimension
//! followed by that many f32, i32 or u8 elements. Every row must have the first row's dimension, so
//! rows have a fixed size and a row range is reached by seeking (or skipping, on a stream).

use super::source::Source;
use super::{
    check_shard, row_bytes, rows_per_batch, Batch, BatchReader, ElementType, Elements, InputError,
    InputFormat, InputOptions, RowSelection,
};

/// Bytes of each row's dimension prefix.
const PREFIX_BYTES: usize = 4;

/// Batches of TEXMEX rows.
struct TexmexReader {
    source: Source,
    format: &'static str,
    element_type: ElementType,
    dimension: usize,
    /// Bytes per row, prefix included.
    record_bytes: usize,
    next_row: u64,
    /// First row to read (before the first batch, a stream skips to it).
    start_row: u64,
    /// End of the selection; None = until the stream ends.
    end_row: Option<u64>,
    batch_rows: usize,
    /// Memory of a finished batch, given back by [`BatchReader::recycle`].
    spare: Option<Elements>,
    /// The damage found after the rows of the last batch, reported by the next call.
    damage: Option<InputError>,
}

/// Opens a TEXMEX input; the first row's prefix sets the dimension.
pub(crate) fn open(
    mut source: Source,
    format: InputFormat,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let element_type = format.fixed_element_type().unwrap_or(ElementType::F32);
    let name = format.name();
    let first = source.prefix(PREFIX_BYTES)?;
    let declared = match first[..] {
        [] => None,
        [a, b, c, d] => Some(i32::from_le_bytes([a, b, c, d])),
        _ => {
            return Err(InputError::Data(format!(
                "{}: truncated {name} data: row 0 at byte 0 is incomplete (the input ends at \
                 byte {})",
                source.name(),
                first.len()
            )))
        }
    };
    let dimension = match declared.map(usize::try_from) {
        None => 0,
        Some(Ok(d)) if d > 0 => d,
        Some(_) => {
            return Err(InputError::Data(format!(
                "{}: row 0 at byte 0 declares dimension {} (must be at least 1)",
                source.name(),
                declared.unwrap_or_default()
            )))
        }
    };
    let record_bytes = if dimension == 0 {
        PREFIX_BYTES
    } else {
        PREFIX_BYTES + row_bytes(source.name(), dimension, element_type)?
    };
    // A file whose size is not a whole number of rows has an incomplete (or ragged) last row:
    // count it, so that reading reaches it and reports it.
    let total = source.len().map(|len| len.div_ceil(record_bytes as u64));
    let (start_row, end_row) = match (&options.selection, total) {
        (selection, Some(total)) => {
            let range = super::resolve_selection(selection, total, source.name())?;
            (range.start, Some(range.end))
        }
        (RowSelection::All, None) => (0, None),
        (RowSelection::Range(range), None) => (range.start, Some(range.end)),
        (&RowSelection::Shard { k, n }, None) => {
            check_shard(k, n, source.name())?;
            return Err(InputError::ShardNeedsRowCount {
                input: source.name().to_string(),
                what: format!("a {name} stream"),
                instead: "a file",
            });
        }
    };
    Ok(Box::new(TexmexReader {
        source,
        format: name,
        element_type,
        dimension,
        record_bytes,
        next_row: start_row,
        start_row,
        end_row,
        batch_rows: rows_per_batch(options, record_bytes),
        spare: None,
        damage: None,
    }))
}

impl TexmexReader {
    fn offset_of(&self, row: u64) -> u64 {
        row.saturating_mul(self.record_bytes as u64)
    }

    /// The error for a row range that starts past the end of a stream.
    fn range_past_end(&self) -> InputError {
        InputError::Options(format!(
            "{}: the row range starts at row {} but the input has fewer rows",
            self.source.name(),
            self.start_row
        ))
    }
}

impl BatchReader for TexmexReader {
    fn element_type(&self) -> ElementType {
        self.element_type
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn rows(&self) -> Option<u64> {
        if self.dimension == 0 {
            // Only an empty input has no dimension (a row declares at least 1).
            return Some(0);
        }
        self.end_row
            .filter(|_| self.source.len().is_some())
            .map(|end| end.saturating_sub(self.start_row))
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        if let Some(damage) = self.damage.take() {
            return Err(damage);
        }
        let left = self
            .end_row
            .map_or(u64::MAX, |end| end.saturating_sub(self.next_row));
        if left > 0 && self.dimension == 0 && self.start_row > 0 {
            // An empty stream has no row to start a range at.
            return Err(self.range_past_end());
        }
        if left == 0 || self.dimension == 0 {
            return Ok(None);
        }
        let rows = usize::try_from(left).map_or(self.batch_rows, |l| l.min(self.batch_rows));
        let first_row = self.next_row;
        let start = self.offset_of(first_row);
        let reached = self.source.move_to(start)?;
        let prefix_elements = PREFIX_BYTES / self.element_type.size();
        let record_elements = prefix_elements + self.dimension;
        let mut element_count = rows * record_elements;
        if let Some(len) = self.source.len() {
            // A file: allocate no more than the bytes it has left (a short last row is reported
            // below), so a few corrupt bytes declaring a huge dimension cost no memory.
            let left = len
                .saturating_sub(start)
                .div_ceil(self.element_type.size() as u64);
            element_count = element_count.min(usize::try_from(left).unwrap_or(usize::MAX));
        }
        let mut elements =
            Elements::reuse_or_zeroed(self.spare.take(), self.element_type, element_count);
        let got = if reached {
            self.source.read_full(elements.bytes_mut())?
        } else {
            0
        };
        if got == 0 && first_row == self.start_row && first_row > 0 {
            return Err(self.range_past_end());
        }
        let mut complete = got / self.record_bytes;
        let bytes = elements.bytes_mut();
        let wrong_dimension = bytes
            .get(..got)
            .unwrap_or_default()
            .chunks(self.record_bytes)
            .enumerate()
            .find_map(|(index, record)| match *record {
                [a, b, c, d, ..] => {
                    let declared = i32::from_le_bytes([a, b, c, d]);
                    (usize::try_from(declared).ok() != Some(self.dimension))
                        .then_some((index, declared))
                }
                _ => None,
            });
        if let Some((index, declared)) = wrong_dimension {
            let row = first_row + index as u64;
            complete = index;
            self.damage = Some(InputError::Data(format!(
                "{}: row {row} at byte {} declares dimension {declared}, but row 0 has {}",
                self.source.name(),
                self.offset_of(row),
                self.dimension
            )));
        } else if got % self.record_bytes != 0 {
            let row = first_row + complete as u64;
            self.damage = Some(InputError::Data(format!(
                "{}: truncated {} data: row {row} at byte {} is incomplete (rows are {} bytes; \
                 the input ends at byte {})",
                self.source.name(),
                self.format,
                self.offset_of(row),
                self.record_bytes,
                self.source.position()
            )));
        }
        if complete == 0 {
            // Damage at the batch's first row is reported now; otherwise the rows before it
            // are handed over first and the damage on the next call.
            return self.damage.take().map_or(Ok(None), Err);
        }
        if complete < rows {
            // The stream ended: nothing more after this batch.
            self.end_row = Some(first_row + complete as u64);
            elements.truncate(complete * record_elements);
        }
        elements.strip_record_prefixes(prefix_elements, self.dimension);
        if cfg!(target_endian = "big") && self.element_type.size() > 1 {
            elements.swap_bytes();
        }
        self.next_row += complete as u64;
        Ok(Some(Batch {
            first_row,
            rows: complete,
            elements,
            validity: None,
            columns: None,
            damaged: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fvecs(rows: &[&[f32]]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for row in rows {
            bytes.extend_from_slice(&(row.len() as i32).to_le_bytes());
            for v in *row {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        bytes
    }

    fn read(bytes: Vec<u8>, selection: RowSelection) -> Result<Vec<(u64, Vec<f64>)>, InputError> {
        let options = InputOptions {
            format: Some(InputFormat::Fvecs),
            column: None,
            dataset: "train".to_string(),
            selection,
            batch_rows: 2,
            vectors_optional: false,
        };
        let source = Source::from_stream("t", Box::new(std::io::Cursor::new(bytes)));
        let mut reader = open(source, InputFormat::Fvecs, &options)?;
        let mut rows = Vec::new();
        while let Some(batch) = reader.next_batch()? {
            rows.push((batch.first_row, batch.elements.to_f64()));
        }
        Ok(rows)
    }

    #[test]
    fn rows_lose_their_prefixes() {
        let bytes = fvecs(&[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]);
        let rows = read(bytes.clone(), RowSelection::All).unwrap();
        assert_eq!(rows, [(0, vec![1.0, 2.0, 3.0, 4.0]), (2, vec![5.0, 6.0])]);
        let rows = read(bytes, RowSelection::Range(1..2)).unwrap();
        assert_eq!(rows, [(1, vec![3.0, 4.0])]);
    }

    #[test]
    fn bad_rows_are_named() {
        let ragged = fvecs(&[&[1.0, 2.0], &[3.0]]);
        let error = read(ragged, RowSelection::All).unwrap_err().to_string();
        assert!(error.contains("row 1 at byte 12"), "{error}");
        let mut cut = fvecs(&[&[1.0, 2.0], &[3.0, 4.0]]);
        cut.truncate(17);
        let error = read(cut, RowSelection::All).unwrap_err().to_string();
        assert!(error.contains("row 1 at byte 12 is incomplete"), "{error}");
        let negative = (-3i32).to_le_bytes().to_vec();
        assert!(read(negative, RowSelection::All).is_err());
        assert!(read(fvecs(&[&[1.0]]), RowSelection::Range(5..6)).is_err());
        assert_eq!(read(Vec::new(), RowSelection::All).unwrap(), []);
    }
}
