//! VectorDBBench's performance case against a live Apache Cassandra or ScyllaDB, on the engine of
//! `cqlwire load` and `cqlwire search` (`cqlwire-client`): create the table (`drop_old`), insert
//! the training set, create the vector index and wait until it answers (`load`: insert and
//! optimize, as VectorDBBench counts them), the serial pass (`search_serial`: recall, NDCG,
//! p99/p95) and the time-boxed concurrency sweep (`search_concurrent`: qps, p99, p95 and mean
//! latency per level).
//!
//! [`run`] takes the dataset folder and [`CaseOptions`], reports each stage to an observer as it
//! starts and ends, stops between queries when the [`RunControl`]'s stop flag is set, and returns a
//! [`CaseReport`], which [`CaseReport::result`] turns into VectorDBBench's result file.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cqlwire_client::{
    schema_name, Dataset, Key, LoadError, LoadErrorKind, LoadOptions, Loader, Mode, RejectSink,
    RunControl, SchemaSession, SearchOptions, Searcher, SessionOptions,
};
use cqlwire_codec::types::Identifier;
use cqlwire_vector::input::{self, InputOptions, RowSelection};

use crate::folder::DatasetFolder;
use crate::metrics::{LevelSummary, SerialSummary};
use crate::result::{
    metric_type, CaseConfig, CaseResult, ConcurrencySearchConfig, DbConfig, Metrics, ResultDb,
    TaskConfig, CASE_CUSTOM_DATASET, CONCURRENCY_TIMEOUT,
};
use crate::truth::GroundTruth;
use crate::DatasetError;

/// The product a result names (the release version comes from the server).
const PRODUCT: &str = "Apache Cassandra";

/// Rows per batch read from the training and test files.
const BATCH_ROWS: usize = 4096;

/// The stages of a case, in VectorDBBench's names (`TaskStage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Drop the table (with `drop`) and create it.
    DropOld,
    /// Insert the training set, then create the vector index and wait until it answers.
    Load,
    /// Every query once, one in flight.
    SearchSerial,
    /// The time-boxed levels.
    SearchConcurrent,
}

impl Stage {
    /// Every stage, in the order they run.
    pub const ALL: [Stage; 4] = [
        Stage::DropOld,
        Stage::Load,
        Stage::SearchSerial,
        Stage::SearchConcurrent,
    ];

    /// VectorDBBench's name of the stage, as the result file lists it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::DropOld => "drop_old",
            Stage::Load => "load",
            Stage::SearchSerial => "search_serial",
            Stage::SearchConcurrent => "search_concurrent",
        }
    }

    /// The stage of a name ([`Stage::name`]), None for another.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|stage| stage.name() == name)
    }
}

/// What to run and how.
#[derive(Debug, Clone)]
pub struct CaseOptions {
    /// The cluster and the table (login, TLS, consistency, timeouts) of the load.
    pub connection: SessionOptions,
    /// The same for the queries (at the consistency level ANN queries run at, see
    /// [`SearchOptions::from_settings`]).
    pub search_connection: SessionOptions,
    /// The stages to run, in any order (they run in [`Stage::ALL`]'s).
    pub stages: Vec<Stage>,
    /// Drop the table when it exists (else a case that creates the table refuses to start).
    pub drop: bool,
    /// The index's similarity function (`cosine`, `euclidean`, `dot_product`).
    pub similarity: String,
    /// Other index options, passed through (`OPTIONS = {…}`).
    pub index_options: Vec<(String, String)>,
    /// Neighbours asked of each query.
    pub k: usize,
    /// The concurrency levels of the sweep.
    pub concurrency: Vec<usize>,
    /// The time of each level.
    pub duration: Duration,
    /// How long the load stage waits for the new index to answer.
    pub index_wait: Duration,
}

/// What happens, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A stage starts; `units` is how many rows or queries it counts, when known.
    Started {
        /// The stage.
        stage: Stage,
        /// Rows (load) or queries (serial) it will count.
        units: Option<u64>,
    },
    /// The rows are in; the index is created and waited for.
    Optimizing,
    /// A concurrency level starts.
    Level {
        /// Queries in flight.
        concurrency: usize,
    },
    /// A stage ended after `seconds`.
    Finished {
        /// The stage.
        stage: Stage,
        /// Its wall time.
        seconds: f64,
    },
}

/// What a case measured.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CaseReport {
    /// The stages run.
    pub stages: Vec<Stage>,
    /// The server's product and version, e.g. `Apache Cassandra 5.0.9`.
    pub server: String,
    /// The server's product alone.
    pub product: String,
    /// The server's release version alone.
    pub version: String,
    /// Rows inserted.
    pub rows: u64,
    /// Seconds to insert them.
    pub insert_duration: f64,
    /// Seconds to create the index and until it answered.
    pub optimize_duration: f64,
    /// The serial pass, when it ran.
    pub serial: Option<SerialSummary>,
    /// Queries of the serial pass that failed.
    pub serial_errors: u64,
    /// The sweep's levels.
    pub levels: Vec<LevelSummary>,
    /// Queries of each level that failed.
    pub level_errors: Vec<u64>,
    /// The index statement (or the index found).
    pub index: String,
    /// When the case started, seconds since the Unix epoch.
    pub started: f64,
}

impl CaseReport {
    /// What the faces print or return: the result file's `metrics` plus `server`, `rows`,
    /// `stages`, `index`, `serial_errors` and `conc_errors_list`, as one JSON object.
    pub fn summary(&self, metrics: &Metrics) -> serde_json::Value {
        let mut value = serde_json::to_value(metrics).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("server".into(), self.server.clone().into());
            map.insert("rows".into(), self.rows.into());
            let stages: Vec<&str> = self.stages.iter().map(|s| s.name()).collect();
            map.insert("stages".into(), stages.into());
            map.insert("index".into(), self.index.clone().into());
            map.insert("serial_errors".into(), self.serial_errors.into());
            map.insert("conc_errors_list".into(), self.level_errors.clone().into());
        }
        value
    }

    /// VectorDBBench's result file of this case (`db`: the `DB` member to name), its run id and
    /// timestamp from the case's start.
    pub fn result(&self, options: &CaseOptions, db: ResultDb) -> crate::result::TestResult {
        let run_id = crate::result::run_id(self.started);
        let serial = self.serial.unwrap_or(SerialSummary {
            recall: 0.0,
            ndcg: 0.0,
            latency_p99: 0.0,
            latency_p95: 0.0,
        });
        let metrics = Metrics::of(
            self.insert_duration,
            self.optimize_duration,
            &serial,
            &self.levels,
        );
        let mut index = serde_json::Map::new();
        index.insert(
            "metric_type".into(),
            metric_type(&options.similarity).unwrap_or("COSINE").into(),
        );
        index.insert(
            "similarity_function".into(),
            options.similarity.clone().into(),
        );
        for (key, value) in &options.index_options {
            index.insert(key.clone(), value.clone().into());
        }
        let host = options.connection.hosts.first();
        let task_config = TaskConfig {
            db: db.value().to_owned(),
            db_config: DbConfig {
                db_label: self.product.clone(),
                version: self.version.clone(),
                note: String::new(),
                host: host.map(|h| h.name.clone()),
                port: host.map(|h| h.port),
                keyspace: Some(options.connection.keyspace.clone()),
                table_name: Some(options.connection.table.clone()),
            },
            db_case_config: index,
            case_config: CaseConfig {
                case_id: CASE_CUSTOM_DATASET,
                custom_case: serde_json::Map::new(),
                k: u32::try_from(options.k).ok(),
                concurrency_search_config: ConcurrencySearchConfig {
                    num_concurrency: options
                        .concurrency
                        .iter()
                        .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
                        .collect(),
                    concurrency_duration: options.duration.as_secs(),
                    concurrency_timeout: CONCURRENCY_TIMEOUT,
                },
            },
            stages: self.stages.iter().map(|s| s.name().to_owned()).collect(),
        };
        crate::result::TestResult {
            task_label: run_id.clone(),
            run_id,
            file_fmt: crate::result::FILE_FMT.to_owned(),
            timestamp: self.started,
            results: vec![CaseResult {
                metrics,
                task_config,
                label: ":)".to_owned(),
            }],
        }
    }
}

/// Why a case stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseError {
    /// The dataset folder or one of its files.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The options do not fit (a message naming what to change).
    #[error("{0}")]
    Options(String),
    /// The table exists and the case would create it.
    #[error("table {0} exists: drop it first, or run with the option that drops it")]
    TableExists(String),
    /// The engine: connecting, loading, searching.
    #[error(transparent)]
    Engine(#[from] LoadError),
    /// Rows the server refused: the case does not go on with a table that lacks them.
    #[error("{rejected} rows of the training set were rejected (the first: row {row}: {error})")]
    Rejected {
        /// How many.
        rejected: u64,
        /// The first one's row.
        row: u64,
        /// Why it was rejected.
        error: String,
    },
    /// The stop flag was set.
    #[error("interrupted during {}", .0.name())]
    Stopped(Stage),
}

/// Counts rejected rows and keeps the first.
#[derive(Default)]
struct FirstReject {
    count: u64,
    first: Option<(u64, String)>,
}

impl RejectSink for FirstReject {
    fn reject(&mut self, row: u64, _key: &str, error: &str) -> std::io::Result<()> {
        self.count += 1;
        self.first.get_or_insert_with(|| (row, error.to_owned()));
        Ok(())
    }
}

/// The `CREATE CUSTOM INDEX` of the case's vector index on `column`.
pub fn index_statement(options: &CaseOptions, column: &str) -> String {
    let SessionOptions {
        keyspace, table, ..
    } = &options.connection;
    let name = format!("{}_{}_idx", plain(table), plain(column));
    let mut statement = format!(
        "CREATE CUSTOM INDEX {} ON {}.{} ({}) USING 'StorageAttachedIndex' WITH OPTIONS = \
         {{'similarity_function': '{}'",
        Identifier(&name),
        Identifier(&schema_name(keyspace)),
        Identifier(&schema_name(table)),
        Identifier(column),
        quote(&options.similarity)
    );
    for (key, value) in &options.index_options {
        let _ = write!(statement, ", '{}': '{}'", quote(key), quote(value));
    }
    statement.push('}');
    statement
}

/// `text` inside a CQL string literal (quotes doubled).
fn quote(text: &str) -> String {
    text.replace('\'', "''")
}

/// A name's letters, digits and underscores, lower case (an index name made of a table's).
fn plain(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Checks the options before anything is sent.
fn check(options: &CaseOptions) -> Result<(), CaseError> {
    let refuse = |message: &str| Err(CaseError::Options(message.to_owned()));
    if options.k == 0 || options.k > 1000 {
        return refuse("k must be 1 to 1000 (Cassandra's top-k limit)");
    }
    if options.concurrency.contains(&0) {
        return refuse("every concurrency level must be at least 1");
    }
    if metric_type(&options.similarity).is_none() {
        return refuse("the similarity function must be cosine, euclidean or dot_product");
    }
    if options.stages.is_empty() {
        return refuse("no stage to run");
    }
    Ok(())
}

/// Runs the case's stages on `folder`'s files (see the module's documentation).
pub async fn run(
    folder: &DatasetFolder,
    options: &CaseOptions,
    control: &RunControl,
    observe: &mut (dyn FnMut(Event) + Send),
) -> Result<CaseReport, CaseError> {
    check(options)?;
    let has = |stage: Stage| options.stages.contains(&stage);
    let stopped = |stage| {
        if control.stop.load(Ordering::Relaxed) {
            Err(CaseError::Stopped(stage))
        } else {
            Ok(())
        }
    };
    let searching = has(Stage::SearchSerial) || has(Stage::SearchConcurrent);
    // Every file the stages read is checked before anything is sent.
    let truth = if has(Stage::SearchSerial) {
        Some(GroundTruth::read(folder.ground_truth_file(None)?)?)
    } else {
        None
    };
    if let Some(truth) = &truth {
        if truth.k() < options.k {
            return Err(CaseError::Options(format!(
                "the ground truth lists {} neighbours per query: k can be {} at most",
                truth.k(),
                truth.k()
            )));
        }
    }
    let test = folder.test_file()?.to_path_buf();
    let train_options = InputOptions {
        format: None,
        column: Some("emb".to_owned()),
        dataset: String::new(),
        selection: RowSelection::All,
        batch_rows: BATCH_ROWS,
        vectors_optional: false,
    };
    let mut dataset = if has(Stage::DropOld) || has(Stage::Load) {
        let reader = folder.open_train(&train_options)?;
        Some(Dataset::from_reader(reader, &[], None)?)
    } else {
        None
    };
    let SessionOptions {
        keyspace, table, ..
    } = &options.connection;
    let name = format!("{keyspace}.{table}");
    let (keyspace, table) = (schema_name(keyspace), schema_name(table));
    // Made now: the dataset is not shared with the stages' tasks until the load takes it.
    let create_table = dataset
        .as_ref()
        .map(|dataset| dataset.create_table(&keyspace, &table).0);

    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let schema = SchemaSession::connect(&options.connection).await?;
    let version = schema.release_version().await?;
    let mut report = CaseReport {
        stages: options.stages.clone(),
        server: format!("{PRODUCT} {version}"),
        product: PRODUCT.to_owned(),
        version,
        rows: 0,
        insert_duration: 0.0,
        optimize_duration: 0.0,
        serial: None,
        serial_errors: 0,
        levels: Vec::new(),
        level_errors: Vec::new(),
        index: String::new(),
        started,
    };

    if let (true, Some(statement)) = (has(Stage::DropOld), create_table) {
        observe(Event::Started {
            stage: Stage::DropOld,
            units: None,
        });
        let started = Instant::now();
        if !schema.keyspace_exists(&keyspace).await? {
            return Err(CaseError::Options(format!(
                "keyspace {keyspace} does not exist: create it first, e.g. CREATE KEYSPACE {} \
                 WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
                Identifier(&keyspace)
            )));
        }
        if schema.table_exists(&keyspace, &table).await? {
            if !options.drop {
                return Err(CaseError::TableExists(name));
            }
            schema
                .execute(&format!(
                    "DROP TABLE {}.{}",
                    Identifier(&keyspace),
                    Identifier(&table)
                ))
                .await?;
        }
        schema.execute(&statement).await?;
        observe(Event::Finished {
            stage: Stage::DropOld,
            seconds: started.elapsed().as_secs_f64(),
        });
    }

    if let (true, Some(mut dataset)) = (has(Stage::Load), dataset.take()) {
        stopped(Stage::Load)?;
        observe(Event::Started {
            stage: Stage::Load,
            units: dataset.rows(),
        });
        let loader =
            Loader::connect_for(LoadOptions::new(options.connection.clone()), &mut dataset).await?;
        let mut rejects = FirstReject::default();
        let loaded = loader
            .load(dataset, &mut rejects, control, Mode::Write)
            .await?;
        stopped(Stage::Load)?;
        if let Some((row, error)) = rejects.first {
            return Err(CaseError::Rejected {
                rejected: rejects.count,
                row,
                error,
            });
        }
        report.rows = loaded.written;
        report.insert_duration = loaded.elapsed.as_secs_f64();
    }

    if !(has(Stage::Load) || searching) {
        return Ok(report);
    }
    let optimizing = Instant::now();
    if has(Stage::Load) {
        stopped(Stage::Load)?;
        observe(Event::Optimizing);
        report.index = index_statement(options, "emb");
        schema.execute(&report.index).await?;
    }
    let mut search_options = SearchOptions::new(options.search_connection.clone());
    search_options.k = options.k;
    let searcher = Searcher::connect(search_options).await?;
    if report.index.is_empty() {
        report.index = searcher.index().name.clone();
    }
    let queries_options = InputOptions {
        batch_rows: BATCH_ROWS,
        ..train_options
    };
    let reader = input::open(Some(&test), &queries_options).map_err(DatasetError::from)?;
    let queries = searcher.read_queries(reader, false)?;
    if let Some(truth) = &truth {
        truth.check_queries(queries.len())?;
    }
    if has(Stage::Load) {
        searcher
            .wait_for_index(&queries, options.index_wait, control)
            .await?;
        report.optimize_duration = optimizing.elapsed().as_secs_f64();
        observe(Event::Finished {
            stage: Stage::Load,
            seconds: report.insert_duration + report.optimize_duration,
        });
    }

    if let (true, Some(truth)) = (has(Stage::SearchSerial), truth.as_ref()) {
        stopped(Stage::SearchSerial)?;
        observe(Event::Started {
            stage: Stage::SearchSerial,
            units: Some(queries.len() as u64),
        });
        let started = Instant::now();
        let serial = searcher.run(&queries, None, control).await?;
        stopped(Stage::SearchSerial)?;
        let mut answers = vec![Vec::new(); queries.len()];
        let mut latencies = Vec::with_capacity(serial.results.len());
        for result in &serial.results {
            if result.error.is_some() {
                continue;
            }
            let ids = result
                .keys
                .iter()
                .filter_map(|key| match key {
                    Key::Int(id) => Some(*id),
                    _ => None,
                })
                .collect();
            if let Some(slot) = usize::try_from(result.number)
                .ok()
                .and_then(|i| answers.get_mut(i))
            {
                *slot = ids;
            }
            latencies.push(result.latency.as_secs_f64());
        }
        report.serial = Some(SerialSummary::score(
            options.k,
            &answers,
            |i| truth.list(i),
            &latencies,
        ));
        report.serial_errors = serial.errors;
        observe(Event::Finished {
            stage: Stage::SearchSerial,
            seconds: started.elapsed().as_secs_f64(),
        });
    }

    if has(Stage::SearchConcurrent) {
        observe(Event::Started {
            stage: Stage::SearchConcurrent,
            units: None,
        });
        let started = Instant::now();
        for &concurrency in &options.concurrency {
            stopped(Stage::SearchConcurrent)?;
            observe(Event::Level { concurrency });
            let level = searcher
                .run_for(&queries, concurrency, options.duration, control)
                .await?;
            stopped(Stage::SearchConcurrent)?;
            let latencies: Vec<f64> = level.latencies.iter().map(Duration::as_secs_f64).collect();
            report.levels.push(LevelSummary::of(
                u32::try_from(concurrency).unwrap_or(u32::MAX),
                &latencies,
                level.elapsed.as_secs_f64(),
            ));
            report.level_errors.push(level.errors);
        }
        observe(Event::Finished {
            stage: Stage::SearchConcurrent,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    Ok(report)
}

/// `LoadErrorKind`s a face shows as a usage error (exit 2) rather than a failed run.
pub fn is_usage(error: &CaseError) -> bool {
    match error {
        CaseError::Options(_) | CaseError::TableExists(_) => true,
        CaseError::Engine(error) => matches!(
            error.kind(),
            LoadErrorKind::InvalidOption | LoadErrorKind::UnknownTable | LoadErrorKind::NoIndex
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cqlwire_client::Host;

    fn options() -> CaseOptions {
        let hosts = Host::parse_list("127.0.0.1").unwrap();
        let connection = SessionOptions::with_table_name(hosts, "bench.\"Docs\"").unwrap();
        CaseOptions {
            search_connection: connection.clone(),
            connection,
            stages: vec![Stage::Load],
            drop: false,
            similarity: "cosine".to_owned(),
            index_options: vec![("optimize_for".to_owned(), "recall".to_owned())],
            k: 100,
            concurrency: vec![1, 5],
            duration: Duration::from_secs(30),
            index_wait: Duration::from_secs(600),
        }
    }

    #[test]
    fn the_index_statement_names_the_similarity_and_passes_options_through() {
        let options = options();
        assert_eq!(
            index_statement(&options, "emb"),
            "CREATE CUSTOM INDEX docs_emb_idx ON bench.\"Docs\" (emb) USING \
             'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'cosine', \
             'optimize_for': 'recall'}"
        );
        let quoted = CaseOptions {
            index_options: vec![("a'b".to_owned(), "it's".to_owned())],
            ..options
        };
        assert!(index_statement(&quoted, "emb").ends_with(", 'a''b': 'it''s'}"));
    }

    #[test]
    fn options_that_cannot_work_are_refused_before_connecting() {
        let refused = |change: fn(&mut CaseOptions)| {
            let mut options = options();
            change(&mut options);
            check(&options).unwrap_err().to_string()
        };
        assert!(refused(|o| o.k = 0).contains("k must be"));
        assert!(refused(|o| o.k = 1001).contains("top-k"));
        assert!(refused(|o| o.concurrency = vec![1, 0]).contains("at least 1"));
        assert!(refused(|o| o.similarity = "hamming".into()).contains("cosine"));
        assert!(refused(|o| o.stages.clear()).contains("no stage"));
        assert!(check(&options()).is_ok());
    }

    #[test]
    fn stage_names_are_vectordbbenchs() {
        for (stage, name) in Stage::ALL.iter().zip(crate::result::ALL_STAGES) {
            assert_eq!(stage.name(), name);
            assert_eq!(Stage::from_name(name), Some(*stage));
        }
        assert_eq!(Stage::from_name("optimize"), None);
    }
}
