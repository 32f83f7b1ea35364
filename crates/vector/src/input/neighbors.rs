//! Ground truth of nearest-neighbour benchmarks: for each query, the ids (row numbers of the
//! training set) of its nearest rows, best first.
//!
//! Formats: TEXMEX `.ivecs` (SIFT, GIST), an integer `.npy` (rows × k), big-ann-benchmarks'
//! binary ground truth (`u32 n, u32 k`, then `n·k` `u32` ids and `n·k` `f32` distances,
//! little-endian), VectorDBBench's Parquet (`neighbors.parquet`: a list-of-integers column,
//! `neighbors_id`, one row per query, beside the query's `id`), and an ann-benchmarks HDF5 file's
//! `neighbors` dataset. Every length a file claims is checked against its size (or, for a stream,
//! against the bytes that really arrive) before memory is set aside for it.

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

/// Reads the ground truth in `path`, in `format` or the one its name implies.
pub fn read_neighbors(
    path: &Path,
    format: Option<NeighborsFormat>,
) -> Result<Neighbors, InputError> {
    let format = format.unwrap_or_else(|| NeighborsFormat::from_path(path));
    if format == NeighborsFormat::Hdf5 {
        return hdf5_neighbors(path);
    }
    neighbors_from(Source::open(Some(path))?, format)
}

/// The [`HDF5_DATASET`] of the HDF5 file at `path`.
fn hdf5_neighbors(path: &Path) -> Result<Neighbors, InputError> {
    let dataset = super::read_integer_dataset(path, HDF5_DATASET)?;
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
    neighbors_from(Source::from_stream(name, stream), format)
}

fn neighbors_from(source: Source, format: NeighborsFormat) -> Result<Neighbors, InputError> {
    let (input, column) = match format {
        NeighborsFormat::BigAnn => return big_ann(source),
        NeighborsFormat::Hdf5 => {
            return Err(InputError::Unsupported(format!(
                "{}: HDF5 ground truth is read from a file, not a stream",
                source.name()
            )))
        }
        NeighborsFormat::Ivecs => (InputFormat::Ivecs, None),
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
    if input == InputFormat::Npy {
        let mut source = source;
        let (header, data_start) = npy::read_header(&mut source)?;
        if let Some((width, big_endian)) = npy::unsigned_descr(&header.descr) {
            return unsigned_npy(source, &header, width, big_endian);
        }
        let reader =
            npy::open_after_header(source, header, data_start, &options).map_err(|error| {
                match error {
                    InputError::Unsupported(message)
                        if message.contains("unsupported NPY dtype") =>
                    {
                        InputError::Unsupported(format!(
                            "{name}: ground truth holds integer ids: an .npy of dtype {} cannot \
                         (integer dtypes: i1 u1 i2 u2 i4 u4 i8 u8, either byte order)",
                            message.split('\'').nth(1).unwrap_or("?")
                        ))
                    }
                    other => other,
                }
            })?;
        return integer_rows(&name, reader);
    }
    integer_rows(&name, open_source(source, Some(input), &options)?)
}

/// A 2-D C-order `.npy` of unsigned integers of `width` bytes: each id must fit in an `i64`. The
/// shape is checked against the file's size (or, for a stream, against the bytes that arrive)
/// before memory is set aside for it.
fn unsigned_npy(
    mut source: Source,
    header: &npy::Header,
    width: usize,
    big_endian: bool,
) -> Result<Neighbors, InputError> {
    let name = source.name().to_owned();
    let [rows, k] = header.shape[..] else {
        return Err(InputError::Unsupported(format!(
            "{name}: NPY array of shape {} is not 2-D (queries, k)",
            npy::shape_text(&header.shape)
        )));
    };
    if header.fortran_order && rows > 1 && k > 1 {
        return Err(InputError::Unsupported(format!(
            "{name}: ground truth of unsigned ids must be in C order (numpy.ascontiguousarray)"
        )));
    }
    let count = u128::from(rows) * u128::from(k);
    let bytes = count * width as u128;
    if let Some(len) = source.len() {
        let data = u128::from(len).saturating_sub(u128::from(source.position()));
        if data != bytes {
            return Err(InputError::Data(format!(
                "{name}: the header says {rows} x {k} ids ({bytes} bytes), but {data} bytes follow it"
            )));
        }
    }
    let (Ok(rows), Ok(k), Ok(count)) = (
        usize::try_from(rows),
        usize::try_from(k),
        usize::try_from(count),
    ) else {
        return Err(InputError::Unsupported(format!(
            "{name}: {rows} lists of {k} neighbours do not fit in memory here"
        )));
    };
    let claim = format!("the header says {rows} x {k} ids");
    let ids = read_ids(&mut source, count, width, &claim, |element, index| {
        let mut wide = [0u8; 8];
        let id = if big_endian {
            wide[8 - width..].copy_from_slice(element);
            u64::from_be_bytes(wide)
        } else {
            wide[..width].copy_from_slice(element);
            u64::from_le_bytes(wide)
        };
        i64::try_from(id).map_err(|_| {
            InputError::Data(format!(
                "{name}: id {id} at list {} is above 2^63 - 1",
                index / k.max(1)
            ))
        })
    })?;
    if source.len().is_none() && source.read_full(&mut [0u8; 1])? != 0 {
        return Err(InputError::Data(format!(
            "{name}: bytes after the {rows} x {k} ids"
        )));
    }
    Neighbors::new(rows, k, ids)
        .ok_or_else(|| InputError::Data(format!("{name}: {rows} lists of {k} ids are incomplete")))
}

/// Reads `count` ids of `width` bytes each, [`CHUNK_IDS`] at a time, each made an id by `id` (given
/// its bytes and its index, and free to refuse it). Memory for all of them is set aside up front
/// only for a file, whose size the caller checked against the header; a stream that ends early is
/// an error quoting `claim`.
fn read_ids(
    source: &mut Source,
    count: usize,
    width: usize,
    claim: &str,
    mut id: impl FnMut(&[u8], usize) -> Result<i64, InputError>,
) -> Result<Vec<i64>, InputError> {
    let mut ids: Vec<i64> = Vec::with_capacity(if source.len().is_some() { count } else { 0 });
    let mut chunk = vec![0u8; CHUNK_IDS.min(count.max(1)) * width];
    let mut left = count;
    while left > 0 {
        let take = left.min(CHUNK_IDS) * width;
        let Some(buffer) = chunk.get_mut(..take) else {
            break;
        };
        if source.read_full(buffer)? < take {
            return Err(InputError::Data(format!(
                "{}: truncated at byte {}: {claim}",
                source.name(),
                source.position()
            )));
        }
        for element in buffer.chunks_exact(width) {
            ids.push(id(element, ids.len())?);
        }
        left -= take / width;
    }
    Ok(ids)
}

/// Every row of an integer input as one neighbour list.
fn integer_rows(name: &str, mut reader: Box<dyn BatchReader>) -> Result<Neighbors, InputError> {
    let k = reader.dimension();
    let mut ids: Vec<i64> = Vec::new();
    let mut rows = 0usize;
    while let Some(batch) = reader.next_batch()? {
        let before = ids.len();
        match &batch.elements {
            Elements::I8(v) => ids.extend(v.iter().map(|&x| i64::from(x))),
            Elements::U8(v) => ids.extend(v.iter().map(|&x| i64::from(x))),
            Elements::I16(v) => ids.extend(v.iter().map(|&x| i64::from(x))),
            Elements::I32(v) => ids.extend(v.iter().map(|&x| i64::from(x))),
            Elements::I64(v) => ids.extend_from_slice(v),
            Elements::F16(_) | Elements::F32(_) | Elements::F64(_) => {
                return Err(InputError::Unsupported(format!(
                    "{name}: ground truth holds integer ids, not {} numbers",
                    batch.elements.element_type().name()
                )))
            }
        }
        if batch.validity.is_some() || ids.len() - before != batch.rows.saturating_mul(k) {
            return Err(InputError::Data(format!(
                "{name}: row {} is not a list of {k} ids",
                batch.first_row
            )));
        }
        rows += batch.rows;
    }
    Neighbors::new(rows, k, ids)
        .ok_or_else(|| InputError::Data(format!("{name}: rows of unequal length")))
}

/// The big-ann-benchmarks layout. With a file, the header must match the file's size exactly;
/// with a stream, ids are kept only as they arrive and the end must come where the header says.
fn big_ann(mut source: Source) -> Result<Neighbors, InputError> {
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
    let (Ok(rows), Ok(k), Ok(pairs)) = (
        usize::try_from(n),
        usize::try_from(k),
        usize::try_from(pairs),
    ) else {
        return Err(InputError::Unsupported(format!(
            "{name}: {n} lists of {k} neighbours do not fit in memory here"
        )));
    };
    let claim = format!("the header says {n} lists of {k} neighbours");
    let ids = read_ids(&mut source, pairs, 4, &claim, |id, _| {
        Ok(i64::from(u32::from_le_bytes([id[0], id[1], id[2], id[3]])))
    })?;
    let mut chunk = vec![0u8; CHUNK_IDS.min(pairs.max(1)) * 4];
    // The distances follow; only their length matters (already checked for a file).
    if source.len().is_none() {
        let mut left = pairs.saturating_mul(4);
        while left > 0 {
            let take = left.min(chunk.len());
            let got = source.read_full(chunk.get_mut(..take).unwrap_or(&mut []))?;
            if got < take {
                return Err(InputError::Data(format!(
                    "{name}: truncated at byte {}: the distances end early",
                    source.position()
                )));
            }
            left -= take;
        }
        if source.read_full(&mut [0u8; 1])? != 0 {
            return Err(InputError::Data(format!(
                "{name}: bytes after the {n} lists of {k} neighbours and their distances"
            )));
        }
    }
    Neighbors::new(rows, k, ids).ok_or_else(|| {
        InputError::Data(format!(
            "{name}: {n} lists of {k} neighbours are incomplete"
        ))
    })
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
        let mut bytes = Vec::new();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
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
                "row 1 has 1 elements",
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
}
