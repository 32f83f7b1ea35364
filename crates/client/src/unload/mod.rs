//! Unloading: a table read back by a parallel scan of its token ranges, each page decoded from the
//! value bytes into Arrow arrays, the pages handed on in token order.
//!
//! ```no_run
//! use cqlwire_client::{Host, SessionOptions, UnloadControl, UnloadOptions, Unloader};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let hosts = Host::parse_list("127.0.0.1:9042")?;
//! let options = UnloadOptions::new(SessionOptions::with_table_name(hosts, "ks.docs")?);
//! let unloader = Unloader::connect(options).await?;
//! let (sender, mut pages) = tokio::sync::mpsc::channel(4);
//! let reader = tokio::spawn(async move {
//!     let mut rows = 0;
//!     while let Some(batch) = pages.recv().await {
//!         let batch: arrow_array::RecordBatch = batch;
//!         rows += batch.num_rows();
//!     }
//!     rows
//! });
//! let report = unloader.run(sender, &UnloadControl::default()).await?;
//! assert_eq!(report.rows as usize, reader.await?);
//! # Ok(())
//! # }
//! ```

mod files;
mod job;
mod ranges;
mod scan;
mod write;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::{Field, Schema, SchemaRef};
use cqlwire_codec::types::Identifier;
use cqlwire_codec::types::{CqlType as CodecType, NativeType};
use scylla::client::session::Session;

use crate::table_guard::TableGuard;
use scylla::cluster::metadata::{ColumnType, NativeType as DriverNative};
use scylla::cluster::Node;
use scylla::routing::Token;
use scylla::statement::prepared::PreparedStatement;

use crate::dataset::codec_type;
use crate::error::{LoadError, LoadErrorKind};
use crate::session::{
    chosen_columns, find_table, open_session, schema_name, table_columns, ColumnRole, RetryOptions,
    SessionOptions, TableColumn,
};

pub use cqlwire_vector::arrays::{arrow_array, ArrayError};
pub use files::VectorColumnError;
pub use job::{UnloadError, UnloadJob, UnloadObserver, UnloadOutcome};
pub use write::{IdsFormat, UnloadFormat, UnloadWriteError, UnloadWriter};

use cqlwire_vector::arrays::ArrayBuilder as Builder;
use ranges::{split_ring, TokenRange};

/// What to unload and how to scan.
#[derive(Debug, Clone)]
pub struct UnloadOptions {
    /// The cluster, the table and the rules of every read (login, TLS, consistency, request
    /// timeout, compression).
    pub session: SessionOptions,
    /// Retries of a page read that failed for a reason that may pass.
    pub retry: RetryOptions,
    /// The columns to read, as written in CQL, in output order; `None` reads every column
    /// (partition key, clustering columns, then the others by name).
    pub columns: Option<Vec<String>>,
    /// Columns (among those read) delivered as their CQL value bytes (Arrow `binary`) instead of
    /// their Arrow form, e.g. a vector written out as its value bytes.
    pub raw_columns: Vec<String>,
    /// A CQL condition the rows must meet, added as `AND (condition)` with `ALLOW FILTERING`.
    pub condition: Option<String>,
    /// Parts each range of the token ring (between neighbouring node tokens) is cut into.
    pub splits: usize,
    /// Token ranges read at once. Memory: each holds at most two pages.
    pub concurrency: usize,
    /// Rows per page; `None` sizes pages to about 4 MiB: the first page asks for one row, the
    /// next as many as fit in 4 MiB at the bytes per row seen so far (at most 10,000, fewer for
    /// wide column types).
    pub page_rows: Option<usize>,
}

/// Bytes a page aims at when its row count is not given.
pub(crate) const PAGE_BYTES: usize = 4 << 20;

impl UnloadOptions {
    /// The most parts a ring range is cut into: the ranges of a scan are listed in memory.
    pub const MAX_SPLITS: usize = 100_000;
    /// The most token ranges read at once: each holds up to two pages in memory.
    pub const MAX_CONCURRENCY: usize = 4096;
    /// The most rows asked for in one page.
    pub const MAX_PAGE_ROWS: usize = 1_000_000;

    /// Every column, retries at their default, four parts per ring range, eight ranges at once, pages of about 4 MiB.
    pub fn new(session: SessionOptions) -> Self {
        UnloadOptions {
            session,
            retry: RetryOptions::default(),
            columns: None,
            raw_columns: Vec::new(),
            condition: None,
            splits: 4,
            concurrency: 8,
            page_rows: None,
        }
    }
}

/// Live counters of an unload, for a progress display.
#[derive(Debug, Default)]
pub struct UnloadProgress {
    rows: AtomicU64,
    bytes: AtomicU64,
    ranges_done: AtomicU64,
    retried: AtomicU64,
}

impl UnloadProgress {
    /// Rows handed on so far.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Value bytes of those rows.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Token ranges read completely.
    pub fn ranges_done(&self) -> u64 {
        self.ranges_done.load(Ordering::Relaxed)
    }

    /// Requests retried.
    pub fn retried(&self) -> u64 {
        self.retried.load(Ordering::Relaxed)
    }
}

/// Shared between the caller and a run: the live counters and the stop flag.
#[derive(Debug, Clone, Default)]
pub struct UnloadControl {
    /// Live counters.
    pub progress: Arc<UnloadProgress>,
    /// Set it to end the scan early (the run returns [`UnloadError::Stopped`]).
    pub stop: Arc<AtomicBool>,
}

/// What an unload read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnloadReport {
    /// Rows handed on.
    pub rows: u64,
    /// Value bytes of those rows.
    pub bytes: u64,
    /// Token ranges read.
    pub ranges: u64,
    /// Requests retried.
    pub retried: u64,
    /// Wall time of the scan.
    pub elapsed: Duration,
}

/// One range of the scan and the replicas that hold it.
#[derive(Debug, Clone)]
pub(crate) struct ScanRange {
    pub(crate) tokens: TokenRange,
    pub(crate) replicas: Vec<Arc<Node>>,
}

/// A connected session with the table's description and the prepared range query, ready to
/// [`run`](Unloader::run).
pub struct Unloader {
    pub(crate) session: Arc<Session>,
    pub(crate) prepared: PreparedStatement,
    pub(crate) options: UnloadOptions,
    table_columns: Vec<TableColumn>,
    columns: Vec<TableColumn>,
    codec_types: Vec<CodecType>,
    raw: Vec<bool>,
    schema: SchemaRef,
    pub(crate) ranges: Vec<ScanRange>,
    pub(crate) page_rows: usize,
    /// The table's shape when the range query was prepared.
    pub(crate) guard: Option<TableGuard>,
    /// Rows per page learnt from the pages read, when pages are sized by bytes: the first page
    /// asks for one row, so that rows of tens of MB never make a page the server cannot build.
    pub(crate) sized_pages: Arc<std::sync::atomic::AtomicUsize>,
}

impl Unloader {
    /// Connects, reads the table's columns and ring, checks that every chosen column has an Arrow
    /// form (or is delivered raw), and prepares the range query.
    pub async fn connect(options: UnloadOptions) -> Result<Unloader, LoadError> {
        Self::connect_with(options, |_, _| Ok(())).await
    }

    /// As [`connect`](Unloader::connect), with the options adjusted by `adjust` once the table's
    /// columns are known, e.g. to read the table's only vector column and its partition key.
    pub async fn connect_with<F>(
        mut options: UnloadOptions,
        adjust: F,
    ) -> Result<Unloader, LoadError>
    where
        F: FnOnce(&[TableColumn], &mut UnloadOptions) -> Result<(), LoadError>,
    {
        let keyspace = schema_name(&options.session.keyspace);
        let table_name = schema_name(&options.session.table);
        let limits = [
            ("split count", options.splits, UnloadOptions::MAX_SPLITS),
            (
                "concurrency",
                options.concurrency,
                UnloadOptions::MAX_CONCURRENCY,
            ),
            (
                "page row count",
                options.page_rows.unwrap_or(1),
                UnloadOptions::MAX_PAGE_ROWS,
            ),
        ];
        for (what, value, most) in limits {
            if !(1..=most).contains(&value) {
                return Err(LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!("the {what} must be between 1 and {most}, not {value}"),
                ));
            }
        }
        let session = open_session(&options.session, &keyspace).await?;
        let state = session.get_cluster_state();
        let table_columns = {
            let table = find_table(&state, &keyspace, &table_name)?;
            table_columns(table)?
        };
        adjust(&table_columns, &mut options)?;
        let columns: Vec<TableColumn> = chosen_columns(
            &table_columns,
            options.columns.as_deref(),
            &keyspace,
            &table_name,
        )?
        .into_iter()
        .cloned()
        .collect();
        if columns.is_empty() {
            return Err(LoadError::new(
                LoadErrorKind::InvalidOption,
                "no column to unload",
            ));
        }
        let raw_names: Vec<String> = options.raw_columns.iter().map(|c| schema_name(c)).collect();
        let raw: Vec<bool> = columns
            .iter()
            .map(|column| raw_names.contains(&column.name))
            .collect();
        let mut codec_types = Vec::with_capacity(columns.len());
        let mut fields = Vec::with_capacity(columns.len());
        for (column, &raw) in columns.iter().zip(&raw) {
            let codec = codec_type(&column.cql_type)?;
            let builder = if raw {
                Builder::raw()
            } else {
                Builder::new(&codec).map_err(|e| {
                    LoadError::new(
                        LoadErrorKind::UnsupportedType,
                        format!("column {} cannot be unloaded: {e}", column.name),
                    )
                })?
            };
            fields.push(Field::new(&column.name, builder.data_type(), true));
            codec_types.push(codec);
        }
        let schema = Arc::new(Schema::new(fields));

        let partition_key: Vec<&TableColumn> = table_columns
            .iter()
            .filter(|c| matches!(c.role, ColumnRole::PartitionKey(_)))
            .collect();
        let statement = range_query(
            &keyspace,
            &table_name,
            &columns,
            &partition_key,
            options.condition.as_deref(),
        );
        let mut prepared = session.prepare(statement.as_str()).await.map_err(|error| {
            LoadError::new(
                LoadErrorKind::Statement,
                format!("the server refused to prepare {statement:?}: {error}"),
            )
            .with_source(error)
        })?;
        let markers = prepared.get_variable_col_specs();
        if markers.len() > 2 {
            return Err(LoadError::new(
                LoadErrorKind::Statement,
                format!(
                    "{statement:?} takes {} values, but only the two tokens of each range are \
                     bound: write the condition's values in it",
                    markers.len()
                ),
            ));
        }
        if markers.len() != 2
            || markers
                .iter()
                .any(|m| m.typ() != &ColumnType::Native(DriverNative::BigInt))
        {
            return Err(LoadError::new(
                LoadErrorKind::Statement,
                format!(
                    "{statement:?} does not take two bigint tokens: only the Murmur3 partitioner's \
                     tokens can be scanned"
                ),
            ));
        }
        prepared.set_is_idempotent(true);
        let guard = TableGuard::start(&session, &keyspace, &table_name, "unload").await;
        let page_rows = options
            .page_rows
            .unwrap_or_else(|| (PAGE_BYTES / row_size(&codec_types)).clamp(100, 10_000))
            .max(1);
        let ring: Vec<i64> = state
            .replica_locator()
            .ring()
            .iter()
            .map(|(token, _)| token.value())
            .collect();
        let ranges = split_ring(&ring, options.splits)
            .into_iter()
            .map(|tokens| ScanRange {
                tokens,
                replicas: state
                    .get_token_endpoints(&keyspace, &table_name, Token::new(tokens.end))
                    .into_iter()
                    .map(|(node, _)| node)
                    .collect(),
            })
            .collect();
        Ok(Unloader {
            session: Arc::new(session),
            prepared,
            options,
            table_columns,
            columns,
            codec_types,
            raw,
            schema,
            ranges,
            page_rows,
            guard,
            sized_pages: Arc::new(std::sync::atomic::AtomicUsize::new(1)),
        })
    }

    /// Every column of the table: partition key parts, clustering parts, then the others by name.
    pub fn table_columns(&self) -> &[TableColumn] {
        &self.table_columns
    }

    /// The columns read, in output order.
    pub fn columns(&self) -> &[TableColumn] {
        &self.columns
    }

    /// The Arrow schema of the batches [`run`](Unloader::run) hands on: one nullable field per
    /// column read, named as in the table.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The CQL text of the range query.
    pub fn statement(&self) -> &str {
        self.prepared.get_statement()
    }

    /// The number of token ranges the scan reads.
    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }

    /// Rows per page requested.
    pub fn page_rows(&self) -> usize {
        self.page_rows
    }

    /// Fresh builders of the columns read.
    pub(crate) fn builders(&self) -> Vec<Builder> {
        self.codec_types
            .iter()
            .zip(&self.raw)
            .map(|(ty, &raw)| {
                if raw {
                    Builder::raw()
                } else {
                    // Checked in `connect`.
                    Builder::new(ty).unwrap_or_else(|_| Builder::raw())
                }
            })
            .collect()
    }
}

/// `SELECT c1, … FROM ks.t WHERE token(pk…) > ? AND token(pk…) <= ? [AND (condition) ALLOW FILTERING]`.
fn range_query(
    keyspace: &str,
    table: &str,
    columns: &[TableColumn],
    partition_key: &[&TableColumn],
    condition: Option<&str>,
) -> String {
    let list = |columns: &mut dyn Iterator<Item = &TableColumn>| {
        columns
            .map(|c| Identifier(&c.name).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let selected = list(&mut columns.iter());
    let key = list(&mut partition_key.iter().copied());
    let mut statement = format!(
        "SELECT {selected} FROM {}.{} WHERE token({key}) > ? AND token({key}) <= ?",
        Identifier(keyspace),
        Identifier(table)
    );
    if let Some(condition) = condition {
        statement.push_str(&format!(" AND ({condition}) ALLOW FILTERING"));
    }
    statement
}

/// An estimate of a row's value bytes from its column types, to size pages.
fn row_size(types: &[CodecType]) -> usize {
    fn size(ty: &CodecType) -> usize {
        match ty {
            CodecType::Native(NativeType::Text | NativeType::Ascii | NativeType::Blob) => 64,
            CodecType::Native(native) => native.vector_element_size().unwrap_or(8),
            CodecType::Vector(element, dimension) => size(element).saturating_mul(*dimension),
            CodecType::List(element) | CodecType::Set(element) => size(element).saturating_mul(8),
            CodecType::Map(key, value) => (size(key) + size(value)).saturating_mul(8),
            CodecType::Tuple(fields) => fields.iter().map(size).sum(),
            CodecType::Udt(udt) => udt.fields.iter().map(|(_, ty)| size(ty)).sum(),
            _ => 64,
        }
    }
    types.iter().map(|ty| size(ty) + 4).sum::<usize>().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::column;
    use crate::types::tests::{native, vector};

    #[test]
    fn the_range_query_selects_the_columns_by_the_token_of_the_whole_key() {
        let table = [
            column("a", native(DriverNative::Int), ColumnRole::PartitionKey(0)),
            column("B", native(DriverNative::Text), ColumnRole::PartitionKey(1)),
            column("v", vector(DriverNative::Float, 3), ColumnRole::Regular),
        ];
        let key: Vec<&TableColumn> = table[..2].iter().collect();
        assert_eq!(
            range_query("ks", "t", &table[2..], &key, None),
            "SELECT v FROM ks.t WHERE token(a, \"B\") > ? AND token(a, \"B\") <= ?"
        );
        assert_eq!(
            range_query("ks", "t", &table, &key[..1], Some("a > 3")),
            "SELECT a, \"B\", v FROM ks.t WHERE token(a) > ? AND token(a) <= ? AND (a > 3) \
             ALLOW FILTERING"
        );
    }
}
