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

use cqlwire_client::RunControl;
use cqlwire_output::{refuse_same_file, same_destination, Output};

use crate::case::{self, CaseError, CaseOptions, CaseReport, Event, Stage};
use crate::chart::concurrency_chart;
use crate::dataset::BenchDataset;
use crate::result::{ResultDb, TestResult};
use crate::streaming::StreamingOptions;

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
        }
    }

    /// Checks everything that needs no file read and no server: the options' bounds, a chart
    /// without a concurrent stage, an output that is one of the dataset's files (or a link to
    /// one), and the result file and chart on one file.
    pub fn check(&self) -> Result<(), CaseError> {
        self.options.check()?;
        let outputs = &self.outputs;
        if let Some(streaming) = &self.streaming {
            streaming.check(&self.options)?;
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
                "the chart draws the concurrency levels, and the stages run none: add the \
                 concurrent stage or leave the chart out"
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

    /// VectorDBBench's result file of the run: marked failed (label [`FAILED_LABEL`], the count in
    /// the note) when queries failed.
    pub fn result(&self, report: &CaseReport) -> TestResult {
        let label = self.outputs.label.as_deref();
        let mut result = report.result(&self.options, self.outputs.db, &self.run_id, label);
        let failed = report.failed_queries();
        if failed > 0 {
            for case in &mut result.results {
                case.label = FAILED_LABEL.to_owned();
                let note = &mut case.task_config.db_config.note;
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str(&format!("{failed} queries failed"));
            }
        }
        result
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
        let OpenOutputs {
            result,
            plot,
            in_results_dir,
        } = outputs;
        if report.failed_queries() > 0 && !self.outputs.keep_failed {
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
        let file = self.result(report);
        for output in [result, in_results_dir].into_iter().flatten() {
            commit(output, file.to_json().as_bytes())?;
        }
        if let Some(output) = plot {
            let svg = concurrency_chart(&file.results[0].metrics, &self.chart_title(report))
                .map_err(|e| CaseError::Write(e.to_string()))?;
            commit(output, svg.as_bytes())?;
        }
        Ok(Written::All)
    }
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
