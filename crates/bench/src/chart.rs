//! Charts of results, as SVG text (plotters' SVG backend: no font files, the viewer lays out
//! the text):
//!
//! - [`concurrency_chart`]: one run's QPS (left axis) and p99 latency in milliseconds (right axis)
//!   against the concurrency level, one point per level ([`concurrency_chart_with_spread`]: with
//!   each level's QPS across repeated rounds as an error bar);
//! - [`recall_qps_chart`]: recall against QPS across runs (index options, databases), each run a
//!   point, and the Pareto frontier (the runs no other run beats on both) as a line, as
//!   ann-benchmarks draws it.

use crate::result::{CaseResult, Metrics};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The size of a chart, pixels.
const SIZE: (u32, u32) = (960, 600);

/// The colour of QPS.
pub const QPS_COLOR: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
/// The colour of the p99 latency.
pub const LATENCY_COLOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);
/// The colour of the Pareto frontier.
pub const FRONTIER_COLOR: RGBColor = RGBColor(0x20, 0x20, 0x20);

/// Why a chart cannot be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChartError {
    /// Nothing to draw.
    #[error("nothing to draw: {0}")]
    NoData(&'static str),
    /// A value that is not a finite number, or a negative one.
    #[error("{what} is {value}, which cannot be drawn")]
    BadValue {
        /// What the value is.
        what: String,
        /// The value.
        value: f64,
    },
    /// The lists of a result do not have one value per level.
    #[error("the result has {levels} concurrency levels but {values} {what}")]
    Ragged {
        /// Levels.
        levels: usize,
        /// Values.
        values: usize,
        /// Which list.
        what: &'static str,
    },
    /// The drawing library failed.
    #[error("cannot draw the chart: {0}")]
    Draw(String),
}

fn draw_error<E: std::fmt::Display>(error: E) -> ChartError {
    ChartError::Draw(error.to_string())
}

fn checked(what: impl FnOnce() -> String, value: f64) -> Result<f64, ChartError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(ChartError::BadValue {
            what: what(),
            value,
        })
    }
}

/// `text` with each control character (which XML does not allow, escaped or not) as a space.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// An axis range from 0 to well above `most`, leaving the upper left corner, where the legend
/// goes, free of points that rise with concurrency.
fn headroom(most: f64) -> std::ops::Range<f64> {
    0.0..if most > 0.0 { most * 1.35 } else { 1.0 }
}

/// Draws `title`'s lines above the chart (the first large, the next smaller: the subtitle) and
/// returns the area below them.
fn titled<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, ChartError> {
    let mut lines = title.lines();
    let mut below = area
        .titled(&printable(lines.next().unwrap_or("")), ("sans-serif", 22))
        .map_err(draw_error)?;
    for line in lines {
        below = below
            .titled(&printable(line), ("sans-serif", 16))
            .map_err(draw_error)?;
    }
    Ok(below)
}

/// An axis range from 0 to a little above `most` (1 when `most` is 0).
fn upto(most: f64) -> std::ops::Range<f64> {
    0.0..if most > 0.0 { most * 1.1 } else { 1.0 }
}

/// QPS and p99 latency against concurrency for one run (`title` above it: its first line the
/// title, the next ones subtitles).
pub fn concurrency_chart(metrics: &Metrics, title: &str) -> Result<String, ChartError> {
    concurrency_chart_with_spread(metrics, &[], title)
}

/// [`concurrency_chart`] with each level's lowest and highest QPS across rounds (`spread`, a pair
/// per level, or empty for none) drawn as a vertical error bar through the level's QPS.
pub fn concurrency_chart_with_spread(
    metrics: &Metrics,
    spread: &[(f64, f64)],
    title: &str,
) -> Result<String, ChartError> {
    let levels = &metrics.conc_num_list;
    if levels.is_empty() {
        return Err(ChartError::NoData("the result has no concurrency level"));
    }
    for (values, what) in [
        (metrics.conc_qps_list.len(), "qps values"),
        (metrics.conc_latency_p99_list.len(), "p99 latencies"),
    ] {
        if values != levels.len() {
            return Err(ChartError::Ragged {
                levels: levels.len(),
                values,
                what,
            });
        }
    }
    let mut qps = Vec::with_capacity(levels.len());
    let mut p99 = Vec::with_capacity(levels.len());
    for ((&level, &q), &latency) in levels
        .iter()
        .zip(&metrics.conc_qps_list)
        .zip(&metrics.conc_latency_p99_list)
    {
        let x = f64::from(level);
        qps.push((x, checked(|| format!("qps at concurrency {level}"), q)?));
        let ms = checked(|| format!("p99 at concurrency {level}"), latency)? * 1000.0;
        p99.push((x, ms));
    }
    if !spread.is_empty() && spread.len() != levels.len() {
        return Err(ChartError::Ragged {
            levels: levels.len(),
            values: spread.len(),
            what: "qps ranges",
        });
    }
    let mut bars = Vec::with_capacity(spread.len());
    for (&(x, q), &(least, most)) in qps.iter().zip(spread) {
        let what = |end: &str| format!("the {end} qps of the rounds at concurrency {x}");
        let (least, most) = (
            checked(|| what("lowest"), least)?,
            checked(|| what("highest"), most)?,
        );
        bars.push((x, least.min(q), q, most.max(q)));
    }
    let most = |points: &[(f64, f64)]| points.iter().map(|p| p.1).fold(0.0, f64::max);
    let qps_top = bars.iter().map(|b| b.3).fold(most(&qps), f64::max);
    let x_most = levels.iter().copied().max().map_or(1.0, f64::from);
    let x_range = 0.0..x_most * 1.05 + 1.0;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let area = titled(&root, title)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .right_y_label_area_size(80)
            .build_cartesian_2d(x_range.clone(), headroom(qps_top))
            .map_err(draw_error)?
            .set_secondary_coord(x_range, headroom(most(&p99)));
        chart
            .configure_mesh()
            .x_desc("concurrency (queries in flight)")
            .x_label_formatter(&|level| format!("{level:.0}"))
            .x_labels((x_most as usize).saturating_add(1).clamp(2, 10))
            .y_desc("QPS (queries/s)")
            .y_label_formatter(&|qps| format!("{qps:.0}"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .draw()
            .map_err(draw_error)?;
        chart
            .configure_secondary_axes()
            .y_desc("p99 latency (ms)")
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(LineSeries::new(
                qps.iter().copied(),
                QPS_COLOR.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label("QPS")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], QPS_COLOR));
        chart
            .draw_series(qps.iter().map(|&p| Circle::new(p, 4, QPS_COLOR.filled())))
            .map_err(draw_error)?;
        if !bars.is_empty() {
            chart
                .draw_series(bars.iter().map(|&(x, least, q, most)| {
                    ErrorBar::new_vertical(x, least, q, most, QPS_COLOR.stroke_width(2), 10)
                }))
                .map_err(draw_error)?
                .label("QPS, lowest to highest round")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], QPS_COLOR)
                });
        }
        chart
            .draw_secondary_series(LineSeries::new(
                p99.iter().copied(),
                LATENCY_COLOR.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label("p99 latency")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], LATENCY_COLOR));
        chart
            .draw_secondary_series(
                p99.iter()
                    .map(|&p| Circle::new(p, 4, LATENCY_COLOR.filled())),
            )
            .map_err(draw_error)?;
        legend(&mut chart.configure_series_labels())?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Draws the legend of a chart's series, in its upper left corner.
fn legend<'a, 'b, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    labels: &mut plotters::chart::SeriesLabelStyle<'a, 'b, DB, CT>,
) -> Result<(), ChartError> {
    labels
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(draw_error)
}

/// One run on a recall–QPS chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// What tells it from the others (database, version, case, k, filter, index options).
    pub label: String,
    /// The dataset it ran on: runs of one dataset share a panel.
    pub dataset: String,
    /// Its recall, 0–1.
    pub recall: f64,
    /// Its QPS.
    pub qps: f64,
}

impl Run {
    /// The run of one case of a result file: labelled as VectorDBBench names the database
    /// (`db-db_label-version`), with the index options other than `metric_type` (and unset ones);
    /// a case of a sweep (its note's `sweep`) by its values alone, `key=value, …`.
    pub fn of(case: &CaseResult) -> Run {
        let config = &case.task_config;
        let mut label = config.db.clone();
        let note = serde_json::from_str::<serde_json::Value>(&config.db_config.note).ok();
        let swept = note
            .as_ref()
            .and_then(|note| note.get("sweep"))
            .and_then(serde_json::Value::as_object);
        for part in [&config.db_config.db_label, &config.db_config.version] {
            if !part.is_empty() {
                label.push('-');
                label.push_str(part);
            }
        }
        let custom = &config.case_config.custom_case;
        let mut parts = vec![format!("case {}", config.case_config.case_id)];
        if let Some(k) = config.case_config.k {
            parts.push(format!("k={k}"));
        }
        for key in ["filter_rate", "label_percentage"] {
            if let Some(value) = custom.get(key) {
                parts.push(format!("{key}={value}"));
            }
        }
        parts.extend(
            config
                .db_case_config
                .iter()
                .filter(|(key, value)| key.as_str() != "metric_type" && !value.is_null())
                .map(|(key, value)| match value {
                    serde_json::Value::String(text) => format!("{key}={text}"),
                    other => format!("{key}={other}"),
                }),
        );
        label.push_str(&format!(" ({})", parts.join(", ")));
        if let Some(values) = swept {
            let values: Vec<String> = values
                .iter()
                .map(|(key, value)| match value {
                    serde_json::Value::String(text) => format!("{key}={text}"),
                    other => format!("{key}={other}"),
                })
                .collect();
            label = values.join(", ");
        }
        let dataset = custom
            .get("dataset_config")
            .and_then(|d| d.get("name"))
            .or_else(|| custom.get("dataset_with_size_type"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(
                || format!("case {}", config.case_config.case_id),
                str::to_owned,
            );
        Run {
            label,
            dataset,
            recall: case.metrics.recall,
            qps: case.metrics.qps,
        }
    }
}

/// The runs no other run beats on both recall and QPS (none has a higher recall and a QPS at
/// least as high, or the same recall and a higher QPS), by rising recall; of equal runs, the first.
pub fn pareto_frontier(runs: &[Run]) -> Vec<&Run> {
    let mut order: Vec<&Run> = runs.iter().collect();
    // By falling recall, then falling QPS; stable, so the first of equal runs leads.
    order.sort_by(|a, b| b.recall.total_cmp(&a.recall).then(b.qps.total_cmp(&a.qps)));
    let mut frontier: Vec<&Run> = Vec::new();
    for run in order {
        if frontier.last().is_none_or(|best| run.qps > best.qps) {
            frontier.push(run);
        }
    }
    frontier.reverse();
    frontier
}

/// Recall against QPS across `runs`, a panel per dataset, each with its runs' Pareto frontier
/// and a legend beside it (`title` above them). Runs without QPS (no concurrency level ran) are
/// left out.
pub fn recall_qps_chart(runs: &[Run], title: &str) -> Result<String, ChartError> {
    let runs: Vec<&Run> = runs.iter().filter(|run| run.qps > 0.0).collect();
    if runs.is_empty() {
        return Err(ChartError::NoData("no run with a qps"));
    }
    for run in &runs {
        checked(|| format!("the recall of {}", run.label), run.recall)?;
        checked(|| format!("the qps of {}", run.label), run.qps)?;
    }
    let mut datasets: Vec<&str> = Vec::new();
    for run in &runs {
        if !datasets.contains(&run.dataset.as_str()) {
            datasets.push(&run.dataset);
        }
    }
    let panels = u32::try_from(datasets.len())
        .unwrap_or(u32::MAX)
        .min(MAX_PANELS);
    let size = (SIZE.0 + LEGEND_WIDTH, SIZE.1 * panels + 40);
    let mut svg = String::new();
    {
        let root: DrawingArea<SVGBackend, Shift> =
            SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let area = titled(&root, title)?;
        let areas = area.split_evenly((panels as usize, 1));
        for (panel, dataset) in areas.iter().zip(&datasets) {
            let of: Vec<Run> = runs
                .iter()
                .filter(|run| run.dataset == *dataset)
                .map(|run| (*run).clone())
                .collect();
            recall_qps_panel(panel, dataset, &of)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Most dataset panels of one chart.
const MAX_PANELS: u32 = 12;
/// Width of the legend beside each panel.
const LEGEND_WIDTH: u32 = 420;
/// Legend lines beside a panel (the rest counted in a last line).
const LEGEND_LINES: usize = 24;

/// One dataset's panel: the runs, their frontier, the legend at the right.
fn recall_qps_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    dataset: &str,
    runs: &[Run],
) -> Result<(), ChartError> {
    let (plot, legend_area) =
        area.split_horizontally(area.dim_in_pixel().0.saturating_sub(LEGEND_WIDTH));
    let least_recall = runs.iter().map(|r| r.recall).fold(1.0, f64::min);
    let most_recall = runs.iter().map(|r| r.recall).fold(0.0, f64::max).max(1.0);
    let x_range = (least_recall - 0.05).clamp(0.0, 0.95)..most_recall + 0.005;
    let most_qps = runs.iter().map(|r| r.qps).fold(0.0, f64::max);
    let frontier = pareto_frontier(runs);
    let mut chart = ChartBuilder::on(&plot)
        .caption(printable(dataset), ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, upto(most_qps))
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("recall@k (share of the true k nearest found)")
        .y_desc("QPS (queries/s)")
        .y_label_formatter(&|qps| format!("{qps:.0}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series(LineSeries::new(
            frontier.iter().map(|r| (r.recall, r.qps)),
            FRONTIER_COLOR.stroke_width(2),
        ))
        .map_err(draw_error)?;
    for (i, run) in runs.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(std::iter::once(Circle::new(
                (run.recall, run.qps),
                5,
                color.filled(),
            )))
            .map_err(draw_error)?;
    }
    // The legend beside the plot, a line a run: it covers no point however many runs there are.
    let line = 18;
    let text = ("sans-serif", 12).into_font();
    legend_area
        .draw(&PathElement::new(
            vec![(8, 24), (28, 24)],
            FRONTIER_COLOR.stroke_width(3),
        ))
        .map_err(draw_error)?;
    legend_area
        .draw(&Text::new("Pareto frontier", (36, 18), text.clone()))
        .map_err(draw_error)?;
    for (i, run) in runs.iter().enumerate().take(LEGEND_LINES) {
        let y = 24 + line * (i as i32 + 1);
        let color = Palette99::pick(i).to_rgba();
        legend_area
            .draw(&Circle::new((18, y), 5, color.filled()))
            .map_err(draw_error)?;
        legend_area
            .draw(&Text::new(printable(&run.label), (36, y - 6), text.clone()))
            .map_err(draw_error)?;
    }
    if runs.len() > LEGEND_LINES {
        let y = 24 + line * (LEGEND_LINES as i32 + 1);
        let more = format!("… and {} more runs", runs.len() - LEGEND_LINES);
        legend_area
            .draw(&Text::new(more, (36, y - 6), text))
            .map_err(draw_error)?;
    }
    Ok(())
}
