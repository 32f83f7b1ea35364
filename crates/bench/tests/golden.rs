//! The metrics and filters against the values VectorDBBench's own functions (and NumPy) give,
//! written by fixtures/bench/generate.py.

use cqlwire_bench::folder::Filter;
use cqlwire_bench::metrics::{
    calc_ndcg, calc_recall, ideal_dcg, mean, percentile, round4, SerialSummary,
};
use cqlwire_testkit::jsonl;
use serde_json::Value;

const TOLERANCE: f64 = 1e-9;

fn ids(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn close(what: &str, got: f64, expected: &Value, case: &Value) {
    let expected = expected.as_f64().unwrap();
    assert!(
        (got - expected).abs() <= TOLERANCE,
        "{what}: {got} against {expected} in {case}"
    );
}

fn cases(kind: &str) -> Vec<Value> {
    let all: Vec<Value> = jsonl("bench/metrics.jsonl")
        .into_iter()
        .filter(|case| case["kind"] == kind)
        .collect();
    assert!(all.len() >= 3, "few {kind} cases");
    all
}

#[test]
fn recall_and_ndcg_match_vectordbbench_on_every_query_case() {
    for case in cases("query") {
        let k = case["k"].as_u64().unwrap() as usize;
        let (truth, got) = (ids(&case["truth"]), ids(&case["got"]));
        let truth_k = &truth[..k.min(truth.len())];
        close(
            "calc_recall",
            calc_recall(k, truth_k, &got),
            &case["calc_recall"],
            &case,
        );
        close("ideal_dcg", ideal_dcg(k), &case["ideal_dcg"], &case);
        let ndcg = calc_ndcg(truth_k, &got, ideal_dcg(k));
        close("calc_ndcg", ndcg, &case["calc_ndcg"], &case);
        // A serial pass of this one query: calc_vector_metrics, rounded to 4 places.
        let summary = SerialSummary::score(k, std::slice::from_ref(&got), |_| &truth, &[0.0]);
        let rounded = |key: &str| round4(case[key].as_f64().unwrap());
        assert_eq!(summary.recall, rounded("serial_recall"), "{case}");
        assert_eq!(summary.ndcg, rounded("serial_ndcg"), "{case}");
    }
}

#[test]
fn percentiles_and_means_match_numpy() {
    for case in cases("latencies") {
        let values = floats(&case["values"]);
        close(
            "p99",
            percentile(&values, 99.0).unwrap(),
            &case["p99"],
            &case,
        );
        close(
            "p95",
            percentile(&values, 95.0).unwrap(),
            &case["p95"],
            &case,
        );
        close("mean", mean(&values), &case["mean"], &case);
        let p99 = round4(percentile(&values, 99.0).unwrap());
        assert_eq!(p99, case["p99_rounded"].as_f64().unwrap(), "{case}");
        let p95 = round4(percentile(&values, 95.0).unwrap());
        assert_eq!(p95, case["p95_rounded"].as_f64().unwrap(), "{case}");
    }
}

#[test]
fn a_serial_pass_scores_as_vectordbbench_serial_runner() {
    for case in cases("serial") {
        let k = case["k"].as_u64().unwrap() as usize;
        let truths: Vec<Vec<i64>> = case["truths"].as_array().unwrap().iter().map(ids).collect();
        let answers: Vec<Vec<i64>> = case["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(ids)
            .collect();
        let latencies = floats(&case["latencies"]);
        let summary = SerialSummary::score(k, &answers, |i| &truths[i], &latencies);
        for (got, key) in [
            (summary.recall, "recall"),
            (summary.ndcg, "ndcg"),
            (summary.latency_p99, "p99"),
            (summary.latency_p95, "p95"),
        ] {
            assert_eq!(got, case[key].as_f64().unwrap(), "{key} in {case}");
        }
    }
}

#[test]
fn filters_name_the_ground_truth_files_vectordbbench_reads() {
    let cases = jsonl("bench/filters.jsonl");
    assert!(cases.len() > 10);
    for case in cases {
        let filter: Filter = case["filter"].as_str().unwrap().parse().unwrap();
        let file = case["file"].as_str().unwrap();
        let names = filter.ground_truth_names();
        // The older head/tail files come first for 0.01 and 0.99; the generator lists both kinds.
        assert!(
            names.iter().any(|name| name == file),
            "{names:?} lacks {file}"
        );
        close(
            "filter_rate",
            filter.filter_rate(),
            &case["filter_rate"],
            &case,
        );
        if let Some(value) = case.get("int_value_300") {
            assert_eq!(filter.int_value(300), value.as_i64(), "{case}");
        }
        if let Some(label) = case.get("label") {
            assert_eq!(filter.label_value().as_deref(), label.as_str(), "{case}");
        }
    }
}

#[test]
fn the_streaming_schedule_is_vectordbbenchs() {
    use cqlwire_bench::streaming::Schedule;
    let cases = jsonl("bench/streaming.jsonl");
    assert!(cases.len() >= 100, "few streaming cases");
    let mut levels_run = 0;
    for case in &cases {
        let number = |key: &str| case[key].as_u64().unwrap();
        let schedule = Schedule {
            rows: number("rows"),
            rate: number("rate") as u32,
        };
        assert_eq!(
            schedule.ideal_seconds(),
            number("ideal_insert_duration"),
            "{case}"
        );
        let percents: Vec<u32> = ids(&case["percents"]).iter().map(|&p| p as u32).collect();
        let stages = case["stages"].as_array().unwrap();
        assert_eq!(stages.len(), percents.len(), "{case}");
        for (at, (stage, &percent)) in stages.iter().zip(&percents).enumerate() {
            assert_eq!(
                Schedule::stage_label(percent),
                stage["label"].as_u64().unwrap(),
                "{case}"
            );
            let signals = stage["taken"].as_u64().unwrap();
            assert_eq!(
                schedule.stage_rows(percent),
                (signals * u64::from(schedule.rate)).min(schedule.rows),
                "{case}"
            );
            let seconds = schedule.level_seconds(
                case["serial_seconds"].as_f64().unwrap(),
                percent,
                percents.get(at + 1).copied(),
                number("levels") as usize,
            );
            match stage["level_seconds"].as_f64() {
                Some(expected) => {
                    levels_run += 1;
                    assert!(Schedule::levels_run(seconds), "{case}");
                    assert_eq!(seconds, expected, "{case}");
                }
                None => assert!(!Schedule::levels_run(seconds), "{case}"),
            }
        }
    }
    assert!(levels_run >= 20, "few stages whose levels run");
}
