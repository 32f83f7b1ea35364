//! Result files: cqlwire's written and read back, and one written by VectorDBBench's own model
//! (fixtures/bench/vectordbbench_result.json, from fixtures/bench/generate.py) read.
//! fixtures/bench/check.py reads cqlwire's with VectorDBBench's model.

use cqlwire_bench::metrics::{LevelSummary, SerialSummary};
use cqlwire_bench::result::{
    metric_type, CaseConfig, CaseResult, ConcurrencySearchConfig, DbConfig, Metrics, ResultDb,
    TaskConfig, TestResult, ALL_STAGES, CASE_CUSTOM_DATASET, FILE_FMT,
};
use cqlwire_testkit::fixture;

fn written() -> TestResult {
    let serial = SerialSummary {
        recall: 0.5,
        ndcg: 0.625,
        latency_p99: 0.01,
        latency_p95: 0.008,
    };
    let levels = [
        LevelSummary::of(1, &[0.01; 100], 2.0),
        LevelSummary::of(8, &[0.02; 900], 2.0),
        LevelSummary::of(16, &[0.04; 800], 2.0),
    ];
    TestResult {
        run_id: "r".into(),
        task_label: "t".into(),
        file_fmt: FILE_FMT.into(),
        timestamp: 0.0,
        results: vec![CaseResult {
            metrics: Metrics::of(3.0, 0.5, &serial, &levels),
            task_config: TaskConfig {
                db: ResultDb::default().value().into(),
                db_config: DbConfig {
                    db_label: "ScyllaDB".into(),
                    version: "2025.1".into(),
                    host: Some("h".into()),
                    ..DbConfig::default()
                },
                db_case_config: serde_json::Map::new(),
                case_config: CaseConfig {
                    case_id: CASE_CUSTOM_DATASET,
                    custom_case: serde_json::Map::new(),
                    k: Some(100),
                    concurrency_search_config: ConcurrencySearchConfig::default(),
                },
                stages: ALL_STAGES.iter().map(|s| s.to_string()).collect(),
            },
            label: ":)".into(),
        }],
    }
}

#[test]
fn metrics_of_a_case_sum_the_load_and_take_the_best_level() {
    let metrics = &written().results[0].metrics;
    assert_eq!(metrics.load_duration, 3.5);
    assert_eq!(metrics.qps, 450.0);
    assert_eq!(metrics.conc_num_list, [1, 8, 16]);
    assert_eq!(metrics.conc_qps_list, [50.0, 450.0, 400.0]);
    assert_eq!(metrics.conc_latency_p99_list[2], 0.04);
    assert!(metrics.st_recall_list.is_empty());
}

#[test]
fn a_written_file_reads_back_the_same_and_names_the_cassandra_member() {
    let result = written();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    let text = result.to_json();
    std::fs::write(&path, &text).unwrap();
    assert_eq!(TestResult::read(&path).unwrap(), result);
    assert!(text.contains("\"db\": \"Cassandra\""), "{text}");
    assert!(
        !text.contains("\"port\""),
        "unset fields are left out: {text}"
    );
    assert_eq!(ResultDb::Test.value(), "test");
    assert_eq!(metric_type("EUCLIDEAN"), Some("L2"));
    assert_eq!(metric_type("dot_product"), Some("IP"));
    assert_eq!(metric_type("hamming"), None);
}

#[test]
fn a_vectordbbench_file_reads_and_its_secrets_are_not_written_again() {
    let result = TestResult::read(&fixture("bench/vectordbbench_result.json")).unwrap();
    assert_eq!(result.results.len(), 2);
    let case = &result.results[0];
    assert_eq!((case.metrics.recall, case.metrics.qps), (0.9512, 812.5));
    assert_eq!(case.task_config.db, "Milvus");
    assert_eq!(case.task_config.db_config.db_label, "2c8g");
    assert_eq!(case.task_config.db_case_config["M"], 16);
    assert_eq!(case.task_config.case_config.k, Some(100));
    assert_eq!(case.metrics.conc_num_list, [1, 5, 10]);
    // VectorDBBench wrote its mask; a file written from what was read holds no password at all.
    let original = std::fs::read_to_string(fixture("bench/vectordbbench_result.json")).unwrap();
    assert!(original.contains("password"));
    assert!(!result.to_json().contains("password"));
}

#[test]
fn a_file_that_is_no_result_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("a.json", "{\"results\": 3}"),
        ("b.json", "not json"),
        ("c.json", ""),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let error = TestResult::read(&path).unwrap_err().to_string();
        assert!(
            error.contains("not a VectorDBBench result file") && !error.contains('\n'),
            "{error}"
        );
    }
    assert!(TestResult::read(&dir.path().join("missing.json")).is_err());
}
