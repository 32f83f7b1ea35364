//! The search job, as the command line and the Python module run it: the results file opened before
//! any query, the session opened and the query prepared, the queries read, the ground truth read or
//! computed and checked, an optional wait for the index, the measured run, the results written.
//!
//! The faces build a [`SearchJob`] from their arguments, give it their stop flag and an observer
//! of its phases ([`SearchObserver`]: a progress bar, a log line), and render the
//! [`SearchOutcome`] or the [`SearchError`]. A job that runs many passes on one session and one
//! prepared statement (a benchmark at several concurrency levels) calls
//! [`SearchJob::prepare`] once and [`PreparedSearch::run`] for each pass.

use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cqlwire_vector::convert;
use cqlwire_vector::input::{
    BatchReader, InputError, InputFormat, InputOptions, Neighbors, RowSelection,
};
use cqlwire_vector::output::{refuse_same_file, Output, OutputError};

use super::{
    GroundTruth, QuerySet, SearchOptions, SearchReport, Searcher, VectorIndex, RESULTS_HEADER,
};
use crate::error::{LoadError, LoadErrorKind};
use crate::report::RunControl;

/// Query vectors per batch read from a query file.
const QUERY_BATCH_ROWS: usize = 4096;

/// Where the query vectors come from.
pub enum QuerySource {
    /// A file any input format reads (standard input for `-`), opened once the session is.
    File {
        /// The file.
        path: PathBuf,
        /// Its format; `None`: from the extension, else the magic bytes.
        format: Option<InputFormat>,
        /// The vector column of a Parquet or Arrow file.
        column: Option<String>,
        /// The query rows to run (0-based, the end exclusive); `None`: every row. A range the file
        /// does not hold whole is refused.
        rows: Option<Range<u64>>,
        /// The dataset of an HDF5 file.
        dataset: String,
    },
    /// Vectors already open, e.g. an array in memory.
    Reader(Box<dyn BatchReader>),
}

impl QuerySource {
    /// The query file, if the queries come from one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            QuerySource::File { path, .. } => Some(path),
            QuerySource::Reader(_) => None,
        }
    }
}

/// One search: its inputs, the ground truth, the wait for the index and the results file. Its
/// settings (the session, the column, k, the concurrency, …) are the [`SearchOptions`] given to
/// [`run`](SearchJob::run).
pub struct SearchJob {
    /// The query vectors.
    pub queries: QuerySource,
    /// Where the ground truth comes from (see [`GroundTruth::choose`]).
    pub ground_truth: GroundTruth,
    /// Send the first query until it is answered, at most this long, before the measured run (a
    /// new index answers only once it is built).
    pub wait_for_index: Option<Duration>,
    /// A CSV file that takes one line per measured query ([`RESULTS_HEADER`]), written
    /// atomically, and only when the run was not stopped.
    pub results: Option<PathBuf>,
}

/// Why a search job failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The session, the table, the queries, the ground truth or the run failed.
    #[error(transparent)]
    Search(#[from] LoadError),
    /// The searched column has no vector index; the message shows the statement that creates one.
    #[error("{}", super::index::no_index_message(keyspace, table, column))]
    NoIndex {
        /// The keyspace, as in the schema.
        keyspace: String,
        /// The table, as in the schema.
        table: String,
        /// The vector column, as in the schema.
        column: String,
    },
    /// The stop flag ended the wait for the index ([`Searcher::wait_for_index`]).
    #[error(
        "stopped after {:.1} s of waiting for the index {index}",
        waited.as_secs_f64()
    )]
    Stopped {
        /// The index waited for.
        index: String,
        /// How long the wait lasted.
        waited: Duration,
    },
    /// The query file could not be opened.
    #[error(transparent)]
    QueryFile(InputError),
    /// The results file is one of the inputs, which writing it would destroy; nothing was read.
    #[error(transparent)]
    ResultsIsInput(OutputError),
    /// The results file could not be created.
    #[error(transparent)]
    ResultsOpen(OutputError),
    /// The results file could not be written or put in place.
    #[error(transparent)]
    ResultsWrite(io::Error),
}

impl SearchError {
    /// Whether the caller asked for something that cannot work (an invalid option, a column
    /// without a vector index, a results file that is an input): a face shows it as a usage error
    /// (exit code 2). A query file or results file that cannot be read or written, a stopped wait
    /// and a failed run are failures.
    pub fn is_usage(&self) -> bool {
        match self {
            SearchError::Search(error) => error.is_usage(),
            SearchError::NoIndex { .. } | SearchError::ResultsIsInput(_) => true,
            SearchError::Stopped { .. }
            | SearchError::QueryFile(_)
            | SearchError::ResultsOpen(_)
            | SearchError::ResultsWrite(_) => false,
        }
    }
}

/// Phases of a search job, for a progress display. Every method does nothing by default.
pub trait SearchObserver: Send + Sync {
    /// The job starts sending the first query until `index` answers, for at most `timeout`.
    fn waiting_for_index(&self, _index: &VectorIndex, _timeout: Duration) {}
    /// The wait for the index ended (the index answered, the time was up, or the job was stopped).
    fn index_waited(&self) {}
    /// The measured run of `queries` queries starts; its live counters are the run control's
    /// `progress` (answered queries counted as written, failed ones as rejected).
    fn run_started(&self, _queries: usize) {}
    /// The measured run ended.
    fn run_ended(&self) {}
}

/// No display.
impl SearchObserver for () {}

/// What a search job measured.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// The measures.
    pub report: SearchReport,
    /// The CQL text of the query that ran.
    pub statement: String,
    /// The queries read (those the report covers unless the run was stopped).
    pub queries: usize,
    /// How long the index took to answer, with [`SearchJob::wait_for_index`].
    pub index_wait: Option<Duration>,
    /// Whether the stop flag ended the run early: the report covers the queries answered until
    /// then and the results file was left as it was.
    pub stopped: bool,
}

/// A session with the prepared query, the queries read and their ground truth: ready for any
/// number of measured passes.
pub struct PreparedSearch {
    searcher: Searcher,
    queries: QuerySet,
    truth: Option<Neighbors>,
    index_wait: Option<Duration>,
}

impl SearchJob {
    /// Refuses a folder as the training file of an exact ground truth, and a results file that is
    /// one of the inputs (the query file, the ground truth's or the training file).
    /// [`run`](SearchJob::run) checks it too; call it first to refuse the job
    /// before anything else is asked (a password, say).
    pub fn check(&self) -> Result<(), SearchError> {
        if let GroundTruth::Exact(train) = &self.ground_truth {
            if train.is_dir() {
                return Err(SearchError::Search(LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!(
                        "{} is a folder: exact neighbours are computed over one training file; a \
                         VectorDBBench folder's ground truth is its neighbors.parquet, given as the \
                         ground-truth file (its ids are the train files' id values)",
                        train.display()
                    ),
                )));
            }
        }
        let Some(results) = &self.results else {
            return Ok(());
        };
        for input in [self.queries.path(), self.ground_truth.path()]
            .into_iter()
            .flatten()
        {
            refuse_same_file(Some(input), Some(results)).map_err(SearchError::ResultsIsInput)?;
        }
        Ok(())
    }

    /// Runs the job: [`check`](SearchJob::check); the results file opened and its header written
    /// (a missing folder or a full device is refused before the work, not after it);
    /// [`prepare`](SearchJob::prepare); one measured pass ([`PreparedSearch::run`]); and, unless
    /// `control.stop` ended it, the results written and put in place. Call it after the stop
    /// flag's signal handlers are registered: the results file is an atomic output, which leaves a
    /// signal that has a handler to it.
    pub async fn run(
        mut self,
        options: SearchOptions,
        control: &RunControl,
        observer: &dyn SearchObserver,
    ) -> Result<SearchOutcome, SearchError> {
        self.check()?;
        let results = self.results.take().map(open_results).transpose()?;
        let prepared = self.prepare(options, control, observer).await?;
        let report = prepared.run(control, observer).await?;
        let stopped = control.stop_requested();
        if let (Some(mut output), false) = (results, stopped) {
            report
                .write_csv_rows(&mut output)
                .and_then(|()| output.commit())
                .map_err(SearchError::ResultsWrite)?;
        }
        Ok(SearchOutcome {
            statement: prepared.searcher.statement().to_owned(),
            queries: prepared.queries.len(),
            index_wait: prepared.index_wait,
            stopped,
            report,
        })
    }

    /// Connects and prepares the query ([`Searcher::connect`]), reads the queries, reads or
    /// computes the ground truth and checks it, and waits for the index when asked (`control.stop`
    /// ends the wait with an error).
    pub async fn prepare(
        self,
        options: SearchOptions,
        control: &RunControl,
        observer: &dyn SearchObserver,
    ) -> Result<PreparedSearch, SearchError> {
        let searcher = Searcher::connect(options).await?;
        let (reader, rows) = match self.queries {
            QuerySource::File {
                path,
                format,
                column,
                rows,
                dataset,
            } => {
                let options = InputOptions {
                    format,
                    column,
                    selection: RowSelection::of(rows.clone(), None),
                    batch_rows: QUERY_BATCH_ROWS,
                    dataset,
                    vectors_optional: false,
                };
                let reader = convert::open(Some(&path), options).map_err(SearchError::QueryFile)?;
                (reader, rows)
            }
            QuerySource::Reader(reader) => (reader, None),
        };
        let queries = searcher.read_queries(reader, self.ground_truth.needs_floats())?;
        if let Some(range) = &rows {
            queries.check_range(range)?;
        }
        let truth = match self.ground_truth {
            GroundTruth::Lists(lists) => Some(lists),
            other => other.neighbors(&searcher, &queries)?,
        };
        if let Some(truth) = &truth {
            searcher.check_truth(&queries, truth)?;
        }
        let index_wait = match self.wait_for_index {
            Some(timeout) => {
                observer.waiting_for_index(searcher.index(), timeout);
                let waited = searcher.wait_for_index(&queries, timeout, control).await;
                observer.index_waited();
                waited?
            }
            None => None,
        };
        Ok(PreparedSearch {
            searcher,
            queries,
            truth,
            index_wait,
        })
    }
}

impl PreparedSearch {
    /// One measured pass over the queries ([`Searcher::run`]: the warm-up, then every query once);
    /// `control.stop` ends it early.
    pub async fn run(
        &self,
        control: &RunControl,
        observer: &dyn SearchObserver,
    ) -> Result<SearchReport, SearchError> {
        observer.run_started(self.queries.len());
        let report = self
            .searcher
            .run(&self.queries, self.truth.as_ref(), control)
            .await;
        observer.run_ended();
        Ok(report?)
    }

    /// The session and the prepared query.
    pub fn searcher(&self) -> &Searcher {
        &self.searcher
    }

    /// The queries read.
    pub fn queries(&self) -> &QuerySet {
        &self.queries
    }

    /// How long the index took to answer, when the job waited for it.
    pub fn index_wait(&self) -> Option<Duration> {
        self.index_wait
    }
}

/// The results file at `path` (written atomically), its CSV header written and flushed.
fn open_results(path: PathBuf) -> Result<Output, SearchError> {
    let mut output = Output::open(Some(&path), false).map_err(SearchError::ResultsOpen)?;
    output
        .write_all(RESULTS_HEADER.as_bytes())
        .and_then(|()| output.flush())
        .map_err(SearchError::ResultsWrite)?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(queries: &Path, truth: GroundTruth, results: &Path) -> SearchJob {
        SearchJob {
            queries: QuerySource::File {
                path: queries.to_path_buf(),
                format: None,
                column: None,
                rows: None,
                dataset: "test".into(),
            },
            ground_truth: truth,
            wait_for_index: None,
            results: Some(results.to_path_buf()),
        }
    }

    #[test]
    fn a_results_file_that_is_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let queries = dir.path().join("queries.npy");
        let truth = dir.path().join("truth.ivecs");
        std::fs::write(&queries, b"q").unwrap();
        std::fs::write(&truth, b"t").unwrap();
        let results = dir.path().join("results.csv");
        assert!(job(&queries, GroundTruth::None, &results).check().is_ok());
        let error = job(&queries, GroundTruth::None, &queries)
            .check()
            .unwrap_err();
        assert!(matches!(error, SearchError::ResultsIsInput(_)), "{error:?}");
        assert!(error.is_usage());
        assert!(error.to_string().contains("both the input and the output"));
        let error = job(&queries, GroundTruth::File(truth.clone()), &truth)
            .check()
            .unwrap_err();
        assert!(matches!(error, SearchError::ResultsIsInput(_)), "{error:?}");
    }
}
