//! The charts' SVG: axes labelled with units, one point per level or run, the Pareto frontier
//! through the runs no other beats (checked on the SVG's elements, not its pixels).

use cqlwire_bench::chart::{
    concurrency_chart, concurrency_chart_with_spread, pareto_frontier, recall_qps_chart,
    ChartError, Run, FRONTIER_COLOR, LATENCY_COLOR, QPS_COLOR,
};
use cqlwire_bench::result::{Metrics, TestResult};
use cqlwire_testkit::fixture;
use plotters::style::RGBColor;
use proptest::prelude::*;

fn hex(color: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
}

/// The `<circle>` elements filled with `color`.
fn circles(svg: &str, color: RGBColor) -> usize {
    let fill = format!("fill=\"{}\"", hex(color));
    svg.split("<circle")
        .skip(1)
        .filter(|c| c.split('>').next().unwrap().contains(&fill))
        .count()
}

/// The points of each `<polyline>` stroked with `color` at width 2 (the series, not the legend).
fn lines(svg: &str, color: RGBColor) -> Vec<Vec<(i64, i64)>> {
    let stroke = format!("stroke=\"{}\" stroke-width=\"2\"", hex(color));
    svg.split("<polyline")
        .skip(1)
        .map(|element| element.split("/>").next().unwrap())
        .filter(|element| element.contains(&stroke))
        .map(|element| {
            let points = element
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let point = |p: &str| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            };
            points.split_whitespace().map(point).collect()
        })
        .collect()
}

fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            t.split_once('>')
                .unwrap()
                .1
                .split("</text>")
                .next()
                .unwrap()
                .trim()
                .to_owned()
        })
        .collect()
}

fn metrics(levels: &[u32], qps: &[f64], p99: &[f64]) -> Metrics {
    Metrics {
        conc_num_list: levels.to_vec(),
        conc_qps_list: qps.to_vec(),
        conc_latency_p99_list: p99.to_vec(),
        ..Metrics::default()
    }
}

#[test]
fn the_concurrency_chart_draws_one_point_per_level_on_labelled_axes() {
    let levels = [1, 5, 10, 20, 40];
    let m = metrics(
        &levels,
        &[100.0, 450.0, 800.0, 1200.0, 1250.0],
        &[0.004, 0.005, 0.007, 0.012, 0.030],
    );
    let svg = concurrency_chart(&m, "Cassandra 5.0.9").unwrap();
    let texts = texts(&svg);
    for label in [
        "Cassandra 5.0.9",
        "concurrency (queries in flight)",
        "QPS (queries/s)",
        "p99 latency (ms)",
        "QPS",
        "p99 latency",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "no text {label}: {texts:?}"
        );
    }
    assert_eq!(circles(&svg, QPS_COLOR), levels.len());
    assert_eq!(circles(&svg, LATENCY_COLOR), levels.len());
    let [qps] = &lines(&svg, QPS_COLOR)[..] else {
        panic!("one QPS line")
    };
    assert_eq!(qps.len(), levels.len());
    // Left to right with the level, and QPS rising (SVG's y grows downwards).
    assert!(
        qps.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1),
        "{qps:?}"
    );
    // The p99 axis is in milliseconds: 30 ms is its top tick's neighbourhood.
    assert!(texts.iter().any(|t| t == "30.0" || t == "30"), "{texts:?}");
}

#[test]
fn the_concurrency_chart_refuses_what_it_cannot_draw() {
    assert!(matches!(
        concurrency_chart(&Metrics::default(), "t"),
        Err(ChartError::NoData(_))
    ));
    let ragged = metrics(&[1, 5], &[1.0], &[0.1, 0.2]);
    assert!(matches!(
        concurrency_chart(&ragged, "t"),
        Err(ChartError::Ragged { .. })
    ));
    let nan = metrics(&[1], &[f64::NAN], &[0.1]);
    let error = concurrency_chart(&nan, "t").unwrap_err().to_string();
    assert!(error.contains("qps at concurrency 1 is NaN"), "{error}");
}

/// The `<line>` elements stroked with `color`: (x1, y1, x2, y2).
fn segments(svg: &str, color: RGBColor) -> Vec<(i64, i64, i64, i64)> {
    let stroke = format!("stroke=\"{}\"", hex(color));
    svg.split("<line")
        .skip(1)
        .map(|element| element.split("/>").next().unwrap())
        .filter(|element| element.contains(&stroke))
        .map(|element| {
            let at = |name: &str| -> i64 {
                let value = element.split(&format!(" {name}=\"")).nth(1).unwrap();
                value.split('"').next().unwrap().parse().unwrap()
            };
            (at("x1"), at("y1"), at("x2"), at("y2"))
        })
        .collect()
}

#[test]
fn the_spread_of_the_rounds_is_an_error_bar_at_each_level() {
    let m = metrics(&[1, 5, 10], &[100.0, 400.0, 700.0], &[0.004, 0.005, 0.009]);
    let plain = concurrency_chart(&m, "t").unwrap();
    assert!(
        segments(&plain, QPS_COLOR).is_empty(),
        "no bar without rounds"
    );
    let spread = [(90.0, 120.0), (400.0, 400.0), (500.0, 900.0)];
    let svg = concurrency_chart_with_spread(&m, &spread, "t").unwrap();
    assert!(texts(&svg)
        .iter()
        .any(|t| t == "QPS, lowest to highest round"));
    // A bar per level: its vertical line, then a cap at each end.
    let bars: Vec<(i64, i64, i64, i64)> = segments(&svg, QPS_COLOR)
        .into_iter()
        .filter(|(x1, y1, x2, y2)| x1 == x2 && y1 != y2)
        .collect();
    assert_eq!(
        bars.len(),
        2,
        "the level without spread has no height: {bars:?}"
    );
    let [qps] = &lines(&svg, QPS_COLOR)[..] else {
        panic!("one QPS line")
    };
    let height = |bar: &(i64, i64, i64, i64)| (bar.1 - bar.3).abs();
    // The third level's range (400 queries/s) is far taller than the first's (30).
    assert!(height(&bars[1]) > 10 * height(&bars[0]), "{bars:?}");
    for (bar, point) in bars.iter().zip([qps[0], qps[2]]) {
        assert_eq!(bar.0, point.0, "the bar is at its level");
        let (top, bottom) = (bar.1.min(bar.3), bar.1.max(bar.3));
        assert!(
            top <= point.1 && point.1 <= bottom,
            "{bar:?} holds {point:?}"
        );
    }
    assert!(matches!(
        concurrency_chart_with_spread(&m, &spread[..2], "t"),
        Err(ChartError::Ragged { .. })
    ));
    let error = concurrency_chart_with_spread(&m, &[(1.0, 2.0), (f64::NAN, 1.0), (1.0, 2.0)], "t")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("the lowest qps of the rounds at concurrency 5"),
        "{error}"
    );
}

fn run(label: &str, recall: f64, qps: f64) -> Run {
    Run {
        label: label.into(),
        dataset: "folder".into(),
        recall,
        qps,
    }
}

#[test]
fn the_recall_chart_has_a_panel_per_dataset_and_leaves_out_runs_without_qps() {
    let mut runs: Vec<Run> = (0..30)
        .map(|i| {
            run(
                &format!("run {i}"),
                0.5 + f64::from(i) / 100.0,
                100.0 + f64::from(i),
            )
        })
        .collect();
    runs[1].dataset = "cohere_small_100k".into();
    runs.push(run("capacity", 0.0, 0.0));
    let svg = recall_qps_chart(&runs, "t").unwrap();
    let texts = texts(&svg);
    assert!(texts.iter().any(|t| t == "folder") && texts.iter().any(|t| t == "cohere_small_100k"));
    assert!(
        !texts.iter().any(|t| t == "capacity"),
        "a run without qps is left out"
    );
    // 29 runs in one panel, 24 in its legend: the rest counted.
    assert!(texts.iter().any(|t| t == "… and 5 more runs"), "{texts:?}");
    assert_eq!(lines(&svg, FRONTIER_COLOR).len(), 2, "a frontier per panel");
    assert!(matches!(
        recall_qps_chart(&[run("capacity", 0.0, 0.0)], "t"),
        Err(ChartError::NoData(_))
    ));
}

#[test]
fn the_pareto_frontier_keeps_the_runs_none_beats() {
    let runs = [
        run("a", 0.90, 1000.0),
        run("b", 0.95, 800.0),
        run("c", 0.93, 700.0), // beaten by b
        run("d", 0.99, 300.0),
        run("e", 0.85, 900.0),  // beaten by a
        run("f", 0.99, 250.0),  // beaten by d
        run("g", 0.90, 1000.0), // equal to a, which comes first
    ];
    let frontier: Vec<&str> = pareto_frontier(&runs)
        .iter()
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(frontier, ["a", "b", "d"]);
    assert!(pareto_frontier(&[]).is_empty());
}

/// The frontier by its definition, run by run: a run is on it when no other run has a recall and
/// a QPS at least as high, one of them higher, and no equal run comes before it; by rising recall.
fn frontier_by_definition(runs: &[Run]) -> Vec<usize> {
    let beats = |s: &Run, r: &Run| {
        s.recall >= r.recall && s.qps >= r.qps && (s.recall > r.recall || s.qps > r.qps)
    };
    let mut kept: Vec<usize> = (0..runs.len())
        .filter(|&i| {
            let r = &runs[i];
            !runs.iter().any(|s| beats(s, r))
                && !runs[..i]
                    .iter()
                    .any(|s| s.recall == r.recall && s.qps == r.qps)
        })
        .collect();
    kept.sort_by(|&a, &b| runs[a].recall.total_cmp(&runs[b].recall));
    kept
}

proptest! {
    #[test]
    fn the_pareto_frontier_is_the_runs_none_beats(
        points in proptest::collection::vec((0u8..12, 0u8..12), 0..40)
    ) {
        // A coarse grid: ties in recall, in QPS and in both.
        let runs: Vec<Run> = points
            .iter()
            .enumerate()
            .map(|(i, &(r, q))| run(&i.to_string(), f64::from(r) / 11.0, f64::from(q) * 100.0))
            .collect();
        let got: Vec<usize> = pareto_frontier(&runs)
            .iter()
            .map(|r| r.label.parse().unwrap())
            .collect();
        prop_assert_eq!(got, frontier_by_definition(&runs));
    }
}

#[test]
fn the_recall_chart_draws_every_run_and_the_frontier_through_its_runs() {
    let runs = [
        run("a", 0.90, 1000.0),
        run("b", 0.95, 800.0),
        run("c", 0.93, 700.0),
        run("d", 0.99, 300.0),
    ];
    let svg = recall_qps_chart(&runs, "Recall against QPS").unwrap();
    let texts = texts(&svg);
    for label in [
        "recall@k (share of the true k nearest found)",
        "QPS (queries/s)",
        "Pareto frontier",
        "a",
        "d",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "no text {label}: {texts:?}"
        );
    }
    // Every run's point, and its legend mark.
    assert_eq!(svg.matches("<circle").count(), 2 * runs.len());
    let [frontier] = &lines(&svg, FRONTIER_COLOR)[..] else {
        panic!("one frontier")
    };
    assert_eq!(frontier.len(), 3, "{frontier:?}");
    // By rising recall (left to right), falling QPS (downwards).
    assert!(
        frontier
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
        "{frontier:?}"
    );
    assert!(matches!(
        recall_qps_chart(&[], "t"),
        Err(ChartError::NoData(_))
    ));
    assert!(recall_qps_chart(&[run("x", -0.1, 1.0)], "t").is_err());
}

#[test]
fn runs_of_a_vectordbbench_file_are_labelled_by_database_and_index_options() {
    let result = TestResult::read(&fixture("bench/vectordbbench_result.json")).unwrap();
    let runs: Vec<Run> = result.results.iter().map(Run::of).collect();
    assert_eq!((runs[0].recall, runs[0].qps), (0.9512, 812.5));
    assert!(
        runs[1].label.starts_with("Milvus-2c8g-2.6 ("),
        "{}",
        runs[1].label
    );
    assert!(runs[1].label.contains("M=32") && !runs[1].label.contains("null"));
    assert!(runs[1].label.contains("case ") && runs[1].label.contains("k="));
    assert!(recall_qps_chart(&runs, "t").is_ok());
}

#[test]
fn a_case_of_a_sweep_is_labelled_by_its_values() {
    let mut result = TestResult::read(&fixture("bench/vectordbbench_result.json")).unwrap();
    let case = &mut result.results[1];
    case.task_config.db_config.note =
        r#"{"nodes": 1, "sweep": {"maximum_node_connections": 16, "optimize_for": "recall"}}"#
            .to_owned();
    assert_eq!(
        Run::of(case).label,
        "maximum_node_connections=16, optimize_for=recall"
    );
    case.task_config.db_config.note = "not JSON".to_owned();
    assert!(Run::of(case).label.starts_with("Milvus-2c8g-2.6 ("));
}
