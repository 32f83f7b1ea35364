//! HDF5 files (`.hdf5`/`.h5`) in the ann-benchmarks layout: 2-D datasets of numbers (`train`,
//! `test`, `neighbors`, `distances`), contiguous or chunked, uncompressed or gzip- and
//! shuffle-filtered, as h5py writes them.
//!
//! Decoding is the pure-Rust `hdf5-reader` crate's (no C library), fenced like the other
//! third-party decoders. This module checks what a file claims before anything is read on its
//! word: the superblock's end of file against the file's size, a contiguous dataset's bytes against
//! both, chunks against a size limit, and the filter pipeline against the filters supported. A
//! contiguous dataset is read as the flat block of rows it is ([`FlatReader`]: one sequential read
//! per batch, at file speed); a chunked one through the crate's hyperslab reads, a batch being a
//! band of whole chunks where the batch limit allows, with at most 32 MiB of chunks cached.

use super::flat::{FlatLayout, FlatReader};
use super::guard::fenced;
use super::source::Source;
use super::{
    resolve_selection, row_bytes, rows_per_batch, Batch, BatchReader, ElementType, Elements,
    InputError, InputOptions, MAX_ROW_BYTES,
};
use hdf5_reader::error::{Error as H5Error, Result as H5Result};
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::storage::FileStorage;
use hdf5_reader::{
    ByteOrder, Dataset, Datatype, H5Type, Hdf5File, OpenOptions, SliceInfo, SliceInfoElem,
    StringSize, VarLenKind,
};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// The HDF5 signature, at byte 0 or behind a user block (at 512, 1024, 2048, ...).
pub(crate) const MAGIC: &[u8] = b"\x89HDF\r\n\x1a\n";

/// Where the first signature after byte 0 may be.
const FIRST_USER_BLOCK: u64 = 512;

/// Bytes of decoded chunks kept between batches (chunks wider than a batch are decoded once).
const CHUNK_CACHE_BYTES: usize = 32 << 20;

/// Largest object header read, in bytes (an ann-benchmarks dataset's is a few hundred).
const MAX_HEADER_BYTES: usize = 1 << 20;

/// The filters decoded: deflate (gzip), shuffle and the Fletcher-32 checksum.
const SUPPORTED_FILTERS: [u16; 3] = [DEFLATE, 2, 3];

/// The deflate (gzip) filter's id.
const DEFLATE: u16 = 1;

/// The most bytes deflate makes of one compressed byte (a 258-byte match in under two bits).
const DEFLATE_RATIO: u64 = 1032;

/// The element types accepted, for messages.
const SUPPORTED_TYPES: &str = "float16, float32, float64, int8, uint8, int16, int32, int64, in \
                               either byte order";

/// One 2-D dataset of an open HDF5 file, checked.
struct Opened {
    /// The input's name for messages.
    input: String,
    /// The dataset's name for messages.
    name: String,
    dataset: Dataset,
    element_type: ElementType,
    rows: u64,
    dimension: usize,
    /// Rows per chunk of a chunked dataset.
    chunk_rows: Option<u64>,
    /// Where the rows of a contiguous dataset start in the file.
    data_start: Option<u64>,
    /// Whether the stored byte order is not this machine's.
    swap: bool,
}

/// Opens an HDF5 input (standard input is first copied to a temporary file: HDF5 needs random
/// access), dataset `options.dataset`.
pub(crate) fn open(
    source: Source,
    options: &InputOptions,
) -> Result<Box<dyn BatchReader>, InputError> {
    let input = source.name().to_string();
    let file = source.into_file()?;
    let decoder_file = file.try_clone().map_err(|source| InputError::Io {
        input: input.clone(),
        source,
    })?;
    let opened = open_dataset(&input, decoder_file, &options.dataset)?;
    match opened.data_start {
        Some(data_start) => {
            let layout = FlatLayout {
                format: "HDF5",
                element_type: opened.element_type,
                swap: opened.swap,
                rows: opened.rows,
                dimension: opened.dimension,
                data_start,
                nothing_after: false,
            };
            let source = Source::from_file(&input, file)?;
            Ok(Box::new(FlatReader::new(source, layout, options)?))
        }
        None => Ok(Box::new(Hdf5Reader::new(opened, options)?)),
    }
}

/// Whether the input is an HDF5 file: the signature at byte 0 (in `prefix`) or, for a file, at
/// 512, 1024, 2048, ... (behind a user block). Leaves a file at byte 0.
pub(crate) fn recognised(source: &mut Source, prefix: &[u8]) -> Result<bool, InputError> {
    if prefix.starts_with(MAGIC) {
        return Ok(true);
    }
    let Some(len) = source.len() else {
        return Ok(false);
    };
    let mut offset = FIRST_USER_BLOCK;
    let mut found = false;
    while !found && offset.saturating_add(MAGIC.len() as u64) <= len {
        source.move_to(offset)?;
        let mut signature = [0u8; 8];
        found = source.read_full(&mut signature)? == MAGIC.len() && signature == MAGIC;
        offset = offset.saturating_mul(2);
    }
    source.move_to(0)?;
    Ok(found)
}

/// Opens the file and its dataset `name`, and checks what they claim.
fn open_dataset(input: &str, file: std::fs::File, name: &str) -> Result<Opened, InputError> {
    open_dataset_of(input, file, name, element_type, SUPPORTED_TYPES)
}

/// [`open_dataset`] with the element types `types` accepts (`supported` names them).
fn open_dataset_of(
    input: &str,
    file: std::fs::File,
    name: &str,
    types: fn(&Datatype) -> Option<ElementType>,
    supported: &str,
) -> Result<Opened, InputError> {
    let (h5, len) = open_file(input, file)?;
    let input = input.to_string();
    let base = h5.superblock().base_address;
    let dataset = find_dataset(&h5, &input, name)?;
    let described = |what: String| format!("{input}: HDF5 dataset '{name}' {what}");
    let shape = dataset.shape().to_vec();
    let &[rows, columns] = shape.as_slice() else {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        let trailing = if dims.len() == 1 { "," } else { "" };
        return Err(InputError::Unsupported(described(format!(
            "has shape ({}{trailing}), not 2-D (rows, dimension)",
            dims.join(", ")
        ))));
    };
    let element_type = types(dataset.dtype()).ok_or_else(|| {
        InputError::Unsupported(described(format!(
            "has elements of type {} (supported: {supported})",
            type_text(dataset.dtype())
        )))
    })?;
    let dimension = usize::try_from(columns)
        .map_err(|_| InputError::Unsupported(described(format!("has {columns} columns"))))?;
    let row_bytes = row_bytes(&input, dimension, element_type)?;
    let header = fenced(&input, "the HDF5 dataset header", || {
        h5.get_or_parse_header(dataset.address())
    })?
    .map_err(|e| InputError::Data(described(format!("has an unreadable header: {e}"))))?;
    let mut inflates = false;
    let mut data_start = None;
    for message in &header.messages {
        match message {
            HdfMessage::FilterPipeline(pipeline) => {
                if let Some(filter) = pipeline
                    .filters
                    .iter()
                    .find(|f| !SUPPORTED_FILTERS.contains(&f.id))
                {
                    return Err(InputError::Unsupported(described(format!(
                        "is stored with the {} filter (id {}), which is not supported \
                         (supported: gzip, shuffle, fletcher32)",
                        filter_name(filter.id, filter.name.as_deref()),
                        filter.id
                    ))));
                }
                inflates |= pipeline.filters.iter().any(|f| f.id == DEFLATE);
            }
            HdfMessage::DataLayout(layout) => {
                if let DataLayout::Contiguous { address, size } = layout.layout {
                    let needed = rows.checked_mul(row_bytes as u64);
                    if needed.is_none_or(|needed| size < needed) {
                        return Err(InputError::Data(described(format!(
                            "holds {size} bytes, too few for {rows} rows of {row_bytes} bytes"
                        ))));
                    }
                    let stored = base.checked_add(address).and_then(|a| a.checked_add(size));
                    let allocated = address != u64::MAX && size > 0;
                    if allocated && stored.is_none_or(|stored| stored > len) {
                        return Err(InputError::Data(described(format!(
                            "is stored at bytes {address}..{}, but the file has {len} bytes \
                             (truncated)",
                            address.saturating_add(size)
                        ))));
                    }
                    // Unwritten (no address): its fill value, through the decoder.
                    data_start = base.checked_add(address).filter(|_| allocated);
                }
            }
            _ => {}
        }
    }
    // Rows are never taken on the file's word alone: unwritten chunks read as zeros, so a small
    // file could otherwise claim terabytes of them.
    let most = len.saturating_mul(if inflates { DEFLATE_RATIO } else { 1 });
    let claimed = rows.checked_mul(row_bytes as u64);
    if claimed.is_none_or(|claimed| claimed > most) {
        let compressed = if inflates { ", even compressed" } else { "" };
        return Err(InputError::Data(described(format!(
            "claims {rows} rows of {row_bytes} bytes, more than a {len}-byte file holds{compressed}"
        ))));
    }
    let chunk_rows = dataset
        .chunks()
        .and_then(|chunks| chunks.first().copied())
        .map(u64::from);
    let swap = match *dataset.dtype() {
        Datatype::FloatingPoint { byte_order, .. } | Datatype::FixedPoint { byte_order, .. } => {
            byte_order != native_order()
        }
        _ => false,
    };
    Ok(Opened {
        data_start,
        swap,
        input,
        name: name.to_string(),
        dataset,
        element_type,
        rows,
        dimension,
        chunk_rows,
    })
}

/// Opens the HDF5 file `file` (`input` for messages) and checks its superblock's end of file
/// against the file's size; returns the file and that size.
fn open_file(input: &str, file: std::fs::File) -> Result<(Hdf5File, u64), InputError> {
    let io_error = |source| InputError::Io {
        input: input.to_string(),
        source,
    };
    let len = file.metadata().map_err(io_error)?.len();
    let invalid = |e: H5Error| InputError::Data(format!("{input}: not a readable HDF5 file: {e}"));
    let storage = FileStorage::from_file(file).map_err(invalid)?;
    let open_options = OpenOptions::default()
        .with_chunk_cache_bytes(CHUNK_CACHE_BYTES)
        .with_max_chunk_bytes(MAX_ROW_BYTES)
        .with_max_object_header_bytes(MAX_HEADER_BYTES);
    let h5 = fenced(input, "the HDF5 superblock", || {
        Hdf5File::from_storage_with_options(Arc::new(storage), open_options)
    })?
    .map_err(invalid)?;
    // As libhdf5 does, the end-of-file address is compared with the whole file's size (the user
    // block included).
    let superblock = h5.superblock();
    if superblock.eof_address > len {
        return Err(InputError::Data(format!(
            "{input}: truncated HDF5 file: its superblock says it ends at byte {}, but it has \
             {len} bytes",
            superblock.eof_address
        )));
    }
    Ok((h5, len))
}

/// The dataset `name`; when there is none, an options error listing the datasets of the root
/// group.
fn find_dataset(h5: &Hdf5File, input: &str, name: &str) -> Result<Dataset, InputError> {
    let names = fenced(input, "the HDF5 root group", || {
        h5.root_group().and_then(|root| root.member_names())
    })?
    .map_err(|e| InputError::Data(format!("{input}: cannot list the HDF5 root group: {e}")))?;
    let (_, datasets) = names;
    if !name.contains('/') && !datasets.iter().any(|d| d == name) {
        let present = if datasets.is_empty() {
            "it has no dataset".to_string()
        } else {
            format!("datasets: {}", datasets.join(", "))
        };
        return Err(InputError::Options(format!(
            "{input}: no dataset '{name}' in the HDF5 file ({present})"
        )));
    }
    fenced(input, "the HDF5 dataset header", || h5.dataset(name))?
        .map_err(|e| InputError::Data(format!("{input}: cannot open HDF5 dataset '{name}': {e}")))
}

/// The element type of an HDF5 number type, if supported.
fn element_type(datatype: &Datatype) -> Option<ElementType> {
    match *datatype {
        Datatype::FloatingPoint { size: 2, .. } => Some(ElementType::F16),
        Datatype::FloatingPoint { size: 4, .. } => Some(ElementType::F32),
        Datatype::FloatingPoint { size: 8, .. } => Some(ElementType::F64),
        Datatype::FixedPoint { size, signed, .. } => match (size, signed) {
            (1, true) => Some(ElementType::I8),
            (1, false) => Some(ElementType::U8),
            (2, true) => Some(ElementType::I16),
            (4, true) => Some(ElementType::I32),
            (8, true) => Some(ElementType::I64),
            _ => None,
        },
        _ => None,
    }
}

/// A datatype as NumPy would name it (`uint32`, `float128`), else its class.
fn type_text(datatype: &Datatype) -> String {
    match datatype {
        Datatype::FloatingPoint { size, .. } => format!("float{}", u32::from(*size) * 8),
        Datatype::FixedPoint { size, signed, .. } => {
            let sign = if *signed { "" } else { "u" };
            format!("{sign}int{}", u32::from(*size) * 8)
        }
        Datatype::String { .. } | Datatype::VarLen { .. } => "string or variable-length".into(),
        Datatype::Compound { .. } => "compound".into(),
        Datatype::Array { .. } => "array".into(),
        Datatype::Enum { .. } => "enum".into(),
        Datatype::Opaque { .. } => "opaque".into(),
        Datatype::Reference { .. } => "reference".into(),
        _ => "unknown".into(),
    }
}

/// The usual name of an HDF5 filter.
fn filter_name(id: u16, stored: Option<&str>) -> String {
    let known = match id {
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32015 => "zstd",
        _ => return stored.unwrap_or("unknown").to_string(),
    };
    known.to_string()
}

/// Batches of rows of one dataset.
struct Hdf5Reader {
    opened: Opened,
    range: Range<u64>,
    next_row: u64,
    batch_rows: u64,
}

impl Hdf5Reader {
    /// Resolves the selection.
    fn new(opened: Opened, options: &InputOptions) -> Result<Hdf5Reader, InputError> {
        let row_bytes = row_bytes(&opened.input, opened.dimension, opened.element_type)?;
        let range = resolve_selection(&options.selection, opened.rows, &opened.input)?;
        // At least a band of whole chunks per batch where the batch limit allows.
        let chunk_rows = opened
            .chunk_rows
            .map_or(0, |c| usize::try_from(c).unwrap_or(0));
        let wanted = InputOptions {
            batch_rows: options.batch_rows.max(chunk_rows),
            ..options.clone()
        };
        Ok(Hdf5Reader {
            batch_rows: rows_per_batch(&wanted, row_bytes) as u64,
            next_row: range.start,
            range,
            opened,
        })
    }

    /// Where the batch starting at `start` ends: at most `batch_rows` rows, ending on a chunk
    /// boundary when that leaves at least one row.
    fn batch_end(&self, start: u64) -> u64 {
        let end = start.saturating_add(self.batch_rows).min(self.range.end);
        match self.opened.chunk_rows {
            Some(chunk) if chunk > 0 && end < self.range.end => {
                let aligned = end - end % chunk;
                if aligned > start {
                    aligned
                } else {
                    end
                }
            }
            _ => end,
        }
    }
}

impl BatchReader for Hdf5Reader {
    fn element_type(&self) -> ElementType {
        self.opened.element_type
    }

    fn dimension(&self) -> usize {
        self.opened.dimension
    }

    fn rows(&self) -> Option<u64> {
        Some(self.range.end - self.range.start)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, InputError> {
        let start = self.next_row;
        if start >= self.range.end {
            return Ok(None);
        }
        let end = self.batch_end(start);
        let opened = &self.opened;
        let selection = SliceInfo {
            selections: vec![
                SliceInfoElem::Slice {
                    start,
                    end,
                    step: 1,
                },
                SliceInfoElem::Slice {
                    start: 0,
                    end: opened.dimension as u64,
                    step: 1,
                },
            ],
        };
        let what = format!("rows {start}..{end} of HDF5 dataset '{}'", opened.name);
        let elements = fenced(&opened.input, &what, || {
            read_elements(&opened.dataset, opened.element_type, &selection)
        })?
        .map_err(|e| InputError::Data(format!("{}: cannot read {what}: {e}", opened.input)))?;
        let rows = usize::try_from(end - start).unwrap_or(usize::MAX);
        if Some(elements.len()) != rows.checked_mul(opened.dimension) {
            return Err(InputError::Data(format!(
                "{}: HDF5 dataset '{}' gave {} elements for {what}",
                opened.input,
                opened.name,
                elements.len()
            )));
        }
        self.next_row = end;
        Ok(Some(Batch {
            first_row: start,
            rows,
            elements,
            validity: None,
            columns: None,
            damaged: Vec::new(),
        }))
    }
}

/// Reads a selection as elements of `element_type` in native byte order.
fn read_elements(
    dataset: &Dataset,
    element_type: ElementType,
    selection: &SliceInfo,
) -> H5Result<Elements> {
    Ok(match element_type {
        ElementType::F16 => {
            let halves: Vec<Half> = read_vec(dataset, selection)?;
            Elements::F16(halves.into_iter().map(|h| h.0).collect())
        }
        ElementType::F32 => Elements::F32(read_vec(dataset, selection)?),
        ElementType::F64 => Elements::F64(read_vec(dataset, selection)?),
        ElementType::I8 => Elements::I8(read_vec(dataset, selection)?),
        ElementType::U8 => Elements::U8(read_vec(dataset, selection)?),
        ElementType::I16 => Elements::I16(read_vec(dataset, selection)?),
        ElementType::I32 => Elements::I32(read_vec(dataset, selection)?),
        ElementType::I64 => Elements::I64(read_vec(dataset, selection)?),
    })
}

/// Reads a selection as a row-major vector of `T`.
fn read_vec<T: H5Type>(dataset: &Dataset, selection: &SliceInfo) -> H5Result<Vec<T>> {
    let array = dataset.read_slice::<T>(selection)?;
    Ok(if array.is_standard_layout() {
        array.into_raw_vec_and_offset().0
    } else {
        array.iter().cloned().collect()
    })
}

/// This machine's byte order.
fn native_order() -> ByteOrder {
    if cfg!(target_endian = "little") {
        ByteOrder::LittleEndian
    } else {
        ByteOrder::BigEndian
    }
}

/// A half-precision float as the HDF5 reader decodes it (it has no 16-bit float of its own).
#[derive(Debug, Clone, Copy)]
struct Half(half::f16);

impl H5Type for Half {
    fn hdf5_type() -> Datatype {
        Datatype::FloatingPoint {
            size: 2,
            byte_order: native_order(),
        }
    }

    fn from_bytes(bytes: &[u8], dtype: &Datatype) -> H5Result<Self> {
        let (
            &Datatype::FloatingPoint {
                size: 2,
                byte_order,
            },
            Some(&[a, b]),
        ) = (dtype, bytes.first_chunk::<2>())
        else {
            return Err(H5Error::TypeMismatch {
                expected: "float16".into(),
                actual: format!("{dtype:?}"),
            });
        };
        let bits = match byte_order {
            ByteOrder::LittleEndian => u16::from_le_bytes([a, b]),
            ByteOrder::BigEndian => u16::from_be_bytes([a, b]),
        };
        Ok(Half(half::f16::from_bits(bits)))
    }

    fn element_size(_dtype: &Datatype) -> usize {
        2
    }
}

/// A whole 2-D integer dataset (e.g. an ann-benchmarks file's `neighbors`), row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegerDataset {
    /// Number of rows.
    pub rows: usize,
    /// Values per row.
    pub columns: usize,
    /// rows × columns values, row by row.
    pub values: Vec<i64>,
}

impl IntegerDataset {
    /// Row `row`'s values, if there is such a row.
    pub fn row(&self, row: usize) -> Option<&[i64]> {
        let start = row.checked_mul(self.columns)?;
        self.values.get(start..start.checked_add(self.columns)?)
    }
}

/// Reads the whole 2-D integer dataset `name` (int8/uint8/int16/int32/int64) of the HDF5 file at
/// `path`, e.g. the ground-truth `neighbors` of an ann-benchmarks file. Memory grows with the data
/// actually decoded, batch by batch, never on the file's word alone.
pub fn read_integer_dataset(path: &Path, name: &str) -> Result<IntegerDataset, InputError> {
    let source = Source::open(Some(path))?;
    let input = source.name().to_string();
    let options = InputOptions {
        format: None,
        column: None,
        dataset: name.to_string(),
        selection: super::RowSelection::All,
        batch_rows: usize::MAX,
        vectors_optional: false,
    };
    let mut reader = open(source, &options)?;
    let element_type = reader.element_type();
    if matches!(
        element_type,
        ElementType::F16 | ElementType::F32 | ElementType::F64
    ) {
        return Err(InputError::Unsupported(format!(
            "{input}: HDF5 dataset '{name}' holds {} values, not integers",
            element_type.name()
        )));
    }
    let (rows, columns) = (reader.rows().unwrap_or(0), reader.dimension());
    let mut values = Vec::new();
    while let Some(batch) = reader.next_batch()? {
        match batch.elements {
            Elements::I8(v) => values.extend(v.into_iter().map(i64::from)),
            Elements::U8(v) => values.extend(v.into_iter().map(i64::from)),
            Elements::I16(v) => values.extend(v.into_iter().map(i64::from)),
            Elements::I32(v) => values.extend(v.into_iter().map(i64::from)),
            Elements::I64(v) => values.extend(v),
            Elements::F16(_) | Elements::F32(_) | Elements::F64(_) => {}
        }
    }
    Ok(IntegerDataset {
        rows: usize::try_from(rows).unwrap_or(usize::MAX),
        columns,
        values,
    })
}

/// The element types of ids, for messages.
const ID_TYPES: &str = "int8, uint8, int16, uint16, int32, uint32, int64, uint64, in either byte \
                        order";

/// Ids read per batch of [`read_id_dataset`] (8 MiB).
const ID_BATCH: usize = 1 << 20;

/// An integer type of ids as the element type of its width (for the size checks only: the values
/// are read with their own type by [`read_ids`]).
fn id_element_type(datatype: &Datatype) -> Option<ElementType> {
    match *datatype {
        Datatype::FixedPoint { size: 1, .. } => Some(ElementType::I8),
        Datatype::FixedPoint { size: 2, .. } => Some(ElementType::I16),
        Datatype::FixedPoint { size: 4, .. } => Some(ElementType::I32),
        Datatype::FixedPoint { size: 8, .. } => Some(ElementType::I64),
        _ => None,
    }
}

/// The first `keep` values of each row (all of them with `usize::MAX`) of the 2-D integer
/// dataset `name` of the HDF5 file at `path` as ids, e.g. an ann-benchmarks file's `neighbors`:
/// signed or unsigned integers of 1 to 8 bytes (h5py writes NumPy's `uint32`/`uint64` as they
/// are), an unsigned value above 2^63 - 1 refused naming its row. Memory follows rows × keep and a
/// batch of [`ID_BATCH`] ids (and the chunks cached), never the width of the rows.
pub(crate) fn read_id_dataset(
    path: &Path,
    name: &str,
    keep: usize,
) -> Result<IntegerDataset, InputError> {
    let source = Source::open(Some(path))?;
    let input = source.name().to_string();
    let opened = open_dataset_of(&input, source.into_file()?, name, id_element_type, ID_TYPES)?;
    let Datatype::FixedPoint { size, signed, .. } = *opened.dataset.dtype() else {
        return Err(InputError::Unsupported(format!(
            "{input}: HDF5 dataset '{name}' does not hold integers"
        )));
    };
    let columns = opened.dimension.min(keep);
    let rows = usize::try_from(opened.rows).map_err(|_| {
        InputError::Unsupported(format!(
            "{input}: HDF5 dataset '{name}' has more rows than fit in memory here"
        ))
    })?;
    let mut values = Vec::new();
    let batch = (ID_BATCH / columns.max(1)).max(1);
    let mut start = 0;
    while start < rows && columns > 0 {
        let end = start.saturating_add(batch).min(rows);
        let selection = SliceInfo {
            selections: vec![
                SliceInfoElem::Slice {
                    start: start as u64,
                    end: end as u64,
                    step: 1,
                },
                SliceInfoElem::Slice {
                    start: 0,
                    end: columns as u64,
                    step: 1,
                },
            ],
        };
        let what = format!("rows {start}..{end} of HDF5 dataset '{name}'");
        let read = fenced(&input, &what, || {
            read_ids(&opened.dataset, size, signed, &selection)
        })?
        .map_err(|e| InputError::Data(format!("{input}: cannot read {what}: {e}")))?;
        let ids = read.map_err(|(index, id)| {
            InputError::Data(format!(
                "{input}: id {id} in row {} of HDF5 dataset '{name}' is above 2^63 - 1",
                start + index / columns
            ))
        })?;
        if ids.len() != (end - start) * columns {
            return Err(InputError::Data(format!(
                "{input}: HDF5 dataset '{name}' gave {} ids for {what}",
                ids.len()
            )));
        }
        values.extend(ids);
        start = end;
    }
    Ok(IntegerDataset {
        rows,
        columns,
        values,
    })
}

/// Reads a selection of integers of `size` bytes as ids; an unsigned value above 2^63 - 1 is
/// given back with its index.
#[allow(clippy::type_complexity)]
fn read_ids(
    dataset: &Dataset,
    size: u8,
    signed: bool,
    selection: &SliceInfo,
) -> H5Result<Result<Vec<i64>, (usize, u64)>> {
    fn widen<T: H5Type + Into<i64>>(
        dataset: &Dataset,
        selection: &SliceInfo,
    ) -> H5Result<Vec<i64>> {
        Ok(read_vec::<T>(dataset, selection)?
            .into_iter()
            .map(Into::into)
            .collect())
    }
    Ok(Ok(match (size, signed) {
        (1, true) => widen::<i8>(dataset, selection)?,
        (1, false) => widen::<u8>(dataset, selection)?,
        (2, true) => widen::<i16>(dataset, selection)?,
        (2, false) => widen::<u16>(dataset, selection)?,
        (4, true) => widen::<i32>(dataset, selection)?,
        (4, false) => widen::<u32>(dataset, selection)?,
        (8, true) => read_vec::<i64>(dataset, selection)?,
        _ => {
            let wide: Vec<u64> = read_vec(dataset, selection)?;
            if let Some(index) = wide.iter().position(|&id| i64::try_from(id).is_err()) {
                return Ok(Err((index, wide[index])));
            }
            wide.into_iter().map(|id| id as i64).collect()
        }
    }))
}

/// Longest string attribute read, in bytes (ann-benchmarks' `distance` is a word).
pub const MAX_ATTRIBUTE_BYTES: usize = 256;

/// The string attribute `name` of the root group of the HDF5 file at `path` (e.g. an
/// ann-benchmarks file's `distance`), `None` when there is no such attribute. Refused when it is
/// not one string or claims more than [`MAX_ATTRIBUTE_BYTES`], before its value is read.
pub fn read_root_string_attribute(path: &Path, name: &str) -> Result<Option<String>, InputError> {
    let source = Source::open(Some(path))?;
    let input = source.name().to_string();
    let (h5, _) = open_file(&input, source.into_file()?)?;
    let described = |what: String| format!("{input}: HDF5 attribute '{name}' {what}");
    let unreadable = |e: H5Error| InputError::Data(described(format!("is unreadable: {e}")));
    let root = fenced(&input, "the HDF5 root group", || h5.root_group())?.map_err(unreadable)?;
    let raw = fenced(&input, "the HDF5 root group's attributes", || {
        root.raw_attributes()
    })?
    .map_err(unreadable)?;
    let Some(attribute) = raw.iter().find(|a| a.name() == name) else {
        return Ok(None);
    };
    let message = attribute.message();
    let not_a_string = || {
        InputError::Unsupported(described(format!(
            "is of type {}, not one string",
            type_text(&message.datatype)
        )))
    };
    if !matches!(message.dataspace.num_elements(), Ok(1)) {
        return Err(not_a_string());
    }
    let claimed = match &message.datatype {
        Datatype::String {
            size: StringSize::Fixed(size),
            ..
        } => u64::from(*size),
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen {
            kind: VarLenKind::String,
            ..
        } => {
            // A variable-length string is its length (4 bytes), then where the heap holds it.
            let length: [u8; 4] = message
                .raw_data
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| InputError::Data(described("is truncated".to_string())))?;
            u64::from(u32::from_le_bytes(length))
        }
        _ => return Err(not_a_string()),
    };
    if claimed > MAX_ATTRIBUTE_BYTES as u64 {
        return Err(InputError::Data(described(format!(
            "claims {claimed} bytes, more than the {MAX_ATTRIBUTE_BYTES} read"
        ))));
    }
    let value = fenced(&input, "the HDF5 root group's attributes", || {
        root.attribute(name).and_then(|a| a.read_string())
    })?
    .map_err(unreadable)?;
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `fixtures/hdf5/`.
    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/hdf5")
            .join(name)
    }

    #[test]
    fn the_distance_attribute_of_an_ann_benchmarks_file_is_read() {
        for file in ["ann.hdf5", "ann-gzip.hdf5"] {
            let read = read_root_string_attribute(&fixture(file), "distance").unwrap();
            assert_eq!(read.as_deref(), Some("euclidean"), "{file}");
        }
    }

    #[test]
    fn a_missing_attribute_reads_as_none() {
        let read = read_root_string_attribute(&fixture("small.hdf5"), "distance").unwrap();
        assert_eq!(read, None);
    }

    #[test]
    fn an_attribute_that_is_not_a_string_is_refused_naming_its_type() {
        let err = read_root_string_attribute(&fixture("ann.hdf5"), "dimension").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, InputError::Unsupported(_)), "{text}");
        assert!(
            text.contains("'dimension'") && text.contains("not one string"),
            "{text}"
        );
    }

    #[test]
    fn a_string_attribute_longer_than_the_bound_is_refused_before_it_is_read() {
        let err = read_root_string_attribute(&fixture("limits.hdf5"), "distance").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("claims 1000 bytes") && text.contains("256"),
            "{text}"
        );
    }
}
