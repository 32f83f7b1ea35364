//! VectorDBBench's streaming case on a dataset folder (`StreamingCustomDataset`, case 201): the
//! training set inserted at a fixed rate through `load`'s engine while, each time a search stage's
//! share of it is in, a serial pass and the concurrency levels run against the table; then a
//! search after the last row (stage 100) and, after the optimize stage, another (stage 110).
//!
//! The schedule is VectorDBBench's (`backend/runner/read_write_runner.py` and `rate_runner.py`
//! of the release pinned in fixtures/requirements.txt, and at commit 4ea1810):
//!
//! - the insert lasts ideally `ceil(rows / rate)` seconds (`st_ideal_insert_duration`); a stage
//!   `s` (a fraction) is reached when `int(ceil(rows / rate) × s)` seconds' worth of rows
//!   (`rate` rows each) are acknowledged, and is labelled `int(s × 100)`
//!   ([`Schedule::stage_rows`], [`Schedule::stage_label`]);
//! - a stage's levels each get [`Schedule::level_seconds`] (the time to the next stage, less the
//!   serial pass and a margin, shared between the levels) and are skipped when that is 10 s or
//!   less; after the write each level gets `read_dur_after_write` seconds;
//! - `st_conc_failed_rate_list` is the failed share of each search's last level.
//!
//! The rows go through [`Loader::load`] at [`LoadOptions::rate`]: every row is acknowledged or
//! rejected with its reason. A server slower than the rate is shown, never hidden: the report
//! holds the achieved rate, the largest backlog (rows due by the schedule and not yet
//! acknowledged or rejected), the writes retried and the rows rejected.
//!
//! The index comes before the first row with [`CaseOptions::index_first`] (VectorDBBench's
//! order); else it is created when the first search stage is reached (the rows before it go into
//! a table without an index), or after the last row when no stage comes before.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cqlwire_client::{LoadOptions, Loader, Mode, Progress, QuerySet, RunControl, Searcher};
use cqlwire_vector::input::BatchReader;

use crate::case::{Begun, Case, CaseError, CaseOptions, CaseReport, Event, FirstReject, Stage};
use crate::dataset::BenchDataset;
use crate::dataset::DatasetSummary;
use crate::metrics::{max_qps, round4, LevelSummary, SerialSummary};
use crate::result::{
    CaseResult, Metrics, CASE_STREAMING_CUSTOM_DATASET, CASE_STREAMING_PERFORMANCE,
};
use crate::truth::GroundTruth;

/// VectorDBBench's default insert rate, rows per second.
pub const DEFAULT_INSERT_RATE: u32 = 500;
/// VectorDBBench's default search stages, in percent of the rows inserted.
pub const DEFAULT_SEARCH_STAGES: [u32; 2] = [50, 80];
/// VectorDBBench's default concurrency levels of a streaming case.
pub const DEFAULT_CONCURRENCY: [usize; 2] = [5, 10];
/// VectorDBBench's default seconds of each level after the write (`read_dur_after_write`).
pub const DEFAULT_READ_DURATION: u64 = 30;
/// VectorDBBench's `NUM_PER_BATCH`: its rate is a whole number of batches of this many rows.
pub const NUM_PER_BATCH: u32 = 100;
/// The highest insert rate taken, rows per second.
pub const MAX_INSERT_RATE: u32 = 10_000_000;
/// The stage of the search after the last row.
pub const AFTER_WRITE: u64 = 100;
/// The stage of the search after the optimize stage.
pub const AFTER_OPTIMIZE: u64 = 110;
/// A stage's levels run only when each gets more than this many seconds (VectorDBBench's rule).
const MIN_LEVEL_SECONDS: f64 = 10.0;
/// How often the stages look at the insert's progress.
const POLL: Duration = Duration::from_millis(10);

/// The streaming case's own parameters (its concurrency levels are [`CaseOptions::concurrency`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StreamingOptions {
    /// Rows per second, a multiple of [`NUM_PER_BATCH`].
    pub insert_rate: u32,
    /// The search stages, in percent of the rows inserted (0 to 99; run in increasing order).
    pub search_stages: Vec<u32>,
    /// Seconds of each level after the write (stages 100 and 110).
    pub read_duration: Duration,
    /// Run the optimize stage after the write, then search again (stage 110).
    pub optimize_after_write: bool,
}

impl Default for StreamingOptions {
    /// VectorDBBench's defaults: 500 rows/s, stages 50 % and 80 %, 30 s, optimize after.
    fn default() -> Self {
        StreamingOptions {
            insert_rate: DEFAULT_INSERT_RATE,
            search_stages: DEFAULT_SEARCH_STAGES.to_vec(),
            read_duration: Duration::from_secs(DEFAULT_READ_DURATION),
            optimize_after_write: true,
        }
    }
}

impl StreamingOptions {
    /// Refuses what the streaming case cannot run: a rate VectorDBBench would change, a stage
    /// outside 0–99 or given twice, a read duration outside 1 s to a day, and the options of
    /// the performance case it has no use for (a stage list, a filter, rounds).
    pub fn check(&self, options: &CaseOptions) -> Result<(), CaseError> {
        let refuse = |message: String| Err(CaseError::Options(message));
        let rate = self.insert_rate;
        if rate == 0 || !rate.is_multiple_of(NUM_PER_BATCH) || rate > MAX_INSERT_RATE {
            return refuse(format!(
                "the insert rate must be a multiple of {NUM_PER_BATCH} rows/s up to \
                 {MAX_INSERT_RATE} (VectorDBBench inserts batches of {NUM_PER_BATCH} rows), not \
                 {rate}"
            ));
        }
        let mut seen = Vec::new();
        for &stage in &self.search_stages {
            if stage >= 100 {
                return refuse(format!(
                    "a search stage is a percentage of the rows inserted, 0 to 99, not {stage} \
                     (the search after the last row, 100, always runs)"
                ));
            }
            if seen.contains(&stage) {
                return refuse(format!("the search stage {stage} is given twice"));
            }
            seen.push(stage);
        }
        let seconds = 1..=crate::case::MAX_SECONDS;
        let read = self.read_duration;
        if !seconds.contains(&read.as_secs()) || read.subsec_nanos() != 0 {
            return refuse(format!(
                "the read duration must be 1 to {} whole seconds",
                crate::case::MAX_SECONDS
            ));
        }
        if Stage::ALL
            .iter()
            .any(|stage| !options.stages.contains(stage))
        {
            return refuse(
                "the streaming case runs its own stages (the table, the insert with its \
                 searches, optimize): leave the stage list out"
                    .to_owned(),
            );
        }
        if options.filter.is_some() {
            return refuse("the streaming case has no filter: leave it out".to_owned());
        }
        if options.rounds != 1 {
            return refuse(
                "the streaming case runs once (its searches are tied to the insert): leave the \
                 rounds out"
                    .to_owned(),
            );
        }
        options.check()
    }

    /// The stages in the order they run.
    fn sorted_stages(&self) -> Vec<u32> {
        let mut stages = self.search_stages.clone();
        stages.sort_unstable();
        stages
    }
}

/// The insert's schedule, as VectorDBBench counts it: `rows` at `rate` rows per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Rows of the training set.
    pub rows: u64,
    /// Rows per second.
    pub rate: u32,
}

impl Schedule {
    /// Seconds the insert takes at the rate, `ceil(rows / rate)` (VectorDBBench's
    /// `st_ideal_insert_duration` and its count of one-second batches).
    pub fn ideal_seconds(&self) -> u64 {
        self.rows.div_ceil(u64::from(self.rate.max(1)))
    }

    /// The stage `percent` as VectorDBBench labels it: `int(stage × 100)` of the fraction
    /// `percent / 100` (29 is labelled 28: 0.29 × 100 is 28.999999999999996).
    pub fn stage_label(percent: u32) -> u64 {
        (fraction(percent) * 100.0) as u64
    }

    /// Rows acknowledged when the stage `percent` is reached: `int(ceil(rows / rate) ×
    /// stage)` one-second signals of `rate` rows each.
    pub fn stage_rows(&self, percent: u32) -> u64 {
        let seconds = (self.ideal_seconds() as f64 * fraction(percent)) as u64;
        (seconds * u64::from(self.rate)).min(self.rows)
    }

    /// Seconds of each of `levels` levels at the stage `percent`, the next stage being `next`
    /// (None: the end of the insert), after a serial pass of `serial_seconds`: VectorDBBench's
    /// `get_each_conc_search_dur`. The levels run only when this is more than 10 s
    /// ([`Schedule::levels_run`]).
    pub fn level_seconds(
        &self,
        serial_seconds: f64,
        percent: u32,
        next: Option<u32>,
        levels: usize,
    ) -> f64 {
        let next = next.map_or(1.0, fraction);
        let between = python_floordiv(
            self.rows as f64 * (next - fraction(percent)),
            f64::from(self.rate),
        );
        let mut left = between - round4(serial_seconds);
        if left > 60.0 {
            left -= 30.0;
        } else if left > 30.0 {
            left -= 15.0;
        } else {
            left /= 2.0;
        }
        round4(left / levels.max(1) as f64)
    }

    /// Whether levels of `seconds` each run (VectorDBBench skips them at 10 s or less).
    pub fn levels_run(seconds: f64) -> bool {
        seconds > MIN_LEVEL_SECONDS
    }
}

/// The fraction of a percentage, as VectorDBBench's stages are written (`0.5` for 50).
fn fraction(percent: u32) -> f64 {
    f64::from(percent) / 100.0
}

/// Python's `a // b` of two floats (`float_floor_div`: through `fmod`, so that the quotient is
/// the one Python gives, not `floor(a / b)`).
fn python_floordiv(a: f64, b: f64) -> f64 {
    let rest = a % b;
    let mut quotient = (a - rest) / b;
    if rest != 0.0 && ((b < 0.0) != (rest < 0.0)) {
        quotient -= 1.0;
    }
    if quotient == 0.0 {
        return 0.0;
    }
    let floor = quotient.floor();
    if quotient - floor > 0.5 {
        floor + 1.0
    } else {
        floor
    }
}

/// One search of the streaming case: a serial pass and the levels, at a stage.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StageSearch {
    /// The stage as VectorDBBench labels it (percent inserted; 100 after the last row, 110 after
    /// optimize).
    pub stage: u64,
    /// When the search began, seconds from the insert's start.
    pub time: f64,
    /// Rows acknowledged or rejected when it began.
    pub rows: u64,
    /// The serial pass.
    pub serial: SerialSummary,
    /// The levels (empty when the time to the next stage was too short for them).
    pub levels: Vec<LevelSummary>,
    /// The failed share of the last level's queries (0 without levels).
    pub failed_rate: f64,
}

impl StageSearch {
    /// The search at `stage`, begun `time` seconds into the case with `rows` in, of what
    /// the case's `stage_search` measured.
    fn of(
        stage: u64,
        time: f64,
        rows: u64,
        (serial, levels, failed_rate): (SerialSummary, Vec<LevelSummary>, f64),
    ) -> StageSearch {
        StageSearch {
            stage,
            time,
            rows,
            serial,
            levels,
            failed_rate,
        }
    }
}

/// What the rate-limited insert did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct InsertReport {
    /// The rate asked for, rows per second.
    pub asked_rate: u32,
    /// Rows acknowledged.
    pub written: u64,
    /// Rows rejected at every try.
    pub rejected: u64,
    /// Writes that failed and were sent again.
    pub retried: u64,
    /// The first rejected row and why.
    pub first_rejected: Option<(u64, String)>,
    /// Seconds from the first row handed over to the last answered.
    pub seconds: f64,
    /// The largest number of rows due by the schedule and not yet acknowledged or rejected.
    pub max_backlog: u64,
}

impl InsertReport {
    /// What was rejected, for a message (`N rows of the streaming insert were rejected (the
    /// first: row R: why)`); None when no row was.
    pub fn rejection(&self) -> Option<String> {
        if self.rejected == 0 {
            return None;
        }
        let mut text = format!(
            "{} rows of the streaming insert were rejected",
            self.rejected
        );
        if let Some((row, reason)) = &self.first_rejected {
            text.push_str(&format!(" (the first: row {row}: {reason})"));
        }
        Some(text)
    }

    /// Acknowledged rows per second.
    pub fn achieved_rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.written as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// What the streaming case measured, beside the [`CaseReport`] it is part of.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StreamingReport {
    /// The case's parameters.
    pub options: StreamingOptions,
    /// Its concurrency levels.
    pub concurrency: Vec<usize>,
    /// Rows of the training set.
    pub rows: u64,
    /// The insert.
    pub insert: InsertReport,
    /// The searches, in the order they ran.
    pub searches: Vec<StageSearch>,
    /// Seconds of the optimize stage (0 without it).
    pub optimize_duration: f64,
    /// When the index was created during the insert: the rows in by then and the seconds until
    /// it answered.
    pub index_built: Option<(u64, f64)>,
}

impl StreamingReport {
    /// The result file's metrics: `insert_duration`, `optimize_duration` and the `st_*` lists,
    /// the performance case's fields left at 0 as VectorDBBench leaves them.
    pub fn metrics(&self) -> Metrics {
        let each = |f: &dyn Fn(&StageSearch) -> f64| self.searches.iter().map(f).collect();
        let levels = |f: &dyn Fn(&LevelSummary) -> f64| {
            self.searches
                .iter()
                .map(|search| search.levels.iter().map(f).collect())
                .collect()
        };
        Metrics {
            insert_duration: self.insert.seconds,
            optimize_duration: self.optimize_duration,
            st_ideal_insert_duration: self.schedule().ideal_seconds(),
            st_search_stage_list: self.searches.iter().map(|s| s.stage).collect(),
            st_search_time_list: each(&|s| round4(s.time)),
            st_max_qps_list_list: each(&|s| max_qps(&s.levels)),
            st_recall_list: each(&|s| s.serial.recall),
            st_ndcg_list: each(&|s| s.serial.ndcg),
            st_serial_latency_p99_list: each(&|s| s.serial.latency_p99),
            st_serial_latency_p95_list: each(&|s| s.serial.latency_p95),
            st_conc_failed_rate_list: each(&|s| s.failed_rate),
            st_conc_num_list_list: self
                .searches
                .iter()
                .map(|s| s.levels.iter().map(|l| l.concurrency).collect())
                .collect(),
            st_conc_qps_list_list: levels(&|l| l.qps),
            st_conc_latency_p99_list_list: levels(&|l| l.latency_p99),
            st_conc_latency_p95_list_list: levels(&|l| l.latency_p95),
            st_conc_latency_avg_list_list: levels(&|l| l.latency_avg),
            ..Metrics::default()
        }
    }

    /// The insert's schedule.
    pub fn schedule(&self) -> Schedule {
        Schedule {
            rows: self.rows,
            rate: self.options.insert_rate,
        }
    }

    /// Makes a performance case's result (the one [`CaseReport::result`] builds) of `dataset`
    /// this streaming case's: its metrics, and VectorDBBench's streaming case with the case's
    /// parameters as the arguments of its constructor: `StreamingPerformanceCase` (200) of a
    /// standard dataset (its `dataset_with_size_type`), else `StreamingCustomDataset` (201) with
    /// the folder's `dataset_config`.
    pub fn fill(&self, case: &mut CaseResult, dataset: &DatasetSummary) {
        case.metrics = self.metrics();
        let config = &mut case.task_config.case_config;
        let mut custom = serde_json::Map::new();
        match crate::standard::recognise(&dataset.name, dataset.size, dataset.dim) {
            Some(standard) => {
                config.case_id = CASE_STREAMING_PERFORMANCE;
                custom.insert("dataset_with_size_type".into(), standard.size_type.into());
            }
            None => {
                config.case_id = CASE_STREAMING_CUSTOM_DATASET;
                let description = config
                    .custom_case
                    .get("description")
                    .and_then(|d| d.as_str())
                    .map(|d| {
                        format!(
                            "{d}, streaming at {} rows/s (cqlwire bench)",
                            self.options.insert_rate
                        )
                    })
                    .unwrap_or_default();
                let dataset_config = config
                    .custom_case
                    .get("dataset_config")
                    .cloned()
                    .unwrap_or_default();
                custom.insert("description".into(), description.into());
                custom.insert("dataset_config".into(), dataset_config);
            }
        }
        let stages: Vec<f64> = self
            .options
            .sorted_stages()
            .into_iter()
            .map(fraction)
            .collect();
        custom.insert("insert_rate".into(), self.options.insert_rate.into());
        custom.insert("search_stages".into(), stages.into());
        custom.insert("concurrencies".into(), self.concurrency.clone().into());
        custom.insert(
            "optimize_after_write".into(),
            self.options.optimize_after_write.into(),
        );
        custom.insert(
            "read_dur_after_write".into(),
            self.options.read_duration.as_secs().into(),
        );
        config.custom_case = custom;
        config.concurrency_search_config.concurrency_duration =
            self.options.read_duration.as_secs();
    }

    /// The insert as the summary and the result file's note show it: the rate asked and
    /// achieved, the backlog, the writes retried and the rows rejected.
    pub fn insert_json(&self) -> serde_json::Value {
        let insert = &self.insert;
        let mut value = serde_json::json!({
            "insert_rate": insert.asked_rate,
            "achieved_rate": insert.achieved_rate(),
            "achieved_share": insert.achieved_rate() / f64::from(insert.asked_rate.max(1)),
            "rows": self.rows,
            "written": insert.written,
            "rejected": insert.rejected,
            "retried": insert.retried,
            "max_backlog": insert.max_backlog,
            "ideal_insert_duration": self.schedule().ideal_seconds(),
            "search_rows": self.searches.iter().map(|s| s.rows).collect::<Vec<_>>(),
        });
        if let Some(map) = value.as_object_mut() {
            if let Some((row, reason)) = &insert.first_rejected {
                map.insert(
                    "first_rejected".into(),
                    serde_json::json!({"row": row, "reason": reason}),
                );
            }
            if let Some((rows, seconds)) = self.index_built {
                map.insert(
                    "index_built".into(),
                    serde_json::json!({"rows": rows, "seconds": seconds}),
                );
            }
        }
        value
    }
}

/// The searcher and its queries, made once the index exists.
struct Search {
    searcher: Searcher,
    queries: QuerySet,
}

/// Where the searches are: the queries not yet read (no index yet), or the searcher.
enum Searching {
    /// The index is still to be made (or waited for).
    Waiting(Box<dyn BatchReader>),
    /// The searcher on the index.
    Ready(Box<Search>),
}

/// How long a search's levels run.
enum LevelTime {
    /// During the insert, at stage `percent`, the next being `next`: VectorDBBench's share of
    /// the time left.
    Between { percent: u32, next: Option<u32> },
    /// After the write: this long each.
    Fixed(Duration),
}

/// A task aborted when dropped: the insert and its watch end with the case, whatever ends it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Case<'_> {
    /// The searcher: at the first search, the index (when this case has none yet) and the
    /// searcher on it, once it answers (`rows` in the table; when this made the index, `built`
    /// gets them and the seconds until it answered).
    async fn ready(
        &mut self,
        searching: Searching,
        truth: &GroundTruth,
        rows: u64,
        built: &mut Option<(u64, f64)>,
    ) -> Result<Search, CaseError> {
        let test = match searching {
            Searching::Ready(search) => return Ok(*search),
            Searching::Waiting(test) => test,
        };
        let started = Instant::now();
        let creating = self.report.index.is_empty();
        if creating {
            self.create_indexes(None).await?;
        }
        let (searcher, queries) = self.searcher(test, None, Some(truth)).await?;
        searcher
            .wait_for_index(&queries, self.options.index_wait, self.control)
            .await?;
        if creating {
            *built = Some((rows, started.elapsed().as_secs_f64()));
        }
        Ok(Search { searcher, queries })
    }

    /// One search: the serial pass, then the levels (skipped when VectorDBBench would skip
    /// them).
    async fn stage_search(
        &mut self,
        searcher: &Searcher,
        queries: &QuerySet,
        truth: &GroundTruth,
        schedule: Schedule,
        time: LevelTime,
    ) -> Result<(SerialSummary, Vec<LevelSummary>, f64), CaseError> {
        let started = Instant::now();
        self.serial(searcher, queries, truth).await?;
        let serial = self.report.serial.unwrap_or(SerialSummary {
            recall: 0.0,
            ndcg: 0.0,
            latency_p99: 0.0,
            latency_p95: 0.0,
        });
        let serial_seconds = started.elapsed().as_secs_f64();
        let levels = self.options.concurrency.len();
        let duration = match time {
            LevelTime::Fixed(duration) => Some(duration),
            LevelTime::Between { percent, next } => {
                let seconds = schedule.level_seconds(serial_seconds, percent, next, levels);
                Schedule::levels_run(seconds).then(|| Duration::from_secs_f64(seconds))
            }
        };
        let Some(duration) = duration else {
            return Ok((serial, Vec::new(), 0.0));
        };
        let counts = self.levels(searcher, queries, duration).await?;
        let failed_rate = counts.last().map_or(0.0, |&(answered, failed)| {
            if answered + failed > 0 {
                failed as f64 / (answered + failed) as f64
            } else {
                0.0
            }
        });
        Ok((serial, self.report.levels.clone(), failed_rate))
    }
}

/// Samples the insert's backlog until aborted: the rows due by the schedule (`rate` rows a
/// second from `started`, at most `rows`) less those acknowledged or rejected.
fn watch_backlog(
    progress: Arc<Progress>,
    schedule: Schedule,
    started: Instant,
    most: Arc<AtomicU64>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let due = (started.elapsed().as_secs_f64() * f64::from(schedule.rate)) as u64;
            let now = progress.snapshot();
            let backlog = due
                .min(schedule.rows)
                .saturating_sub(now.written + now.rejected);
            most.fetch_max(backlog, Ordering::Relaxed);
            tokio::time::sleep(POLL).await;
        }
    })
}

/// Runs the streaming case on the dataset's files (see the module's documentation).
pub async fn run(
    dataset: &BenchDataset,
    options: &CaseOptions,
    streaming: &StreamingOptions,
    control: &RunControl,
    observe: &mut (dyn FnMut(Event) + Send),
) -> Result<CaseReport, CaseError> {
    streaming.check(options)?;
    let (
        mut case,
        Begun {
            truth,
            test,
            rows,
            create_table,
            ..
        },
    ) = Case::begin(dataset, options, control, observe).await?;
    let (Some(mut rows), Some(statement), Some(truth)) = (rows, create_table, truth) else {
        return Err(CaseError::Options(
            "the streaming case needs the training set, the queries and their ground truth"
                .to_owned(),
        ));
    };
    let total = rows.rows().unwrap_or(case.report.dataset.size);
    let schedule = Schedule {
        rows: total,
        rate: streaming.insert_rate,
    };
    case.check_index_names(None).await?;
    case.create_table(&statement).await?;
    let mut searching = Searching::Waiting(test);
    let mut index_built = None;
    if options.index_first {
        case.create_indexes(None).await?;
    }

    let mut load_options = LoadOptions::new(options.connection.clone());
    load_options.rate = NonZeroU32::new(streaming.insert_rate);
    let loader = Loader::connect_for(load_options, &mut rows).await?;
    let insert_control = RunControl {
        progress: Arc::new(Progress::default()),
        stop: control.stop.clone(),
    };
    let progress = insert_control.progress.clone();
    (case.observe)(Event::Started {
        stage: Stage::Load,
        units: Some(total),
    });
    let started = Instant::now();
    let mut insert = AbortOnDrop(tokio::spawn(async move {
        let mut rejects = FirstReject::default();
        let loaded = loader
            .load(rows, &mut rejects, &insert_control, Mode::Write)
            .await;
        (loaded, rejects)
    }));
    let backlog = Arc::new(AtomicU64::new(0));
    let watch = AbortOnDrop(watch_backlog(
        progress.clone(),
        schedule,
        started,
        backlog.clone(),
    ));
    let done = || {
        let now = progress.snapshot();
        now.written + now.rejected
    };

    let mut searches = Vec::new();
    let stages = streaming.sorted_stages();
    for (at, &percent) in stages.iter().enumerate() {
        let target = schedule.stage_rows(percent);
        while done() < target && !insert.0.is_finished() {
            case.stopped(Stage::Load)?;
            tokio::time::sleep(POLL).await;
        }
        if done() < target {
            // The insert ended early: its error is reported below.
            break;
        }
        let time = started.elapsed().as_secs_f64();
        let rows_in = done();
        let search = case
            .ready(searching, &truth, rows_in, &mut index_built)
            .await?;
        let next = stages.get(at + 1).copied();
        let between = LevelTime::Between { percent, next };
        let measured = case
            .stage_search(&search.searcher, &search.queries, &truth, schedule, between)
            .await?;
        searches.push(StageSearch::of(
            Schedule::stage_label(percent),
            time,
            rows_in,
            measured,
        ));
        searching = Searching::Ready(Box::new(search));
    }
    let (loaded, rejects) = match (&mut insert.0).await {
        Ok(done) => done,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    };
    drop(watch);
    let loaded = loaded?;
    case.stopped(Stage::Load)?;
    let insert = InsertReport {
        asked_rate: streaming.insert_rate,
        written: loaded.written,
        rejected: rejects.count,
        retried: loaded.retried,
        first_rejected: rejects.first,
        seconds: loaded.elapsed.as_secs_f64(),
        max_backlog: backlog.load(Ordering::Relaxed),
    };
    case.report.rows = loaded.written;
    case.report.insert_duration = insert.seconds;
    (case.observe)(Event::Finished {
        stage: Stage::Load,
        seconds: insert.seconds,
    });

    let time = started.elapsed().as_secs_f64();
    let rows_in = done();
    let Search { searcher, queries } = case
        .ready(searching, &truth, rows_in, &mut index_built)
        .await?;
    let after_write = LevelTime::Fixed(streaming.read_duration);
    let measured = case
        .stage_search(&searcher, &queries, &truth, schedule, after_write)
        .await?;
    searches.push(StageSearch::of(AFTER_WRITE, time, rows_in, measured));
    if streaming.optimize_after_write {
        case.optimize(&searcher, &queries, Instant::now()).await?;
        case.read_index_state(&searcher).await;
        let time = started.elapsed().as_secs_f64();
        let after_optimize = LevelTime::Fixed(streaming.read_duration);
        let measured = case
            .stage_search(&searcher, &queries, &truth, schedule, after_optimize)
            .await?;
        searches.push(StageSearch::of(AFTER_OPTIMIZE, time, rows_in, measured));
    } else {
        case.read_index_state(&searcher).await;
    }
    case.report.streaming = Some(StreamingReport {
        options: streaming.clone(),
        concurrency: options.concurrency.clone(),
        rows: total,
        insert,
        searches,
        optimize_duration: case.report.optimize_duration,
        index_built,
    });
    case.report.load_average.1 = crate::context::load_average();
    Ok(case.report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::options;
    use crate::result::{ResultDb, CASE_CUSTOM_DATASET};

    fn serial(recall: f64) -> SerialSummary {
        SerialSummary {
            recall,
            ndcg: recall,
            latency_p99: 0.002,
            latency_p95: 0.001,
        }
    }

    /// A case of 1,000 rows at 100 rows/s: stage 50 without levels, then 100 and 110 with two.
    fn report() -> StreamingReport {
        let levels = vec![
            LevelSummary::of(5, &[0.01; 40], 2.0),
            LevelSummary::of(10, &[0.02; 50], 2.0),
        ];
        let search = |stage, time, recall, levels: &Vec<LevelSummary>, failed_rate| StageSearch {
            stage,
            time,
            rows: 500,
            serial: serial(recall),
            levels: levels.clone(),
            failed_rate,
        };
        StreamingReport {
            options: StreamingOptions {
                insert_rate: 100,
                search_stages: vec![50],
                ..StreamingOptions::default()
            },
            concurrency: vec![5, 10],
            rows: 1000,
            insert: InsertReport {
                asked_rate: 100,
                written: 990,
                rejected: 10,
                retried: 12,
                first_rejected: Some((7, "timed out".to_owned())),
                seconds: 11.0,
                max_backlog: 40,
            },
            searches: vec![
                search(50, 5.123_456, 0.5, &Vec::new(), 0.0),
                search(AFTER_WRITE, 11.5, 0.9, &levels, 0.25),
                search(AFTER_OPTIMIZE, 20.25, 0.95, &levels, 0.0),
            ],
            optimize_duration: 3.5,
            index_built: Some((500, 1.5)),
        }
    }

    #[test]
    fn the_st_lists_hold_one_entry_per_search_in_the_order_they_ran() {
        let metrics = report().metrics();
        assert_eq!(metrics.st_search_stage_list, [50, 100, 110]);
        assert_eq!(metrics.st_search_time_list, [5.1235, 11.5, 20.25]);
        assert_eq!(metrics.st_recall_list, [0.5, 0.9, 0.95]);
        assert_eq!(metrics.st_ndcg_list, [0.5, 0.9, 0.95]);
        assert_eq!(metrics.st_serial_latency_p99_list, [0.002; 3]);
        assert_eq!(metrics.st_serial_latency_p95_list, [0.001; 3]);
        // The largest qps of each search's levels: 50 queries in 2 s at 10; none without levels.
        assert_eq!(metrics.st_max_qps_list_list, [0.0, 25.0, 25.0]);
        assert_eq!(metrics.st_conc_failed_rate_list, [0.0, 0.25, 0.0]);
        assert_eq!(
            metrics.st_conc_num_list_list,
            [vec![], vec![5, 10], vec![5, 10]]
        );
        assert_eq!(metrics.st_conc_qps_list_list[1], [20.0, 25.0]);
        assert_eq!(metrics.st_conc_latency_avg_list_list[2].len(), 2);
        assert!(metrics.st_conc_latency_p99_list_list[0].is_empty());
        // ceil(1000 / 100): the insert's seconds at the rate.
        assert_eq!(metrics.st_ideal_insert_duration, 10);
        assert_eq!(
            (metrics.insert_duration, metrics.optimize_duration),
            (11.0, 3.5)
        );
        // The performance case's fields stay at 0, as VectorDBBench leaves them.
        assert_eq!(
            (metrics.qps, metrics.recall, metrics.load_duration),
            (0.0, 0.0, 0.0)
        );
        assert!(metrics.conc_num_list.is_empty());
    }

    #[test]
    fn a_streaming_result_is_vectordbbenchs_streaming_case_with_its_constructors_arguments() {
        let options = options();
        let mut case_report = CaseReport::empty_for_tests();
        case_report.streaming = Some(report());
        let result = case_report.result(&options, ResultDb::Cassandra, "r", None);
        let config = &result.results[0].task_config.case_config;
        assert_eq!(config.case_id, CASE_STREAMING_CUSTOM_DATASET);
        let custom = &config.custom_case;
        // StreamingCustomDataset.__init__'s parameters, and no `name` (which it sets itself).
        let mut keys: Vec<&str> = custom.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "concurrencies",
                "dataset_config",
                "description",
                "insert_rate",
                "optimize_after_write",
                "read_dur_after_write",
                "search_stages",
            ]
        );
        assert_eq!(custom["search_stages"], serde_json::json!([0.5]));
        assert_eq!(custom["insert_rate"], 100);
        assert_eq!(custom["dataset_config"]["size"], 300);
        assert_eq!(
            result.results[0].metrics.st_search_stage_list,
            [50, 100, 110]
        );
        // Without the streaming report the same run is the performance case.
        case_report.streaming = None;
        let plain = case_report.result(&options, ResultDb::Cassandra, "r", None);
        assert_eq!(
            plain.results[0].task_config.case_config.case_id,
            CASE_CUSTOM_DATASET
        );

        // A standard dataset's streaming case is VectorDBBench's own (200).
        case_report.streaming = Some(report());
        case_report.dataset.name = "cohere_medium_1m".to_owned();
        case_report.dataset.size = 1_000_000;
        case_report.dataset.dim = 768;
        let standard = case_report.result(&options, ResultDb::Cassandra, "r", None);
        let config = &standard.results[0].task_config.case_config;
        assert_eq!(config.case_id, CASE_STREAMING_PERFORMANCE);
        assert_eq!(
            config.custom_case["dataset_with_size_type"],
            "Medium Cohere (768dim, 1M)"
        );
    }

    #[test]
    fn the_insert_is_summarised_with_its_rate_backlog_and_rejections() {
        let report = report();
        assert_eq!(report.insert.achieved_rate(), 90.0);
        let json = report.insert_json();
        assert_eq!(json["achieved_share"], 0.9);
        assert_eq!(
            (&json["rejected"], &json["retried"]),
            (&10.into(), &12.into())
        );
        assert_eq!(json["first_rejected"]["row"], 7);
        assert_eq!(json["index_built"]["rows"], 500);
        assert_eq!(
            report.insert.rejection().unwrap(),
            "10 rows of the streaming insert were rejected (the first: row 7: timed out)"
        );
        let clean = InsertReport::default();
        assert_eq!((clean.rejection(), clean.achieved_rate()), (None, 0.0));
    }

    #[test]
    fn options_the_streaming_case_cannot_run_are_refused() {
        let mut case = options();
        case.stages = Stage::ALL.to_vec();
        assert!(StreamingOptions::default().check(&case).is_ok());
        let refused = |streaming: StreamingOptions, case: &CaseOptions, needle: &str| {
            let error = streaming.check(case).unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        };
        for rate in [0, 150, 50, MAX_INSERT_RATE + 100] {
            let streaming = StreamingOptions {
                insert_rate: rate,
                ..StreamingOptions::default()
            };
            refused(streaming, &case, "multiple of 100");
        }
        let stages = |search_stages: Vec<u32>| StreamingOptions {
            search_stages,
            ..StreamingOptions::default()
        };
        refused(stages(vec![50, 100]), &case, "0 to 99, not 100");
        refused(stages(vec![50, 20, 50]), &case, "50 is given twice");
        assert!(stages(vec![]).check(&case).is_ok());
        let read = StreamingOptions {
            read_duration: Duration::from_millis(1500),
            ..StreamingOptions::default()
        };
        refused(read, &case, "whole seconds");
        let mut rounds = case.clone();
        rounds.rounds = 2;
        refused(StreamingOptions::default(), &rounds, "runs once");
        let mut filtered = case.clone();
        filtered.filter = Some(crate::folder::Filter::Int { rate: 0.5 });
        refused(StreamingOptions::default(), &filtered, "no filter");
        refused(StreamingOptions::default(), &options(), "its own stages");
    }

    #[test]
    fn stages_run_in_increasing_order() {
        let streaming = StreamingOptions {
            search_stages: vec![80, 0, 50],
            ..StreamingOptions::default()
        };
        assert_eq!(streaming.sorted_stages(), [0, 50, 80]);
    }
}
