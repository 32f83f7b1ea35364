//! Ground truth of nearest-neighbour benchmarks: for each query, the ids (row numbers of the
//! training set) of its nearest rows, best first.
//!
//! Formats: TEXMEX `.ivecs` (SIFT, GIST), an integer `.npy` (rows × k), big-ann-benchmarks'
//! binary ground truth (`u32 n, u32 k`, then `n·k` `u32` ids and `n·k` `f32` distances,
//! little-endian), VectorDBBench's Parquet (`neighbors.parquet`: a list-of-integers column,
//! `neighbors_id`, one row per query, beside the query's `id`), and an ann-benchmarks HDF5 file's
//! `neighbors` dataset. Every length a file claims is checked against its size (or, for a stream,
//! against the bytes that really arrive) before memory is set aside for it.

mod parquet;

use super::npy;
use super::source::Source;
use super::{
    open_source, BatchReader, Elements, InputError, InputFormat, InputOptions, RowSelection,
};
use std::io;
use std::path::Path;

/// The column of the neighbour lists in a Parquet ground truth (VectorDBBench's name).
pub const PARQUET_COLUMN: &str = "neighbors_id";

/// The dataset of the neighbour lists in an HDF5 file (ann-benchmarks' name).
pub const HDF5_DATASET: &str = "neighbors";

/// Ids per read of the big-ann-benchmarks layout (256 KiB).
const CHUNK_IDS: usize = 64 << 10;

/// The neighbour lists of a query set: `rows` lists of `k` ids each, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbors {
    rows: usize,
    k: usize,
    ids: Vec<i64>,
    /// The query row of the first list: the rows before it have none.
    first: usize,
}

impl Neighbors {
    /// `rows` lists of `k` ids, row-major; `None` unless `ids` has exactly `rows × k` ids.
    pub fn new(rows: usize, k: usize, ids: Vec<i64>) -> Option<Neighbors> {
        (rows.checked_mul(k) == Some(ids.len())).then_some(Neighbors {
            rows,
            k,
            ids,
            first: 0,
        })
    }

    /// The same lists for query rows `first..`: the lists of the queries of an input from row
    /// `first` on, indexed by their row numbers in the input.
    pub fn starting_at(self, first: usize) -> Neighbors {
        Neighbors { first, ..self }
    }

    /// Number of query rows the lists cover: one past the last row with a list.
    pub fn rows(&self) -> usize {
        self.first.saturating_add(self.rows)
    }

    /// Ids per list.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The list of query `row`, best first (empty before the first row with a list and past the
    /// end).
    pub fn row(&self, row: usize) -> &[i64] {
        let Some(row) = row.checked_sub(self.first) else {
            return &[];
        };
        let start = row.saturating_mul(self.k);
        self.ids
            .get(start..start.saturating_add(self.k))
            .unwrap_or(&[])
    }
}

/// A ground-truth file layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NeighborsFormat {
    /// TEXMEX int32 vectors, one list per row.
    Ivecs,
    /// A 2-D integer NumPy array, one list per row.
    Npy,
    /// big-ann-benchmarks: `u32 n, u32 k, u32 ids[n·k], f32 distances[n·k]`.
    BigAnn,
    /// Parquet, one list of integer ids per row in the column `neighbors_id` (VectorDBBench's
    /// layout), read through the Parquet input.
    Parquet,
    /// HDF5, the 2-D integer dataset `neighbors` (ann-benchmarks' layout); a file only.
    Hdf5,
}

impl NeighborsFormat {
    /// The layout a file name implies: `.ivecs`, `.npy`, `.parquet`, `.hdf5`/`.h5`, else
    /// big-ann-benchmarks' (whose files have no settled extension).
    pub fn from_path(path: &Path) -> NeighborsFormat {
        match InputFormat::from_extension(path) {
            Some(InputFormat::Ivecs) => NeighborsFormat::Ivecs,
            Some(InputFormat::Npy) => NeighborsFormat::Npy,
            Some(InputFormat::Parquet) => NeighborsFormat::Parquet,
            Some(InputFormat::Hdf5) => NeighborsFormat::Hdf5,
            _ => NeighborsFormat::BigAnn,
        }
    }
}

/// Reads the ground truth in `path`, in `format` or the one its name implies, whole lists.
pub fn read_neighbors(
    path: &Path,
    format: Option<NeighborsFormat>,
) -> Result<Neighbors, InputError> {
    read_neighbors_to(path, format, usize::MAX)
}

/// Reads the ground truth in `path`, in `format` or the one its name implies, keeping the first
/// `k` ids of each list (`usize::MAX`: all of them): memory follows rows × k and a fixed chunk
/// (a Parquet page, a batch of an HDF5 dataset), whatever width the file claims. The ids past k
/// are counted or skipped, not read. Lists shorter than k are kept whole; all the lists kept
/// must be of one length (the error names the first row that is not).
pub fn read_neighbors_to(
    path: &Path,
    format: Option<NeighborsFormat>,
    k: usize,
) -> Result<Neighbors, InputError> {
    let format = format.unwrap_or_else(|| NeighborsFormat::from_path(path));
    if format == NeighborsFormat::Hdf5 {
        return hdf5_neighbors(path, k);
    }
    neighbors_from(Source::open(Some(path))?, format, k)
}

/// The [`HDF5_DATASET`] of the HDF5 file at `path`, to `k` ids per row.
fn hdf5_neighbors(path: &Path, k: usize) -> Result<Neighbors, InputError> {
    let dataset = super::hdf5::read_id_dataset(path, HDF5_DATASET, k)?;
    Neighbors::new(dataset.rows, dataset.columns, dataset.values).ok_or_else(|| {
        InputError::Data(format!(
            "{}: the {HDF5_DATASET} dataset does not hold whole rows",
            path.display()
        ))
    })
}

/// Reads ground truth from a stream read forward only (`name` stands for it in messages).
pub fn read_neighbors_stream(
    name: &str,
    stream: Box<dyn io::Read + Send>,
    format: NeighborsFormat,
) -> Result<Neighbors, InputError> {
    read_neighbors_stream_to(name, stream, format, usize::MAX)
}

/// [`read_neighbors_to`] on a stream read forward only (`name` stands for it in messages): the
/// ids past k are read and dropped (a Parquet stream is first copied to a temporary file).
pub fn read_neighbors_stream_to(
    name: &str,
    stream: Box<dyn io::Read + Send>,
    format: NeighborsFormat,
    k: usize,
) -> Result<Neighbors, InputError> {
    neighbors_from(Source::from_stream(name, stream), format, k)
}

/// Neighbour lists as they are read, each cut to `keep` ids: every row's kept ids must be as
/// many as the first row's.
pub(super) struct Lists {
    name: String,
    keep: usize,
    ids: Vec<i64>,
    rows: usize,
    /// Ids kept per row, set by the first row.
    width: Option<usize>,
    /// Ids kept of the row being read.
    current: usize,
}

impl Lists {
    pub(super) fn new(name: &str, keep: usize) -> Lists {
        Lists {
            name: name.to_owned(),
            keep,
            ids: Vec::new(),
            rows: 0,
            width: None,
            current: 0,
        }
    }

    /// Rows ended so far.
    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// Adds an id to the row being read (the caller keeps at most `keep` per row).
    pub(super) fn push(&mut self, id: i64) {
        self.ids.push(id);
        self.current += 1;
    }

    /// Ends the row being read, refusing one of another length than the first.
    pub(super) fn end_row(&mut self) -> Result<(), InputError> {
        let kept = std::mem::take(&mut self.current);
        let width = *self.width.get_or_insert(kept);
        if kept != width {
            let rule = if self.keep == usize::MAX {
                "the lists must all be of one length".to_owned()
            } else {
                format!(
                    "the lists are read to k = {} ids and must all be of one length up to there",
                    self.keep
                )
            };
            return Err(InputError::Data(format!(
                "{}: row {} holds {kept} ids where row 0 holds {width} ({rule})",
                self.name, self.rows
            )));
        }
        self.rows += 1;
        Ok(())
    }

    fn into_neighbors(self) -> Result<Neighbors, InputError> {
        let (rows, width) = (self.rows, self.width.unwrap_or(0));
        Neighbors::new(rows, width, self.ids).ok_or_else(|| {
            InputError::Data(format!(
                "{}: {rows} lists of {width} ids are incomplete",
                self.name
            ))
        })
    }
}

fn neighbors_from(
    source: Source,
    format: NeighborsFormat,
    k: usize,
) -> Result<Neighbors, InputError> {
    let (input, column) = match format {
        NeighborsFormat::BigAnn => return big_ann(source, k),
        NeighborsFormat::Ivecs => return ivecs(source, k),
        NeighborsFormat::Hdf5 => {
            return Err(InputError::Unsupported(format!(
                "{}: HDF5 ground truth is read from a file, not a stream",
                source.name()
            )))
        }
        NeighborsFormat::Npy => (InputFormat::Npy, None),
        NeighborsFormat::Parquet => (InputFormat::Parquet, Some(PARQUET_COLUMN.to_owned())),
    };
    let options = InputOptions {
        format: Some(input),
        column,
        selection: RowSelection::All,
        batch_rows: 4096,
        dataset: String::new(),
        vectors_optional: false,
    };
    let name = source.name().to_owned();
    if input == InputFormat::Parquet {
        let file = source.into_file()?;
        let again = file.try_clone().map_err(|source| InputError::Io {
            input: name.clone(),
            source,
        })?;
        return match parquet::read(&name, file, PARQUET_COLUMN, k)? {
            parquet::Read::Lists(lists) => lists.into_neighbors(),
            // An encoding not decoded there: whole rows through the Parquet input.
            parquet::Read::Elsewhere => {
                let source = Source::from_file(&name, again)?;
                integer_rows(&name, open_source(source, Some(input), &options)?, k)
            }
        };
    }
    let mut source = source;
    let (header, data_start) = npy::read_header(&mut source)?;
    if let Some((width, signed, big_endian)) = integer_descr(&header.descr) {
        let flat = header.shape.len() == 2
            && !(header.fortran_order && header.shape.iter().all(|&n| n > 1));
        if flat {
            return integer_npy(source, &header, width, signed, big_endian, k);
        }
        if !signed && width > 1 {
            return Err(InputError::Unsupported(format!(
                "{name}: ground truth of unsigned ids must be a 2-D array in C order \
                 (numpy.ascontiguousarray)"
            )));
        }
    }
    let reader =
        npy::open_after_header(source, header, data_start, &options).map_err(
            |error| match error {
                InputError::Unsupported(message) if message.contains("unsupported NPY dtype") => {
                    InputError::Unsupported(format!(
                        "{name}: ground truth holds integer ids: an .npy of dtype {} cannot \
                     (integer dtypes: i1 u1 i2 u2 i4 u4 i8 u8, either byte order)",
                        message.split('\'').nth(1).unwrap_or("?")
                    ))
                }
                other => other,
            },
        )?;
    integer_rows(&name, reader, k)
}

/// The width in bytes, signedness and byte order (big-endian: true) of an integer NPY `descr`.
fn integer_descr(descr: &str) -> Option<(usize, bool, bool)> {
    let (order, code) = descr.split_at_checked(1)?;
    let (signed, width) = match code {
        "i1" => (true, 1),
        "u1" => (false, 1),
        "i2" => (true, 2),
        "u2" => (false, 2),
        "i4" => (true, 4),
        "u4" => (false, 4),
        "i8" => (true, 8),
        "u8" => (false, 8),
        _ => return None,
    };
    match order {
        "<" => Some((width, signed, false)),
        ">" => Some((width, signed, true)),
        "|" | "=" if width == 1 => Some((width, signed, false)),
        "=" => Some((width, signed, cfg!(target_endian = "big"))),
        _ => None,
    }
}

/// An id from its `width` bytes.
fn integer_id(element: &[u8], width: usize, signed: bool, big_endian: bool) -> Result<i64, u64> {
    let mut wide = [0u8; 8];
    let value = if big_endian {
        wide[8 - width..].copy_from_slice(element);
        u64::from_be_bytes(wide)
    } else {
        wide[..width].copy_from_slice(element);
        u64::from_le_bytes(wide)
    };
    if signed {
        // Sign-extends from `width` bytes.
        let shift = 64 - 8 * width as u32;
        return Ok(((value << shift) as i64) >> shift);
    }
    i64::try_from(value).map_err(|_| value)
}

/// A 2-D `.npy` of integers of `width` bytes, read to `k` ids per row (the rest skipped): the
/// shape is checked against the file's size (or, for a stream, against the bytes that arrive)
/// before memory is set aside for it.
fn integer_npy(
    mut source: Source,
    header: &npy::Header,
    width: usize,
    signed: bool,
    big_endian: bool,
    k: usize,
) -> Result<Neighbors, InputError> {
    let name = source.name().to_owned();
    let [rows, columns] = header.shape[..] else {
        return Err(InputError::Unsupported(format!(
            "{name}: NPY array of shape {} is not 2-D (queries, k)",
            npy::shape_text(&header.shape)
        )));
    };
    let count = u128::from(rows) * u128::from(columns);
    let bytes = count * width as u128;
    if let Some(len) = source.len() {
        let data = u128::from(len).saturating_sub(u128::from(source.position()));
        if data != bytes {
            return Err(InputError::Data(format!(
                "{name}: the header says {rows} x {columns} ids ({bytes} bytes), but {data} bytes \
                 follow it"
            )));
        }
    }
    let claim = format!("the header says {rows} x {columns} ids");
    let ids = read_rows(
        &mut source,
        rows,
        columns,
        width,
        k,
        &claim,
        |element, row| {
            integer_id(element, width, signed, big_endian).map_err(|id| {
                InputError::Data(format!("{name}: id {id} at list {row} is above 2^63 - 1"))
            })
        },
    )?;
    if source.len().is_none() && source.read_full(&mut [0u8; 1])? != 0 {
        return Err(InputError::Data(format!(
            "{name}: bytes after the {rows} x {columns} ids"
        )));
    }
    ids.into_neighbors()
}

/// Reads `rows` rows of `columns` ids of `width` bytes, keeping the first `keep` of each and
/// skipping the rest (a seek in a file, read and dropped from a stream), [`CHUNK_IDS`] at a time.
/// Each id is made by `id` (given its bytes and its row, and free to refuse it). A stream that ends
/// early is an error quoting `claim`.
fn read_rows(
    source: &mut Source,
    rows: u64,
    columns: u64,
    width: usize,
    keep: usize,
    claim: &str,
    mut id: impl FnMut(&[u8], u64) -> Result<i64, InputError>,
) -> Result<Lists, InputError> {
    let name = source.name().to_owned();
    let kept = columns.min(keep as u64);
    let mut lists = Lists::new(&name, keep);
    lists.width = Some(kept as usize);
    let truncated = |source: &Source| {
        InputError::Data(format!(
            "{name}: truncated at byte {}: {claim}",
            source.position()
        ))
    };
    if kept == 0 {
        // No id is read: the rows are counted, their bytes skipped at once.
        let all = u128::from(rows) * u128::from(columns) * width as u128;
        let to = u64::try_from(u128::from(source.position()) + all).ok();
        if !to.is_some_and(|to| source.move_to(to).unwrap_or(false)) {
            return Err(truncated(source));
        }
        let Ok(rows) = usize::try_from(rows) else {
            return Err(InputError::Unsupported(format!(
                "{name}: {claim}: more lists than fit in memory here"
            )));
        };
        lists.rows = rows;
        lists.width = Some(0);
        return Ok(lists);
    }
    let mut chunk = vec![0u8; CHUNK_IDS.min(kept as usize) * width];
    let skip = u128::from(columns - kept) * width as u128;
    for row in 0..rows {
        let mut left = kept;
        while left > 0 {
            let take = left.min(CHUNK_IDS as u64) as usize * width;
            let Some(buffer) = chunk.get_mut(..take) else {
                break;
            };
            if source.read_full(buffer)? < take {
                return Err(truncated(source));
            }
            for element in buffer.chunks_exact(width) {
                let value = id(element, row)?;
                lists.push(value);
            }
            left -= (take / width) as u64;
        }
        if skip > 0 {
            let Some(to) = u64::try_from(u128::from(source.position()) + skip).ok() else {
                return Err(truncated(source));
            };
            if !source.move_to(to)? {
                return Err(truncated(source));
            }
        }
        lists.end_row()?;
    }
    Ok(lists)
}

/// TEXMEX `.ivecs`: per row a little-endian i32 length, then that many i32 ids; each row read to
/// `k` ids, the rest skipped.
fn ivecs(mut source: Source, k: usize) -> Result<Neighbors, InputError> {
    let name = source.name().to_owned();
    let mut lists = Lists::new(&name, k);
    let mut ids = vec![0u8; 0];
    loop {
        let start = source.position();
        let mut prefix = [0u8; 4];
        match source.read_full(&mut prefix)? {
            0 => break,
            4 => {}
            _ => {
                return Err(InputError::Data(format!(
                    "{name}: truncated at byte {start}: row {} has a partial length",
                    lists.rows()
                )))
            }
        }
        let row = lists.rows();
        let Ok(length) = u64::try_from(i32::from_le_bytes(prefix)) else {
            return Err(InputError::Data(format!(
                "{name}: row {row} claims a negative length ({})",
                i32::from_le_bytes(prefix)
            )));
        };
        let bytes = length * 4;
        if let Some(len) = source.len() {
            if source.position() + bytes > len {
                return Err(InputError::Data(format!(
                    "{name}: row {row} at byte {start} claims {length} ids, more than the file \
                     holds"
                )));
            }
        }
        let kept = length.min(k as u64);
        let mut left = kept;
        while left > 0 {
            let take = left.min(CHUNK_IDS as u64) as usize * 4;
            ids.resize(take, 0);
            if source.read_full(&mut ids)? < take {
                return Err(InputError::Data(format!(
                    "{name}: truncated at byte {}: row {row} claims {length} ids",
                    source.position()
                )));
            }
            for id in ids.chunks_exact(4) {
                lists.push(i64::from(i32::from_le_bytes([id[0], id[1], id[2], id[3]])));
            }
            left -= (take / 4) as u64;
        }
        let end = source.position() + (length - kept) * 4;
        if !source.move_to(end)? {
            return Err(InputError::Data(format!(
                "{name}: truncated at byte {}: row {row} claims {length} ids",
                source.position()
            )));
        }
        lists.end_row()?;
    }
    lists.into_neighbors()
}

/// Every row of an integer input as one neighbour list, cut to `keep` ids.
fn integer_rows(
    name: &str,
    mut reader: Box<dyn BatchReader>,
    keep: usize,
) -> Result<Neighbors, InputError> {
    let dimension = reader.dimension();
    let kept = dimension.min(keep);
    let mut ids: Vec<i64> = Vec::new();
    let mut rows = 0usize;
    while let Some(batch) = reader.next_batch()? {
        if batch.validity.is_some()
            || Some(batch.elements.len()) != batch.rows.checked_mul(dimension)
        {
            return Err(InputError::Data(format!(
                "{name}: row {} is not a list of {dimension} ids",
                batch.first_row
            )));
        }
        for row in 0..batch.rows {
            let range = row * dimension..row * dimension + kept;
            match &batch.elements {
                Elements::I8(v) => ids.extend(v[range].iter().map(|&x| i64::from(x))),
                Elements::U8(v) => ids.extend(v[range].iter().map(|&x| i64::from(x))),
                Elements::I16(v) => ids.extend(v[range].iter().map(|&x| i64::from(x))),
                Elements::I32(v) => ids.extend(v[range].iter().map(|&x| i64::from(x))),
                Elements::I64(v) => ids.extend_from_slice(&v[range]),
                Elements::F16(_) | Elements::F32(_) | Elements::F64(_) => {
                    return Err(InputError::Unsupported(format!(
                        "{name}: ground truth holds integer ids, not {} numbers",
                        batch.elements.element_type().name()
                    )))
                }
            }
        }
        rows += batch.rows;
    }
    Neighbors::new(rows, kept, ids)
        .ok_or_else(|| InputError::Data(format!("{name}: rows of unequal length")))
}

/// The big-ann-benchmarks layout, read to `keep` ids per list. With a file, the header must match
/// the file's size exactly; with a stream, ids are kept only as they arrive and the end must come
/// where the header says.
fn big_ann(mut source: Source, keep: usize) -> Result<Neighbors, InputError> {
    let name = source.name().to_owned();
    let mut header = [0u8; 8];
    if source.read_full(&mut header)? < header.len() {
        return Err(InputError::Data(format!(
            "{name}: shorter than the 8-byte header of a big-ann-benchmarks ground truth"
        )));
    }
    let [a, b, c, d, e, f, g, h] = header;
    let n = u32::from_le_bytes([a, b, c, d]);
    let k = u32::from_le_bytes([e, f, g, h]);
    let pairs = u64::from(n) * u64::from(k);
    // Ids and distances, 4 bytes each: at most 2^67 bytes, no overflow in u128.
    let expected = 8u128 + u128::from(pairs) * 8;
    if let Some(len) = source.len() {
        if u128::from(len) != expected {
            return Err(InputError::Data(format!(
                "{name}: the header says {n} lists of {k} neighbours ({expected} bytes), but the \
                 file has {len} bytes"
            )));
        }
    }
    let claim = format!("the header says {n} lists of {k} neighbours");
    let lists = read_rows(
        &mut source,
        u64::from(n),
        u64::from(k),
        4,
        keep,
        &claim,
        |id, _| Ok(i64::from(u32::from_le_bytes([id[0], id[1], id[2], id[3]]))),
    )?;
    // The distances follow; only their length matters (already checked for a file).
    if source.len().is_none() {
        let end = 8 + pairs * 8;
        if !source.move_to(end)? {
            return Err(InputError::Data(format!(
                "{name}: truncated at byte {}: the distances end early",
                source.position()
            )));
        }
        if source.read_full(&mut [0u8; 1])? != 0 {
            return Err(InputError::Data(format!(
                "{name}: bytes after the {n} lists of {k} neighbours and their distances"
            )));
        }
    }
    lists.into_neighbors()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn big_ann_bytes(n: u32, k: u32, ids: &[u32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&n.to_le_bytes());
        bytes.extend_from_slice(&k.to_le_bytes());
        for id in ids {
            bytes.extend_from_slice(&id.to_le_bytes());
        }
        for i in 0..ids.len() {
            bytes.extend_from_slice(&(i as f32).to_le_bytes());
        }
        bytes
    }

    fn from_stream(bytes: Vec<u8>, format: NeighborsFormat) -> Result<Neighbors, InputError> {
        read_neighbors_stream("truth", Box::new(Cursor::new(bytes)), format)
    }

    fn from_file(bytes: &[u8], name: &str) -> Result<Neighbors, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        read_neighbors(&path, None)
    }

    #[test]
    fn big_ann_ground_truth_reads_as_lists_from_a_file_and_a_stream() {
        let bytes = big_ann_bytes(2, 3, &[5, 1, 9, 0, 7, 4_000_000_000]);
        for truth in [
            from_file(&bytes, "gt.bin").unwrap(),
            from_stream(bytes, NeighborsFormat::BigAnn).unwrap(),
        ] {
            assert_eq!((truth.rows(), truth.k()), (2, 3));
            assert_eq!(truth.row(0), [5, 1, 9]);
            assert_eq!(truth.row(1), [0, 7, 4_000_000_000]);
            assert!(truth.row(2).is_empty());
        }
    }

    #[test]
    fn lists_starting_at_a_row_are_indexed_by_query_number() {
        let lists = Neighbors::new(2, 3, vec![5, 1, 9, 0, 7, 4]).unwrap();
        let shifted = lists.clone().starting_at(1_000_000_000);
        assert_eq!(shifted.rows(), 1_000_000_002);
        assert!(shifted.row(0).is_empty() && shifted.row(999_999_999).is_empty());
        assert_eq!(shifted.row(1_000_000_000), lists.row(0));
        assert_eq!(shifted.row(1_000_000_001), lists.row(1));
        assert!(shifted.row(1_000_000_002).is_empty());
        assert_eq!(lists.clone().starting_at(0), lists);
    }

    #[test]
    fn hostile_big_ann_headers_are_refused_before_allocating() {
        // Claims of 2^64 ids with a few bytes behind them.
        let huge = big_ann_bytes(u32::MAX, u32::MAX, &[1, 2]);
        let error = from_file(&huge, "gt.bin").unwrap_err().to_string();
        assert!(error.contains("the header says"), "{error}");
        let error = from_stream(huge, NeighborsFormat::BigAnn)
            .unwrap_err()
            .to_string();
        assert!(error.contains("truncated"), "{error}");
        for bytes in [vec![1, 0, 0], big_ann_bytes(1, 2, &[1])] {
            assert!(from_file(&bytes, "gt.bin").is_err());
            assert!(from_stream(bytes, NeighborsFormat::BigAnn).is_err());
        }
        let mut long = big_ann_bytes(1, 1, &[3]);
        long.push(0);
        assert!(from_file(&long, "gt.bin").is_err());
        let error = from_stream(long, NeighborsFormat::BigAnn)
            .unwrap_err()
            .to_string();
        assert!(error.contains("bytes after"), "{error}");
        // No lists at all is a valid, empty ground truth.
        let empty = from_file(&big_ann_bytes(0, 10, &[]), "gt.bin").unwrap();
        assert_eq!((empty.rows(), empty.k()), (0, 10));
    }

    #[test]
    fn ivecs_ground_truth_reads_each_row_as_a_list() {
        let mut bytes = Vec::new();
        for row in [[3i32, 1], [2, 8]] {
            bytes.extend_from_slice(&2i32.to_le_bytes());
            for id in row {
                bytes.extend_from_slice(&id.to_le_bytes());
            }
        }
        let truth = from_file(&bytes, "gt.ivecs").unwrap();
        assert_eq!((truth.rows(), truth.k(), truth.row(1)), (2, 2, &[2, 8][..]));
        // A row whose length prefix claims more ids than the file holds.
        bytes[8 + 4..8 + 8].copy_from_slice(&1_000_000_000i32.to_le_bytes());
        assert!(from_file(&bytes, "gt.ivecs").is_err());
    }

    /// A Parquet file of an `id` column and a list column `name` of `lists` (of int64, or float32
    /// when `float`).
    fn parquet_bytes(name: &str, lists: &[Vec<i64>], float: bool) -> Vec<u8> {
        use arrow_array::{ArrayRef, Float32Array, Int64Array, ListArray, RecordBatch};
        use arrow_buffer::OffsetBuffer;
        use arrow_schema::{DataType, Field};
        use std::sync::Arc;
        let element = if float {
            DataType::Float32
        } else {
            DataType::Int64
        };
        let item = Arc::new(Field::new("item", element, true));
        let flat = lists.iter().flatten().copied();
        let values: ArrayRef = if float {
            Arc::new(Float32Array::from_iter_values(flat.map(|x| x as f32)))
        } else {
            Arc::new(Int64Array::from_iter_values(flat))
        };
        let offsets = OffsetBuffer::from_lengths(lists.iter().map(Vec::len));
        let column = ListArray::new(item, offsets, values, None);
        let ids = Int64Array::from_iter_values(0..lists.len() as i64);
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            (name, Arc::new(column)),
        ])
        .unwrap();
        batch_bytes(&batch)
    }

    /// `batch` as a Parquet file's bytes.
    fn batch_bytes(batch: &arrow_array::RecordBatch) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut writer =
            ::parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        bytes
    }

    #[test]
    fn parquet_ground_truth_reads_the_neighbors_id_column() {
        let lists = vec![vec![4, 2, 9], vec![0, 1, 7_000_000_000]];
        let bytes = parquet_bytes("neighbors_id", &lists, false);
        for truth in [
            from_file(&bytes, "neighbors.parquet").unwrap(),
            from_stream(bytes, NeighborsFormat::Parquet).unwrap(),
        ] {
            assert_eq!((truth.rows(), truth.k()), (2, 3));
            assert_eq!(truth.row(0), [4, 2, 9]);
            assert_eq!(truth.row(1), [0, 1, 7_000_000_000]);
        }
    }

    #[test]
    fn parquet_ground_truth_of_the_wrong_shape_is_refused_in_one_line() {
        let cases = [
            (
                parquet_bytes("neighbors", &[vec![1]], false),
                "no column 'neighbors_id'",
            ),
            (
                parquet_bytes("neighbors_id", &[vec![1]], true),
                "integer ids",
            ),
            (
                parquet_bytes("neighbors_id", &[vec![1, 2], vec![3]], false),
                "row 1 holds 1 ids where row 0 holds 2 (the lists must all be of one length)",
            ),
            (b"PAR1 not really".to_vec(), "not a readable Parquet file"),
        ];
        for (bytes, expected) in cases {
            let error = from_file(&bytes, "neighbors.parquet")
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected) && !error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn float_npy_is_not_ground_truth() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{header:<117}\n");
        bytes.extend_from_slice(&(padded.len() as u16).to_le_bytes());
        bytes.extend_from_slice(padded.as_bytes());
        bytes.extend_from_slice(&[0u8; 8]);
        let error = from_file(&bytes, "gt.npy").unwrap_err().to_string();
        assert!(error.contains("integer ids"), "{error}");
        let int_header = header.replace("<f4", "<i8").replace("(1, 2)", "(1, 1)");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{int_header:<117}\n");
        bytes.extend_from_slice(&(padded.len() as u16).to_le_bytes());
        bytes.extend_from_slice(padded.as_bytes());
        bytes.extend_from_slice(&42i64.to_le_bytes());
        assert_eq!(from_file(&bytes, "gt.npy").unwrap().row(0), [42]);
    }

    #[test]
    fn unsigned_npy_ground_truth_reads_as_the_same_lists() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/search");
        let signed = read_neighbors(&fixtures.join("neighbors_euclidean.npy"), None).unwrap();
        for width in ["u2", "u4", "u8"] {
            let path = fixtures.join(format!("neighbors_euclidean_{width}.npy"));
            assert_eq!(read_neighbors(&path, None).unwrap(), signed, "{width}");
            let stream = Box::new(std::fs::File::open(&path).unwrap());
            let streamed = read_neighbors_stream("gt", stream, NeighborsFormat::Npy).unwrap();
            assert_eq!(streamed, signed, "{width} as a stream");
        }
    }

    #[test]
    fn unsigned_ids_above_i64_and_lying_shapes_are_refused() {
        let npy = |descr: &str, shape: &str, data: &[u8]| {
            let header =
                format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            let padded = format!("{header:<117}\n");
            bytes.extend_from_slice(&(padded.len() as u16).to_le_bytes());
            bytes.extend_from_slice(padded.as_bytes());
            bytes.extend_from_slice(data);
            bytes
        };
        let above = npy("<u8", "(1, 1)", &(1u64 << 63).to_le_bytes());
        let error = from_file(&above, "gt.npy").unwrap_err().to_string();
        assert!(error.contains("above 2^63 - 1"), "{error}");
        let lying = npy(">u4", "(1000000, 1000000)", &[0u8; 8]);
        let error = from_file(&lying, "gt.npy").unwrap_err().to_string();
        assert!(error.contains("bytes follow it"), "{error}");
        let error = from_stream(lying, NeighborsFormat::Npy)
            .unwrap_err()
            .to_string();
        assert!(error.contains("truncated"), "{error}");
        let complex = npy("<c8", "(1, 1)", &[0u8; 8]);
        let error = from_file(&complex, "gt.npy").unwrap_err().to_string();
        assert!(error.contains("dtype <c8 cannot"), "{error}");
        assert!(!error.contains("<f4"), "{error}");
    }

    #[test]
    fn an_hdf5_ground_truth_is_its_neighbors_dataset_and_needs_a_file() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/hdf5/ann.hdf5");
        assert_eq!(NeighborsFormat::from_path(&path), NeighborsFormat::Hdf5);
        let read = read_neighbors(&path, None).unwrap();
        // NumPy's big-endian int32 bytes of the same dataset, written by fixtures/hdf5/generate.py.
        let expected: Vec<i64> = std::fs::read(path.with_file_name("expected/ann-neighbors.bin"))
            .unwrap()
            .chunks_exact(4)
            .map(|b| i64::from(i32::from_be_bytes(b.try_into().unwrap())))
            .collect();
        assert_eq!(read.k(), 10);
        assert_eq!(read.rows() * read.k(), expected.len());
        let lists: Vec<i64> = (0..read.rows())
            .flat_map(|row| read.row(row).to_vec())
            .collect();
        assert_eq!(lists, expected);
        let bytes = std::fs::read(&path).unwrap();
        let error = from_stream(bytes, NeighborsFormat::Hdf5).unwrap_err();
        assert!(
            error.to_string().contains("from a file, not a stream"),
            "{error}"
        );
        // A file without the dataset is refused, naming what it looked for.
        let other = path.with_file_name("types.hdf5");
        let error = read_neighbors(&other, Some(NeighborsFormat::Hdf5)).unwrap_err();
        assert!(error.to_string().contains("neighbors"), "{error}");
    }

    /// A file of `fixtures/search/`.
    fn search_fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/search")
            .join(name)
    }

    /// The first `k` ids of each list of `lists`.
    fn first(lists: &Neighbors, k: usize) -> Vec<Vec<i64>> {
        (0..lists.rows())
            .map(|row| lists.row(row).iter().take(k).copied().collect())
            .collect()
    }

    /// Each list of `lists`.
    fn all(lists: &Neighbors) -> Vec<Vec<i64>> {
        first(lists, usize::MAX)
    }

    #[test]
    fn parquet_and_hdf5_ground_truth_of_unsigned_ids_reads_as_the_npy_lists() {
        let numpy = read_neighbors(&search_fixture("neighbors_euclidean.npy"), None).unwrap();
        assert_eq!((numpy.rows(), numpy.k()), (40, 100));
        for name in [
            "neighbors_euclidean.parquet",
            "neighbors_euclidean_uint32.parquet",
            "neighbors_euclidean_uint64.parquet",
            "neighbors_euclidean_uint32.hdf5",
            "neighbors_euclidean_uint64.hdf5",
        ] {
            let read = read_neighbors(&search_fixture(name), None).unwrap();
            assert_eq!(read, numpy, "{name}");
        }
    }

    #[test]
    fn unsigned_ids_above_i64_are_refused_naming_the_row() {
        for name in ["neighbors_above_i64.parquet", "neighbors_above_i64.hdf5"] {
            let path = search_fixture(name);
            let error = read_neighbors(&path, None).unwrap_err().to_string();
            assert!(
                error.contains("id 9223372036854775808 in row 1")
                    && error.contains("above 2^63 - 1")
                    && error.contains(name)
                    && !error.contains('\n'),
                "{error}"
            );
            // Past k, the id is not read.
            let cut = read_neighbors_to(&path, None, 4).unwrap();
            assert_eq!((cut.rows(), cut.k()), (3, 4), "{name}");
        }
    }

    #[test]
    fn every_layout_read_to_k_keeps_the_first_k_ids_of_each_list() {
        let numpy = read_neighbors(&search_fixture("neighbors_euclidean.npy"), None).unwrap();
        let expected = first(&numpy, 7);
        let files = [
            ("neighbors_euclidean.npy", NeighborsFormat::Npy),
            ("neighbors_euclidean_u2.npy", NeighborsFormat::Npy),
            ("neighbors_euclidean_u4.npy", NeighborsFormat::Npy),
            ("neighbors_euclidean_u8.npy", NeighborsFormat::Npy),
            ("neighbors_euclidean.bin", NeighborsFormat::BigAnn),
            ("neighbors_euclidean.parquet", NeighborsFormat::Parquet),
            (
                "neighbors_euclidean_uint32.parquet",
                NeighborsFormat::Parquet,
            ),
            ("neighbors_euclidean_uint64.hdf5", NeighborsFormat::Hdf5),
        ];
        for (name, format) in files {
            let path = search_fixture(name);
            let read = read_neighbors_to(&path, None, 7).unwrap();
            assert_eq!((read.rows(), read.k()), (40, 7), "{name}");
            assert_eq!(all(&read), expected, "{name}");
            // A k above the lists' length keeps them whole.
            assert_eq!(
                read_neighbors_to(&path, None, 1000).unwrap(),
                numpy,
                "{name}"
            );
            if format != NeighborsFormat::Hdf5 {
                let stream = Box::new(std::fs::File::open(&path).unwrap());
                let streamed = read_neighbors_stream_to("gt", stream, format, 7).unwrap();
                assert_eq!(streamed, read, "{name} as a stream");
            }
        }
        // The cosine lists, as .ivecs.
        let ivecs = search_fixture("neighbors_cosine.ivecs");
        let whole = read_neighbors(&ivecs, None).unwrap();
        let read = read_neighbors_to(&ivecs, None, 7).unwrap();
        assert_eq!(all(&read), first(&whole, 7));
        let stream = Box::new(std::fs::File::open(&ivecs).unwrap());
        let streamed = read_neighbors_stream_to("gt", stream, NeighborsFormat::Ivecs, 7).unwrap();
        assert_eq!(streamed, read);
    }

    #[test]
    fn lists_of_unequal_length_are_read_when_equal_up_to_k() {
        let path = search_fixture("neighbors_ragged.parquet");
        let numpy = read_neighbors(&search_fixture("neighbors_euclidean.npy"), None).unwrap();
        let read = read_neighbors_to(&path, None, 10).unwrap();
        assert_eq!(all(&read), first(&numpy, 10)[..3].to_vec());
        let error = read_neighbors(&path, None).unwrap_err().to_string();
        assert!(
            error.contains("row 1 holds 15 ids where row 0 holds 12")
                && error.contains("must all be of one length"),
            "{error}"
        );
        let error = read_neighbors_to(&path, None, 11).unwrap_err().to_string();
        assert!(
            error.contains("row 2 holds 10 ids where row 0 holds 11")
                && error.contains("read to k = 11"),
            "{error}"
        );
    }

    #[test]
    fn a_parquet_ground_truth_of_25_million_ids_a_row_is_read_to_k() {
        let path = search_fixture("neighbors_wide.parquet");
        assert!(std::fs::metadata(&path).unwrap().len() < 64 << 10);
        let numpy = read_neighbors(&search_fixture("neighbors_euclidean.npy"), None).unwrap();
        let read = read_neighbors_to(&path, None, 10).unwrap();
        assert_eq!((read.rows(), read.k()), (20, 10));
        assert_eq!(all(&read), first(&numpy, 10)[..20].to_vec());
    }

    #[test]
    fn null_lists_and_null_ids_are_refused_naming_the_row() {
        use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch};
        use arrow_buffer::{NullBuffer, OffsetBuffer};
        use arrow_schema::{DataType, Field};
        use std::sync::Arc;
        let write = |values: Int64Array, nulls: Option<NullBuffer>| {
            let item = Arc::new(Field::new("item", DataType::Int64, true));
            let offsets = OffsetBuffer::from_lengths([2, 2]);
            let column = ListArray::new(item, offsets, Arc::new(values), nulls);
            let batch =
                RecordBatch::try_from_iter([("neighbors_id", Arc::new(column) as ArrayRef)])
                    .unwrap();
            batch_bytes(&batch)
        };
        let null_id = write(
            Int64Array::from(vec![Some(1), Some(2), Some(3), None]),
            None,
        );
        let error = from_file(&null_id, "gt.parquet").unwrap_err().to_string();
        assert!(
            error.contains("row 1 holds a null id at position 1"),
            "{error}"
        );
        let null_row = write(
            Int64Array::from(vec![1, 2, 3, 4]),
            Some(NullBuffer::from(vec![true, false])),
        );
        let error = from_file(&null_row, "gt.parquet").unwrap_err().to_string();
        assert!(error.contains("row 1 has no list of ids (null)"), "{error}");
    }
}
