//! ANN queries on a live table: each query vector converted by the vector kernel (as `load` converts
//! rows) and bound as bytes to one prepared
//! `SELECT key FROM ks.t [WHERE …] ORDER BY column ANN OF ? LIMIT k`, sent with a fixed number in
//! flight after unmeasured warm-up queries; the answers scored against ground truth (recall@k)
//! with latency percentiles and queries per second.
//!
//! The connection is every job's ([`SessionOptions`]: hosts, login, TLS, consistency, request
//! timeout). A
//! failed query (a timeout included: a server that stops answering cannot hang the run) is
//! counted and the run goes on; it is never retried, so latencies are those of single requests.

pub mod exact;
mod index;
mod job;
mod report;
mod timed;
mod truth;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cqlwire_codec::types::{CqlType as CodecType, Identifier};
use cqlwire_codec::value::{self as codec_value, cql::format_cql};
use cqlwire_vector::input::{BatchReader, Elements, Neighbors};
use cqlwire_vector::kernel::{Rows, VectorEncoder};
use exact::Similarity;
use futures::stream::{FuturesUnordered, StreamExt};
use scylla::client::session::Session;
use scylla::cluster::metadata::{ColumnType, NativeType};
use scylla::deserialize::row::ColumnIterator;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::prepared::PreparedStatement;

use crate::dataset::codec_type;
use crate::error::{LoadError, LoadErrorKind, Setting};
use crate::report::RunControl;
use crate::session::{find_column, ColumnRole, TableColumn, TableSession};
use crate::session::{ConnectionSettings, Consistency, SessionOptions};
use crate::table_guard::TableGuard;
use crate::value::Value;

pub use index::VectorIndex;
pub use job::{PreparedSearch, QuerySource, SearchError, SearchJob, SearchObserver, SearchOutcome};
use report::WarningCounts;
pub use report::{
    recall, Key, Latency, QueryResult, SearchReport, ServerWarning, DISTINCT_WARNINGS,
    RESULTS_HEADER, WARNING_CHARS,
};
pub use timed::TimedRun;
pub use truth::GroundTruth;

/// Pause between two probes of [`Searcher::wait_for_index`].
const PROBE_PAUSE: Duration = Duration::from_millis(500);

/// What to search and how.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The cluster, the table and the rules of every query (login, TLS, consistency, request
    /// timeout, compression).
    pub session: SessionOptions,
    /// The vector column, as written in CQL; `None`: the table's only vector column.
    pub column: Option<String>,
    /// The column returned for each row, as written in CQL; `None`: the partition key (which
    /// must then be a single column).
    pub key: Option<String>,
    /// Rows asked of each query (`LIMIT`), at least 1.
    pub k: usize,
    /// A CQL condition added as `WHERE` (e.g. `category = 'books'`).
    pub predicate: Option<String>,
    /// Queries in flight at once, at least 1.
    pub concurrency: usize,
    /// Queries sent before the measured ones, not measured (the query set is cycled).
    pub warmup: usize,
}

impl SearchOptions {
    /// The consistency level of ANN queries when none is asked for: `LOCAL_ONE`. Cassandra runs
    /// `ORDER BY … ANN OF` queries at `ONE`, `LOCAL_ONE` or `NODE_LOCAL` only: it lowers any other
    /// level to `LOCAL_ONE` and attaches a warning saying so to every answer.
    pub const CONSISTENCY: Consistency = Consistency::LocalOne;

    /// The most rows a query may ask for.
    pub const MAX_K: usize = 1_000_000;

    /// The most queries in flight at once.
    pub const MAX_CONCURRENCY: usize = 100_000;

    /// The most warm-up queries.
    pub const MAX_WARMUP: usize = u32::MAX as usize;

    /// Refuses k, a concurrency or a warm-up out of bounds (k and the concurrency at least 1);
    /// [`Searcher::connect`] checks it before connecting.
    pub fn check(&self) -> Result<(), LoadError> {
        let bounds = [
            (Setting::K, self.k, 1, Self::MAX_K),
            (
                Setting::Concurrency,
                self.concurrency,
                1,
                Self::MAX_CONCURRENCY,
            ),
            (Setting::Warmup, self.warmup, 0, Self::MAX_WARMUP),
        ];
        for (setting, value, least, most) in bounds {
            if !(least..=most).contains(&value) {
                return Err(LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!(
                        "{} must be between {least} and {most}, not {value}",
                        setting.name()
                    ),
                )
                .with_setting(setting));
            }
        }
        Ok(())
    }

    /// 10 neighbours, one query at a time, no warm-up; the queries at the connection's consistency
    /// level (see [`SearchOptions::CONSISTENCY`]).
    pub fn new(session: SessionOptions) -> Self {
        SearchOptions {
            session,
            column: None,
            key: None,
            k: 10,
            predicate: None,
            concurrency: 1,
            warmup: 0,
        }
    }

    /// The connection `settings` give, at [`SearchOptions::CONSISTENCY`] when they name no
    /// consistency level; everything else as [`SearchOptions::new`].
    pub fn from_settings(settings: &ConnectionSettings) -> Result<Self, LoadError> {
        settings
            .options_with_default_consistency(Self::CONSISTENCY)
            .map(Self::new)
    }
}

/// The query vectors, converted for the column and kept in memory (a query set is small: 10,000
/// × 960 floats is 38 MB).
#[derive(Debug, Clone)]
pub struct QuerySet {
    /// Row number in the query input of each query.
    numbers: Vec<u64>,
    values: Vec<Value>,
    /// The same vectors as floats, when asked for (for brute-force ground truth).
    floats: Option<Vec<f32>>,
    dimension: usize,
}

impl QuerySet {
    /// Number of queries.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Refuses a range of query rows (`START..END`, as asked of the input) that the input does not
    /// hold whole: `90..200` of a file of 100 queries runs 10 of them, not 110.
    pub fn check_range(&self, range: &std::ops::Range<u64>) -> Result<(), LoadError> {
        if range.end == u64::MAX || self.len() as u64 >= range.end.saturating_sub(range.start) {
            return Ok(());
        }
        let end = self.numbers.last().map_or(range.start, |last| last + 1);
        Err(LoadError::new(
            LoadErrorKind::InvalidOption,
            format!(
                "the queries {}..{} were asked, but the input ends at row {end}",
                range.start, range.end
            ),
        ))
    }

    /// The row numbers of the queries in their input, in order.
    pub fn numbers(&self) -> &[u64] {
        &self.numbers
    }

    /// The vectors as floats, row-major, when they were kept.
    pub fn floats(&self) -> Option<&[f32]> {
        self.floats.as_deref()
    }

    /// Elements per vector.
    pub fn dimension(&self) -> usize {
        self.dimension
    }
}

/// A session with the prepared ANN query of one table, ready to [`run`](Searcher::run).
pub struct Searcher {
    session: Session,
    prepared: PreparedStatement,
    column: TableColumn,
    key: TableColumn,
    key_type: CodecType,
    index: VectorIndex,
    encoder: VectorEncoder,
    options: SearchOptions,
    /// The table's shape when the query was prepared.
    guard: Option<TableGuard>,
}

impl Searcher {
    /// Connects, finds the vector column, the key column and the column's vector index (a missing
    /// one is [`SearchError::NoIndex`], which shows the statement that creates it) and
    /// prepares the query; the other errors are [`SearchError::Search`]'s.
    pub async fn connect(options: SearchOptions) -> Result<Searcher, SearchError> {
        options.check()?;
        let TableSession {
            session,
            keyspace,
            table,
            columns,
        } = TableSession::open(&options.session).await?;
        let column = vector_column(&columns, options.column.as_deref(), &keyspace, &table)?;
        let key = key_column(&columns, options.key.as_deref(), &keyspace, &table)?;
        let codec = codec_type(&column.cql_type)?;
        let encoder = VectorEncoder::new(&codec).map_err(|e| {
            LoadError::new(
                LoadErrorKind::UnsupportedType,
                format!("column {}: {e}", column.name),
            )
        })?;
        let key_type = codec_type(&key.cql_type)?;
        let index = index::find(&session, &keyspace, &table, &column.name).await?;
        let statement = select(&keyspace, &table, &key.name, &column.name, &options);
        let mut prepared = session.prepare(statement.as_str()).await.map_err(|error| {
            LoadError::new(
                LoadErrorKind::Statement,
                format!("the server refused to prepare {statement:?}: {error}"),
            )
            .with_source(error)
        })?;
        let markers = prepared.get_variable_col_specs().len();
        if markers != 1 {
            return Err(LoadError::new(
                LoadErrorKind::Statement,
                format!(
                    "{statement:?} takes {markers} values, but only the query vector is bound: \
                     write the predicate's values in it"
                ),
            )
            .into());
        }
        prepared.set_is_idempotent(true);
        // The answers carry no column specifications: the one column selected is the key, whose
        // type an ALTER cannot change; a table dropped and created again with another key type
        // is caught by the guard before the run reports.
        prepared.set_use_cached_result_metadata(true);
        let guard = TableGuard::start(&session, &keyspace, &table, "search").await;
        Ok(Searcher {
            session,
            prepared,
            column,
            key,
            key_type,
            index,
            encoder,
            options,
            guard,
        })
    }

    /// The CQL text of the prepared query.
    pub fn statement(&self) -> &str {
        self.prepared.get_statement()
    }

    /// The vector column.
    pub fn column(&self) -> &TableColumn {
        &self.column
    }

    /// The column returned for each row.
    pub fn key(&self) -> &TableColumn {
        &self.key
    }

    /// The column's vector index.
    pub fn index(&self) -> &VectorIndex {
        &self.index
    }

    /// The similarity function of the index.
    pub fn similarity(&self) -> Similarity {
        self.index.similarity
    }

    /// Elements of the column's vectors.
    pub fn dimension(&self) -> usize {
        self.encoder.dimension()
    }

    /// The options the searcher was made with.
    pub fn options(&self) -> &SearchOptions {
        &self.options
    }

    /// Reads every query of `reader` and converts it for the column (checked casts, as `load`
    /// does), keeping the floats too when `keep_floats`. Vectors of another dimension than the
    /// column's are refused before any is read; a vector the server cannot answer for (a NaN or
    /// infinite element, or all zeros for a cosine index) before any query is sent.
    pub fn read_queries(
        &self,
        mut reader: Box<dyn BatchReader>,
        keep_floats: bool,
    ) -> Result<QuerySet, LoadError> {
        let dimension = self.encoder.dimension();
        if reader.dimension() != dimension && reader.rows() != Some(0) {
            return Err(LoadError::new(
                LoadErrorKind::Mapping,
                format!(
                    "the queries have {} elements, but column {} is {}",
                    reader.dimension(),
                    self.column.name,
                    self.column.cql_type
                ),
            ));
        }
        let input = |e: &dyn std::fmt::Display| LoadError::new(LoadErrorKind::Input, e.to_string());
        let mut queries = QuerySet {
            numbers: Vec::new(),
            values: Vec::new(),
            floats: keep_floats.then(Vec::new),
            dimension,
        };
        while let Some(batch) = reader.next_batch().map_err(|e| input(&e))? {
            let rows = Rows::from(&batch.elements);
            for i in 0..batch.rows {
                let number = batch.first_row + i as u64;
                if batch
                    .validity
                    .as_ref()
                    .is_some_and(|v| v.get(i) != Some(&true))
                {
                    return Err(input(&format!("query {number} is null")));
                }
                let mut bytes = Vec::with_capacity(self.encoder.value_size().unwrap_or(0));
                let row = rows.slice(i * dimension, (i + 1) * dimension);
                if let Some(reason) = unanswerable(row, self.index.similarity) {
                    return Err(input(&format!("query {number} {reason}")));
                }
                self.encoder
                    .encode_rows(row, number, &mut bytes)
                    .map_err(|e| input(&e))?;
                queries.numbers.push(number);
                queries
                    .values
                    .push(Value::new(self.column.cql_type.clone(), Bytes::from(bytes)));
            }
            if let Some(floats) = &mut queries.floats {
                match &batch.elements {
                    Elements::F32(v) => floats.extend_from_slice(v),
                    other => floats.extend(other.to_f64().into_iter().map(|x| x as f32)),
                }
            }
            reader.recycle(batch.elements);
        }
        Ok(queries)
    }

    /// Checks that `truth` has a list of at least k ids for every query, and that the key column
    /// holds integers (the ids that ground truth lists).
    pub fn check_truth(&self, queries: &QuerySet, truth: &Neighbors) -> Result<(), LoadError> {
        let mapping = |message: String| LoadError::new(LoadErrorKind::Mapping, message);
        if int_key(&self.key.cql_type).is_none() {
            return Err(mapping(format!(
                "the key column {} is {}, but ground truth lists row numbers: name an integer \
                 column holding the training row numbers",
                self.key.name, self.key.cql_type
            )));
        }
        if truth.k() < self.options.k {
            return Err(mapping(format!(
                "the ground truth lists {} neighbours per query, fewer than the {} asked for",
                truth.k(),
                self.options.k
            )));
        }
        if let Some(&last) = queries.numbers.last() {
            if last >= truth.rows() as u64 {
                return Err(mapping(format!(
                    "the ground truth has lists for {} queries, but query {last} is asked",
                    truth.rows()
                )));
            }
        }
        Ok(())
    }

    /// Sends the first query until it is answered, every half second, and returns how long that
    /// took (a new index refuses ANN queries until it is built), or `None` when there is no query
    /// to send; an error after `timeout`, and [`SearchError::Stopped`] as soon as `control.stop`
    /// is set.
    pub async fn wait_for_index(
        &self,
        queries: &QuerySet,
        timeout: Duration,
        control: &RunControl,
    ) -> Result<Option<Duration>, SearchError> {
        let Some(probe) = queries.values.first() else {
            return Ok(None);
        };
        let started = Instant::now();
        // Since when every probe has found no server to answer it (None: the last one reached one).
        let mut unreachable_since: Option<Instant> = None;
        loop {
            let error = match self.session.execute_unpaged(&self.prepared, (probe,)).await {
                Ok(_) => return Ok(Some(started.elapsed())),
                Err(error) if refuses_the_query(&error) => {
                    return Err(self.refused(&error.to_string()).into())
                }
                Err(error) => error,
            };
            if server_unreachable(&error) {
                let since = *unreachable_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= self.options.session.request_timeout {
                    return Err(LoadError::new(
                        LoadErrorKind::ServerGone,
                        format!(
                            "the server {} is down: no answer for {:.0} s while waiting for the \
                             index {} ({error})",
                            self.options.session.hosts_text(),
                            since.elapsed().as_secs_f64(),
                            self.index.name
                        ),
                    )
                    .into());
                }
            } else {
                unreachable_since = None;
            }
            if started.elapsed() >= timeout {
                return Err(LoadError::new(
                    LoadErrorKind::ServerGone,
                    format!(
                        "the index {} did not answer within {} s: {error}",
                        self.index.name,
                        timeout.as_secs()
                    ),
                )
                .into());
            }
            if control.stop_requested() {
                return Err(SearchError::Stopped {
                    index: self.index.name.clone(),
                    waited: started.elapsed(),
                });
            }
            tokio::time::sleep(PROBE_PAUSE.min(timeout.saturating_sub(started.elapsed()))).await;
        }
    }

    /// The error of a query the server refuses whatever the vector (see [`refuses_the_query`]).
    fn refused(&self, error: &str) -> LoadError {
        LoadError::new(
            LoadErrorKind::Statement,
            format!(
                "the server refuses the query {:?}: {error}",
                self.prepared.get_statement()
            ),
        )
    }

    /// Runs the warm-up queries, then every query of `queries` once, at most the concurrency in
    /// flight, and scores the answers against `truth` (checked with
    /// [`check_truth`](Searcher::check_truth) first). `control.stop` ends the run early (the
    /// report covers the queries answered until then); `control.progress` counts answered queries
    /// as written and failed ones as rejected.
    pub async fn run(
        &self,
        queries: &QuerySet,
        truth: Option<&Neighbors>,
        control: &RunControl,
    ) -> Result<SearchReport, LoadError> {
        if let Some(truth) = truth {
            self.check_truth(queries, truth)?;
        }
        let count = queries.len();
        if count > 0 {
            // The warm-up stops with the run, but its queries are not counted.
            let warming = RunControl {
                stop: control.stop.clone(),
                ..RunControl::default()
            };
            let warmup = (0..self.options.warmup).map(|i| i % count);
            let warmed = self.send_all(warmup, queries, None, &warming, false).await;
            if warmed.is_err() {
                TableGuard::refuse_change(self.guard.as_ref(), &self.session).await?;
            }
            warmed?;
        }
        let started = Instant::now();
        let sent = self.send_all(0..count, queries, truth, control, true).await;
        let elapsed = started.elapsed();
        // Answers read after the table changed hold keys decoded with the old key type, and a
        // query refused after a change ("table … does not exist") was refused because of it.
        TableGuard::refuse_change(self.guard.as_ref(), &self.session).await?;
        let (results, warnings) = sent?;
        Ok(SearchReport::new(
            results,
            warnings,
            self.options.k,
            self.options.concurrency,
            elapsed,
        ))
    }

    /// Sends the queries at `indexes`, at most the concurrency in flight; the results when
    /// `measured` (a warm-up's are dropped as they come, so its length costs no memory) and the
    /// warnings their answers carried.
    async fn send_all(
        &self,
        indexes: impl Iterator<Item = usize>,
        queries: &QuerySet,
        truth: Option<&Neighbors>,
        control: &RunControl,
        measured: bool,
    ) -> Result<(Vec<QueryResult>, WarningCounts), LoadError> {
        let mut indexes = indexes.peekable();
        let mut in_flight = FuturesUnordered::new();
        let mut results = Vec::with_capacity(if measured { queries.len() } else { 0 });
        let mut warnings = WarningCounts::default();
        let mut refusal: Option<String> = None;
        loop {
            while in_flight.len() < self.options.concurrency
                && !control.stop_requested()
                && refusal.is_none()
            {
                let Some(i) = indexes.next() else { break };
                if let (Some(value), Some(&number)) =
                    (queries.values.get(i), queries.numbers.get(i))
                {
                    in_flight.push(self.one(value, number, truth));
                }
            }
            control
                .progress
                .set_in_flight(in_flight.len(), self.options.concurrency);
            let Some((result, answer_warnings, refused)) = in_flight.next().await else {
                break;
            };
            if refused && refusal.is_none() {
                refusal = result.error.clone();
            }
            warnings.add(answer_warnings.iter().map(String::as_str));
            if result.error.is_none() {
                control.progress.add_written(0);
            } else {
                control.progress.add_rejected();
            }
            if measured {
                results.push(result);
            }
        }
        // The same query would be refused for every vector: one error, not one per query.
        if let Some(error) = refusal {
            return Err(self.refused(&error));
        }
        Ok((results, warnings))
    }

    /// One query, timed, the warnings of its answer, and whether the server refused the query
    /// itself (see [`refuses_the_query`]).
    async fn one(
        &self,
        value: &Value,
        number: u64,
        truth: Option<&Neighbors>,
    ) -> (QueryResult, Vec<String>, bool) {
        let started = Instant::now();
        let answer = self.session.execute_unpaged(&self.prepared, (value,)).await;
        let latency = started.elapsed();
        let mut refused = false;
        let (keys, warnings) = match answer {
            Ok(answer) => {
                let warnings = answer.warnings().map(str::to_owned).collect();
                (self.keys(answer), warnings)
            }
            Err(error) => {
                refused = refuses_the_query(&error);
                (Err(error.to_string()), Vec::new())
            }
        };
        let result = match keys {
            Ok(keys) => QueryResult {
                number,
                latency,
                recall: report::query_recall(truth, number, &keys, self.options.k),
                keys,
                error: None,
            },
            Err(error) => QueryResult {
                number,
                latency,
                keys: Vec::new(),
                recall: None,
                error: Some(error),
            },
        };
        (result, warnings, refused)
    }

    /// The keys of an answer's rows.
    fn keys(
        &self,
        answer: scylla::response::query_result::QueryResult,
    ) -> Result<Vec<Key>, String> {
        let rows = answer.into_rows_result().map_err(|e| e.to_string())?;
        let mut keys = Vec::with_capacity(rows.rows_num());
        for row in rows.rows::<ColumnIterator>().map_err(|e| e.to_string())? {
            let mut columns = row.map_err(|e| e.to_string())?;
            let column = columns
                .next()
                .ok_or_else(|| "a row without its key".to_owned())?
                .map_err(|e| e.to_string())?;
            let bytes = column.slice.map(|slice| slice.as_slice());
            keys.push(self.key_of(bytes));
        }
        Ok(keys)
    }

    /// A key's bytes as a [`Key`]: integers as numbers, other values as CQL literals.
    fn key_of(&self, bytes: Option<&[u8]>) -> Key {
        let Some(bytes) = bytes else {
            return Key::Literal("null".to_owned());
        };
        if let Some(id) = int_key(&self.key.cql_type).and_then(|size| int_value(bytes, size)) {
            return Key::Int(id);
        }
        match codec_value::decode(&self.key_type, bytes) {
            Ok(value) => Key::Literal(format_cql(&self.key_type, &value)),
            Err(_) => Key::Literal(format!("0x{}", hex(bytes))),
        }
    }
}

/// For an integer type, its size in bytes (0 for varint, whose size varies).
fn int_key(typ: &crate::types::ServerType) -> Option<usize> {
    match typ.column_type() {
        ColumnType::Native(NativeType::TinyInt) => Some(1),
        ColumnType::Native(NativeType::SmallInt) => Some(2),
        ColumnType::Native(NativeType::Int) => Some(4),
        ColumnType::Native(NativeType::BigInt) => Some(8),
        ColumnType::Native(NativeType::Varint) => Some(0),
        _ => None,
    }
}

/// A big-endian two's-complement integer of `size` bytes (any size up to 8 for 0).
fn int_value(bytes: &[u8], size: usize) -> Option<i64> {
    if (size != 0 && bytes.len() != size) || bytes.is_empty() || bytes.len() > 8 {
        return None;
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut wide = [fill; 8];
    wide[8 - bytes.len()..].copy_from_slice(bytes);
    Some(i64::from_be_bytes(wide))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The vector column: the one named, or the table's only vector column.
fn vector_column(
    columns: &[TableColumn],
    named: Option<&str>,
    keyspace: &str,
    table: &str,
) -> Result<TableColumn, LoadError> {
    let is_vector =
        |c: &&TableColumn| matches!(c.cql_type.column_type(), ColumnType::Vector { .. });
    if let Some(named) = named {
        let column = find_column(columns, named, keyspace, table)?.clone();
        if !is_vector(&&column) {
            return Err(LoadError::new(
                LoadErrorKind::Mapping,
                format!("column {named} is {}, not a vector", column.cql_type),
            ));
        }
        return Ok(column);
    }
    let vectors: Vec<&TableColumn> = columns.iter().filter(is_vector).collect();
    match vectors.as_slice() {
        [only] => Ok((*only).clone()),
        [] => Err(LoadError::new(
            LoadErrorKind::Mapping,
            format!("{keyspace}.{table} has no vector column"),
        )),
        several => {
            let names: Vec<&str> = several.iter().map(|c| c.name.as_str()).collect();
            Err(LoadError::new(
                LoadErrorKind::Mapping,
                format!(
                    "{keyspace}.{table} has several vector columns ({}): choose one",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The key column: the one named, or the single partition key column.
fn key_column(
    columns: &[TableColumn],
    named: Option<&str>,
    keyspace: &str,
    table: &str,
) -> Result<TableColumn, LoadError> {
    if let Some(named) = named {
        return find_column(columns, named, keyspace, table).cloned();
    }
    let keys: Vec<&TableColumn> = columns
        .iter()
        .filter(|c| matches!(c.role, ColumnRole::PartitionKey(_)))
        .collect();
    match keys.as_slice() {
        [only] => Ok((*only).clone()),
        several => {
            let names: Vec<&str> = several.iter().map(|c| c.name.as_str()).collect();
            Err(LoadError::new(
                LoadErrorKind::Mapping,
                format!(
                    "the partition key of {keyspace}.{table} has several columns ({}): choose the \
                     key column",
                    names.join(", ")
                ),
            )
            .with_setting(Setting::Key))
        }
    }
}

/// `SELECT key FROM ks.t [WHERE predicate] ORDER BY column ANN OF ? LIMIT k`.
fn select(keyspace: &str, table: &str, key: &str, column: &str, options: &SearchOptions) -> String {
    let mut statement = format!(
        "SELECT {} FROM {}.{}",
        Identifier(key),
        Identifier(keyspace),
        Identifier(table)
    );
    if let Some(predicate) = &options.predicate {
        let _ = write!(statement, " WHERE {predicate}");
    }
    let _ = write!(
        statement,
        " ORDER BY {} ANN OF ? LIMIT {}",
        Identifier(column),
        options.k
    );
    statement
}

/// Whether the server refused the statement itself (invalid or unauthorized: a `LIMIT` above its
/// top-k limit, a predicate it cannot run), which every other vector would meet too; not a
/// timeout, an overload or a failure of one query.
fn refuses_the_query(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::BadQuery(_)
            | ExecutionError::LastAttemptError(RequestAttemptError::SerializationError(_))
            | ExecutionError::LastAttemptError(RequestAttemptError::DbError(
                DbError::Invalid | DbError::SyntaxError | DbError::Unauthorized,
                _
            ))
    )
}

/// Whether a query failed because no server could be reached (refused or lost connections, a
/// request that timed out): unlike an index still building, which the server answers with an
/// error at once.
fn server_unreachable(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::EmptyPlan
            | ExecutionError::ConnectionPoolError(_)
            | ExecutionError::RequestTimeout(_)
            | ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_))
    )
}

/// Why the server cannot answer an ANN query for the vector `row`, or `None`: a NaN or infinite
/// element (Apache Cassandra 5.0.9 refuses such a query with "non-finite value", and afterwards its
/// ANN queries on the table can hang until a restart), or, for a cosine index, a vector of zeros,
/// which has no angle to any other.
fn unanswerable(row: Rows<'_>, similarity: Similarity) -> Option<String> {
    let values = row.to_f64();
    if let Some((element, value)) = values.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Some(format!(
            "has {value} at element {element}: the server refuses an ANN query of a non-finite \
             value"
        ));
    }
    (similarity == Similarity::Cosine && values.iter().all(|&x| x == 0.0))
        .then(|| "is all zeros: a cosine index cannot compare a vector of length 0".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::column;
    use crate::session::Host;
    use crate::types::tests::{native, vector};

    #[test]
    fn queries_the_server_cannot_answer_are_named_by_element() {
        let nan = [1.0f32, f32::NAN, 0.5];
        let reason = unanswerable(Rows::F32(&nan), Similarity::Euclidean).unwrap();
        assert!(reason.starts_with("has NaN at element 1"), "{reason}");
        let infinite = [f64::NEG_INFINITY, 0.0];
        let reason = unanswerable(Rows::F64(&infinite), Similarity::DotProduct).unwrap();
        assert!(reason.starts_with("has -inf at element 0"), "{reason}");
        let zeros = [0.0f32, -0.0];
        assert!(unanswerable(Rows::F32(&zeros), Similarity::Cosine)
            .unwrap()
            .contains("all zeros"));
        assert_eq!(unanswerable(Rows::F32(&zeros), Similarity::Euclidean), None);
        assert_eq!(unanswerable(Rows::I8(&[0, 1]), Similarity::Cosine), None);
    }

    fn table() -> Vec<TableColumn> {
        vec![
            column(
                "id",
                native(NativeType::BigInt),
                ColumnRole::PartitionKey(0),
            ),
            column("emb", vector(NativeType::Float, 3), ColumnRole::Regular),
            column("Row", native(NativeType::Int), ColumnRole::Regular),
        ]
    }

    #[test]
    fn the_query_selects_the_key_by_the_vector_column_with_the_predicate() {
        let mut options = SearchOptions::new(SessionOptions::new(
            Host::parse_list("h").unwrap(),
            "ks",
            "t",
        ));
        options.k = 100;
        assert_eq!(
            select("ks", "My T", "id", "emb", &options),
            "SELECT id FROM ks.\"My T\" ORDER BY emb ANN OF ? LIMIT 100"
        );
        options.predicate = Some("category = 'books'".into());
        assert_eq!(
            select("ks", "t", "Row", "emb", &options),
            "SELECT \"Row\" FROM ks.t WHERE category = 'books' ORDER BY emb ANN OF ? LIMIT 100"
        );
    }

    #[test]
    fn columns_default_to_the_only_vector_and_the_partition_key() {
        assert_eq!(
            vector_column(&table(), None, "ks", "t").unwrap().name,
            "emb"
        );
        assert_eq!(key_column(&table(), None, "ks", "t").unwrap().name, "id");
        assert_eq!(
            key_column(&table(), Some("\"Row\""), "ks", "t")
                .unwrap()
                .name,
            "Row"
        );
        let error = vector_column(&table(), Some("id"), "ks", "t").unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::Mapping);
        let error = key_column(&table(), Some("nope"), "ks", "t").unwrap_err();
        assert_eq!(error.kind(), LoadErrorKind::UnknownColumn);
        let mut two = table();
        two.push(column(
            "other",
            vector(NativeType::Float, 2),
            ColumnRole::Regular,
        ));
        two.push(column(
            "p2",
            native(NativeType::Int),
            ColumnRole::PartitionKey(1),
        ));
        assert!(vector_column(&two, None, "ks", "t").is_err());
        assert!(key_column(&two, None, "ks", "t").is_err());
    }

    #[test]
    fn integer_keys_read_at_every_width() {
        assert_eq!(int_value(&[0xff], 1), Some(-1));
        assert_eq!(int_value(&[0x01, 0x00], 2), Some(256));
        assert_eq!(int_value(&7i64.to_be_bytes(), 8), Some(7));
        assert_eq!(int_value(&[0x80, 0, 0], 0), Some(-(1 << 23)));
        assert_eq!(int_value(&[0; 9], 0), None);
        assert_eq!(int_value(&[0; 3], 4), None);
    }
}
