//! Rows gathered into UNLOGGED batches: rows that share a replica set, in row order, bounded by a
//! number of rows and by the size the server gives the batch, no two rows of a batch writing the
//! same primary key (they would share the batch's timestamp, and the later row must win).

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;

use scylla::cluster::metadata::ColumnType;

use crate::value::{Cell, Row, Value};

/// Apache Cassandra's default `batch_size_fail_threshold` (50 KiB): the bound of a batch's size when
/// the server's own cannot be read.
pub const DEFAULT_BATCH_BYTES: u64 = 50 * 1024;

/// The most rows a batch may hold.
pub const MAX_BATCH_ROWS: u64 = 1024;

/// Batches being filled at once (one per replica set); past it, the fullest is sent.
const MAX_OPEN: usize = 64;

/// What the server counts of one cell beyond its value: timestamp, TTL and local deletion time.
const CELL_OVERHEAD: u64 = 16;
/// What it counts of one row beyond its cells (liveness, deletion, and its partition's static row),
/// with room to spare.
const ROW_OVERHEAD: u64 = 48;
/// What it counts of an element of a collection (or field of a type) that is not frozen, beyond
/// the bytes of our serialization: a cell of its own with a path (a list's is a 16-byte timeuuid).
const ELEMENT_OVERHEAD: u64 = 32;

/// The size of a row in a batch, at least what Apache Cassandra counts of it against
/// `batch_size_fail_threshold` (the data size of its partition update; the partition key is not
/// counted there, so counting its bytes too only adds to the margin).
pub(crate) fn row_size(row: &Row) -> u64 {
    ROW_OVERHEAD + row.values.iter().map(value_size).sum::<u64>()
}

fn value_size(value: &Value) -> u64 {
    let elements = match (value.cql_type().column_type(), value.cell()) {
        (ColumnType::Collection { frozen: false, .. }, Cell::Bytes(bytes)) => {
            bytes.get(..4).map_or(0, |n| {
                u64::from(u32::from_be_bytes([n[0], n[1], n[2], n[3]]))
            })
        }
        (
            ColumnType::UserDefinedType {
                frozen: false,
                definition,
            },
            _,
        ) => definition.field_types.len() as u64,
        _ => 0,
    };
    CELL_OVERHEAD + value.len() as u64 + elements * ELEMENT_OVERHEAD
}

/// How big a batch may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Rows (at least 1).
    pub(crate) rows: usize,
    /// The [`row_size`]s of its rows, together (a row bigger than this alone is sent alone).
    pub(crate) bytes: u64,
}

/// A batch being filled.
struct Open {
    rows: Vec<Row>,
    bytes: u64,
    /// The primary keys of its rows (see [`Grouper::new`]).
    keys: HashSet<Vec<u8>>,
}

impl Open {
    fn new() -> Self {
        Open {
            rows: Vec::new(),
            bytes: 0,
            keys: HashSet::new(),
        }
    }
}

/// Rows grouped by replica set `R` into batches within [`Bounds`]: a batch is ready when it is
/// full, when the next row of its replica set would not fit or writes a primary key it already
/// writes, when too many are open (the fullest goes), or when [`flush`](Grouper::flush)ed. A
/// ready batch of one row is sent as that row alone.
pub(crate) struct Grouper<R> {
    bounds: Bounds,
    /// The bind markers whose values make a row's primary key.
    key_markers: Vec<usize>,
    open: HashMap<R, Open>,
    ready: VecDeque<Vec<Row>>,
}

impl<R: Hash + Eq + Clone> Grouper<R> {
    /// Batches within `bounds`; two rows are taken to write the same primary key when their values
    /// at `key_markers` are equal (markers that bind no key column may be among them: that only
    /// ends batches earlier).
    pub(crate) fn new(bounds: Bounds, key_markers: Vec<usize>) -> Self {
        Grouper {
            bounds: Bounds {
                rows: bounds.rows.max(1),
                bytes: bounds.bytes,
            },
            key_markers,
            open: HashMap::new(),
            ready: VecDeque::new(),
        }
    }

    /// Adds `row`, whose partition's replicas are `replicas`.
    pub(crate) fn add(&mut self, row: Row, replicas: R) {
        let size = row_size(&row);
        if size > self.bounds.bytes || self.bounds.rows == 1 {
            self.ready.push_back(vec![row]);
            return;
        }
        let key = self.key_of(&row);
        let open = self.open.entry(replicas.clone()).or_insert_with(Open::new);
        if open.bytes + size > self.bounds.bytes || open.keys.contains(&key) {
            let full = std::mem::replace(open, Open::new());
            self.ready.push_back(full.rows);
        }
        open.bytes += size;
        open.keys.insert(key);
        open.rows.push(row);
        if open.rows.len() >= self.bounds.rows {
            if let Some(full) = self.open.remove(&replicas) {
                self.ready.push_back(full.rows);
            }
        }
        if self.open.len() > MAX_OPEN {
            let fullest = self
                .open
                .iter()
                .max_by_key(|(_, open)| open.rows.len())
                .map(|(replicas, _)| replicas.clone());
            if let Some(full) = fullest.and_then(|replicas| self.open.remove(&replicas)) {
                self.ready.push_back(full.rows);
            }
        }
    }

    /// Makes every open batch ready.
    pub(crate) fn flush(&mut self) {
        let mut open: Vec<Open> = self.open.drain().map(|(_, open)| open).collect();
        open.sort_by_key(|open| std::cmp::Reverse(open.rows.len()));
        self.ready.extend(open.into_iter().map(|open| open.rows));
    }

    /// Whether batches are being filled.
    pub(crate) fn has_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The next ready batch.
    pub(crate) fn next_ready(&mut self) -> Option<Vec<Row>> {
        self.ready.pop_front()
    }

    fn key_of(&self, row: &Row) -> Vec<u8> {
        let mut key = Vec::new();
        for value in self.key_markers.iter().filter_map(|&i| row.values.get(i)) {
            match value.cell() {
                Cell::Bytes(bytes) => {
                    key.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
                    key.extend_from_slice(bytes);
                }
                Cell::Null => key.extend_from_slice(&u64::MAX.to_be_bytes()),
                Cell::Unset | Cell::Invalid(_) => {
                    key.extend_from_slice(&(u64::MAX - 1).to_be_bytes())
                }
            }
        }
        key
    }
}

/// A data storage setting of the server as `system_views.settings` shows it, in bytes:
/// `50KiB`, `1MiB`, `512B`, or a bare number of KiB (the `…_in_kb` names of Apache Cassandra 4.0).
pub(crate) fn parse_storage(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale: u64 = match unit.trim() {
        "" | "KiB" => 1024,
        "B" => 1,
        "MiB" => 1024 * 1024,
        "GiB" => 1024 * 1024 * 1024,
        _ => return None,
    };
    number.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::tests::{collection, native, vector};
    use crate::types::ServerType;
    use scylla::cluster::metadata::{CollectionType, NativeType};

    fn row(number: u64, id: u64, floats: u16) -> Row {
        let id_type = ServerType::new(native(NativeType::BigInt)).unwrap();
        let v_type = ServerType::new(vector(NativeType::Float, floats)).unwrap();
        Row {
            number,
            key: id.to_string(),
            values: vec![
                Value::new(id_type, id.to_be_bytes().to_vec()),
                Value::new(v_type, vec![0u8; 4 * usize::from(floats)]),
            ],
        }
    }

    fn numbers(batch: &[Row]) -> Vec<u64> {
        batch.iter().map(|row| row.number).collect()
    }

    fn drain<R: Hash + Eq + Clone>(grouper: &mut Grouper<R>) -> Vec<Vec<u64>> {
        std::iter::from_fn(|| grouper.next_ready())
            .map(|batch| numbers(&batch))
            .collect()
    }

    #[test]
    fn sixteen_rows_of_768_floats_fit_the_default_threshold_and_seventeen_do_not() {
        let size = row_size(&row(0, 0, 768));
        assert!(16 * size <= DEFAULT_BATCH_BYTES, "{size}");
        assert!(17 * size > DEFAULT_BATCH_BYTES, "{size}");
        // At least what the server counts: 8 + 4 + 4 bytes of every cell besides its value.
        assert!(size >= 3072 + 8 + 2 * 16);
    }

    #[test]
    fn a_batch_ends_at_its_row_bound_and_rows_of_other_replicas_go_apart() {
        let bounds = Bounds {
            rows: 3,
            bytes: u64::MAX,
        };
        let mut grouper = Grouper::new(bounds, vec![0]);
        for n in 0..8 {
            grouper.add(row(n, n, 4), n % 2);
        }
        assert_eq!(drain(&mut grouper), [vec![0, 2, 4], vec![1, 3, 5]]);
        assert!(grouper.has_open());
        grouper.flush();
        assert!(!grouper.has_open());
        let mut rest = drain(&mut grouper);
        rest.sort();
        assert_eq!(rest, [vec![6], vec![7]]);
    }

    #[test]
    fn a_batch_never_passes_its_byte_bound_and_a_bigger_row_goes_alone() {
        let size = row_size(&row(0, 0, 8));
        let bounds = Bounds {
            rows: 100,
            bytes: 2 * size + size / 2,
        };
        let mut grouper = Grouper::new(bounds, vec![0]);
        for n in 0..5 {
            grouper.add(row(n, n, 8), ());
        }
        grouper.add(row(5, 5, 100), ());
        grouper.flush();
        assert_eq!(
            drain(&mut grouper),
            [vec![0, 1], vec![2, 3], vec![5], vec![4]]
        );
    }

    #[test]
    fn a_repeated_key_starts_a_new_batch() {
        let bounds = Bounds {
            rows: 10,
            bytes: u64::MAX,
        };
        let mut grouper = Grouper::new(bounds, vec![0]);
        for (n, id) in [(0, 7), (1, 8), (2, 7), (3, 9), (4, 8)] {
            grouper.add(row(n, id, 2), ());
        }
        grouper.flush();
        assert_eq!(drain(&mut grouper), [vec![0, 1], vec![2, 3, 4]]);
        // Without key markers every row has the same key: batches of one.
        let mut grouper = Grouper::new(bounds, Vec::new());
        for n in 0..3 {
            grouper.add(row(n, n, 2), ());
        }
        grouper.flush();
        assert_eq!(drain(&mut grouper), [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn open_batches_are_bounded_in_number() {
        let bounds = Bounds {
            rows: 4,
            bytes: u64::MAX,
        };
        let mut grouper = Grouper::new(bounds, vec![0]);
        grouper.add(row(0, 0, 1), 0usize);
        grouper.add(row(1, 1, 1), 0usize);
        for n in 2..(MAX_OPEN as u64 + 2) {
            grouper.add(row(n, n, 1), n as usize);
        }
        assert_eq!(drain(&mut grouper), [vec![0, 1]]);
        assert_eq!(grouper.open.len(), MAX_OPEN);
    }

    #[test]
    fn elements_of_collections_that_are_not_frozen_count_as_cells() {
        let list = ServerType::new(collection(
            false,
            CollectionType::List(Box::new(native(NativeType::Int))),
        ))
        .unwrap();
        let mut bytes = 3u32.to_be_bytes().to_vec();
        for i in 0..3u32 {
            bytes.extend_from_slice(&4u32.to_be_bytes());
            bytes.extend_from_slice(&i.to_be_bytes());
        }
        let value = Value::new(list, bytes.clone());
        // Each element is a cell: 16 bytes, a 16-byte timeuuid path and the 4-byte int.
        assert!(value_size(&value) >= 3 * (16 + 16 + 4));
        let frozen = ServerType::new(collection(
            true,
            CollectionType::List(Box::new(native(NativeType::Int))),
        ))
        .unwrap();
        assert_eq!(value_size(&Value::new(frozen, bytes)), 16 + 28);
    }

    #[test]
    fn storage_settings_parse_as_the_server_writes_them() {
        assert_eq!(parse_storage("50KiB"), Some(51_200));
        assert_eq!(parse_storage("50"), Some(51_200));
        assert_eq!(parse_storage("1MiB"), Some(1 << 20));
        assert_eq!(parse_storage("640B"), Some(640));
        for bad in [
            "",
            "KiB",
            "50 kb",
            "-1KiB",
            "null",
            "99999999999999999999GiB",
        ] {
            assert_eq!(parse_storage(bad), None, "{bad}");
        }
    }
}
