//! Jobs against a live Apache Cassandra or ScyllaDB, through the ScyllaDB Rust driver (`scylla`):
//!
//! - **load** ([`Loader`], [`Dataset`]): rows of ready CQL value bytes into a table, as
//!   token-aware single-partition EXECUTEs of one prepared statement, with an adaptive in-flight
//!   window, retries with backoff, a rejects list, and a resume point when a run ends early;
//!   [`LoadJob`] is the whole load of a file or reader, as the command line and Python run it;
//! - **unload** ([`Unloader`]): a table's rows back into files, by token ranges read in parallel;
//!   [`UnloadJob`] is the whole unload into files, as the command line and Python run it;
//! - **search** ([`Searcher`]): ANN queries against a vector index, with recall and latency;
//!   [`SearchJob`] is the whole search (queries, ground truth, the wait for the index, the results
//!   file), as the command line and Python run it; [`exact`] is its brute-force ground truth.
//!
//! A job is built from typed inputs, checks them into its own error type ([`SearchError`],
//! [`UnloadError`]: what only that job meets, such as a column without a vector index or a stopped
//! scan, beside the [`LoadError`] of the shared connection and session) whose messages name
//! settings through [`SettingNames`], which each face implements (`--vector-column` on the command
//! line, `vector_column=` in Python), and each answers `is_usage()` (exit code 2 on the command
//! line, the usage exception in Python) or is a failure; it runs with a stop flag and an observer of its phases for a
//! progress display, and returns its report.
//!
//! They share the connection layer: [`SessionOptions`] (hosts, the table, consistency, request
//! timeout, login, TLS, compression), which each job's options embed beside their own
//! ([`LoadOptions`], [`UnloadOptions`], [`SearchOptions`]) and which both faces build from their
//! text settings through [`ConnectionSettings`]; the table's schema as the server reports it
//! ([`TableColumn`]); and the guard that ends a job when the table changes under it.
//!
//! The values arrive serialized (section 6 of the native protocol spec): this crate never formats a
//! value as text nor re-encodes it. Each [`Value`] carries the [`ServerType`] its bytes were made for,
//! and binding checks it against the type the server reports for the bind marker.
//!
//! ```no_run
//! use cqlwire_client::{CsvRejects, Host, LoadOptions, Loader, Row, RunControl, SessionOptions, Value};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let hosts = Host::parse_list("127.0.0.1:9042")?;
//! let mut options = LoadOptions::new(SessionOptions::with_table_name(hosts, "ks.docs")?);
//! options.columns = Some(vec!["id".into(), "embedding".into()]);
//! let loader = Loader::connect(options).await?;
//! // The markers say what to convert each input column to, e.g. `bigint` and `vector<float, 3>`.
//! let types: Vec<_> = loader.bind_markers().iter().map(|m| m.cql_type.clone()).collect();
//!
//! let (sender, batches) = tokio::sync::mpsc::channel(4);
//! tokio::spawn(async move {
//!     let embedding: Vec<u8> = [0.5f32, -1.0, 2.0].iter().flat_map(|x| x.to_be_bytes()).collect();
//!     let row = Row {
//!         number: 0,
//!         key: "id=42".into(),
//!         values: vec![
//!             Value::new(types[0].clone(), 42i64.to_be_bytes().to_vec()),
//!             Value::new(types[1].clone(), embedding),
//!         ],
//!     };
//!     sender.send(vec![row]).await.ok();
//! });
//!
//! let mut rejects = CsvRejects::new(std::fs::File::create("rejects.csv")?)?;
//! let report = loader.run(batches, 0, &mut rejects, &RunControl::default()).await?;
//! println!("{} rows written, {} rejected", report.written, report.rejected);
//! # Ok(())
//! # }
//! ```
//!
//! The parts that need no server are tested here; `tests/live.rs` runs against a real Cassandra
//! (see `fixtures/load/live-tests.sh`).

mod batch;
mod dataset;
mod error;
mod feed;
mod load_job;
mod loader;
pub mod metrics;
mod options;
mod rejects;
mod report;
mod run;
mod schema;
mod search;
mod session;
mod table_guard;
mod types;
mod unload;
mod value;
mod window;

pub use batch::{DEFAULT_BATCH_BYTES, MAX_BATCH_ROWS};
pub use dataset::{parse_rename, Dataset, DatasetOptions};
pub use error::{LoadError, LoadErrorKind, Setting, SettingNames};
pub use feed::Mode;
pub use load_job::{LoadJob, LoadSource, PreparedLoad};
pub use loader::{BindMarker, Loader};
pub use options::{Concurrency, LoadOptions};
pub use rejects::{CsvRejects, Reject, RejectSink};
pub use report::{LoadReport, Progress, ProgressSnapshot, RunControl};
pub use schema::{IndexState, Product, SchemaSession, Server};
pub use search::{
    exact, recall, GroundTruth, Key, Latency, PreparedSearch, QueryResult, QuerySet, QuerySource,
    SearchError, SearchJob, SearchObserver, SearchOptions, SearchOutcome, SearchReport, Searcher,
    ServerWarning, TimedRun, VectorIndex, DISTINCT_WARNINGS, RESULTS_HEADER, WARNING_CHARS,
};
pub use session::{
    schema_name, ColumnRole, ConnectionSettings, Consistency, Credentials, Host, Password,
    RetryOptions, SessionOptions, TableColumn, TlsOptions, DEFAULT_PORT, PASSWORD_VARIABLE,
};
pub use types::{ServerType, UnsupportedType};
pub use unload::{
    arrow_array, ArrayError, IdsFormat, UnloadControl, UnloadError, UnloadFormat, UnloadJob,
    UnloadObserver, UnloadOptions, UnloadOutcome, UnloadProgress, UnloadReport, UnloadWriteError,
    UnloadWriter, Unloader, VectorColumnError,
};
pub use value::{BindError, Cell, Row, Value};
