//! VectorDBBench's performance case against a live Apache Cassandra or ScyllaDB, on the engine of
//! `cqlwire load` and `cqlwire search` (`cqlwire-client`): create the table (`table`,
//! VectorDBBench's `drop_old`), insert the training set (`load`), create the vector index
//! (`index`) and wait until it answers (`optimize`; the three are VectorDBBench's `load`, insert
//! and optimize as it counts them), the serial pass (`serial`: recall, NDCG, p99/p95) and the
//! time-boxed concurrency sweep (`concurrent`: qps, p99, p95 and mean latency per level).
//!
//! [`run`] takes the dataset (a folder or three files, [`BenchDataset`]) and [`CaseOptions`],
//! reports each stage to an observer as it starts and ends, stops between queries when the
//! [`RunControl`]'s stop flag is set, and returns a [`CaseReport`], which [`CaseReport::result`]
//! turns into VectorDBBench's result file.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cqlwire_client::{
    schema_name, Dataset, IndexState, Key, LoadError, LoadErrorKind, LoadOptions, Loader, Mode,
    QuerySet, RejectSink, RunControl, SchemaSession, SearchError, SearchOptions, Searcher,
    SessionOptions,
};
use cqlwire_codec::types::Identifier;
use cqlwire_vector::input::{BatchReader, InputOptions, RowSelection};

use crate::dataset::{BenchDataset, DatasetSummary};
use crate::filtered::{FilterColumn, WithFilterColumn};
use crate::folder::{DatasetFolder, Filter};
use crate::metrics::{LevelSummary, SerialSummary};
use crate::result::{
    metric_type, CaseConfig, CaseResult, ConcurrencySearchConfig, DbConfig, Metrics, ResultDb,
    TaskConfig, CASE_CUSTOM_DATASET, CASE_INT_FILTER, CASE_LABEL_FILTER, CONCURRENCY_TIMEOUT,
};
use crate::standard::StandardDataset;
use crate::truth::{GroundTruth, ScalarLabels};
use crate::DatasetError;

/// The element type of the table's vectors, whatever the training set's (VectorDBBench converts
/// every dataset to float32, and Cassandra's vector index takes only `vector<float, N>`).
const VECTOR_ELEMENT: &str = "float";

/// Rows per batch read from the training and test files.
const BATCH_ROWS: usize = 4096;

/// The stages of a case, in the order they run (the index after the load unless
/// [`CaseOptions::index_first`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Drop the table (with `drop`) and create it.
    Table,
    /// Insert the training set.
    Load,
    /// Create the vector index (and a filtered case's index on its column).
    Index,
    /// Wait until the index answers.
    Optimize,
    /// Every query once, one in flight.
    Serial,
    /// The time-boxed levels.
    Concurrent,
}

impl Stage {
    /// Every stage, in the order they run.
    pub const ALL: [Stage; 6] = [
        Stage::Table,
        Stage::Load,
        Stage::Index,
        Stage::Optimize,
        Stage::Serial,
        Stage::Concurrent,
    ];

    /// The stage's name: `table`, `load`, `index`, `optimize`, `serial`, `concurrent`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Table => "table",
            Stage::Load => "load",
            Stage::Index => "index",
            Stage::Optimize => "optimize",
            Stage::Serial => "serial",
            Stage::Concurrent => "concurrent",
        }
    }

    /// The name of VectorDBBench's stage this one is part of (`drop_old`, `load` for the load,
    /// the index and the wait, `search_serial`, `search_concurrent`), as its result file lists it.
    pub fn vectordbbench_name(self) -> &'static str {
        match self {
            Stage::Table => "drop_old",
            Stage::Load | Stage::Index | Stage::Optimize => "load",
            Stage::Serial => "search_serial",
            Stage::Concurrent => "search_concurrent",
        }
    }

    /// VectorDBBench's names of `stages`, each once, in the order they run.
    pub fn vectordbbench_names(stages: &[Stage]) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for stage in Stage::ALL.into_iter().filter(|s| stages.contains(s)) {
            if !names.contains(&stage.vectordbbench_name()) {
                names.push(stage.vectordbbench_name());
            }
        }
        names
    }

    /// The stages a list of names asks for: the names of [`Stage::name`], or VectorDBBench's
    /// (`drop_old` for `table`, `search_serial`, `search_concurrent`). A list made of
    /// VectorDBBench's names only is read as VectorDBBench means it: its `load` is the load, the
    /// index and the wait; in any other list `load` is the load alone. An unknown name is an error
    /// listing the names.
    pub fn parse_list<S: AsRef<str>>(names: &[S]) -> Result<Vec<Stage>, String> {
        let vectordbbench = names
            .iter()
            .all(|name| crate::result::ALL_STAGES.contains(&name.as_ref().trim()));
        let mut stages = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            let found: &[Stage] = match name {
                "table" | "drop_old" => &[Stage::Table],
                "load" if vectordbbench => &[Stage::Load, Stage::Index, Stage::Optimize],
                "load" => &[Stage::Load],
                "index" => &[Stage::Index],
                "optimize" => &[Stage::Optimize],
                "serial" | "search_serial" => &[Stage::Serial],
                "concurrent" | "search_concurrent" => &[Stage::Concurrent],
                _ => {
                    return Err(format!(
                        "no stage '{name}' (stages: table, load, index, optimize, serial, \
                         concurrent, or VectorDBBench's drop_old, load, search_serial, \
                         search_concurrent)"
                    ))
                }
            };
            for stage in found {
                if !stages.contains(stage) {
                    stages.push(*stage);
                }
            }
        }
        Ok(stages)
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
    /// The index's similarity function (`cosine`, `euclidean`, `dot_product`); `None` takes the
    /// dataset's own ([`BenchDataset::similarity`]: an ann-benchmarks file's `distance`, else
    /// cosine).
    pub similarity: Option<String>,
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
    /// How long a schema statement (a table, an index) may take.
    pub schema_timeout: Duration,
    /// A command of the user's run by the optimize stage before it waits for the index (e.g.
    /// `nodetool flush ks t && nodetool compact ks t`), through `sh -c`, inside
    /// `optimize_duration`; a failure ends the case.
    pub optimize_command: Option<String>,
    /// How many times the search stages run on the loaded table (their medians are the
    /// result's metrics), at least 1.
    pub rounds: usize,
    /// VectorDBBench's filter of a filtered case (None: the unfiltered case).
    pub filter: Option<Filter>,
    /// Create the index before the load (VectorDBBench's order): the rows the server refuses
    /// are counted and the case goes on (on 5.0.9 most concurrent writes into an indexed table
    /// are refused, CASSANDRA-21644). Else the index comes after the load, and a refused row
    /// stops the case.
    pub index_first: bool,
}

/// What the server refused of a load into a table indexed before it ([`CaseOptions::index_first`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFirstLoad {
    /// Writes refused and sent again (each row at most the engine's retries).
    pub retried: u64,
    /// Rows refused at every try, not stored.
    pub rejected: u64,
    /// The first rejected row and why.
    pub first: Option<(u64, String)>,
}

impl std::fmt::Display for IndexFirstLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the index made before the load: {} writes failed and were retried, {} rows rejected",
            self.retried, self.rejected
        )?;
        if let Some((row, error)) = &self.first {
            write!(f, " (the first: row {row}: {error})")?;
        }
        f.write_str(" (CASSANDRA-21644 on Cassandra 5.0.9)")
    }
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
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// The index's similarity function: the one asked for, else the dataset's own.
    pub similarity: String,
    /// The index statement (or the index found).
    pub index: String,
    /// The options of the index this run made (none for an index found).
    pub index_options: Vec<(String, String)>,
    /// A filtered case's `WHERE` condition (e.g. `id_int >= 3`).
    pub filter: Option<String>,
    /// What the server refused while the index existed during the load
    /// ([`CaseOptions::index_first`]).
    pub index_first: Option<IndexFirstLoad>,
    /// The statement of the filtered column's SAI index, when the load stage made it.
    pub filter_index: String,
    /// When the case started, seconds since the Unix epoch.
    pub started: f64,
    /// What was read: the dataset's name, folder, rows and dimension.
    pub dataset: DatasetSummary,
    /// The keyspace's replication map, as the server holds it.
    pub replication: std::collections::BTreeMap<String, String>,
    /// Nodes of the cluster.
    pub nodes: usize,
    /// The client machine's load average (1, 5, 15 minutes) before and after the case.
    pub load_average: (Option<[f64; 3]>, Option<[f64; 3]>),
    /// The vector index as the server showed it when the search stages began (None: the server
    /// does not say, or no search stage ran).
    pub index_state: Option<IndexState>,
    /// Each round of the search stages ([`CaseOptions::rounds`]); `serial` and `levels` hold
    /// their medians.
    pub rounds: Vec<Round>,
    /// Seconds the optimize command took (inside `optimize_duration`).
    pub optimize_command_seconds: Option<f64>,
    /// The streaming case's searches and insert, when the case was one
    /// ([`crate::streaming`]).
    pub streaming: Option<crate::streaming::StreamingReport>,
}

/// One round of the search stages.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Round {
    /// The serial pass, when it ran.
    pub serial: Option<SerialSummary>,
    /// The sweep's levels.
    pub levels: Vec<LevelSummary>,
}

/// The median of `values` as NumPy's `median` (the mean of the middle two of an even count).
fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.into_iter().collect();
    crate::metrics::percentile(&values, 50.0).unwrap_or(0.0)
}

impl CaseReport {
    /// Sets `serial` and `levels` to the medians of the rounds, field by field (each level by its
    /// position in the sweep); one round is its own median.
    pub(crate) fn take_medians(&mut self) {
        if self.rounds.len() < 2 {
            return;
        }
        let serials: Vec<SerialSummary> = self.rounds.iter().filter_map(|r| r.serial).collect();
        if !serials.is_empty() {
            self.serial = Some(SerialSummary {
                recall: median(serials.iter().map(|s| s.recall)),
                ndcg: median(serials.iter().map(|s| s.ndcg)),
                latency_p99: median(serials.iter().map(|s| s.latency_p99)),
                latency_p95: median(serials.iter().map(|s| s.latency_p95)),
            });
        }
        let levels = self.rounds[0].levels.len();
        self.levels = (0..levels)
            .filter_map(|i| {
                let each: Vec<&LevelSummary> =
                    self.rounds.iter().filter_map(|r| r.levels.get(i)).collect();
                let first = each.first()?;
                Some(LevelSummary {
                    concurrency: first.concurrency,
                    qps: crate::metrics::round4(median(each.iter().map(|l| l.qps))),
                    latency_p99: median(each.iter().map(|l| l.latency_p99)),
                    latency_p95: median(each.iter().map(|l| l.latency_p95)),
                    latency_avg: median(each.iter().map(|l| l.latency_avg)),
                })
            })
            .collect();
    }

    /// The rounds and the spread (min, median, max) of recall, NDCG and qps across them, as
    /// the summary and the result file's note show them; None for a single round.
    pub fn spread(&self) -> Option<serde_json::Value> {
        if self.rounds.len() < 2 {
            return None;
        }
        let range = |values: Vec<f64>| {
            let least = values.iter().copied().fold(f64::INFINITY, f64::min);
            let most = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            serde_json::json!([least, median(values), most])
        };
        let serials: Vec<SerialSummary> = self.rounds.iter().filter_map(|r| r.serial).collect();
        let qps: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| crate::metrics::max_qps(&r.levels))
            .collect();
        let rounds: Vec<serde_json::Value> = self
            .rounds
            .iter()
            .map(|round| {
                serde_json::json!({
                    "recall": round.serial.map(|s| s.recall),
                    "ndcg": round.serial.map(|s| s.ndcg),
                    "serial_latency_p99": round.serial.map(|s| s.latency_p99),
                    "conc_qps_list": round.levels.iter().map(|l| l.qps).collect::<Vec<_>>(),
                    "conc_latency_p99_list":
                        round.levels.iter().map(|l| l.latency_p99).collect::<Vec<_>>(),
                })
            })
            .collect();
        Some(serde_json::json!({
            "rounds": rounds,
            "recall": range(serials.iter().map(|s| s.recall).collect()),
            "ndcg": range(serials.iter().map(|s| s.ndcg).collect()),
            "qps": range(qps),
        }))
    }

    /// Adds what was measured of the server and across rounds, when there is any: the index's
    /// state, the spread of the rounds, the optimize command's time.
    fn insert_server_side(&self, map: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(state) = &self.index_state {
            map.insert("index_state".into(), index_state_json(state));
        }
        if let Some(spread) = self.spread() {
            map.insert("spread".into(), spread);
        }
        if let Some(seconds) = self.optimize_command_seconds {
            map.insert("optimize_command_duration".into(), seconds.into());
        }
        if let Some(streaming) = &self.streaming {
            map.insert("streaming".into(), streaming.insert_json());
        }
    }

    /// The spread as the text summary shows it: `medians of 3 rounds: recall 0.9500 (min 0.9400,
    /// max 0.9600), ndcg …, qps …`; None for a single round.
    pub fn spread_line(&self) -> Option<String> {
        let spread = self.spread()?;
        let range = |name: &str| {
            let v = &spread[name];
            let at = |i: usize| v[i].as_f64().unwrap_or(0.0);
            format!("{name} {:.4} (min {:.4}, max {:.4})", at(1), at(0), at(2))
        };
        Some(format!(
            "medians of {} rounds: {}, {}, {}",
            self.rounds.len(),
            range("recall"),
            range("ndcg"),
            range("qps")
        ))
    }

    /// A report of a run that measured nothing, on a 300 x 8 folder.
    #[cfg(test)]
    pub(crate) fn empty_for_tests() -> CaseReport {
        CaseReport {
            stages: Stage::ALL.to_vec(),
            server: "Apache Cassandra 5.0.9".to_owned(),
            product: "Apache Cassandra".to_owned(),
            version: "5.0.9".to_owned(),
            similarity: "cosine".to_owned(),
            dataset: DatasetSummary {
                name: "folder".to_owned(),
                dir: "/data/folder".to_owned(),
                size: 300,
                dim: 8,
                file_count: 3,
                use_shuffled: true,
            },
            nodes: 1,
            ..CaseReport::default()
        }
    }

    /// Queries that failed, in the serial pass and every level.
    pub fn failed_queries(&self) -> u64 {
        self.serial_errors + self.level_errors.iter().sum::<u64>()
    }

    /// What the faces print or return: the result file's `metrics` plus `server`, `rows`,
    /// `stages`, `index`, `serial_errors` and `conc_errors_list`, as one JSON object.
    pub fn summary(&self, metrics: &Metrics) -> serde_json::Value {
        let mut value = serde_json::to_value(metrics).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("server".into(), self.server.clone().into());
            map.insert("rows".into(), self.rows.into());
            let stages = Stage::vectordbbench_names(&self.stages);
            map.insert("stages".into(), stages.into());
            map.insert("index".into(), self.index.clone().into());
            if let Some(filter) = &self.filter {
                map.insert("filter".into(), filter.clone().into());
            }
            if let Some(load) = &self.index_first {
                map.insert("retried".into(), load.retried.into());
                map.insert("rejected".into(), load.rejected.into());
                map.insert("rejected_reason".into(), load.to_string().into());
            }
            self.insert_server_side(map);
            map.insert("serial_errors".into(), self.serial_errors.into());
            map.insert("conc_errors_list".into(), self.level_errors.clone().into());
        }
        value
    }

    /// VectorDBBench's result file of this case: `db` the `DB` member to name, `run_id` its id
    /// (see [`crate::result::run_id`]), `label` the run's label (VectorDBBench's `task_label` and
    /// `db_label`; the run id and the product without one).
    pub fn result(
        &self,
        options: &CaseOptions,
        db: ResultDb,
        run_id: &str,
        label: Option<&str>,
    ) -> crate::result::TestResult {
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
            metric_type(&self.similarity).unwrap_or("COSINE").into(),
        );
        index.insert("similarity_function".into(), self.similarity.clone().into());
        for (key, value) in &self.index_options {
            index.insert(key.clone(), value.clone().into());
        }
        let host = options.connection.hosts.first();
        let (strategy, factor, datacenter) = replication_of(&self.replication);
        let task_config = TaskConfig {
            db: db.value().to_owned(),
            db_config: DbConfig {
                db_label: label.map_or_else(|| self.product.clone(), str::to_owned),
                version: self.version.clone(),
                note: self.run_context().to_string(),
                host: host.map(|h| h.name.clone()),
                port: host.map(|h| h.port),
                keyspace: Some(options.connection.keyspace.clone()),
                table_name: Some(options.connection.table.clone()),
                replication_strategy: strategy,
                replication_factor: factor,
                datacenter_name: datacenter,
            },
            db_case_config: index,
            case_config: self.case_config(options),
            stages: Stage::vectordbbench_names(&self.stages)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        };
        let mut case = CaseResult {
            metrics,
            task_config,
            label: ":)".to_owned(),
        };
        if let Some(streaming) = &self.streaming {
            streaming.fill(&mut case, &self.dataset);
        }
        crate::result::TestResult {
            task_label: label.unwrap_or(run_id).to_owned(),
            run_id: run_id.to_owned(),
            file_fmt: crate::result::FILE_FMT.to_owned(),
            timestamp: self.started,
            results: vec![case],
        }
    }

    /// VectorDBBench's case of this run: a standard dataset's own case (its performance case,
    /// or a filtered case of it, 300 or 400), else its custom-dataset case (101) with the folder
    /// described whole, a label filter as that case's `label_percentage` (an int filter, which
    /// that case cannot hold, in its description only).
    fn case_config(&self, options: &CaseOptions) -> CaseConfig {
        let data = &self.dataset;
        let standard = crate::standard::recognise(&data.name, data.size, data.dim);
        let mut custom = serde_json::Map::new();
        let case_id = match (options.filter, standard) {
            (
                None,
                Some(StandardDataset {
                    performance_case: Some(case),
                    ..
                }),
            ) => *case,
            (Some(Filter::Int { rate }), Some(standard)) => {
                custom.insert("dataset_with_size_type".into(), standard.size_type.into());
                custom.insert("filter_rate".into(), rate.into());
                CASE_INT_FILTER
            }
            (Some(Filter::Label { percentage }), Some(standard)) => {
                custom.insert("dataset_with_size_type".into(), standard.size_type.into());
                custom.insert("label_percentage".into(), percentage.into());
                CASE_LABEL_FILTER
            }
            (filter, _) => {
                custom = self.custom_case(options, filter);
                CASE_CUSTOM_DATASET
            }
        };
        CaseConfig {
            case_id,
            custom_case: custom,
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
        }
    }

    /// The `custom_case` of VectorDBBench's `PerformanceCustomDataset` for this run's dataset,
    /// as VectorDBBench's own run of the folder writes it.
    fn custom_case(
        &self,
        options: &CaseOptions,
        filter: Option<Filter>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let data = &self.dataset;
        let mut description = format!(
            "{} rows x {} dimensions, k {}, {} on {}",
            data.size, data.dim, options.k, self.similarity, self.server
        );
        if let Some(predicate) = &self.filter {
            description.push_str(&format!(", filtered WHERE {predicate}"));
        }
        let dataset_config = serde_json::json!({
            "name": data.name,
            "dir": data.dir,
            "size": data.size,
            "dim": data.dim,
            "metric_type": metric_type(&self.similarity).unwrap_or("COSINE"),
            "file_count": data.file_count,
            "use_shuffled": data.use_shuffled,
            "with_gt": true,
        });
        let mut case = serde_json::Map::new();
        case.insert(
            "name".into(),
            format!("{} (cqlwire bench)", data.name).into(),
        );
        case.insert("description".into(), description.into());
        case.insert("load_timeout".into(), CUSTOM_CASE_TIMEOUT.into());
        case.insert("optimize_timeout".into(), CUSTOM_CASE_TIMEOUT.into());
        case.insert("dataset_config".into(), dataset_config);
        if let Some(Filter::Label { percentage }) = filter {
            case.insert("label_percentage".into(), percentage.into());
            case.insert("use_filter".into(), true.into());
        }
        case
    }

    /// The run's context, VectorDBBench's `db_config.note`: the server, its nodes and the
    /// keyspace's replication, the client machine, cqlwire's version, the load average before
    /// and after the case, and what went wrong (the writes an index made first refused).
    pub fn run_context(&self) -> serde_json::Value {
        let mut context = serde_json::json!({
            "backend": self.server,
            "nodes": self.nodes,
            "replication": self.replication,
            "client": crate::context::client_machine(),
            "cqlwire": env!("CARGO_PKG_VERSION"),
            "load_average": {
                "before": self.load_average.0,
                "after": self.load_average.1,
            },
        });
        if let Some(map) = context.as_object_mut() {
            if let Some(load) = &self.index_first {
                map.insert("index_first".into(), load.to_string().into());
            }
            self.insert_server_side(map);
        }
        context
    }
}

/// Runs the optimize stage's `command` through `sh -c`, its output on the process's standard error.
fn run_command(command: &str) -> Result<(), CaseError> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| CaseError::Command(format!("cannot run the optimize command: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(CaseError::Command(format!(
            "the optimize command {command:?} failed ({status})"
        )))
    }
}

/// The index's state as the summary and the run context show it: `sstables`, `segments` (one
/// vector graph each), `rows` indexed, `rows_per_segment`, `disk_bytes`, `queryable`, `building`,
/// summed over the `nodes` read (each replica indexes its own copy).
fn index_state_json(state: &IndexState) -> serde_json::Value {
    let per_segment = if state.segments > 0 {
        state.cells as f64 / state.segments as f64
    } else {
        0.0
    };
    serde_json::json!({
        "sstables": state.sstables,
        "segments": state.segments,
        "rows": state.cells,
        "rows_per_segment": per_segment,
        "disk_bytes": state.disk_bytes,
        "queryable": state.queryable,
        "building": state.building,
        "nodes": state.nodes,
    })
}

/// Seconds VectorDBBench allows the load and the optimize stage of a custom case by default.
const CUSTOM_CASE_TIMEOUT: u64 = 24 * 3600;

/// The strategy's short name, the factor and the data centre of a keyspace's replication map.
fn replication_of(
    replication: &std::collections::BTreeMap<String, String>,
) -> (Option<String>, Option<u32>, Option<String>) {
    let strategy = replication
        .get("class")
        .map(|class| class.rsplit('.').next().unwrap_or(class).to_owned());
    if let Some(factor) = replication.get("replication_factor") {
        return (strategy, factor.parse().ok(), None);
    }
    let datacenter = replication.iter().find(|(key, _)| key.as_str() != "class");
    (
        strategy,
        datacenter.and_then(|(_, factor)| factor.parse().ok()),
        datacenter.map(|(name, _)| name.clone()),
    )
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
    /// The search's own failures: the column has no vector index, or the stop flag ended the
    /// wait for it (never [`SearchError::Search`], which is [`Engine`](CaseError::Engine)).
    #[error(transparent)]
    Search(SearchError),
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
    /// A schema statement that got no answer in time: the server may still apply it.
    #[error("{source}; once it has, go on with the stages {resume}")]
    Unanswered {
        /// The engine's error (a timeout).
        source: LoadError,
        /// The stages to run then, comma-separated.
        resume: String,
    },
    /// The optimize command could not run, or failed.
    #[error("{0}")]
    Command(String),
    /// An output refused before any work: a destination that cannot be created.
    #[error("{0}")]
    Output(String),
    /// A result file or chart that could not be written after the run.
    #[error("{0}")]
    Write(String),
}

impl From<SearchError> for CaseError {
    /// [`Engine`](CaseError::Engine) for the engine's error, [`Search`](CaseError::Search) for the
    /// rest.
    fn from(error: SearchError) -> Self {
        match error {
            SearchError::Search(error) => CaseError::Engine(error),
            // The wait for the index is the optimize stage's.
            SearchError::Stopped { .. } => CaseError::Stopped(Stage::Optimize),
            other => CaseError::Search(other),
        }
    }
}

/// Counts rejected rows and keeps the first.
#[derive(Default)]
pub(crate) struct FirstReject {
    pub(crate) count: u64,
    pub(crate) first: Option<(u64, String)>,
}

impl RejectSink for FirstReject {
    fn reject(&mut self, row: u64, _key: &str, error: &str) -> std::io::Result<()> {
        self.count += 1;
        self.first.get_or_insert_with(|| (row, error.to_owned()));
        Ok(())
    }
}

/// The `CREATE CUSTOM INDEX` of the case's vector index on `column`, by `similarity`.
pub fn index_statement(options: &CaseOptions, similarity: &str, column: &str) -> String {
    let SessionOptions {
        keyspace, table, ..
    } = &options.connection;
    let name = index_name(table, column);
    let mut statement = format!(
        "CREATE CUSTOM INDEX {} ON {}.{} ({}) USING 'StorageAttachedIndex' WITH OPTIONS = \
         {{'similarity_function': '{}'",
        Identifier(&name),
        Identifier(&schema_name(keyspace)),
        Identifier(&schema_name(table)),
        Identifier(column),
        quote(similarity)
    );
    for (key, value) in &options.index_options {
        let _ = write!(statement, ", '{}': '{}'", quote(key), quote(value));
    }
    statement.push('}');
    statement
}

/// The name of the case's index on `column` of `table`: `{table}_{column}_idx` of their letters,
/// digits and underscores.
pub(crate) fn index_name(table: &str, column: &str) -> String {
    format!("{}_{}_idx", plain(table), plain(column))
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

/// VectorDBBench's concurrency levels of a performance case (`NUM_CONCURRENCY`).
pub const DEFAULT_CONCURRENCY: [usize; 8] = [1, 5, 10, 20, 30, 40, 60, 80];
/// The most neighbours a query may ask for (Cassandra's `max_top_k`).
pub const MAX_K: usize = 1000;
/// The most rounds of the search stages.
pub const MAX_ROUNDS: usize = 1000;
/// The most queries in flight of a concurrency level.
pub const MAX_CONCURRENCY: usize = 100_000;
/// The longest concurrency level, and the longest wait for an index: a day.
pub const MAX_SECONDS: u64 = 86_400;

/// The index options a case passes through, besides `similarity_function` (`--metric`): the
/// ones Apache Cassandra 5.0's vector index understands, each with the values it takes. Any other
/// option is refused by the server after the load; here, before anything is sent.
const INDEX_OPTIONS: [(&str, &str); 3] = [
    ("optimize_for", "recall or latency"),
    ("maximum_node_connections", "a positive integer"),
    ("construction_beam_width", "a positive integer"),
];

/// Refuses an index option Cassandra's vector index would refuse: an unknown key, a repeated
/// one, `similarity_function` (which the case sets), or a value the key does not take.
fn check_index_options(options: &[(String, String)]) -> Result<(), String> {
    let mut seen: Vec<String> = Vec::new();
    for (key, value) in options {
        let lower = key.to_ascii_lowercase();
        if lower == "similarity_function" {
            return Err(format!(
                "the index option similarity_function={value} is the similarity function \
                 itself: choose it as the metric (cosine, euclidean, dot_product)"
            ));
        }
        if seen.contains(&lower) {
            return Err(format!("the index option {key} is given twice"));
        }
        seen.push(lower.clone());
        let Some((_, takes)) = INDEX_OPTIONS.iter().find(|(name, _)| *name == lower) else {
            let known: Vec<&str> = INDEX_OPTIONS.iter().map(|(name, _)| *name).collect();
            return Err(format!(
                "no index option {key} in Cassandra's vector index (options: {})",
                known.join(", ")
            ));
        };
        let fits = match lower.as_str() {
            "optimize_for" => ["recall", "latency"].contains(&value.to_ascii_lowercase().as_str()),
            _ => value.parse::<u32>().is_ok_and(|n| n > 0),
        };
        if !fits {
            return Err(format!(
                "the index option {key} takes {takes}, not '{value}'"
            ));
        }
    }
    Ok(())
}

impl CaseOptions {
    /// Checks the options before anything is read or sent: k, the levels and their time, the
    /// index wait, the similarity function, the index options and the stages, each within the
    /// bounds the command line's flags have.
    pub fn check(&self) -> Result<(), CaseError> {
        let refuse = |message: String| Err(CaseError::Options(message));
        if self.k == 0 || self.k > MAX_K {
            return refuse(format!("k must be 1 to {MAX_K} (Cassandra's top-k limit)"));
        }
        if self.stages.contains(&Stage::Concurrent) && self.concurrency.is_empty() {
            return refuse("no concurrency level to run".to_owned());
        }
        if self.concurrency.contains(&0) {
            return refuse("every concurrency level must be at least 1".to_owned());
        }
        if let Some(level) = self.concurrency.iter().find(|&&c| c > MAX_CONCURRENCY) {
            return refuse(format!(
                "a concurrency level of {level} is more than {MAX_CONCURRENCY} queries in flight"
            ));
        }
        let seconds = 1..=MAX_SECONDS;
        if !seconds.contains(&self.duration.as_secs()) || self.duration.subsec_nanos() != 0 {
            return refuse(format!(
                "the duration of a level must be 1 to {MAX_SECONDS} whole seconds"
            ));
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return refuse(format!("the rounds must be 1 to {MAX_ROUNDS}"));
        }
        if !seconds.contains(&self.schema_timeout.as_secs()) {
            return refuse(format!(
                "the schema timeout must be 1 to {MAX_SECONDS} seconds"
            ));
        }
        if !seconds.contains(&self.index_wait.as_secs()) {
            return refuse(format!(
                "the index wait must be 1 to {MAX_SECONDS} seconds (a new index needs time \
                 to build)"
            ));
        }
        if let Some(similarity) = &self.similarity {
            if metric_type(similarity).is_none() {
                return refuse(
                    "the similarity function must be cosine, euclidean or dot_product".to_owned(),
                );
            }
        }
        check_index_options(&self.index_options).or_else(refuse)?;
        if self.stages.is_empty() {
            return refuse("no stage to run".to_owned());
        }
        Ok(())
    }
}

/// What the stages read, every file checked before anything is sent.
struct Inputs {
    /// The index's similarity function.
    similarity: String,
    /// The ground truth of the serial pass.
    truth: Option<GroundTruth>,
    /// The queries.
    test: Box<dyn BatchReader>,
    /// The training rows as the load sends them, when a stage creates or fills the table.
    rows: Option<Dataset>,
    /// A filtered case's column and condition.
    filter: Option<FilterColumn>,
    /// What the result file says of the dataset.
    summary: DatasetSummary,
}

impl Inputs {
    /// Reads and checks what the stages of `options` read of `dataset`: the queries (each
    /// answerable), the ground truth (enough neighbours for k, one list a query), the training
    /// set (its dimension, id type, unique ids, the filter's column).
    fn read(dataset: &BenchDataset, options: &CaseOptions) -> Result<Inputs, CaseError> {
        let has = |stage: Stage| options.stages.contains(&stage);
        let similarity = dataset.similarity(options.similarity.as_deref())?;
        let folder =
            match (options.filter, dataset.folder()) {
                (Some(_), None) => return Err(CaseError::Options(
                    "a filtered case needs a VectorDBBench dataset folder (its filter's ground \
                     truth and labels)"
                        .to_owned(),
                )),
                (_, folder) => folder,
            };
        let input = InputOptions {
            format: None,
            column: None,
            dataset: String::new(),
            selection: RowSelection::All,
            batch_rows: BATCH_ROWS,
            vectors_optional: false,
        };
        if has(Stage::Serial) || has(Stage::Concurrent) {
            dataset.check_queries(&input, &similarity)?;
        }
        let truth = if has(Stage::Serial) {
            Some(dataset.ground_truth(options.filter.as_ref(), options.k)?)
        } else {
            None
        };
        // A filter's ground truth lists what passes it, fewer than k ids when fewer rows pass:
        // VectorDBBench runs such a case and scores it over k (recall below 1 at best).
        if let (Some(truth), None) = (&truth, options.filter) {
            if truth.k() < options.k {
                return Err(CaseError::Options(format!(
                    "the ground truth lists {} neighbours per query: k can be {} at most",
                    truth.k(),
                    truth.k()
                )));
            }
        }
        let loading = has(Stage::Table) || has(Stage::Load);
        let test = dataset.open_test(&input)?;
        if let (Some(truth), Some(queries)) = (&truth, test.rows()) {
            truth.check_queries(usize::try_from(queries).unwrap_or(usize::MAX))?;
        }
        let reader = dataset.open_train(&input)?;
        let mut inputs = Inputs {
            similarity,
            truth,
            test,
            rows: None,
            filter: None,
            summary: dataset.summary(reader.as_ref()),
        };
        if !(loading || options.filter.is_some()) {
            return Ok(inputs);
        }
        dataset.check_dimensions(reader.as_ref(), inputs.test.as_ref())?;
        let mut labels = None;
        if let (Some(wanted), Some(folder)) = (options.filter, folder) {
            let (column, read) = filter_column(folder, wanted, reader.rows(), loading)?;
            inputs.filter = Some(column);
            labels = read;
        }
        if loading {
            let (map, row_number) = dataset.columns(reader.as_ref())?;
            dataset.check_unique_ids()?;
            // Numbered rows: the ground truth's ids must be row numbers of the training set.
            if let (Some(truth), Some(_), Some(rows)) = (&inputs.truth, &row_number, reader.rows())
            {
                truth.check_ids(0..i64::try_from(rows).unwrap_or(i64::MAX))?;
            }
            let reader: Box<dyn BatchReader> = match &inputs.filter {
                Some(column) => Box::new(
                    WithFilterColumn::new(reader, column, labels).map_err(DatasetError::from)?,
                ),
                None => reader,
            };
            inputs.rows = Some(Dataset::from_reader(reader, &map, row_number)?);
        }
        Ok(inputs)
    }
}

/// A case under way: the options, the schema session, the observer and what was measured so far.
pub(crate) struct Case<'a> {
    pub(crate) options: &'a CaseOptions,
    pub(crate) control: &'a RunControl,
    pub(crate) observe: &'a mut (dyn FnMut(Event) + Send),
    schema: SchemaSession,
    pub(crate) report: CaseReport,
    /// The table's keyspace and name as the schema holds them.
    keyspace: String,
    table: String,
}

/// What the stages of a case begun ([`Case::begin`]) take: the inputs read and checked, and the
/// table's `CREATE TABLE` when a stage fills it.
pub(crate) struct Begun {
    /// The ground truth of the serial pass.
    pub(crate) truth: Option<GroundTruth>,
    /// The queries.
    pub(crate) test: Box<dyn BatchReader>,
    /// The training rows as the load sends them.
    pub(crate) rows: Option<Dataset>,
    /// A filtered case's column and condition.
    pub(crate) filter: Option<FilterColumn>,
    /// The statement of the table stage.
    pub(crate) create_table: Option<String>,
}

impl Case<'_> {
    fn has(&self, stage: Stage) -> bool {
        self.options.stages.contains(&stage)
    }

    /// Ends the case when the stop flag is set, naming `stage`.
    pub(crate) fn stopped(&self, stage: Stage) -> Result<(), CaseError> {
        if self.control.stop.load(Ordering::Relaxed) {
            Err(CaseError::Stopped(stage))
        } else {
            Ok(())
        }
    }

    /// Refuses an index name of the case that another table of the keyspace holds.
    pub(crate) async fn check_index_names(
        &mut self,
        filter: Option<&FilterColumn>,
    ) -> Result<(), CaseError> {
        for column in std::iter::once("emb").chain(filter.map(|f| f.column)) {
            let index = index_name(&self.table, column);
            if let Some(holder) = self.schema.index_table(&self.keyspace, &index).await? {
                if holder != self.table {
                    return Err(CaseError::Options(format!(
                        "the index name {index} is taken by the table {}.{holder} (index names \
                         are unique in a keyspace): name the table otherwise",
                        self.keyspace
                    )));
                }
            }
        }
        Ok(())
    }

    /// The table stage: the keyspace must exist; an existing table is dropped (with `drop`) or
    /// refused; then `statement` creates it.
    pub(crate) async fn create_table(&mut self, statement: &str) -> Result<(), CaseError> {
        (self.observe)(Event::Started {
            stage: Stage::Table,
            units: None,
        });
        let started = Instant::now();
        let (keyspace, table) = (&self.keyspace, &self.table);
        if !self.schema.keyspace_exists(keyspace).await? {
            return Err(CaseError::Options(format!(
                "keyspace {keyspace} does not exist: create it first, e.g. CREATE KEYSPACE {} \
                 WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
                Identifier(keyspace)
            )));
        }
        if self.schema.table_exists(keyspace, table).await? {
            if !self.options.drop {
                let SessionOptions {
                    keyspace, table, ..
                } = &self.options.connection;
                return Err(CaseError::TableExists(format!("{keyspace}.{table}")));
            }
            let drop = format!("DROP TABLE {}.{}", Identifier(keyspace), Identifier(table));
            self.schema.execute(&drop).await?;
        }
        self.schema.execute(statement).await?;
        (self.observe)(Event::Finished {
            stage: Stage::Table,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(())
    }

    /// The index stage: the vector index (and the filtered column's).
    pub(crate) async fn create_indexes(
        &mut self,
        filter: Option<&FilterColumn>,
    ) -> Result<(), CaseError> {
        self.stopped(Stage::Index)?;
        let started = Instant::now();
        (self.observe)(Event::Started {
            stage: Stage::Index,
            units: None,
        });
        self.report.index = index_statement(self.options, &self.report.similarity, "emb");
        self.report.index_options = self.options.index_options.clone();
        let unanswered = |source: LoadError, after: &[Stage]| {
            if source.kind() != LoadErrorKind::ServerGone {
                return CaseError::Engine(source);
            }
            let resume: Vec<&str> = after
                .iter()
                .filter(|stage| self.options.stages.contains(stage))
                .map(|stage| stage.name())
                .collect();
            CaseError::Unanswered {
                source,
                resume: resume.join(","),
            }
        };
        // What is left once the server has applied the statement: with the index first, the
        // load (into the table as it is) and the rest.
        let after: &[Stage] = if self.options.index_first {
            &[
                Stage::Load,
                Stage::Optimize,
                Stage::Serial,
                Stage::Concurrent,
            ]
        } else {
            &[Stage::Optimize, Stage::Serial, Stage::Concurrent]
        };
        let statement = self.report.index.clone();
        if let Err(error) = self.schema.execute(&statement).await {
            return Err(unanswered(error, after));
        }
        if let Some(filter) = filter {
            let name = index_name(&self.table, filter.column);
            self.report.filter_index = filter.index_statement(&self.keyspace, &self.table, &name);
            let statement = self.report.filter_index.clone();
            if let Err(error) = self.schema.execute(&statement).await {
                return Err(unanswered(error, after));
            }
        }
        (self.observe)(Event::Finished {
            stage: Stage::Index,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(())
    }

    /// The load stage: every training row through `load`'s engine. With the index made first,
    /// what the server refused is counted and the case goes on; else a refused row ends it.
    async fn load(&mut self, mut rows: Dataset) -> Result<(), CaseError> {
        self.stopped(Stage::Load)?;
        (self.observe)(Event::Started {
            stage: Stage::Load,
            units: rows.rows(),
        });
        let options = LoadOptions::new(self.options.connection.clone());
        let loader = Loader::connect_for(options, &mut rows).await?;
        let mut rejects = FirstReject::default();
        let loaded = loader
            .load(rows, &mut rejects, self.control, Mode::Write)
            .await?;
        self.stopped(Stage::Load)?;
        if self.options.index_first && self.has(Stage::Index) {
            // VectorDBBench's order: what the server refused is counted, the case goes on.
            self.report.index_first = Some(IndexFirstLoad {
                retried: loaded.retried,
                rejected: rejects.count,
                first: rejects.first,
            });
        } else if let Some((row, error)) = rejects.first {
            return Err(CaseError::Rejected {
                rejected: rejects.count,
                row,
                error,
            });
        }
        self.report.rows = loaded.written;
        self.report.insert_duration = loaded.elapsed.as_secs_f64();
        (self.observe)(Event::Finished {
            stage: Stage::Load,
            seconds: self.report.insert_duration,
        });
        Ok(())
    }

    /// The searcher of the search stages (the index found, when this run made none) and the
    /// queries read for it.
    pub(crate) async fn searcher(
        &mut self,
        test: Box<dyn BatchReader>,
        filter: Option<&FilterColumn>,
        truth: Option<&GroundTruth>,
    ) -> Result<(Searcher, QuerySet), CaseError> {
        let mut search_options = SearchOptions::new(self.options.search_connection.clone());
        search_options.k = self.options.k;
        search_options.predicate = filter.map(|f| f.predicate.clone());
        let searcher = Searcher::connect(search_options).await?;
        if self.report.index.is_empty() {
            // The index was made before this run: the file says what the server's index is.
            self.report.index = searcher.index().name.clone();
            self.report.similarity = searcher.index().similarity.name().to_owned();
        }
        let queries = searcher.read_queries(test, false)?;
        if let Some(truth) = truth {
            truth.check_queries(queries.len())?;
        }
        Ok((searcher, queries))
    }

    /// The optimize stage: until the index answers, timed from `since` (the index's creation).
    pub(crate) async fn optimize(
        &mut self,
        searcher: &Searcher,
        queries: &QuerySet,
        since: Instant,
    ) -> Result<(), CaseError> {
        self.stopped(Stage::Optimize)?;
        (self.observe)(Event::Started {
            stage: Stage::Optimize,
            units: None,
        });
        if let Some(command) = &self.options.optimize_command {
            let started = Instant::now();
            run_command(command)?;
            self.report.optimize_command_seconds = Some(started.elapsed().as_secs_f64());
        }
        searcher
            .wait_for_index(queries, self.options.index_wait, self.control)
            .await?;
        self.wait_until_built(searcher, since).await?;
        self.report.optimize_duration = since.elapsed().as_secs_f64();
        (self.observe)(Event::Finished {
            stage: Stage::Optimize,
            seconds: self.report.optimize_duration,
        });
        Ok(())
    }

    /// After the index answers: until the server shows it queryable and built and no compaction
    /// of the table runs, within what is left of the index wait counted from `since`.
    async fn wait_until_built(
        &mut self,
        searcher: &Searcher,
        since: Instant,
    ) -> Result<(), CaseError> {
        let left = self.options.index_wait.saturating_sub(since.elapsed());
        let index = searcher.index().name.clone();
        let built = self
            .schema
            .wait_until_built(&self.keyspace, &self.table, &index, left, self.control)
            .await?;
        if built {
            Ok(())
        } else {
            Err(CaseError::Stopped(Stage::Optimize))
        }
    }

    /// Reads the vector index's state, as the search stages begin.
    pub(crate) async fn read_index_state(&mut self, searcher: &Searcher) {
        let index = searcher.index().name.clone();
        self.report.index_state = self.schema.index_state(&self.keyspace, &index).await;
    }

    /// The serial pass: every query once, one in flight, scored against `truth`.
    pub(crate) async fn serial(
        &mut self,
        searcher: &Searcher,
        queries: &QuerySet,
        truth: &GroundTruth,
    ) -> Result<(), CaseError> {
        self.stopped(Stage::Serial)?;
        (self.observe)(Event::Started {
            stage: Stage::Serial,
            units: Some(queries.len() as u64),
        });
        let started = Instant::now();
        let serial = searcher.run(queries, None, self.control).await?;
        self.stopped(Stage::Serial)?;
        let mut answers = vec![Vec::new(); queries.len()];
        let mut latencies = Vec::with_capacity(serial.results.len());
        for result in serial
            .results
            .iter()
            .filter(|result| result.error.is_none())
        {
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
        self.report.serial = Some(SerialSummary::score(
            self.options.k,
            &answers,
            |i| truth.list(i),
            &latencies,
        ));
        self.report.serial_errors += serial.errors;
        (self.observe)(Event::Finished {
            stage: Stage::Serial,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(())
    }

    /// The concurrent stage: each level for the options' duration.
    async fn concurrent(
        &mut self,
        searcher: &Searcher,
        queries: &QuerySet,
    ) -> Result<(), CaseError> {
        self.levels(searcher, queries, self.options.duration)
            .await
            .map(drop)
    }

    /// Each concurrency level for `duration`, into the report's `levels`: returns the queries of
    /// each level answered and failed.
    pub(crate) async fn levels(
        &mut self,
        searcher: &Searcher,
        queries: &QuerySet,
        duration: Duration,
    ) -> Result<Vec<(u64, u64)>, CaseError> {
        (self.observe)(Event::Started {
            stage: Stage::Concurrent,
            units: None,
        });
        let started = Instant::now();
        self.report.levels.clear();
        let mut counts = Vec::new();
        for &concurrency in &self.options.concurrency {
            self.stopped(Stage::Concurrent)?;
            (self.observe)(Event::Level { concurrency });
            let level = searcher
                .run_for(queries, concurrency, duration, self.control)
                .await?;
            counts.push((level.latencies.len() as u64, level.errors));
            self.stopped(Stage::Concurrent)?;
            let latencies: Vec<f64> = level.latencies.iter().map(Duration::as_secs_f64).collect();
            self.report.levels.push(LevelSummary::of(
                u32::try_from(concurrency).unwrap_or(u32::MAX),
                &latencies,
                level.elapsed.as_secs_f64(),
            ));
            let errors = self.report.level_errors.len();
            let at = self.report.levels.len() - 1;
            if at < errors {
                self.report.level_errors[at] += level.errors;
            } else {
                self.report.level_errors.push(level.errors);
            }
        }
        (self.observe)(Event::Finished {
            stage: Stage::Concurrent,
            seconds: started.elapsed().as_secs_f64(),
        });
        Ok(counts)
    }
}

/// The column and condition of a filtered case over the training set of `rows` rows, and the
/// rows' labels when a label filter's rows are `loading` (a label no row carries is refused).
fn filter_column(
    folder: &DatasetFolder,
    filter: Filter,
    rows: Option<u64>,
    loading: bool,
) -> Result<(FilterColumn, Option<ScalarLabels>), CaseError> {
    let size = rows.ok_or_else(|| {
        CaseError::Options(
            "the training set does not declare its row count, which an int filter's bound needs"
                .to_owned(),
        )
    })?;
    let column = FilterColumn::new(filter, size);
    let (Some(label), true) = (filter.label_value(), loading) else {
        return Ok((column, None));
    };
    let file = folder.scalar_labels_file()?;
    let labels = ScalarLabels::read(file)?;
    if labels.count(&label) == 0 {
        return Err(CaseError::Options(format!(
            "{}: no row is labelled {label}, so the filter {} matches nothing",
            file.display(),
            column.predicate
        )));
    }
    Ok((column, Some(labels)))
}

impl<'a> Case<'a> {
    /// Checks the options, reads and checks the inputs, connects and reads the server: the case
    /// before its first stage, and what its stages take.
    pub(crate) async fn begin(
        dataset: &BenchDataset,
        options: &'a CaseOptions,
        control: &'a RunControl,
        observe: &'a mut (dyn FnMut(Event) + Send),
    ) -> Result<(Case<'a>, Begun), CaseError> {
        options.check()?;
        let load_before = crate::context::load_average();
        let Inputs {
            similarity,
            truth,
            test,
            rows,
            filter,
            summary,
        } = Inputs::read(dataset, options)?;
        let (keyspace, table) = (
            schema_name(&options.connection.keyspace),
            schema_name(&options.connection.table),
        );
        // Made now: the dataset is not shared with the stages' tasks until the load takes it.
        let create_table = rows.as_ref().map(|rows| {
            rows.create_table_of(&keyspace, &table, Some(VECTOR_ELEMENT))
                .0
        });
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let schema =
            SchemaSession::connect_with(&options.connection, options.schema_timeout).await?;
        let server = schema.server().await?;
        let replication = schema.replication(&keyspace).await?;
        let nodes = schema.nodes().await?;
        let report = CaseReport {
            stages: options.stages.clone(),
            server: server.to_string(),
            product: server.product.name().to_owned(),
            version: server.version,
            similarity,
            filter: filter.as_ref().map(|f| f.predicate.clone()),
            started,
            dataset: summary,
            replication,
            nodes,
            load_average: (load_before, None),
            ..CaseReport::default()
        };
        let case = Case {
            options,
            control,
            observe,
            schema,
            report,
            keyspace,
            table,
        };
        Ok((
            case,
            Begun {
                truth,
                test,
                rows,
                filter,
                create_table,
            },
        ))
    }
}

/// Runs the case's stages on the dataset's files (see the module's documentation).
pub async fn run(
    dataset: &BenchDataset,
    options: &CaseOptions,
    control: &RunControl,
    observe: &mut (dyn FnMut(Event) + Send),
) -> Result<CaseReport, CaseError> {
    let has = |stage: Stage| options.stages.contains(&stage);
    let (
        mut case,
        Begun {
            truth,
            test,
            rows,
            filter,
            create_table,
        },
    ) = Case::begin(dataset, options, control, observe).await?;
    if has(Stage::Index) {
        case.check_index_names(filter.as_ref()).await?;
    }
    if let (true, Some(statement)) = (has(Stage::Table), create_table) {
        case.create_table(&statement).await?;
    }
    if has(Stage::Index) && options.index_first {
        case.create_indexes(filter.as_ref()).await?;
    }
    if let (true, Some(rows)) = (has(Stage::Load), rows) {
        case.load(rows).await?;
    }
    let searching = has(Stage::Serial) || has(Stage::Concurrent);
    if !(has(Stage::Index) || has(Stage::Optimize) || searching) {
        case.report.load_average.1 = crate::context::load_average();
        return Ok(case.report);
    }
    // From the CREATE CUSTOM INDEX (after the load; with the index first, from the load's end).
    let optimizing = Instant::now();
    if has(Stage::Index) && !options.index_first {
        case.create_indexes(filter.as_ref()).await?;
    }
    let (searcher, queries) = case.searcher(test, filter.as_ref(), truth.as_ref()).await?;
    if has(Stage::Optimize) {
        case.optimize(&searcher, &queries, optimizing).await?;
    }
    case.read_index_state(&searcher).await;
    for _ in 0..options.rounds {
        if let (true, Some(truth)) = (has(Stage::Serial), truth.as_ref()) {
            case.serial(&searcher, &queries, truth).await?;
        }
        if has(Stage::Concurrent) {
            case.concurrent(&searcher, &queries).await?;
        }
        case.report.rounds.push(Round {
            serial: case.report.serial,
            levels: case.report.levels.clone(),
        });
    }
    case.report.take_medians();
    case.report.load_average.1 = crate::context::load_average();
    Ok(case.report)
}

impl CaseError {
    /// Whether a face shows the error as a usage error (exit 2, Python's usage exception) rather
    /// than a failed run: options that do not fit (outputs on one file, a chart of no level
    /// among them), an existing table,
    /// an invalid option, an unknown table, a column without a vector index.
    pub fn is_usage(&self) -> bool {
        match self {
            CaseError::Options(_) | CaseError::TableExists(_) => true,
            CaseError::Dataset(error) => error.is_usage(),
            CaseError::Engine(error) => matches!(
                error.kind(),
                LoadErrorKind::InvalidOption | LoadErrorKind::UnknownTable
            ),
            CaseError::Search(error) => matches!(error, SearchError::NoIndex { .. }),
            _ => false,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cqlwire_client::Host;

    /// Options of a case on `bench."Docs"`, loading only.
    pub(crate) fn options() -> CaseOptions {
        let hosts = Host::parse_list("127.0.0.1").unwrap();
        let connection = SessionOptions::with_table_name(hosts, "bench.\"Docs\"").unwrap();
        CaseOptions {
            search_connection: connection.clone(),
            connection,
            stages: vec![Stage::Load],
            drop: false,
            similarity: Some("cosine".to_owned()),
            index_options: vec![("optimize_for".to_owned(), "recall".to_owned())],
            k: 100,
            concurrency: vec![1, 5],
            duration: Duration::from_secs(30),
            index_wait: Duration::from_secs(600),
            schema_timeout: Duration::from_secs(600),
            optimize_command: None,
            rounds: 1,
            filter: None,
            index_first: false,
        }
    }

    #[test]
    fn the_index_statement_names_the_similarity_and_passes_options_through() {
        let options = options();
        assert_eq!(
            index_statement(&options, "cosine", "emb"),
            "CREATE CUSTOM INDEX docs_emb_idx ON bench.\"Docs\" (emb) USING \
             'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'cosine', \
             'optimize_for': 'recall'}"
        );
        let quoted = CaseOptions {
            index_options: vec![("a'b".to_owned(), "it's".to_owned())],
            ..options
        };
        assert!(index_statement(&quoted, "cosine", "emb").ends_with(", 'a''b': 'it''s'}"));
    }

    #[test]
    fn options_that_cannot_work_are_refused_before_connecting() {
        let refused = |change: fn(&mut CaseOptions)| {
            let mut options = options();
            change(&mut options);
            options.check().unwrap_err().to_string()
        };
        assert!(refused(|o| o.k = 0).contains("k must be"));
        assert!(refused(|o| o.k = 1001).contains("top-k"));
        assert!(refused(|o| o.concurrency = vec![1, 0]).contains("at least 1"));
        assert!(refused(|o| o.concurrency = vec![1 << 40]).contains("more than 100000"));
        assert!(refused(|o| {
            o.stages = vec![Stage::Concurrent];
            o.concurrency.clear();
        })
        .contains("no concurrency level"));
        assert!(refused(|o| o.duration = Duration::ZERO).contains("duration"));
        assert!(refused(|o| o.duration = Duration::from_secs(10u64.pow(12))).contains("duration"));
        assert!(refused(|o| o.index_wait = Duration::ZERO).contains("index wait"));
        assert!(refused(|o| o.similarity = Some("hamming".into())).contains("cosine"));
        assert!(refused(|o| o.stages.clear()).contains("no stage"));
        assert!(check_index_options(&[]).is_ok());
        assert!(options().check().is_ok());
    }

    #[test]
    fn rounds_give_their_medians_and_their_spread() {
        let mut report = CaseReport::empty_for_tests();
        let serial = |recall| SerialSummary {
            recall,
            ndcg: recall,
            latency_p99: 0.01,
            latency_p95: 0.005,
        };
        for (recall, qps) in [(0.9, 100.0), (0.8, 300.0), (0.95, 200.0)] {
            report.rounds.push(Round {
                serial: Some(serial(recall)),
                levels: vec![LevelSummary::of(4, &vec![0.01; qps as usize], 1.0)],
            });
        }
        report.take_medians();
        assert_eq!(report.serial.unwrap().recall, 0.9);
        assert_eq!(report.levels[0].qps, 200.0);
        let spread = report.spread().unwrap();
        assert_eq!(spread["recall"], serde_json::json!([0.8, 0.9, 0.95]));
        assert_eq!(spread["qps"], serde_json::json!([100.0, 200.0, 300.0]));
        assert_eq!(spread["rounds"].as_array().unwrap().len(), 3);
        report.rounds.truncate(1);
        assert!(report.spread().is_none(), "one round has no spread");
    }

    #[test]
    fn index_options_the_server_would_refuse_are_refused_before_the_load() {
        let check = |pairs: &[(&str, &str)]| {
            let owned: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            check_index_options(&owned)
        };
        assert!(check(&[
            ("optimize_for", "LATENCY"),
            ("maximum_node_connections", "32")
        ])
        .is_ok());
        let error = check(&[("similarity_function", "euclidean")]).unwrap_err();
        assert!(error.contains("choose it as the metric"), "{error}");
        let error = check(&[("optimize_for", "recall"), ("Optimize_For", "latency")]).unwrap_err();
        assert!(error.contains("given twice"), "{error}");
        let error = check(&[("optimize_for", "speed")]).unwrap_err();
        assert!(
            error.contains("takes recall or latency, not 'speed'"),
            "{error}"
        );
        let error = check(&[("construction_beam_width", "0")]).unwrap_err();
        assert!(error.contains("a positive integer"), "{error}");
        let error = check(&[("source_model", "BERT")]).unwrap_err();
        assert!(error.contains("no index option source_model"), "{error}");
    }

    #[test]
    fn what_an_index_first_load_refused_goes_into_the_summary_and_the_result_note() {
        let load = IndexFirstLoad {
            retried: 20,
            rejected: 2,
            first: Some((7, "Replica(s) failed to execute write".to_owned())),
        };
        let report = CaseReport {
            rows: 298,
            insert_duration: 1.0,
            optimize_duration: 0.5,
            index_first: Some(load.clone()),
            replication: [
                ("class", "org.apache.cassandra.locator.SimpleStrategy"),
                ("replication_factor", "1"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            load_average: (Some([0.5, 0.4, 0.3]), None),
            ..CaseReport::empty_for_tests()
        };
        let text = load.to_string();
        assert_eq!(
            text,
            "the index made before the load: 20 writes failed and were retried, 2 rows rejected \
             (the first: row 7: Replica(s) failed to execute write) (CASSANDRA-21644 on Cassandra \
             5.0.9)"
        );
        let result = report.result(&options(), ResultDb::Test, "0123", None);
        let config = &result.results[0].task_config.db_config;
        let note: serde_json::Value = serde_json::from_str(&config.note).unwrap();
        assert_eq!(note["index_first"], text.as_str());
        assert_eq!(note["backend"], "Apache Cassandra 5.0.9");
        assert_eq!(note["nodes"], 1);
        assert_eq!(note["load_average"]["before"][0], 0.5);
        assert_eq!(
            (
                config.replication_strategy.as_deref(),
                config.replication_factor
            ),
            (Some("SimpleStrategy"), Some(1))
        );
        assert_eq!(
            (result.task_label.as_str(), config.db_label.as_str()),
            ("0123", "Apache Cassandra"),
            "without a label: the run id and the product"
        );
        let summary = report.summary(&result.results[0].metrics);
        assert_eq!(summary["retried"], 20);
        assert_eq!(summary["rejected"], 2);
        assert_eq!(summary["rejected_reason"], text.as_str());
        let plain = CaseReport {
            index_first: None,
            ..report
        };
        let result = plain.result(&options(), ResultDb::Test, "0123", Some("rf1"));
        let note: serde_json::Value =
            serde_json::from_str(&result.results[0].task_config.db_config.note).unwrap();
        assert!(note.get("index_first").is_none());
        assert_eq!(result.task_label, "rf1");
        assert_eq!(result.results[0].task_config.db_config.db_label, "rf1");
        assert!(plain
            .summary(&result.results[0].metrics)
            .get("rejected")
            .is_none());
    }

    #[test]
    fn a_case_is_vectordbbenchs_custom_case_or_the_standard_datasets_own() {
        let mut report = CaseReport::empty_for_tests();
        let mut options = options();
        let config = report.case_config(&options);
        assert_eq!(config.case_id, CASE_CUSTOM_DATASET);
        let custom = &config.custom_case;
        for key in ["name", "description", "load_timeout", "optimize_timeout"] {
            assert!(custom.contains_key(key), "{key}");
        }
        let data = &custom["dataset_config"];
        assert_eq!(
            (
                &data["name"],
                &data["size"],
                &data["dim"],
                &data["file_count"]
            ),
            (&"folder".into(), &300.into(), &8.into(), &3.into())
        );
        assert_eq!(
            (&data["use_shuffled"], &data["with_gt"]),
            (&true.into(), &true.into())
        );
        options.filter = Some(Filter::Label { percentage: 0.2 });
        let label = report.case_config(&options).custom_case;
        assert_eq!(
            (&label["label_percentage"], &label["use_filter"]),
            (&0.2.into(), &true.into())
        );

        report.dataset.name = "cohere_medium_1m".to_owned();
        report.dataset.size = 1_000_000;
        report.dataset.dim = 768;
        options.filter = None;
        let standard = report.case_config(&options);
        assert_eq!((standard.case_id, standard.custom_case.len()), (5, 0));
        options.filter = Some(Filter::Int { rate: 0.99 });
        let int = report.case_config(&options);
        assert_eq!(int.case_id, CASE_INT_FILTER);
        assert_eq!(
            int.custom_case["dataset_with_size_type"],
            "Medium Cohere (768dim, 1M)"
        );
        assert_eq!(int.custom_case["filter_rate"], 0.99);
    }

    #[test]
    fn stage_lists_take_the_names_and_vectordbbenchs() {
        let parse = |names: &[&str]| Stage::parse_list(names).unwrap();
        let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(parse(&names), Stage::ALL);
        assert_eq!(parse(&crate::result::ALL_STAGES), Stage::ALL);
        assert_eq!(
            parse(&["load"]),
            [Stage::Load, Stage::Index, Stage::Optimize],
            "VectorDBBench's load is the load, the index and the wait"
        );
        assert_eq!(parse(&["table", "load"]), [Stage::Table, Stage::Load]);
        assert_eq!(
            parse(&["search_serial", " serial", "concurrent"]),
            [Stage::Serial, Stage::Concurrent]
        );
        let refused = Stage::parse_list(&["load", "indexing"]).unwrap_err();
        assert!(refused.contains("no stage 'indexing'") && refused.contains("optimize"));
    }

    #[test]
    fn a_result_lists_vectordbbenchs_stage_names_once_each() {
        assert_eq!(
            Stage::vectordbbench_names(&Stage::ALL),
            crate::result::ALL_STAGES
        );
        assert_eq!(
            Stage::vectordbbench_names(&[Stage::Optimize, Stage::Index, Stage::Serial]),
            ["load", "search_serial"]
        );
    }
}
