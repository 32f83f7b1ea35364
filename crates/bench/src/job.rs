//! A bench job: the dataset, the case's options and the outputs, with every rule the faces share —
//! the bounds of the options, the outputs that may not be inputs or each other, the result file
//! and chart written after the summary, a run with failed queries kept out of the results.
//!
//! The command line and the Python module build a [`BenchJob`], [`check`](BenchJob::check) it (and
//! [`open`](BenchJob::open_outputs) its outputs) before any work, [`run`](BenchJob::run) it,
//! show [`CaseReport::summary`], then [`write`](BenchJob::write) the files: so a file that
//! cannot be written never takes the measurement with it.

use std::io::Write;
use std::path::{Path, PathBuf};

use cqlwire_client::{schema_name, RunControl, SchemaSession};
use cqlwire_codec::types::Identifier;
use cqlwire_output::{refuse_same_file, same_destination, Output};

use crate::case::{self, CaseError, CaseOptions, CaseReport, Event, Stage};
use crate::chart::{concurrency_chart_with_spread, recall_qps_chart, Run};
use crate::dataset::BenchDataset;
use crate::filtered::FilterColumn;
use crate::result::{ResultDb, TestResult};
use crate::streaming::StreamingOptions;
use crate::sweep::{Point, Sweep};

/// VectorDBBench's `ResultLabel.FAILED`, the label of a case whose queries failed.
pub const FAILED_LABEL: &str = "x";

/// Where a job's results go.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BenchOutputs {
    /// VectorDBBench's result file.
    pub result: Option<PathBuf>,
    /// The chart of QPS and p99 latency against concurrency (SVG).
    pub plot: Option<PathBuf>,
    /// The `db` the result file names.
    pub db: ResultDb,
    /// Write the result file even when queries failed (marked failed).
    pub keep_failed: bool,
    /// The run's label: VectorDBBench's `task_label` (which its pages list runs by) and
    /// `db_label` (which its charts name the database by).
    pub label: Option<String>,
    /// The chart's title instead of the one made of the run (the subtitle, recall and NDCG,
    /// stays).
    pub title: Option<String>,
    /// A results folder as VectorDBBench's `RESULTS_LOCAL_DIR`: the result file goes to
    /// `DIR/<db>/result_<date>_<label>_<db>.json` as VectorDBBench names its own.
    pub results_dir: Option<PathBuf>,
}

impl BenchOutputs {
    /// No file written, the result file's `db` the default.
    pub fn new() -> BenchOutputs {
        BenchOutputs::default()
    }
}

/// A case to run, and where its results go.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BenchJob {
    /// What the case reads.
    pub dataset: BenchDataset,
    /// What it runs.
    pub options: CaseOptions,
    /// Where its results go.
    pub outputs: BenchOutputs,
    /// The run's id (VectorDBBench's `run_id`, random).
    pub run_id: String,
    /// Run VectorDBBench's streaming case with these parameters instead of the performance case
    /// ([`crate::streaming`]).
    pub streaming: Option<StreamingOptions>,
    /// The value sets to run, a case each (empty: one case, the options as they are).
    pub sweep: Sweep,
    /// How many times the whole case runs, the table made and loaded each time (at least 1): the
    /// result's durations and metrics are the medians, the search rounds of every load kept.
    pub load_rounds: usize,
}

/// One case of a job: its value set (empty without a sweep), its options and what it measured.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JobCase {
    /// The sweep's values of the case.
    pub point: Point,
    /// The job's options with those values.
    pub options: CaseOptions,
    /// What the case measured (the medians of its loads, with `load_rounds`).
    pub report: CaseReport,
    /// Each load's `insert_duration` and `optimize_duration`, with [`BenchJob::load_rounds`]
    /// (empty for one load).
    pub loads: Vec<(f64, f64)>,
}

impl JobCase {
    /// The loads' spread as the text summary shows it: `medians of 3 loads: insert_duration
    /// 1.20 s (min 1.10, max 1.40), optimize_duration …`; None for one load.
    pub fn loads_line(&self) -> Option<String> {
        if self.loads.is_empty() {
            return None;
        }
        let range = |values: Vec<f64>, name: &str| {
            let least = values.iter().copied().fold(f64::INFINITY, f64::min);
            let most = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let median = crate::metrics::percentile(&values, 50.0).unwrap_or(0.0);
            format!("{name} {median:.2} s (min {least:.2}, max {most:.2})")
        };
        Some(format!(
            "medians of {} loads: {}, {}",
            self.loads.len(),
            range(self.loads.iter().map(|l| l.0).collect(), "insert_duration"),
            range(
                self.loads.iter().map(|l| l.1).collect(),
                "optimize_duration"
            )
        ))
    }
}

/// What a job's cases measured, and why the rest did not run.
#[derive(Debug)]
#[non_exhaustive]
pub struct JobRun {
    /// The cases run, in the order of the sweep's value sets.
    pub cases: Vec<JobCase>,
    /// The error that ended the job before its last case, if any.
    pub error: Option<CaseError>,
}

/// The job's output files, opened (their temporary files made) before the work.
pub struct OpenOutputs {
    result: Option<Output>,
    plot: Option<Output>,
    in_results_dir: Option<Output>,
}

/// What [`BenchJob::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// Every output asked for was written (or none was asked for).
    All,
    /// Queries failed: no result file or chart was written (their names).
    Withheld(Vec<PathBuf>),
}

impl BenchJob {
    /// A job on `dataset` with `options`, writing nothing.
    pub fn new(dataset: BenchDataset, options: CaseOptions) -> BenchJob {
        BenchJob {
            dataset,
            options,
            outputs: BenchOutputs::new(),
            run_id: crate::result::run_id(),
            streaming: None,
            sweep: Sweep::default(),
            load_rounds: 1,
        }
    }

    /// Checks everything that needs no file read and no server: the options' bounds, a chart
    /// without a concurrent stage, an output that is one of the dataset's files (or a link to
    /// one), and the result file and chart on one file.
    pub fn check(&self) -> Result<(), CaseError> {
        self.options.check()?;
        self.sweep.check(&self.options)?;
        self.check_load_rounds()?;
        let outputs = &self.outputs;
        if let Some(streaming) = &self.streaming {
            streaming.check(&self.options)?;
            if !self.sweep.is_empty() || self.load_rounds > 1 {
                return Err(CaseError::Options(
                    "the streaming case runs once, on the options as they are: leave out the \
                     sweep and the load rounds"
                        .to_owned(),
                ));
            }
            if outputs.plot.is_some() {
                return Err(CaseError::Options(
                    "the chart draws a performance case's levels: VectorDBBench's Streaming \
                     page draws a streaming case's result file; leave the chart out"
                        .to_owned(),
                ));
            }
        }
        if outputs.plot.is_some() && !self.options.stages.contains(&Stage::Concurrent) {
            return Err(CaseError::Options(
                "the chart draws the concurrency levels (a sweep's: their QPS), and the stages \
                 run none: add the concurrent stage or leave the chart out"
                    .to_owned(),
            ));
        }
        if let Some(label) = &outputs.label {
            if label.is_empty()
                || label.contains(['/', '\\', '\0'])
                || label.chars().any(char::is_control)
            {
                return Err(CaseError::Options(format!(
                    "the label {label:?} names a file: give one without slashes or control \
                     characters"
                )));
            }
        }
        let in_results_dir = self.results_dir_file();
        for output in [&outputs.result, &outputs.plot, &in_results_dir]
            .into_iter()
            .flatten()
        {
            refuse_inputs(output, self.dataset.input_files())?;
        }
        if let Some(file) = &in_results_dir {
            if same_destination(Some(file), outputs.result.as_deref())
                || same_destination(Some(file), outputs.plot.as_deref())
            {
                return Err(CaseError::Options(format!(
                    "{} is both the results folder's file and another output: name another",
                    file.display()
                )));
            }
        }
        if same_destination(outputs.result.as_deref(), outputs.plot.as_deref()) {
            return Err(CaseError::Options(format!(
                "the result file and the chart are one file ({}): name two files",
                outputs.result.as_deref().unwrap_or(Path::new("")).display()
            )));
        }
        Ok(())
    }

    /// Refuses load rounds out of bounds, with a sweep, or without the table and load stages.
    fn check_load_rounds(&self) -> Result<(), CaseError> {
        let refuse = |message: &str| Err(CaseError::Options(message.to_owned()));
        if !(1..=case::MAX_ROUNDS).contains(&self.load_rounds) {
            return refuse(&format!(
                "the load rounds must be 1 to {}",
                case::MAX_ROUNDS
            ));
        }
        if self.load_rounds == 1 {
            return Ok(());
        }
        if !self.sweep.is_empty() {
            return refuse("load rounds repeat one case: run them without a sweep");
        }
        let stages = &self.options.stages;
        if !(stages.contains(&Stage::Table) && stages.contains(&Stage::Load)) {
            return refuse("load rounds make and load the table each time: the stages must include table and load");
        }
        Ok(())
    }

    /// Checks the job ([`check`](BenchJob::check)) and opens its outputs: a folder that does not
    /// exist or a destination that cannot be created is refused now, not after the work.
    pub fn open_outputs(&self) -> Result<OpenOutputs, CaseError> {
        self.check()?;
        let open = |path: &Option<PathBuf>| {
            path.as_deref()
                .map(|path| Output::open(Some(path), false))
                .transpose()
                .map_err(|e| CaseError::Output(e.to_string()))
        };
        let in_results_dir = match self.results_dir_file() {
            Some(file) => {
                if let Some(folder) = file.parent() {
                    std::fs::create_dir_all(folder).map_err(|e| {
                        CaseError::Output(format!("cannot create {}: {e}", folder.display()))
                    })?;
                }
                open(&Some(file))?
            }
            None => None,
        };
        Ok(OpenOutputs {
            result: open(&self.outputs.result)?,
            plot: open(&self.outputs.plot)?,
            in_results_dir,
        })
    }

    /// Runs the case (see [`case::run`]), after [`check`](BenchJob::check).
    pub async fn run(
        &self,
        control: &RunControl,
        observe: &mut (dyn FnMut(Event) + Send),
    ) -> Result<CaseReport, CaseError> {
        self.check()?;
        match &self.streaming {
            Some(streaming) => {
                crate::streaming::run(&self.dataset, &self.options, streaming, control, observe)
                    .await
            }
            None => case::run(&self.dataset, &self.options, control, observe).await,
        }
    }

    /// Runs a case per value set of the sweep (one without a sweep), after
    /// [`check`](BenchJob::check). The table is made and loaded by the first; each value set
    /// that changes the index drops the previous one and makes its own (and waits until it is
    /// built); value sets that differ only in k search the same index. Each later case reports
    /// the first's load (and an index it reused, that index's build). The cases measured before
    /// an error are returned with it.
    pub async fn run_cases(
        &self,
        control: &RunControl,
        observe: &mut (dyn FnMut(Event) + Send),
    ) -> JobRun {
        let mut cases: Vec<JobCase> = Vec::new();
        if let Err(error) = self.check() {
            return JobRun {
                cases,
                error: Some(error),
            };
        }
        for point in self.sweep.points() {
            let mut options = Sweep::options_at(&self.options, &point);
            let previous = cases.last();
            if let Some(previous) = previous {
                options.stages = Sweep::stages_after(&self.options.stages, &previous.point, &point);
                options.drop = false;
                // The table is loaded: the next index is made on it.
                options.index_first = false;
                if options.stages.contains(&Stage::Index) {
                    if let Err(error) = drop_indexes(&options).await {
                        return JobRun {
                            cases,
                            error: Some(error),
                        };
                    }
                }
            }
            let (mut report, loads) = match self.run_loads(&options, control, observe).await {
                Ok(done) => done,
                Err(error) => {
                    return JobRun {
                        cases,
                        error: Some(error),
                    }
                }
            };
            if let (Some(first), Some(previous)) = (cases.first(), cases.last()) {
                carry_over(
                    &mut report,
                    &first.report,
                    &previous.report,
                    &options.stages,
                );
                report.stages = self.options.stages.clone();
                options.stages = self.options.stages.clone();
            }
            cases.push(JobCase {
                point,
                options,
                report,
                loads,
            });
        }
        JobRun { cases, error: None }
    }

    /// Runs the case of `options` [`load_rounds`](BenchJob::load_rounds) times (the table
    /// dropped after the first): one report of the medians, and each load's durations.
    async fn run_loads(
        &self,
        options: &CaseOptions,
        control: &RunControl,
        observe: &mut (dyn FnMut(Event) + Send),
    ) -> Result<(CaseReport, Vec<(f64, f64)>), CaseError> {
        let mut reports = Vec::with_capacity(self.load_rounds);
        let mut options = options.clone();
        for _ in 0..self.load_rounds {
            reports.push(match &self.streaming {
                Some(streaming) => {
                    crate::streaming::run(&self.dataset, &options, streaming, control, observe)
                        .await?
                }
                None => case::run(&self.dataset, &options, control, observe).await?,
            });
            // The table is the case's own now.
            options.drop = true;
        }
        Ok(merge_loads(reports))
    }

    /// VectorDBBench's result file of the run: marked failed (label [`FAILED_LABEL`], the count in
    /// the note) when queries failed.
    pub fn result(&self, report: &CaseReport) -> TestResult {
        self.result_of(&self.options, report, &Point::default(), &[])
    }

    /// The result file of one case: `options` its options, `point` its value set (written into
    /// the note as `sweep`).
    fn result_of(
        &self,
        options: &CaseOptions,
        report: &CaseReport,
        point: &Point,
        loads: &[(f64, f64)],
    ) -> TestResult {
        let label = self.outputs.label.as_deref();
        let mut result = report.result(options, self.outputs.db, &self.run_id, label);
        let failed = report.failed_queries();
        for case in &mut result.results {
            if !point.0.is_empty() {
                // VectorDBBench's pages name a database by its label: one per value set.
                let db_label = &mut case.task_config.db_config.db_label;
                *db_label = format!("{db_label} ({point})");
            }
            let note = &mut case.task_config.db_config.note;
            if !(point.0.is_empty() && loads.is_empty()) {
                if let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(note) {
                    insert_job_side(&mut map, point, loads);
                    *note = serde_json::Value::Object(map).to_string();
                }
            }
            if failed > 0 {
                case.label = FAILED_LABEL.to_owned();
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str(&format!("{failed} queries failed"));
            }
        }
        result
    }

    /// VectorDBBench's result file of the cases: one case result each, in their order (each
    /// marked failed as [`result`](BenchJob::result) marks one).
    pub fn results(&self, cases: &[JobCase]) -> TestResult {
        let mut file: Option<TestResult> = None;
        for case in cases {
            let result = self.result_of(&case.options, &case.report, &case.point, &case.loads);
            match &mut file {
                Some(file) => file.results.extend(result.results),
                None => file = Some(result),
            }
        }
        file.unwrap_or_else(|| TestResult {
            task_label: self
                .outputs
                .label
                .clone()
                .unwrap_or_else(|| self.run_id.clone()),
            run_id: self.run_id.clone(),
            file_fmt: crate::result::FILE_FMT.to_owned(),
            timestamp: 0.0,
            results: Vec::new(),
        })
    }

    /// What the faces print or return: without a sweep the case's
    /// [`summary`](CaseReport::summary); with one, `{"cases": [...]}`, each case's summary with
    /// its value set as `sweep`.
    pub fn summary(&self, cases: &[JobCase]) -> serde_json::Value {
        let file = self.results(cases);
        let summaries = cases.iter().zip(&file.results).map(|(case, result)| {
            let mut summary = case.report.summary(&result.metrics);
            if let Some(map) = summary.as_object_mut() {
                insert_job_side(map, &case.point, &case.loads);
                if !case.point.0.is_empty() {
                    map.insert("k".into(), case.options.k.into());
                }
            }
            summary
        });
        if self.sweep.is_empty() {
            summaries.into_iter().next().unwrap_or_default()
        } else {
            serde_json::json!({ "cases": summaries.collect::<Vec<_>>() })
        }
    }

    /// The chart's title: the dataset (rows × dimension), k, the filter, the similarity
    /// function, the label and the server (or the title asked for); under it the recall and NDCG.
    pub fn chart_title(&self, report: &CaseReport) -> String {
        let data = &report.dataset;
        let title = self.outputs.title.clone().unwrap_or_else(|| {
            let mut title = format!(
                "{} ({} × {}), k {}",
                data.name, data.size, data.dim, self.options.k
            );
            if let Some(filter) = &report.filter {
                title.push_str(&format!(", WHERE {filter}"));
            }
            title.push_str(&format!(", {}", report.similarity));
            if let Some(label) = &self.outputs.label {
                title.push_str(&format!(", {label}"));
            }
            title.push_str(&format!(" on {}", report.server));
            title
        });
        match &report.serial {
            Some(serial) => format!(
                "{title}\nrecall {:.4}, NDCG {:.4}",
                serial.recall, serial.ndcg
            ),
            None => title,
        }
    }

    /// The title of a sweep's chart: the dataset, the swept keys, the label and the server (or
    /// the title asked for).
    fn sweep_title(&self, cases: &[JobCase]) -> String {
        if let Some(title) = &self.outputs.title {
            return title.clone();
        }
        let Some(first) = cases.first() else {
            return String::new();
        };
        let data = &first.report.dataset;
        let keys: Vec<&str> = self.sweep.axes.iter().map(|axis| axis.key.name()).collect();
        let mut title = format!(
            "{} ({} × {}): recall against QPS across {}",
            data.name,
            data.size,
            data.dim,
            keys.join(", ")
        );
        if let Some(label) = &self.outputs.label {
            title.push_str(&format!(", {label}"));
        }
        title.push_str(&format!(" on {}", first.report.server));
        title
    }

    /// The result file in the results folder, named as VectorDBBench names its own:
    /// `DIR/<db>/result_<YYYYMMDD>_<task_label>_<db in lower case>.json` (the date in UTC).
    pub fn results_dir_file(&self) -> Option<PathBuf> {
        let folder = self.outputs.results_dir.as_ref()?;
        let db = self.outputs.db.value();
        let label = self.outputs.label.as_deref().unwrap_or(&self.run_id);
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let date = chrono::DateTime::from_timestamp(i64::try_from(seconds).unwrap_or(0), 0)
            .map(|t| t.format("%Y%m%d").to_string())
            .unwrap_or_default();
        let name = format!("result_{date}_{label}_{}.json", db.to_ascii_lowercase());
        Some(folder.join(db).join(name))
    }

    /// Writes the result file and the chart of `report` into `outputs` (renamed into place), or,
    /// when queries failed and the failed are not kept, neither (their temporary files removed).
    pub fn write(&self, report: &CaseReport, outputs: OpenOutputs) -> Result<Written, CaseError> {
        let case = JobCase {
            point: Point::default(),
            options: self.options.clone(),
            report: report.clone(),
            loads: Vec::new(),
        };
        self.write_cases(std::slice::from_ref(&case), outputs)
    }

    /// Writes the result file of `cases` (a case result each) and the chart into `outputs`: with
    /// a sweep, recall against QPS across the cases with their Pareto frontier; else the case's
    /// QPS and p99 against concurrency, each level's QPS from the lowest to the highest of the
    /// rounds as an error bar. When queries failed of any case and the failed are not kept,
    /// neither is written.
    pub fn write_cases(
        &self,
        cases: &[JobCase],
        outputs: OpenOutputs,
    ) -> Result<Written, CaseError> {
        let OpenOutputs {
            result,
            plot,
            in_results_dir,
        } = outputs;
        let failed: u64 = cases.iter().map(|c| c.report.failed_queries()).sum();
        if (failed > 0 && !self.outputs.keep_failed) || cases.is_empty() {
            let withheld = [
                &self.outputs.result,
                &self.outputs.plot,
                &self.results_dir_file(),
            ]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
            return Ok(Written::Withheld(withheld));
        }
        let file = self.results(cases);
        for output in [result, in_results_dir].into_iter().flatten() {
            commit(output, file.to_json().as_bytes())?;
        }
        if let Some(output) = plot {
            let svg = match (self.sweep.is_empty(), cases, file.results.first()) {
                (true, [case], Some(result)) => concurrency_chart_with_spread(
                    &result.metrics,
                    &level_spread(&case.report),
                    &self.chart_title(&case.report),
                ),
                _ => {
                    let runs: Vec<Run> = file.results.iter().map(Run::of).collect();
                    recall_qps_chart(&runs, &self.sweep_title(cases))
                }
            }
            .map_err(|e| CaseError::Write(e.to_string()))?;
            commit(output, svg.as_bytes())?;
        }
        Ok(Written::All)
    }
}

/// Adds a case's value set (`sweep`) and its loads (`loads`: each load's `insert_duration` and
/// `optimize_duration`, with their min/median/max) to a summary or a note, when there are any.
fn insert_job_side(
    map: &mut serde_json::Map<String, serde_json::Value>,
    point: &Point,
    loads: &[(f64, f64)],
) {
    if !point.0.is_empty() {
        map.insert("sweep".into(), point.to_json());
    }
    if !loads.is_empty() {
        let range = |values: Vec<f64>| {
            let least = values.iter().copied().fold(f64::INFINITY, f64::min);
            let most = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let median = crate::metrics::percentile(&values, 50.0).unwrap_or(0.0);
            serde_json::json!([least, median, most])
        };
        map.insert(
            "loads".into(),
            serde_json::json!({
                "rounds": loads.iter().map(|(i, o)| serde_json::json!({
                    "insert_duration": i,
                    "optimize_duration": o,
                })).collect::<Vec<_>>(),
                "insert_duration": range(loads.iter().map(|l| l.0).collect()),
                "optimize_duration": range(loads.iter().map(|l| l.1).collect()),
            }),
        );
    }
}

/// One report of a case run several times, each time loaded: the first's, with every run's
/// search rounds, their medians, the durations' medians, the failed queries summed; and each
/// run's `insert_duration` and `optimize_duration` (none for one run).
fn merge_loads(mut reports: Vec<CaseReport>) -> (CaseReport, Vec<(f64, f64)>) {
    if reports.len() < 2 {
        return (reports.pop().unwrap_or_default(), Vec::new());
    }
    let loads: Vec<(f64, f64)> = reports
        .iter()
        .map(|r| (r.insert_duration, r.optimize_duration))
        .collect();
    let median = |values: Vec<f64>| crate::metrics::percentile(&values, 50.0).unwrap_or(0.0);
    let last_load_average = reports.last().and_then(|r| r.load_average.1);
    let mut merged = reports.remove(0);
    for report in reports {
        merged.rounds.extend(report.rounds);
        merged.serial_errors += report.serial_errors;
        for (i, errors) in report.level_errors.into_iter().enumerate() {
            match merged.level_errors.get_mut(i) {
                Some(sum) => *sum += errors,
                None => merged.level_errors.push(errors),
            }
        }
        if let (Some(first), Some(then)) = (merged.index_first.as_mut(), report.index_first) {
            first.retried += then.retried;
            first.rejected += then.rejected;
        }
    }
    merged.insert_duration = median(loads.iter().map(|l| l.0).collect());
    merged.optimize_duration = median(loads.iter().map(|l| l.1).collect());
    merged.load_average.1 = last_load_average;
    merged.take_medians();
    (merged, loads)
}

/// Drops the case's vector index (and a filtered case's index) before the next value set makes
/// its own.
async fn drop_indexes(options: &CaseOptions) -> Result<(), CaseError> {
    let schema = SchemaSession::connect_with(&options.connection, options.schema_timeout).await?;
    let keyspace = schema_name(&options.connection.keyspace);
    let table = schema_name(&options.connection.table);
    let filter_column = options
        .filter
        .map(|filter| FilterColumn::new(filter, 0).column);
    for column in std::iter::once(crate::truth::VECTOR_COLUMN).chain(filter_column) {
        let name = case::index_name(&table, column);
        schema
            .execute(&format!(
                "DROP INDEX IF EXISTS {}.{}",
                Identifier(&keyspace),
                Identifier(&name)
            ))
            .await?;
    }
    Ok(())
}

/// Sets what a later case of a sweep did not run itself: the load of the `first` case (the
/// table it searched), and when its `stages` made no index, the index of the `previous` case
/// and its build.
fn carry_over(
    report: &mut CaseReport,
    first: &CaseReport,
    previous: &CaseReport,
    stages: &[Stage],
) {
    report.rows = first.rows;
    report.insert_duration = first.insert_duration;
    report.index_first = first.index_first.clone();
    if !stages.contains(&Stage::Index) {
        report.index = previous.index.clone();
        report.index_options = previous.index_options.clone();
        report.filter_index = previous.filter_index.clone();
        report.optimize_duration = previous.optimize_duration;
        report.optimize_command_seconds = previous.optimize_command_seconds;
    }
}

/// The lowest and highest QPS of each concurrency level across the rounds (none for one round).
fn level_spread(report: &CaseReport) -> Vec<(f64, f64)> {
    if report.rounds.len() < 2 {
        return Vec::new();
    }
    (0..report.levels.len())
        .map(|i| {
            let qps = report
                .rounds
                .iter()
                .filter_map(|r| r.levels.get(i))
                .map(|l| l.qps);
            qps.fold((f64::INFINITY, f64::NEG_INFINITY), |(least, most), q| {
                (least.min(q), most.max(q))
            })
        })
        .collect()
}

/// Refuses `output` when it is one of `inputs` (or a link to one).
fn refuse_inputs<'a>(
    output: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), CaseError> {
    for input in inputs {
        refuse_same_file(Some(input), Some(output))
            .map_err(|e| CaseError::Options(e.to_string()))?;
    }
    Ok(())
}

/// Refuses `output` when it is one of the result files `inputs` that `bench plot` reads.
pub fn refuse_plot_inputs(output: Option<&Path>, inputs: &[PathBuf]) -> Result<(), CaseError> {
    match output {
        Some(output) => refuse_inputs(output, inputs.iter().map(PathBuf::as_path)),
        None => Ok(()),
    }
}

/// Writes `bytes` and renames the file into place.
fn commit(mut output: Output, bytes: &[u8]) -> Result<(), CaseError> {
    output
        .write_all(bytes)
        .map_err(|e| CaseError::Write(e.to_string()))?;
    output.commit().map_err(|e| CaseError::Write(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Round;
    use crate::metrics::{LevelSummary, SerialSummary};

    fn loaded(insert: f64, optimize: f64, recall: f64, qps: usize, errors: u64) -> CaseReport {
        let serial = SerialSummary {
            recall,
            ndcg: recall,
            latency_p99: 0.01,
            latency_p95: 0.005,
        };
        let level = LevelSummary::of(2, &vec![0.01; qps], 1.0);
        CaseReport {
            rows: 300,
            insert_duration: insert,
            optimize_duration: optimize,
            serial: Some(serial),
            serial_errors: errors,
            levels: vec![level],
            level_errors: vec![errors],
            rounds: vec![Round {
                serial: Some(serial),
                levels: vec![level],
            }],
            ..CaseReport::default()
        }
    }

    #[test]
    fn loads_give_the_medians_of_their_durations_and_keep_every_round() {
        let (merged, loads) = merge_loads(vec![
            loaded(3.0, 10.0, 0.9, 100, 0),
            loaded(1.0, 30.0, 0.7, 300, 2),
            loaded(2.0, 20.0, 0.8, 200, 1),
        ]);
        assert_eq!(loads, [(3.0, 10.0), (1.0, 30.0), (2.0, 20.0)]);
        assert_eq!(
            (merged.insert_duration, merged.optimize_duration),
            (2.0, 20.0)
        );
        assert_eq!(merged.rounds.len(), 3);
        assert_eq!(merged.serial.unwrap().recall, 0.8);
        assert_eq!(merged.levels[0].qps, 200.0);
        assert_eq!(
            (merged.serial_errors, merged.level_errors.clone()),
            (3, vec![3])
        );
        let case = JobCase {
            point: Point::default(),
            options: crate::sweep::test_options(),
            report: merged,
            loads,
        };
        assert_eq!(
            case.loads_line().unwrap(),
            "medians of 3 loads: insert_duration 2.00 s (min 1.00, max 3.00), \
             optimize_duration 20.00 s (min 10.00, max 30.00)"
        );
        let mut map = serde_json::Map::new();
        insert_job_side(&mut map, &case.point, &case.loads);
        assert_eq!(
            map["loads"]["insert_duration"],
            serde_json::json!([1.0, 2.0, 3.0])
        );
        assert_eq!(map["loads"]["rounds"].as_array().unwrap().len(), 3);
        assert!(map.get("sweep").is_none());
        let (one, none) = merge_loads(vec![loaded(1.0, 2.0, 0.5, 10, 0)]);
        assert!(none.is_empty() && one.insert_duration == 1.0);
    }
}
