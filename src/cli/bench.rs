//! `cqlwire bench`: VectorDBBench's performance case on a live Cassandra/ScyllaDB table — a dataset
//! folder loaded, indexed, searched serially and at each concurrency level — with its result file
//! and chart.
//!
//! A thin face over [`cqlwire_bench::case`]: the arguments become [`CaseOptions`], and this file
//! adds the progress display and the signals; the library writes the summary, the result file
//! and the chart.

use super::connection::{engine_error, Connection};
use super::live::{self, Threads};
use super::progress::{self, Unit};
use super::search::search_error;
use super::CliError;
use crate::files::Output;
use crate::messages;
use cqlwire_bench::case::{CaseError, CaseOptions, Event, Stage};
use cqlwire_bench::chart::{recall_qps_chart, Run};
use cqlwire_bench::dataset::{BenchDataset, DatasetFiles};
use cqlwire_bench::folder::Filter;
use cqlwire_bench::job::{refuse_plot_inputs, BenchJob, Written};
use cqlwire_bench::result::{ResultDb, TestResult};
use cqlwire_bench::streaming::StreamingOptions;
use cqlwire_bench::sweep::Sweep;
use cqlwire_bench::DatasetError;
use cqlwire_client::{Progress, RunControl, SearchOptions};
use indicatif::ProgressBar;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # The whole case on a VectorDBBench dataset folder (here the bundled one: 300 rows, 12 queries,
  # their 10 nearest by cosine), its result file and chart:
  cqlwire bench fixtures/bench/folder --hosts 127.0.0.1 --table ks.bench --k 10 --metric cosine \\
      -o result.json --plot qps.svg

  # An ann-benchmarks HDF5 file (train, test, neighbors; its distance attribute names the
  # similarity function):
  cqlwire bench glove-25-angular.hdf5 --hosts 127.0.0.1 --table ks.glove --k 10

  # Three files instead of a folder (ids: the training file's id column, else its row numbers):
  cqlwire bench --train base.fbin --test query.fbin --ground-truth gt.ivecs --hosts 127.0.0.1 \
      --table ks.bench --metric euclidean --k 10

  # VectorDBBench's streaming case: the rows inserted at 100 rows/s, a serial pass and the levels
  # once half of them are in, then after the last row and after optimize (st_* metrics):
  cqlwire bench fixtures/bench/folder --hosts 127.0.0.1 --table ks.stream --k 10 --streaming \\
      --insert-rate 100 --search-stages 50 --read-duration 5 -o streaming.json

  # A sweep: the table loaded once, an index per value set (the graph's options need a server
  # started with -Dcassandra.sai.vector.allow_custom_parameters=true), one result file with a case
  # each, and the chart of recall against QPS with the Pareto frontier:
  cqlwire bench fixtures/bench/folder --hosts 127.0.0.1 --table ks.bench --k 10 --drop \\
      --sweep maximum_node_connections=8,16,32 --sweep construction_beam_width=50,100 \\
      -o sweep.json --plot sweep.svg

  # Short levels, on the table loaded before (the search stages only):
  cqlwire bench fixtures/bench/folder --hosts 127.0.0.1 --table ks.bench --k 10 \\
      --stages serial,concurrent --concurrency 1,4 --duration 2

Stages: table (VectorDBBench's drop_old) creates the table (id bigint PRIMARY KEY, emb \
vector<float, D>; an existing table is refused unless --drop), load inserts the training set, \
index creates the SAI index, optimize waits until it answers (the three are VectorDBBench's load: \
insert_duration + optimize_duration = load_duration), serial (search_serial) sends every query \
once, one in flight (recall, ndcg, serial p99/p95), concurrent (search_concurrent) runs each \
concurrency level for --duration seconds, each worker cycling \
through the queries from a random start (qps, p99, p95, mean latency). --filter int:RATE adds \
id_int bigint (a copy of the id) and --filter label:SHARE labels text to the table, each with an \
SAI index, and the queries restrict it (Cassandra 5.0.9 cannot restrict the partition key in an \
ANN query). Output: the summary on \
standard output (text, or one JSON object with --format json); -o writes VectorDBBench's result \
file (no credential in it); progress on standard error.";

/// Arguments of `cqlwire bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES, args_conflicts_with_subcommands = true,
          subcommand_negates_reqs = true)]
pub struct Args {
    /// Draw result files instead of running a case.
    #[command(subcommand)]
    pub command: Option<Plot>,
    /// A VectorDBBench dataset folder (train.parquet or {train|shuffle_train}-NN-of-MM.parquet,
    /// test.parquet, neighbors.parquet), or an ann-benchmarks HDF5 file (.hdf5, .h5: datasets
    /// train, test, neighbors; the distance attribute gives the similarity function).
    #[arg(required_unless_present = "train", conflicts_with = "train")]
    pub dataset: Option<PathBuf>,
    /// The training set as a file, instead of a folder: any format load reads (.npy, fvecs,
    /// bvecs, fbin, ibin, u8bin, Parquet, Arrow, HDF5 dataset train); its id column, else its row
    /// numbers from 0, are the ids.
    #[arg(long, value_name = "FILE", requires_all = ["test", "ground_truth"])]
    pub train: Option<PathBuf>,
    /// The queries, with --train: any format search reads (HDF5: dataset test).
    #[arg(long, value_name = "FILE", requires = "train")]
    pub test: Option<PathBuf>,
    /// The queries' nearest training ids, best first, with --train: ivecs, .npy, Parquet
    /// (neighbors_id) or big-ann-benchmarks' layout.
    #[arg(long, value_name = "FILE", requires = "train")]
    pub ground_truth: Option<PathBuf>,
    #[command(flatten)]
    pub connection: Option<Connection>,
    /// The stages to run: table, load, index, optimize, serial, concurrent, or VectorDBBench's
    /// drop_old, load (= load,index,optimize when every name is VectorDBBench's), search_serial,
    /// search_concurrent [default: all].
    #[arg(long, value_name = "STAGE,...", value_delimiter = ',')]
    pub stages: Vec<String>,
    /// Drop the table first when it exists.
    #[arg(long)]
    pub drop: bool,
    /// The index's similarity function: cosine, euclidean or dot_product [default: an HDF5
    /// file's distance (angular: cosine), else cosine].
    #[arg(long, value_name = "FUNCTION", value_parser = ["cosine", "euclidean", "dot_product"])]
    pub metric: Option<String>,
    /// An option of the SAI index, passed through (e.g. optimize_for=recall); repeatable.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_option)]
    pub index_option: Vec<(String, String)>,
    /// Neighbours asked of each query, and the k of recall@k and NDCG@k.
    #[arg(long, value_name = "K", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub k: u32,
    /// The concurrency levels of the sweep [default: 1,5,10,20,30,40,60,80; with --streaming:
    /// 5,10].
    #[arg(long, value_name = "N,...", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: Vec<u32>,
    /// Seconds of each concurrency level (--streaming times its own: --read-duration).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, conflicts_with = "streaming",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub duration: u64,
    /// Run VectorDBBench's streaming case (StreamingCustomDataset) instead: the training set
    /// inserted at --insert-rate while, at each of --search-stages, a serial pass and the
    /// concurrency levels run; then after the last row (stage 100) and after optimize (110).
    #[arg(long)]
    pub streaming: bool,
    /// Rows per second of the streaming insert, a multiple of 100 [default: 500].
    #[arg(long, value_name = "ROWS", requires = "streaming",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub insert_rate: Option<u32>,
    /// The streaming case's search stages, in percent of the rows inserted (0 to 99; none: only
    /// after the write) [default: 50,80].
    #[arg(long, value_name = "PERCENT,...|none", requires = "streaming", value_parser = parse_stages)]
    pub search_stages: Option<SearchStages>,
    /// Seconds of each concurrency level after the streaming insert (stages 100 and 110)
    /// [default: 30].
    #[arg(long, value_name = "SECONDS", requires = "streaming",
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub read_duration: Option<u64>,
    /// The streaming case without the optimize stage and its search (stage 110).
    #[arg(long, requires = "streaming")]
    pub no_optimize: bool,
    /// How long a schema statement (the table, an index) may take, in seconds: one can wait
    /// behind a vector index's build for minutes.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub schema_timeout: u64,
    /// How long to wait for the new index to answer, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub index_wait: u64,
    /// A filtered case, as VectorDBBench defines it: int:RATE (id >= int(rows × RATE), on a copy
    /// of the id in id_int with its own SAI index) or label:SHARE (labels = 'label_{P}p', from
    /// scalar_labels.parquet, with an SAI index on labels); the folder's ground truth of it.
    #[arg(long, value_name = "int:RATE|label:SHARE")]
    pub filter: Option<Filter>,
    /// Create the index before the load, as VectorDBBench does: on Cassandra 5.0.9 most
    /// concurrent writes are then refused (CASSANDRA-21644): the writes retried and the rows
    /// rejected are reported, the case goes on, and rows rejected make the exit code 1.
    #[arg(long)]
    pub index_first: bool,
    /// Write VectorDBBench's result file here.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The `db` the result file names: Cassandra (the member VectorDBBench's proposed Cassandra
    /// client adds) or test (a member of every release).
    #[arg(long, value_name = "DB", default_value = "Cassandra", value_parser = ["Cassandra", "test"])]
    pub db: String,
    /// Draw QPS and p99 latency against concurrency in this SVG file (with --sweep: recall
    /// against QPS across the combinations, with the Pareto frontier).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// The run's label: VectorDBBench's task_label (its pages list runs by it) and db_label
    /// (its charts name the database by it) [default: the run's random id; the product].
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Also write the result file as VectorDBBench does into its results folder:
    /// DIR/<db>/result_<date>_<label>_<db>.json (point VectorDBBench's RESULTS_LOCAL_DIR at DIR).
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// A command run by the optimize stage before it waits for the index, inside its time (e.g.
    /// 'scripts/cassandra.sh nodetool flush ks t && scripts/cassandra.sh nodetool compact ks t').
    #[arg(long, value_name = "CMD")]
    pub optimize_command: Option<String>,
    /// Sweep an index option or k over values: KEY=V1,V2,... with KEY one of
    /// similarity_function, maximum_node_connections, construction_beam_width, optimize_for, k;
    /// repeatable (every combination runs). The table is loaded once, each combination gets its
    /// own index (combinations differing only in k share one), the result file holds a case per
    /// combination, --plot draws recall against QPS with the Pareto frontier, and --format json
    /// prints {"cases": [...]}.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Vec<String>,
    /// Run the search stages this many times on the loaded table: the result's metrics are the
    /// medians, every round and the spread (min, median, max) are in --format json and the
    /// result file's note; --plot draws each level's lowest to highest QPS as an error bar.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,
    /// Run the whole case this many times, the table dropped, made and loaded each time: the
    /// result's insert and optimize durations and metrics are the medians, each load's durations
    /// and their min/median/max are in --format json and the result file's note (loads).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds_load: u32,
    /// The chart's title [default: the dataset, rows × dimension, k, the filter, the similarity
    /// function, the label and the server; recall and NDCG under it].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Write the result file and chart even when queries failed (the file's label is then
    /// VectorDBBench's FAILED, and its note says how many failed).
    #[arg(long)]
    pub keep_failed: bool,
    /// Summary format.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// No progress display.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `cqlwire bench plot`.
#[derive(Debug, clap::Subcommand)]
pub enum Plot {
    /// Recall against QPS of every case of these result files (cqlwire's or any VectorDBBench
    /// run's), with the Pareto frontier, ann-benchmarks style, as SVG.
    Plot {
        /// VectorDBBench result files (- for standard input).
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// The SVG file [default: standard output].
        #[arg(short, long, value_name = "FILE.svg")]
        output: Option<PathBuf>,
        /// The chart's title.
        #[arg(long, value_name = "TEXT", default_value = "Recall against QPS")]
        title: String,
    },
}

/// Runs `cqlwire bench plot`: every case of every file, one point each.
fn plot(
    results: &[PathBuf],
    output: Option<&std::path::Path>,
    title: &str,
) -> Result<(), CliError> {
    refuse_plot_inputs(output, results).map_err(case_error)?;
    let mut runs = Vec::new();
    for path in results {
        let file = if path.as_os_str() == "-" {
            TestResult::read_from("standard input", io::stdin().lock())
        } else {
            TestResult::read(path)
        };
        runs.extend(file.map_err(CliError::data)?.results.iter().map(Run::of));
    }
    let svg = recall_qps_chart(&runs, title).map_err(CliError::data)?;
    let mut out = Output::open(output, false)?;
    out.write_all(svg.as_bytes())?;
    out.commit()?;
    Ok(())
}

/// The concurrency levels when none are given: VectorDBBench's of its case.
fn default_concurrency(streaming: bool) -> Vec<usize> {
    if streaming {
        cqlwire_bench::streaming::DEFAULT_CONCURRENCY.to_vec()
    } else {
        cqlwire_bench::case::DEFAULT_CONCURRENCY.to_vec()
    }
}

/// The streaming case's parameters of the arguments, VectorDBBench's defaults for the others.
fn streaming_options(args: &Args) -> StreamingOptions {
    let mut options = StreamingOptions::default();
    if let Some(rate) = args.insert_rate {
        options.insert_rate = rate;
    }
    if let Some(SearchStages(stages)) = &args.search_stages {
        options.search_stages = stages.clone();
    }
    if let Some(seconds) = args.read_duration {
        options.read_duration = Duration::from_secs(seconds);
    }
    options.optimize_after_write = !args.no_optimize;
    options
}

/// The percentages of `--search-stages`.
#[derive(Debug, Clone)]
pub struct SearchStages(Vec<u32>);

/// Parses `--search-stages`: percentages, comma-separated, or `none`.
fn parse_stages(text: &str) -> Result<SearchStages, String> {
    if text.trim() == "none" {
        return Ok(SearchStages(Vec::new()));
    }
    text.split(',')
        .map(|stage| {
            stage
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("expected percentages (e.g. 50,80) or none, not '{text}'"))
        })
        .collect::<Result<_, _>>()
        .map(SearchStages)
}

/// Parses one `KEY=VALUE` of `--index-option`.
fn parse_option(pair: &str) -> Result<(String, String), String> {
    pair.split_once('=')
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .filter(|(key, value)| !key.is_empty() && !value.is_empty())
        .ok_or_else(|| format!("expected KEY=VALUE, not '{pair}'"))
}

/// A case error with the exit code it deserves.
fn case_error(error: CaseError) -> CliError {
    let usage = error.is_usage();
    match error {
        CaseError::Engine(error) => engine_error(error),
        CaseError::Search(error) => search_error(error),
        CaseError::TableExists(table) => CliError::usage(format!(
            "table {table} exists: drop it first, or run with --drop"
        )),
        other if usage => CliError::usage(other),
        other => CliError::data(other),
    }
}

/// Runs `cqlwire bench`.
pub fn run(args: Args) -> Result<(), CliError> {
    let (dataset, connection) =
        match (&args.command, &args.dataset, &args.connection) {
            (
                Some(Plot::Plot {
                    results,
                    output,
                    title,
                }),
                _,
                _,
            ) => return plot(results, output.as_deref(), title),
            (None, _, Some(connection)) => (dataset(&args)?, connection),
            _ => return Err(CliError::usage(
                "bench needs a dataset folder (or --train, --test and --ground-truth), --hosts \
                 and --table",
            )),
        };
    let settings = connection.settings()?;
    let connection = settings.options().map_err(engine_error)?;
    let search_connection = SearchOptions::from_settings(&settings)
        .map_err(engine_error)?
        .session;
    let stages = if args.stages.is_empty() {
        Stage::ALL.to_vec()
    } else {
        Stage::parse_list(&args.stages).map_err(CliError::usage)?
    };
    let options = CaseOptions {
        connection,
        search_connection,
        stages,
        drop: args.drop,
        similarity: args.metric.clone(),
        index_options: args.index_option.clone(),
        k: args.k as usize,
        concurrency: if args.concurrency.is_empty() {
            default_concurrency(args.streaming)
        } else {
            args.concurrency.iter().map(|&c| c as usize).collect()
        },
        duration: Duration::from_secs(args.duration),
        index_wait: Duration::from_secs(args.index_wait),
        schema_timeout: Duration::from_secs(args.schema_timeout),
        rounds: args.rounds as usize,
        optimize_command: args.optimize_command.clone(),
        filter: args.filter,
        index_first: args.index_first,
    };
    let mut job = BenchJob::new(dataset, options);
    job.streaming = args.streaming.then(|| streaming_options(&args));
    job.outputs.result = args.output.clone();
    job.outputs.plot = args.plot.clone();
    job.outputs.db = ResultDb::from_value(&args.db).unwrap_or_default();
    job.outputs.keep_failed = args.keep_failed;
    job.outputs.label = args.label.clone();
    job.outputs.title = args.title.clone();
    job.outputs.results_dir = args.results_dir.clone();
    job.sweep = Sweep::parse(&args.sweep).map_err(case_error)?;
    job.load_rounds = args.rounds_load as usize;
    job.check().map_err(case_error)?;

    let control = RunControl::default();
    // The signals are ours before an output's temporary file exists (its own handler would end
    // the process at once).
    let runtime = live::runtime(Threads::All, &control.stop)?;
    // The outputs are opened before the work: a missing folder is refused now, not after it.
    let outputs = job.open_outputs().map_err(case_error)?;
    let display = Arc::new(Mutex::new(Display::new(
        args.quiet,
        control.progress.clone(),
    )));
    let run = runtime.block_on(async {
        let shown = display.clone();
        let ticking = display.clone();
        let ticker = live::ticker(move || {
            if let Ok(display) = ticking.lock() {
                display.tick();
            }
        });
        let mut observe = move |event: Event| {
            if let Ok(mut display) = shown.lock() {
                display.show(event);
            }
        };
        let run = job.run_cases(&control, &mut observe).await;
        ticker.abort();
        run
    });
    if let Ok(display) = display.lock() {
        display.bar.finish_and_clear();
    }
    if control.stop.load(Ordering::Relaxed) {
        let kept = [&args.output, &args.plot]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>();
        let kept = if kept.is_empty() {
            String::new()
        } else {
            format!(" ({} left as they were)", kept.join(", "))
        };
        let stage = match &run.error {
            Some(CaseError::Stopped(stage)) => format!(" during {}", stage.name()),
            _ => String::new(),
        };
        return Err(CliError::data(format!("interrupted{stage}{kept}")));
    }
    let cases = run.cases;
    let error = match run.error {
        Some(error) if cases.is_empty() => return Err(case_error(error)),
        error => error,
    };

    // The summary first: a file that cannot be written does not take the measurement with it.
    let mut out = messages::Stdout(io::stdout().lock());
    if args.format == "json" {
        writeln!(out, "{}", job.summary(&cases))?;
    } else {
        job.write_text_summary(&mut out, &cases)?;
    }
    out.flush()?;
    drop(out);
    let written = job.write_cases(&cases, outputs).map_err(case_error)?;
    if let Some(error) = error {
        let done = format!(
            "after {} of {} value sets, whose results are kept",
            cases.len(),
            job.sweep.points().len()
        );
        return Err(match case_error(error) {
            CliError::Usage(message) | CliError::Data(message) => {
                CliError::data(format!("{message} ({done})"))
            }
            other => other,
        });
    }
    let report = &cases[0].report;
    if let Some(load) = report.index_first.as_ref().filter(|load| load.rejected > 0) {
        return Err(CliError::data(load));
    }
    if let Some(rejected) = report.streaming.as_ref().and_then(|s| s.insert.rejection()) {
        return Err(CliError::data(rejected));
    }
    let errors: u64 = cases.iter().map(|case| case.report.failed_queries()).sum();
    if errors > 0 {
        let withheld = match written {
            Written::Withheld(files) if !files.is_empty() => {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                format!(
                    "; {} not written (--keep-failed writes them, marked failed)",
                    names.join(", ")
                )
            }
            _ => String::new(),
        };
        return Err(CliError::data(format!("{errors} queries failed{withheld}")));
    }
    Ok(())
}

/// A dataset error with the exit code it deserves.
fn dataset_error(error: DatasetError) -> CliError {
    if error.is_usage() {
        CliError::usage(error)
    } else {
        CliError::data(error)
    }
}

/// The dataset of the arguments: the folder or HDF5 file, or the three files of --train, --test and
/// --ground-truth (clap has made sure that one or the other is given, and whole).
fn dataset(args: &Args) -> Result<BenchDataset, CliError> {
    match (&args.dataset, &args.train, &args.test, &args.ground_truth) {
        (Some(path), None, None, None) => BenchDataset::open(path).map_err(dataset_error),
        (None, Some(train), Some(test), Some(truth)) => DatasetFiles::new(train, test, truth)
            .map(BenchDataset::Files)
            .map_err(dataset_error),
        _ => Err(CliError::usage(
            "bench needs a dataset folder, or --train, --test and --ground-truth",
        )),
    }
}

/// The progress display: one bar per stage (or level), on standard error.
struct Display {
    bar: ProgressBar,
    quiet: bool,
    progress: Arc<Progress>,
    /// Rows or queries counted before the stage on the bar started.
    base: u64,
}

impl Display {
    fn new(quiet: bool, progress: Arc<Progress>) -> Display {
        Display {
            bar: progress::bar(None, Unit::Waiting, quiet),
            quiet,
            progress,
            base: 0,
        }
    }

    /// Rows or queries counted so far, answered or not.
    fn counted(&self) -> u64 {
        let now = self.progress.snapshot();
        now.written + now.rejected
    }

    /// Moves the bar to the counters.
    fn tick(&self) {
        let now = self.progress.snapshot();
        self.bar
            .set_position((now.written + now.rejected).saturating_sub(self.base));
    }

    fn show(&mut self, event: Event) {
        if self.quiet {
            return;
        }
        self.base = self.counted();
        match event {
            Event::Started {
                stage: stage @ (Stage::Index | Stage::Optimize),
                ..
            } => {
                self.bar.finish_and_clear();
                self.bar = progress::bar(None, Unit::Waiting, self.quiet);
                self.bar.set_message(if stage == Stage::Index {
                    "index: creating the index"
                } else {
                    "optimize: waiting until the index answers"
                });
                self.bar.enable_steady_tick(Duration::from_millis(200));
            }
            Event::Started { stage, units } => {
                let unit = if stage == Stage::Load {
                    Unit::Rows
                } else {
                    Unit::Queries
                };
                self.bar.finish_and_clear();
                self.bar = progress::bar(units, unit, self.quiet);
                self.bar.set_message(stage.name());
            }
            Event::Level { concurrency } => {
                self.bar.finish_and_clear();
                self.bar = progress::bar(None, Unit::Queries, self.quiet);
                self.bar
                    .set_message(format!("concurrent: {concurrency} in flight"));
            }
            Event::Finished { .. } => self.bar.finish_and_clear(),
            _ => {}
        }
    }
}
