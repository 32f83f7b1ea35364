//! Writes a VectorDBBench result file of a made-up performance case, for
//! fixtures/bench/check.py to read back with VectorDBBench's own model:
//! `cargo run -p cqlwire-bench --example result_file -- OUT.json [Cassandra|test]`.

use cqlwire_bench::metrics::{LevelSummary, SerialSummary};
use cqlwire_bench::result::{
    metric_type, CaseConfig, CaseResult, ConcurrencySearchConfig, DbConfig, Metrics, ResultDb,
    TaskConfig, TestResult, ALL_STAGES, CASE_CUSTOM_DATASET, FILE_FMT,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: result_file OUT.json [Cassandra|test]")?;
    let db = match args.next().as_deref() {
        None | Some("Cassandra") => ResultDb::Cassandra,
        Some("test") => ResultDb::Test,
        Some(other) => return Err(format!("unknown db {other}").into()),
    };
    let serial = SerialSummary {
        recall: 0.9913,
        ndcg: 0.9931,
        latency_p99: 0.0068,
        latency_p95: 0.0052,
    };
    let levels = [
        LevelSummary::of(1, &[0.002; 500], 1.0),
        LevelSummary::of(4, &[0.003; 1400], 1.0),
    ];
    let mut db_case_config = serde_json::Map::new();
    let metric = metric_type("cosine").ok_or("no metric")?;
    db_case_config.insert("metric_type".into(), metric.into());
    db_case_config.insert("index".into(), "SAI".into());
    db_case_config.insert("maximum_node_connections".into(), 16.into());
    let mut custom_case = serde_json::Map::new();
    custom_case.insert("name".into(), "fixtures/bench/folder".into());
    let result = TestResult {
        run_id: "0f1e2d3c4b5a69788796a5b4c3d2e1f0".into(),
        task_label: "cqlwire".into(),
        file_fmt: FILE_FMT.into(),
        timestamp: 1_767_225_600.0,
        results: vec![CaseResult {
            metrics: Metrics::of(0.52, 1.25, &serial, &levels),
            task_config: TaskConfig {
                db: db.value().into(),
                db_config: DbConfig {
                    db_label: "Apache Cassandra".into(),
                    version: "5.0.9".into(),
                    host: Some("127.0.0.1".into()),
                    port: Some(9042),
                    keyspace: Some("bench".into()),
                    table_name: Some("vectors".into()),
                    ..DbConfig::default()
                },
                db_case_config,
                case_config: CaseConfig {
                    case_id: CASE_CUSTOM_DATASET,
                    custom_case,
                    k: Some(100),
                    concurrency_search_config: ConcurrencySearchConfig {
                        num_concurrency: vec![1, 4],
                        concurrency_duration: 1,
                        ..ConcurrencySearchConfig::default()
                    },
                },
                stages: ALL_STAGES.iter().map(|s| s.to_string()).collect(),
            },
            label: ":)".into(),
        }],
    };
    std::fs::write(out, result.to_json())?;
    Ok(())
}
