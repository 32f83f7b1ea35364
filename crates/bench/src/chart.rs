//! Charts of results, as SVG text (plotters' SVG backend: no font files, the viewer lays out
//! the text):
//!
//! - [`concurrency_chart`]: one run's QPS (left axis) and p99 latency in milliseconds (right axis)
//!   against the concurrency level, one point per level;
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

/// An axis range from 0 to a little above `most` (1 when `most` is 0).
fn upto(most: f64) -> std::ops::Range<f64> {
    0.0..if most > 0.0 { most * 1.1 } else { 1.0 }
}

/// QPS and p99 latency against concurrency for one run (`title` above it).
pub fn concurrency_chart(metrics: &Metrics, title: &str) -> Result<String, ChartError> {
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
    let most = |points: &[(f64, f64)]| points.iter().map(|p| p.1).fold(0.0, f64::max);
    let x_most = levels.iter().copied().max().map_or(1.0, f64::from);
    let x_range = 0.0..x_most * 1.05 + 1.0;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(printable(title), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .right_y_label_area_size(80)
            .build_cartesian_2d(x_range.clone(), upto(most(&qps)))
            .map_err(draw_error)?
            .set_secondary_coord(x_range, upto(most(&p99)));
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
    /// What tells it from the others (database, version, index options).
    pub label: String,
    /// Its recall, 0–1.
    pub recall: f64,
    /// Its QPS.
    pub qps: f64,
}

impl Run {
    /// The run of one case of a result file: labelled as VectorDBBench names the database
    /// (`db-db_label-version`), with the index options other than `metric_type` (and unset ones).
    pub fn of(case: &CaseResult) -> Run {
        let config = &case.task_config;
        let mut label = config.db.clone();
        for part in [&config.db_config.db_label, &config.db_config.version] {
            if !part.is_empty() {
                label.push('-');
                label.push_str(part);
            }
        }
        let options: Vec<String> = config
            .db_case_config
            .iter()
            .filter(|(key, value)| key.as_str() != "metric_type" && !value.is_null())
            .map(|(key, value)| match value {
                serde_json::Value::String(text) => format!("{key}={text}"),
                other => format!("{key}={other}"),
            })
            .collect();
        if !options.is_empty() {
            label.push_str(&format!(" ({})", options.join(", ")));
        }
        Run {
            label,
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

/// Recall against QPS across `runs`, with their Pareto frontier (`title` above it).
pub fn recall_qps_chart(runs: &[Run], title: &str) -> Result<String, ChartError> {
    if runs.is_empty() {
        return Err(ChartError::NoData("no run"));
    }
    for run in runs {
        checked(|| format!("the recall of {}", run.label), run.recall)?;
        checked(|| format!("the qps of {}", run.label), run.qps)?;
    }
    let least_recall = runs.iter().map(|r| r.recall).fold(1.0, f64::min);
    let most_recall = runs.iter().map(|r| r.recall).fold(0.0, f64::max).max(1.0);
    let x_range = (least_recall - 0.05).clamp(0.0, 0.95)..most_recall + 0.005;
    let most_qps = runs.iter().map(|r| r.qps).fold(0.0, f64::max);
    let frontier = pareto_frontier(runs);
    let mut svg = String::new();
    {
        let root: DrawingArea<SVGBackend, Shift> =
            SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(printable(title), ("sans-serif", 22))
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
            .map_err(draw_error)?
            .label("Pareto frontier")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], FRONTIER_COLOR));
        for (i, run) in runs.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(std::iter::once(Circle::new(
                    (run.recall, run.qps),
                    5,
                    color.filled(),
                )))
                .map_err(draw_error)?
                .label(printable(&run.label))
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        legend(&mut chart.configure_series_labels())?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}
