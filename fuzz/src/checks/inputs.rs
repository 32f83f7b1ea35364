//! The vector readers' targets: `npy_header`, `vecs_readers`, `neighbors`, `columnar_readers`,
//! `bench_readers` and `hdf5_reader`.

use super::memory::{take_largest_allocation, DEFLATE_RATIO, FILE_ALLOCATION_SLACK};
use cqlwire_vector::input::{
    self, BatchReader, InputError, InputFormat, InputOptions, NeighborsFormat, RowSelection,
};
use std::io::{Cursor, Seek, Write};

// ---------------------------------------------------------------------------------------------------
// npy_header and vecs_readers
// ---------------------------------------------------------------------------------------------------

/// Reads the whole input as a `.npy` file, as a stream and as a file; see [`check_reader`].
pub fn npy_header(data: &[u8]) {
    check_reader(data, InputFormat::Npy, RowSelection::All, 3);
}

/// Reads the input after its first byte as the fvecs/ivecs/bvecs/fbin/ibin/u8bin/i8bin file that
/// byte's low 3 bits pick (7 means fvecs), with the row selection and batch size its high bits pick;
/// see [`check_reader`].
pub fn vecs_readers(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    // The fixed-layout formats of the library's registry, in its order.
    let mut fixed = InputFormat::ALL
        .iter()
        .copied()
        .filter(|format| format.fixed_element_type().is_some());
    let format = fixed
        .nth(usize::from(selector & 7))
        .unwrap_or(InputFormat::Fvecs);
    let selection = fuzzed_selection(selector >> 6);
    let batch_rows = usize::from((selector >> 3) & 7) + 1;
    check_reader(file, format, selection, batch_rows);
}

/// The row selection two bits pick (the higher ones are ignored): all rows (0, 1), rows 1..3 (2)
/// or shard 2/3 (3).
fn fuzzed_selection(bits: u8) -> RowSelection {
    match bits & 3 {
        0 | 1 => RowSelection::All,
        2 => RowSelection::Range(1..3),
        _ => RowSelection::Shard { k: 2, n: 3 },
    }
}

/// Reads the input after its first byte as the ground truth its low 2 bits pick (ivecs, npy,
/// big-ann-benchmarks binary, Parquet), as a stream and as a file, to 1000 ids per list and to the
/// k that bits 2–3 pick (1, 3, 10, 100): stream and file give the same lists or both fail; every
/// list holds k ids; what is read to k is the first k ids of what is read to 1000 whenever that
/// reads (lists of any width are read to k: a whole 25,000,000-id list is never held); a
/// file other than Parquet (whose pages decompress to more than their bytes) never makes the
/// reader allocate more than 2 × its size (ids widen from 4 to 8 bytes) + 64 KiB at once.
pub fn neighbors(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let format = match selector & 3 {
        0 => NeighborsFormat::Ivecs,
        1 => NeighborsFormat::Npy,
        2 => NeighborsFormat::BigAnn,
        _ => NeighborsFormat::Parquet,
    };
    let k = [1, 3, 10, 100][usize::from((selector >> 2) & 3)];
    let whole = read_neighbors_both(file, format, 1000);
    let cut = read_neighbors_both(file, format, k);
    if let (Ok(whole), Ok(cut)) = (&whole, &cut) {
        assert_eq!(cut.rows(), whole.rows(), "read to {k}: other rows");
        assert_eq!(
            cut.k(),
            whole.k().min(k),
            "read to {k}: lists of {}",
            cut.k()
        );
        for row in 0..whole.rows() {
            assert_eq!(
                cut.row(row),
                &whole.row(row)[..cut.k()],
                "read to {k}: row {row}"
            );
        }
    }
    if whole.is_ok() {
        assert!(cut.is_ok(), "lists read to 1000, but not to {k}: {cut:?}");
    }
}

/// Reads `file` as a ground truth in `format` to `k` ids per list, as a stream and as a file:
/// both give the same lists or both fail; every list holds k ids; the allocation bound of
/// [`neighbors`].
fn read_neighbors_both(
    file: &[u8],
    format: NeighborsFormat,
    k: usize,
) -> Result<input::Neighbors, InputError> {
    let stream = input::read_neighbors_stream_to(
        "fuzz input",
        Box::new(Cursor::new(file.to_vec())),
        format,
        k,
    );
    let from_file = (|| {
        let io_error = |source| InputError::Io {
            input: "fuzz temporary file".to_string(),
            source,
        };
        let mut temporary = tempfile::tempfile_in("/dev/shm")
            .or_else(|_| tempfile::tempfile())
            .map_err(io_error)?;
        temporary.write_all(file).map_err(io_error)?;
        temporary.rewind().map_err(io_error)?;
        let path = format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&temporary)
        );
        take_largest_allocation();
        let read = input::read_neighbors_to(std::path::Path::new(&path), Some(format), k);
        let largest = take_largest_allocation();
        let bound = 2 * file.len() + FILE_ALLOCATION_SLACK;
        assert!(
            format == NeighborsFormat::Parquet || largest <= bound,
            "reading a {}-byte ground truth allocates {largest} bytes at once",
            file.len()
        );
        read
    })();
    for lists in [&stream, &from_file].into_iter().flatten() {
        assert!(lists.k() <= k, "lists of {} ids read to {k}", lists.k());
        for row in 0..lists.rows() {
            assert_eq!(lists.row(row).len(), lists.k());
        }
    }
    match (&stream, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read different lists"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("stream and file disagree: {a:?} / {b:?}"),
    }
    from_file
}

/// What a reader produced: element type, dimension, rows, and each element's value as f64 bits.
#[derive(Debug, PartialEq)]
struct ReadAll {
    element_type: input::ElementType,
    dimension: usize,
    rows: u64,
    element_bits: Vec<u64>,
}

/// Opens `data` as `format` both as a stream and as a file and reads every batch. Batches must hold
/// rows × dimension elements, never more data than the input has, the row count announced up front;
/// the stream and the file must give the same rows, or both fail (except where a stream cannot know
/// what a file can).
fn check_reader(data: &[u8], format: InputFormat, selection: RowSelection, batch_rows: usize) {
    let whole = selection == RowSelection::All;
    let options = InputOptions {
        format: Some(format),
        column: None,
        dataset: "train".to_string(),
        selection,
        batch_rows,
        vectors_optional: false,
    };
    let stream = input::open_stream("fuzz input", Box::new(Cursor::new(data.to_vec())), &options)
        .and_then(|reader| read_all(reader, data.len(), None));
    let file = read_file(data, &options, 1);
    match (&stream, &file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read differently ({format:?})"),
        (Err(_), Err(_)) => {}
        // A file's size is checked against its header up front; a stream reading only some rows
        // never sees where it ends.
        (Ok(_), Err(InputError::Data(_))) if !whole => {}
        // What only a seekable file allows (Fortran order, --shard without a row count) is refused
        // on a stream.
        (Err(InputError::Unsupported(message) | InputError::Options(message)), Ok(_))
            if message.contains("stream") => {}
        (Err(InputError::ShardNeedsRowCount { .. }), Ok(_)) => {}
        _ => panic!("stream and file disagree ({format:?}): {stream:?} / {file:?}"),
    }
}

/// Reads the input after its first byte as a Parquet file (bit 0 set) or an Arrow IPC stream or file
/// (as a stream and as a file), in batches of the rows its bits 1–3 pick; every batch its readers
/// give has its other columns as valid Arrow arrays of the batch's rows and the declared schema,
/// and its damaged rows (text that is not UTF-8, at any depth) inside the batch, in order, each a
/// null cell of a column that exists.
pub fn columnar_readers(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let parquet = selector & 1 == 1;
    let options = InputOptions {
        format: Some(if parquet {
            InputFormat::Parquet
        } else {
            InputFormat::Arrow
        }),
        column: None,
        dataset: "train".to_string(),
        selection: RowSelection::All,
        batch_rows: usize::from((selector >> 1) & 7) + 1,
        vectors_optional: false,
    };
    if !parquet {
        let stream = Box::new(Cursor::new(file.to_vec()));
        if let Ok(reader) = input::open_stream("fuzz input", stream, &options) {
            let _ = check_columns(reader);
        }
    }
    let _ = with_file(file, |path| {
        input::open(Some(path), &options).and_then(check_columns)
    });
}

/// Reads the input after its first byte as the VectorDBBench file its low 2 bits pick: a ground
/// truth (`neighbors*.parquet`: `id`, `neighbors_id`), the labels (`scalar_labels.parquet`: `id`,
/// `labels`) or the queries (`test.parquet`: `id`, `emb`), from a file. Whatever the bytes, an
/// error or: ground-truth lists all of k non-negative ids; every label row's id finds a label
/// that is one of the distinct names or none, and the rows carrying each name add up to at most
/// the rows; one id per query and `dimension` elements per query.
pub fn bench_readers(data: &[u8]) {
    use cqlwire_bench::truth::{GroundTruth, Queries, ScalarLabels};
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let _ = with_file(file, |path| match selector & 3 {
        0 | 1 => {
            if let Ok(truth) = GroundTruth::read(path) {
                for query in 0..truth.queries() {
                    let list = truth.list(query);
                    assert_eq!(list.len(), truth.k(), "list {query} of another length");
                    assert!(
                        list.iter().all(|&id| id >= 0),
                        "a negative id in list {query}"
                    );
                }
            }
        }
        2 => {
            if let Ok(labels) = ScalarLabels::read(path) {
                let counted: usize = labels.names().iter().map(|name| labels.count(name)).sum();
                assert!(
                    counted <= labels.len(),
                    "{counted} labelled rows of {}",
                    labels.len()
                );
                for row in 0..labels.len().min(1000) {
                    let Ok(id) = i64::try_from(row) else { break };
                    if let Some(label) = labels.label(id) {
                        assert!(labels.names().iter().any(|name| name == label));
                    }
                }
            }
        }
        _ => {
            if let Ok(queries) = Queries::read(path) {
                assert_eq!(queries.ids().len(), queries.len());
                for query in 0..queries.len() {
                    assert_eq!(queries.vector(query).len(), queries.dimension());
                }
            }
        }
    });
}

/// Reads every batch of a Parquet or Arrow reader, checking its columns and damaged rows (see
/// [`columnar_readers`]).
fn check_columns(mut reader: Box<dyn BatchReader>) -> Result<(), InputError> {
    let schema = reader.passthrough_schema();
    while let Some(batch) = reader.next_batch()? {
        let rows = batch.first_row..batch.first_row + batch.rows as u64;
        if let (Some(columns), Some(schema)) = (&batch.columns, &schema) {
            assert_eq!(columns.num_rows(), batch.rows, "columns of another length");
            assert_eq!(
                columns.schema().fields(),
                schema.fields(),
                "columns of other types"
            );
            for column in columns.columns() {
                column
                    .to_data()
                    .validate_full()
                    .unwrap_or_else(|e| panic!("an invalid Arrow column: {e}"));
            }
        }
        let mut last = None;
        for damaged in &batch.damaged {
            assert!(
                rows.contains(&damaged.row),
                "a damaged row outside its batch"
            );
            assert!(last <= Some(damaged.row), "damaged rows out of order");
            last = Some(damaged.row);
            let column = batch
                .columns
                .as_ref()
                .and_then(|columns| columns.column_by_name(&damaged.column))
                .unwrap_or_else(|| panic!("a damaged row of no column: {damaged}"));
            let index = (damaged.row - batch.first_row) as usize;
            assert!(
                column.is_null(index),
                "a damaged cell is not null: {damaged}"
            );
        }
    }
    Ok(())
}

/// Datasets `hdf5_reader` picks from with its first byte.
const HDF5_DATASETS: [&str; 4] = ["train", "test", "neighbors", "distances"];

/// Reads the input after its first byte as an HDF5 file, the dataset (low 2 bits: train, test,
/// neighbors, distances), row selection (bits 2–3) and batch size (bits 4–6) picked by that byte:
/// as a stream and as a file, which must agree, with the checks of [`check_reader`] except that
/// gzip-compressed chunks may hold up to [`DEFLATE_RATIO`] times their bytes; and the dataset
/// whole through `read_integer_dataset`, which holds rows × columns values when it succeeds; and
/// the root attribute `distance` through `read_root_string_attribute`, with the same allocation
/// bound and a value of at most `MAX_ATTRIBUTE_BYTES` bytes.
pub fn hdf5_reader(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let dataset = HDF5_DATASETS
        .get(usize::from(selector & 3))
        .copied()
        .unwrap_or("train");
    let options = InputOptions {
        format: Some(InputFormat::Hdf5),
        column: None,
        dataset: dataset.to_string(),
        selection: fuzzed_selection(selector >> 2),
        batch_rows: usize::from((selector >> 4) & 7) + 1,
        vectors_optional: false,
    };
    let capacity = file.len().saturating_mul(DEFLATE_RATIO);
    let stream = input::open_stream("fuzz input", Box::new(Cursor::new(file.to_vec())), &options)
        .and_then(|reader| read_all(reader, capacity, None));
    let from_file = read_file(file, &options, DEFLATE_RATIO);
    match (&stream, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "stream and file read differently (HDF5)"),
        (Err(_), Err(_)) => {}
        _ => panic!("stream and file disagree (HDF5): {stream:?} / {from_file:?}"),
    }
    let whole = with_file(file, |path| {
        take_largest_allocation();
        let read = input::read_integer_dataset(path, dataset);
        let largest = take_largest_allocation();
        let bound = capacity.saturating_add(FILE_ALLOCATION_SLACK);
        assert!(
            largest <= bound,
            "reading a {}-byte file allocates {largest} bytes at once",
            file.len()
        );
        read
    });
    if let Ok(Ok(read)) = whole {
        assert_eq!(Some(read.values.len()), read.rows.checked_mul(read.columns));
        assert!(
            read.values.len() <= capacity,
            "more values than the input holds"
        );
    }
    let attribute = with_file(file, |path| {
        take_largest_allocation();
        let read = input::read_root_string_attribute(path, "distance");
        let largest = take_largest_allocation();
        let bound = file.len().saturating_add(FILE_ALLOCATION_SLACK);
        assert!(
            largest <= bound,
            "reading an attribute of a {}-byte file allocates {largest} bytes at once",
            file.len()
        );
        read
    });
    if let Ok(Ok(Some(value))) = attribute {
        assert!(
            value.len() <= input::MAX_ATTRIBUTE_BYTES,
            "an attribute longer than the bound: {} bytes",
            value.len()
        );
    }
}

/// Writes `data` to an unnamed temporary file in memory and calls `read` with its `/proc/self/fd`
/// path, as `convert` opens a file.
fn with_file<T>(data: &[u8], read: impl FnOnce(&std::path::Path) -> T) -> Result<T, InputError> {
    let io_error = |source| InputError::Io {
        input: "fuzz temporary file".to_string(),
        source,
    };
    let mut file = tempfile::tempfile_in("/dev/shm")
        .or_else(|_| tempfile::tempfile())
        .map_err(io_error)?;
    file.write_all(data).map_err(io_error)?;
    file.rewind().map_err(io_error)?;
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
    Ok(read(std::path::Path::new(&path)))
}

/// Reads `data` as a file (see [`with_file`]) and every batch of it; the data may inflate to
/// `ratio` times its size (1: it is stored as is).
fn read_file(data: &[u8], options: &InputOptions, ratio: usize) -> Result<ReadAll, InputError> {
    let capacity = data.len().saturating_mul(ratio);
    with_file(data, |path| {
        take_largest_allocation();
        let reader = input::open(Some(path), options)?;
        read_all(
            reader,
            capacity,
            Some(capacity.saturating_add(FILE_ALLOCATION_SLACK)),
        )
    })?
}

/// Reads every batch, checking each against the reader's announced shape and the input's size, and
/// the reader's allocations against `allocation_bound` (from the last [`take_largest_allocation`]).
fn read_all(
    mut reader: Box<dyn BatchReader>,
    input_len: usize,
    allocation_bound: Option<usize>,
) -> Result<ReadAll, InputError> {
    let check_allocations = || {
        let largest = take_largest_allocation();
        if let Some(bound) = allocation_bound {
            assert!(
                largest <= bound,
                "reading a {input_len}-byte file allocates {largest} bytes at once"
            );
        }
    };
    check_allocations();
    let element_type = reader.element_type();
    let dimension = reader.dimension();
    let announced = reader.rows();
    let mut all = ReadAll {
        element_type,
        dimension,
        rows: 0,
        element_bits: Vec::new(),
    };
    loop {
        let next = reader.next_batch();
        check_allocations();
        let Some(batch) = next? else {
            break;
        };
        assert!(batch.first_row >= all.rows, "batches go back");
        assert_eq!(batch.elements.element_type(), element_type);
        assert_eq!(
            Some(batch.elements.len()),
            batch.rows.checked_mul(dimension),
            "a batch's elements are not rows × dimension"
        );
        if let Some(validity) = &batch.validity {
            assert_eq!(
                validity.len(),
                batch.rows,
                "validity is not one flag per row"
            );
        }
        all.rows += batch.rows as u64;
        all.element_bits
            .extend(batch.elements.to_f64().iter().map(|x| x.to_bits()));
        assert!(
            all.element_bits.len() * element_type.size() <= input_len,
            "more elements than the input holds"
        );
    }
    if let Some(rows) = announced {
        assert_eq!(rows, all.rows, "fewer or more rows than announced");
    }
    Ok(all)
}
