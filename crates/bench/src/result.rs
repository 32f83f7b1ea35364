//! VectorDBBench's result file (`vectordb_bench/models.py`: `TestResult`, `CaseResult`,
//! `TaskConfig`, `CaseConfig`; `metric.py`: `Metric`): `{run_id, task_label, file_fmt, timestamp,
//! results: [{metrics, task_config, label}]}`, durations and latencies in seconds.
//!
//! # Which `db`
//!
//! `task_config.db` must be a member of VectorDBBench's `DB` enum, or its `TestResult.read_file`
//! refuses the file. The released `vectordb-bench` 2.0.0 has no member for Cassandra; the
//! Cassandra client proposed to VectorDBBench (commit 2b49e56) adds `"Cassandra"`.
//! [`ResultDb::Cassandra`] (the default) writes that member, which is what the server is, and
//! which that client's results page groups with its own runs; [`ResultDb::Test`] writes `"test"`,
//! the generic member every release has, for a user of the release who cannot install 2b49e56.
//! Either way `db_config.db_label` and `db_config.version` name the product and its version
//! (`Apache Cassandra`, `5.0.9`), which the results page shows beside `db`.
//!
//! # Secrets
//!
//! [`DbConfig`] has no field for a password, a token or a key: nothing secret can be written.
//! VectorDBBench itself writes `**********` in their place; cqlwire leaves them out, which its
//! model reads as "none".

use crate::metrics::{LevelSummary, SerialSummary};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// VectorDBBench's `file_fmt` (`result_{date}_{task_label}_{db}.json`).
pub const FILE_FMT: &str = "result_{}_{}_{}.json";

/// VectorDBBench's case id of a performance case on a custom dataset folder
/// (`CaseType.PerformanceCustomDataset`).
pub const CASE_CUSTOM_DATASET: u32 = 101;
/// VectorDBBench's case id of a streaming case on a standard dataset
/// (`CaseType.StreamingPerformanceCase`).
pub const CASE_STREAMING_PERFORMANCE: u32 = 200;
/// VectorDBBench's case id of a streaming case on a custom dataset folder
/// (`CaseType.StreamingCustomDataset`).
pub const CASE_STREAMING_CUSTOM_DATASET: u32 = 201;
/// VectorDBBench's case id of a label-filtered case (`CaseType.LabelFilterPerformanceCase`).
pub const CASE_LABEL_FILTER: u32 = 300;
/// VectorDBBench's case id of an int-filtered case (`CaseType.NewIntFilterPerformanceCase`).
pub const CASE_INT_FILTER: u32 = 400;

/// VectorDBBench's stages of a performance case, in order (`TaskStage`).
pub const ALL_STAGES: [&str; 4] = ["drop_old", "load", "search_serial", "search_concurrent"];

/// VectorDBBench's default concurrency timeout (`config.CONCURRENCY_TIMEOUT`, seconds).
pub const CONCURRENCY_TIMEOUT: u64 = 3600;

/// The `DB` member a result file names (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ResultDb {
    /// `"Cassandra"`: the member the Cassandra client proposed to VectorDBBench (commit 2b49e56) adds.
    #[default]
    Cassandra,
    /// `"test"`: the generic member of every VectorDBBench release.
    Test,
}

impl ResultDb {
    /// The member's value, as the file holds it.
    pub fn value(self) -> &'static str {
        match self {
            ResultDb::Cassandra => "Cassandra",
            ResultDb::Test => "test",
        }
    }

    /// The member whose value is `value` ([`ResultDb::value`]), None for another.
    pub fn from_value(value: &str) -> Option<ResultDb> {
        [ResultDb::Cassandra, ResultDb::Test]
            .into_iter()
            .find(|db| db.value() == value)
    }
}

/// A run id as VectorDBBench makes them: `uuid4().hex`, 32 random hex digits.
pub fn run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A whole result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The run's id (VectorDBBench: 32 hex digits).
    pub run_id: String,
    /// The task's label (VectorDBBench: the run id unless given).
    #[serde(default)]
    pub task_label: String,
    /// The file name pattern ([`FILE_FMT`]).
    #[serde(default)]
    pub file_fmt: String,
    /// When the run started, seconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: f64,
    /// One entry per case run.
    pub results: Vec<CaseResult>,
}

impl TestResult {
    /// Reads a result file (cqlwire's or any VectorDBBench run's: fields not described here are
    /// passed over).
    pub fn read(path: &Path) -> Result<TestResult, ResultError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ResultError::Io {
            file: file.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ResultError::Json { file, source })
    }

    /// Reads a result file from `reader` (`name` stands for it in messages), e.g. standard input.
    pub fn read_from(
        name: &str,
        mut reader: impl std::io::Read,
    ) -> Result<TestResult, ResultError> {
        let mut text = String::new();
        reader
            .read_to_string(&mut text)
            .map_err(|source| ResultError::Io {
                file: name.to_owned(),
                source,
            })?;
        serde_json::from_str(&text).map_err(|source| ResultError::Json {
            file: name.to_owned(),
            source,
        })
    }

    /// The file's JSON text, indented as VectorDBBench writes it (2 spaces), with a final newline.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        // Every field is a string, a number or a list of them: serializing cannot fail.
        if self.serialize(&mut serializer).is_err() {
            return String::new();
        }
        out.push(b'\n');
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Why a result file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResultError {
    /// The file cannot be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is no result file.
    #[error("{file}: not a VectorDBBench result file: {source}")]
    Json {
        /// The file.
        file: String,
        /// What the JSON reader said (with line and column).
        source: serde_json::Error,
    },
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// What was measured.
    pub metrics: Metrics,
    /// What ran.
    pub task_config: TaskConfig,
    /// `:)` (done), `x` (failed) or `?` (out of range).
    #[serde(default = "normal_label")]
    pub label: String,
}

fn normal_label() -> String {
    ":)".to_owned()
}

/// VectorDBBench's `Metric`: the fields of a performance case and a streaming case's (the
/// other kind's left at their defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Metrics {
    /// Capacity cases only: 0.
    pub max_load_count: u64,
    /// Seconds to insert the training set.
    pub insert_duration: f64,
    /// Seconds until the index was built.
    pub optimize_duration: f64,
    /// `insert_duration + optimize_duration`.
    pub load_duration: f64,
    /// The largest qps of the concurrency levels.
    pub qps: f64,
    /// The serial pass's 99th percentile latency, seconds.
    pub serial_latency_p99: f64,
    /// The serial pass's 95th percentile latency, seconds.
    pub serial_latency_p95: f64,
    /// The serial pass's mean recall@k.
    pub recall: f64,
    /// The serial pass's mean NDCG@k.
    pub ndcg: f64,
    /// The concurrency levels.
    pub conc_num_list: Vec<u32>,
    /// Queries per second at each level.
    pub conc_qps_list: Vec<f64>,
    /// 99th percentile latency at each level, seconds.
    pub conc_latency_p99_list: Vec<f64>,
    /// 95th percentile latency at each level, seconds.
    pub conc_latency_p95_list: Vec<f64>,
    /// Mean latency at each level, seconds.
    pub conc_latency_avg_list: Vec<f64>,
    /// Streaming cases: the seconds the insert takes at the asked rate, `ceil(rows / rate)`.
    pub st_ideal_insert_duration: u64,
    /// Streaming cases: each search's stage, the percentage inserted (100: after the last row,
    /// 110: after optimize).
    pub st_search_stage_list: Vec<u64>,
    /// Streaming cases: when each search began, seconds from the insert's start.
    pub st_search_time_list: Vec<f64>,
    /// Streaming cases: the largest qps of each search's levels (0 where they did not run).
    pub st_max_qps_list_list: Vec<f64>,
    /// Streaming cases: each serial pass's recall.
    pub st_recall_list: Vec<f64>,
    /// Streaming cases: each serial pass's NDCG.
    pub st_ndcg_list: Vec<f64>,
    /// Streaming cases: each serial pass's 99th percentile latency, seconds.
    pub st_serial_latency_p99_list: Vec<f64>,
    /// Streaming cases: each serial pass's 95th percentile latency, seconds.
    pub st_serial_latency_p95_list: Vec<f64>,
    /// Streaming cases: the share of failed queries of each search's last level.
    pub st_conc_failed_rate_list: Vec<f64>,
    /// Streaming cases: each search's concurrency levels (empty where they did not run).
    pub st_conc_num_list_list: Vec<Vec<u32>>,
    /// Streaming cases: each search's qps per level.
    pub st_conc_qps_list_list: Vec<Vec<f64>>,
    /// Streaming cases: each search's 99th percentile latency per level, seconds.
    pub st_conc_latency_p99_list_list: Vec<Vec<f64>>,
    /// Streaming cases: each search's 95th percentile latency per level, seconds.
    pub st_conc_latency_p95_list_list: Vec<Vec<f64>>,
    /// Streaming cases: each search's mean latency per level, seconds.
    pub st_conc_latency_avg_list_list: Vec<Vec<f64>>,
}

impl Metrics {
    /// The metrics of a performance case: the stage durations (seconds), the serial pass and the
    /// concurrency levels in the order they ran.
    pub fn of(
        insert_duration: f64,
        optimize_duration: f64,
        serial: &SerialSummary,
        levels: &[LevelSummary],
    ) -> Metrics {
        Metrics {
            insert_duration,
            optimize_duration,
            load_duration: insert_duration + optimize_duration,
            qps: crate::metrics::max_qps(levels),
            serial_latency_p99: serial.latency_p99,
            serial_latency_p95: serial.latency_p95,
            recall: serial.recall,
            ndcg: serial.ndcg,
            conc_num_list: levels.iter().map(|l| l.concurrency).collect(),
            conc_qps_list: levels.iter().map(|l| l.qps).collect(),
            conc_latency_p99_list: levels.iter().map(|l| l.latency_p99).collect(),
            conc_latency_p95_list: levels.iter().map(|l| l.latency_p95).collect(),
            conc_latency_avg_list: levels.iter().map(|l| l.latency_avg).collect(),
            ..Metrics::default()
        }
    }
}

/// What ran: the database, its connection (no secret), the index, the case and the stages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskConfig {
    /// The `DB` member ([`ResultDb::value`], or another database's in a file read).
    pub db: String,
    /// Where the database was.
    #[serde(default, deserialize_with = "null_as_default")]
    pub db_config: DbConfig,
    /// The index and its options: `metric_type` (`COSINE`, `L2`, `IP`) and the options passed
    /// to the index, by name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub db_case_config: serde_json::Map<String, serde_json::Value>,
    /// The case.
    pub case_config: CaseConfig,
    /// The stages run: `drop_old`, `load`, `search_serial`, `search_concurrent`.
    #[serde(default)]
    pub stages: Vec<String>,
}

/// A field that VectorDBBench may write as `null`, read as its default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The connection, without credentials (VectorDBBench's `DBConfig` fields and those of its
/// Cassandra client's `CassandraConfig` that are not secret).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbConfig {
    /// The product (`Apache Cassandra`, `ScyllaDB`).
    pub db_label: String,
    /// The server's version.
    pub version: String,
    /// Free text.
    pub note: String,
    /// The first contact point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Its port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The keyspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyspace: Option<String>,
    /// The table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_name: Option<String>,
    /// The keyspace's replication strategy (`SimpleStrategy`, `NetworkTopologyStrategy`), as
    /// VectorDBBench's Cassandra client names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_strategy: Option<String>,
    /// Its replication factor (of the data centre named, for `NetworkTopologyStrategy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_factor: Option<u32>,
    /// The data centre of `NetworkTopologyStrategy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenter_name: Option<String>,
}

/// VectorDBBench's `CaseConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseConfig {
    /// The `CaseType` ([`CASE_CUSTOM_DATASET`], [`CASE_INT_FILTER`], [`CASE_LABEL_FILTER`]).
    pub case_id: u32,
    /// The dataset and filter of a custom or filtered case.
    #[serde(default, deserialize_with = "null_as_default")]
    pub custom_case: serde_json::Map<String, serde_json::Value>,
    /// Neighbours asked per query.
    #[serde(default)]
    pub k: Option<u32>,
    /// The concurrency sweep.
    #[serde(default)]
    pub concurrency_search_config: ConcurrencySearchConfig,
}

/// VectorDBBench's `ConcurrencySearchConfig`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConcurrencySearchConfig {
    /// The levels.
    pub num_concurrency: Vec<u32>,
    /// Seconds per level.
    pub concurrency_duration: u64,
    /// Seconds to wait for a level to start.
    pub concurrency_timeout: u64,
}

impl Default for ConcurrencySearchConfig {
    /// VectorDBBench's defaults: 1, 5, 10, 20, 30, 40, 60, 80; 30 s; 3600 s.
    fn default() -> Self {
        ConcurrencySearchConfig {
            num_concurrency: vec![1, 5, 10, 20, 30, 40, 60, 80],
            concurrency_duration: 30,
            concurrency_timeout: CONCURRENCY_TIMEOUT,
        }
    }
}

/// VectorDBBench's `MetricType` value of a CQL similarity function (`cosine`, `euclidean`,
/// `dot_product`, any case); None for another name.
pub fn metric_type(similarity_function: &str) -> Option<&'static str> {
    match similarity_function.to_ascii_lowercase().as_str() {
        "cosine" => Some("COSINE"),
        "euclidean" => Some("L2"),
        "dot_product" => Some("IP"),
        _ => None,
    }
}
