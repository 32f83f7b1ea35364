//! The charts' SVG: axes labelled with units, one point per level or run, the Pareto frontier
//! through the runs no other beats (checked on the SVG's elements, not its pixels).

use cqlwire_bench::chart::{
    concurrency_chart, pareto_frontier, recall_qps_chart, ChartError, Run, FRONTIER_COLOR,
    LATENCY_COLOR, QPS_COLOR,
};
use cqlwire_bench::result::{Metrics, TestResult};
use cqlwire_testkit::fixture;
use plotters::style::RGBColor;

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
