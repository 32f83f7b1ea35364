//! What a search run measured: per query and in summary.

use std::fmt;
use std::io::{self, Write};
use std::time::Duration;

use cqlwire_vector::input::Neighbors;

/// A key returned by an ANN query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Key {
    /// A value of an integer column (tinyint, smallint, int, bigint, varint): the id that ground
    /// truth lists.
    Int(i64),
    /// A value of another type, as a CQL literal.
    Literal(String),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Int(id) => write!(f, "{id}"),
            Key::Literal(text) => f.write_str(text),
        }
    }
}

/// One measured query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// The query's row number in the query input (and in the ground truth).
    pub number: u64,
    /// Time from sending to the whole answer.
    pub latency: Duration,
    /// The keys of the rows returned, nearest first; empty after an error.
    pub keys: Vec<Key>,
    /// recall@k of the answer, when there is ground truth and no error.
    pub recall: Option<f64>,
    /// Why the query failed.
    pub error: Option<String>,
}

/// A warning the server attached to answers, and to how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerWarning {
    /// The server's text.
    pub message: String,
    /// Measured queries whose answer carried it.
    pub queries: u64,
}

/// Distinct warning texts a report keeps; the answers' further texts are only counted.
pub const DISTINCT_WARNINGS: usize = 16;

/// Characters of a warning's text kept (a longer one is cut and ends with `…`).
pub const WARNING_CHARS: usize = 1000;

/// The warnings of a run's answers, counted: the first [`DISTINCT_WARNINGS`] distinct texts, and
/// how many warnings had other texts. Memory and time per warning stay bounded whatever a server
/// sends.
#[derive(Debug, Default)]
pub(crate) struct WarningCounts {
    kept: Vec<ServerWarning>,
    other: u64,
}

impl WarningCounts {
    /// Counts the warnings of one answer (a text it carries twice counts once).
    pub(crate) fn add<'a>(&mut self, answer: impl Iterator<Item = &'a str>) {
        // Which of the kept texts this answer has counted already.
        let mut counted = [false; DISTINCT_WARNINGS];
        for text in answer {
            let found = self.kept.iter().position(|w| is_kept_as(text, &w.message));
            match found {
                Some(i) => {
                    let (seen, warning) = (&mut counted[i], &mut self.kept[i]);
                    if !*seen {
                        *seen = true;
                        warning.queries += 1;
                    }
                }
                None if self.kept.len() < DISTINCT_WARNINGS => {
                    counted[self.kept.len()] = true;
                    self.kept.push(ServerWarning {
                        message: cut(text),
                        queries: 1,
                    });
                }
                None => self.other += 1,
            }
        }
    }
}

/// `text` cut to [`WARNING_CHARS`] characters.
fn cut(text: &str) -> String {
    match cut_at(text) {
        Some(end) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Whether `kept` is what [`cut`] makes of `text` (compared in place: no copy per answer).
fn is_kept_as(text: &str, kept: &str) -> bool {
    match cut_at(text) {
        Some(end) => kept.strip_suffix('…') == Some(&text[..end]),
        None => kept == text,
    }
}

/// The byte where `text` is cut, when it is longer than [`WARNING_CHARS`] characters.
fn cut_at(text: &str) -> Option<usize> {
    text.char_indices().nth(WARNING_CHARS).map(|(end, _)| end)
}

/// Latency percentiles of the answered queries, as NumPy's `percentile` (and VectorDBBench, and
/// `bench`) compute them: interpolated between order statistics ([`crate::metrics::percentile`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: Duration,
    /// 95th percentile.
    pub p95: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest.
    pub max: Duration,
}

impl Latency {
    /// The percentiles of `latencies` (any order); all zero when there are none.
    pub fn of(latencies: &mut [Duration]) -> Latency {
        latencies.sort_unstable();
        let seconds: Vec<f64> = latencies.iter().map(Duration::as_secs_f64).collect();
        let at = |q: f64| {
            crate::metrics::percentile(&seconds, q)
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .unwrap_or_default()
        };
        Latency {
            p50: at(50.0),
            p95: at(95.0),
            p99: at(99.0),
            max: latencies.last().copied().unwrap_or_default(),
        }
    }
}

/// What a search run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchReport {
    /// Queries measured (warm-up queries excluded), answered or not.
    pub queries: u64,
    /// Rows asked of each query (`LIMIT`).
    pub k: usize,
    /// Mean recall@k over the answered queries, when there is ground truth.
    pub recall: Option<f64>,
    /// The lowest recall@k of an answered query.
    pub recall_min: Option<f64>,
    /// Answered queries per second of the measured wall time.
    pub qps: f64,
    /// Latency percentiles of the answered queries.
    pub latency: Latency,
    /// Queries in flight at once.
    pub concurrency: usize,
    /// Queries that failed (timeouts included).
    pub errors: u64,
    /// Wall time of the measured queries.
    pub elapsed: Duration,
    /// The distinct warnings the server attached to the measured answers (e.g. that it lowered
    /// the consistency level), in the order first seen, at most [`DISTINCT_WARNINGS`]; usually
    /// none.
    pub warnings: Vec<ServerWarning>,
    /// Warnings of the measured answers whose text was not among the distinct ones kept.
    pub other_warnings: u64,
    /// Every measured query, in query order.
    pub results: Vec<QueryResult>,
}

impl SearchReport {
    /// Summarises `results` (any order) of a run that took `elapsed`, whose answers carried
    /// `warnings`.
    pub(crate) fn new(
        mut results: Vec<QueryResult>,
        warnings: WarningCounts,
        k: usize,
        concurrency: usize,
        elapsed: Duration,
    ) -> SearchReport {
        results.sort_by_key(|result| result.number);
        let mut latencies: Vec<Duration> = results
            .iter()
            .filter(|result| result.error.is_none())
            .map(|result| result.latency)
            .collect();
        let answered = latencies.len();
        let recalls: Vec<f64> = results.iter().filter_map(|result| result.recall).collect();
        let recall =
            (!recalls.is_empty()).then(|| recalls.iter().sum::<f64>() / recalls.len() as f64);
        let recall_min = recalls.iter().copied().reduce(f64::min);
        let seconds = elapsed.as_secs_f64();
        SearchReport {
            queries: results.len() as u64,
            k,
            recall,
            recall_min,
            qps: if seconds > 0.0 {
                answered as f64 / seconds
            } else {
                0.0
            },
            latency: Latency::of(&mut latencies),
            concurrency,
            errors: (results.len() - answered) as u64,
            elapsed,
            warnings: warnings.kept,
            other_warnings: warnings.other,
            results,
        }
    }
}

/// The first line of a search's per-query CSV (see [`SearchReport::write_csv`]).
pub const RESULTS_HEADER: &str = "query,latency_ms,recall,keys,error\n";

impl SearchReport {
    /// Writes one CSV line per measured query after the header
    /// `query,latency_ms,recall,keys,error`: the query number, its latency in ms (3 decimals),
    /// its recall (empty without ground truth or after an error), the keys returned separated by
    /// spaces, and the error.
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(RESULTS_HEADER.as_bytes())?;
        self.write_csv_rows(out)
    }

    /// The lines of [`write_csv`](SearchReport::write_csv) after its header.
    pub fn write_csv_rows(&self, out: &mut dyn Write) -> io::Result<()> {
        for result in &self.results {
            writeln!(
                out,
                "{},{:.3},{},{},{}",
                result.number,
                result.latency.as_secs_f64() * 1e3,
                result.recall.map(|r| r.to_string()).unwrap_or_default(),
                csv_field(&keys_field(&result.keys)),
                csv_field(result.error.as_deref().unwrap_or(""))
            )?;
        }
        Ok(())
    }
}

/// The `keys` field of a results line: integer keys separated by spaces (`4 17 2`); other keys,
/// whose CQL literals may hold spaces (`'a b'`), as a JSON array of the literals
/// (`["'a b'","'c'"]`), which splits back unambiguously.
fn keys_field(keys: &[Key]) -> String {
    if keys.iter().all(|key| matches!(key, Key::Int(_))) {
        let ids: Vec<String> = keys.iter().map(ToString::to_string).collect();
        return ids.join(" ");
    }
    let literals: Vec<String> = keys.iter().map(ToString::to_string).collect();
    serde_json::to_string(&literals).unwrap_or_default()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// recall@k of `returned` against `truth` (a query's ground-truth list, best first): how many of
/// the first `k` true neighbours were returned, over `k` — VectorDBBench's `calc_recall` of the
/// first `k` of each ([`crate::metrics::calc_recall`]; 0 for `k` = 0). Ids are compared, not
/// distances: a returned row as near as the k-th true neighbour but not listed among the first k
/// counts as a miss, as in VectorDBBench.
pub fn recall(returned: &[Key], truth: &[i64], k: usize) -> f64 {
    let first = truth.get(..k).unwrap_or(truth);
    let ids: Vec<i64> = returned
        .iter()
        .filter_map(|key| match key {
            Key::Int(id) => Some(*id),
            _ => None,
        })
        .take(k)
        .collect();
    crate::metrics::calc_recall(k, first, &ids)
}

/// recall@k of `returned` for query `number`, when `truth` has its list.
pub(crate) fn query_recall(
    truth: Option<&Neighbors>,
    number: u64,
    returned: &[Key],
    k: usize,
) -> Option<f64> {
    let truth = truth?;
    let row = truth.row(usize::try_from(number).ok()?);
    Some(recall(returned, row, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn percentiles_are_numpys_as_bench_computes_them() {
        let mut latencies: Vec<Duration> = (1..=100).rev().map(ms).collect();
        let seconds: Vec<f64> = (1..=100).map(|m| m as f64 / 1000.0).collect();
        let numpy = |q| Duration::from_secs_f64(crate::metrics::percentile(&seconds, q).unwrap());
        let latency = Latency::of(&mut latencies);
        assert_eq!(
            (latency.p50, latency.p95, latency.p99, latency.max),
            (numpy(50.0), numpy(95.0), numpy(99.0), ms(100))
        );
        // Interpolated, not a nearest rank: between the 99th and the 100th value.
        assert!(latency.p99 > ms(99) && latency.p99 < ms(100));
        let latency = Latency::of(&mut [ms(7)]);
        assert_eq!((latency.p50, latency.p99), (ms(7), ms(7)));
        assert_eq!(Latency::of(&mut []), Latency::default());
    }

    #[test]
    fn recall_counts_the_first_k_true_neighbours_returned_once() {
        let keys = |ids: &[i64]| ids.iter().map(|&id| Key::Int(id)).collect::<Vec<_>>();
        assert_eq!(recall(&keys(&[1, 2, 3]), &[3, 2, 1, 9], 3), 1.0);
        // 9 is a true neighbour, but not among the first 3.
        assert_eq!(recall(&keys(&[1, 9, 7]), &[3, 2, 1, 9], 3), 1.0 / 3.0);
        assert_eq!(recall(&keys(&[1, 1]), &[1, 2], 2), 0.5);
        assert_eq!(recall(&[Key::Literal("'a'".into())], &[1], 1), 0.0);
    }

    #[test]
    fn the_report_summarises_answered_queries_and_counts_errors() {
        let result = |number, latency, recall: Option<f64>, error: Option<&str>| QueryResult {
            number,
            latency: ms(latency),
            keys: Vec::new(),
            recall,
            error: error.map(str::to_owned),
        };
        let report = SearchReport::new(
            vec![
                result(2, 30, Some(0.5), None),
                result(0, 10, Some(1.0), None),
                result(1, 5000, None, Some("timeout")),
            ],
            WarningCounts::default(),
            10,
            4,
            Duration::from_secs(2),
        );
        assert_eq!(report.queries, 3);
        assert_eq!(report.errors, 1);
        assert_eq!(report.recall, Some(0.75));
        assert_eq!(report.recall_min, Some(0.5));
        assert_eq!(report.qps, 1.0);
        assert_eq!(report.latency.max, ms(30));
        let numbers: Vec<u64> = report.results.iter().map(|r| r.number).collect();
        assert_eq!(numbers, [0, 1, 2]);
    }

    #[test]
    fn warnings_are_counted_per_text_in_the_order_first_seen() {
        let mut counts = WarningCounts::default();
        counts.add(["lowered"].into_iter());
        counts.add(std::iter::empty());
        counts.add(["slow", "lowered", "slow"].into_iter());
        let counted: Vec<(&str, u64)> = counts
            .kept
            .iter()
            .map(|w| (w.message.as_str(), w.queries))
            .collect();
        assert_eq!(counted, [("lowered", 2), ("slow", 1)]);
        assert_eq!(counts.other, 0);
    }

    #[test]
    fn warnings_beyond_the_distinct_ones_kept_are_only_counted_and_long_ones_cut() {
        let mut counts = WarningCounts::default();
        let texts: Vec<String> = (0..DISTINCT_WARNINGS + 5)
            .map(|i| format!("w{i}"))
            .collect();
        counts.add(texts.iter().map(String::as_str));
        counts.add(texts.iter().map(String::as_str));
        assert_eq!(counts.kept.len(), DISTINCT_WARNINGS);
        assert!(counts.kept.iter().all(|w| w.queries == 2));
        assert_eq!(counts.other, 10);
        let long = "é".repeat(WARNING_CHARS + 1);
        let mut counts = WarningCounts::default();
        counts.add([long.as_str(), long.as_str()].into_iter());
        counts.add([long.as_str()].into_iter());
        let kept = &counts.kept[0];
        assert_eq!(kept.message.chars().count(), WARNING_CHARS + 1);
        assert!(kept.message.ends_with('…'));
        assert_eq!(kept.queries, 2);
    }

    #[test]
    fn the_csv_has_a_line_per_query_with_quoted_fields() {
        let mut report = SearchReport::new(
            Vec::new(),
            WarningCounts::default(),
            2,
            1,
            Duration::from_secs(1),
        );
        report.results = vec![
            QueryResult {
                number: 0,
                latency: Duration::from_micros(1500),
                keys: vec![Key::Int(4), Key::Int(9)],
                recall: Some(0.5),
                error: None,
            },
            QueryResult {
                number: 1,
                latency: ms(2),
                keys: Vec::new(),
                recall: None,
                error: Some("said \"no\"".into()),
            },
        ];
        let mut csv = Vec::new();
        report.write_csv(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "query,latency_ms,recall,keys,error\n0,1.500,0.5,4 9,\n\
             1,2.000,,,\"said \"\"no\"\"\"\n"
        );
        // Keys whose literals hold spaces and commas split back from a JSON array.
        report.results[0].keys = vec![Key::Literal("'a b'".into()), Key::Literal("'c,d'".into())];
        let mut csv = Vec::new();
        report.write_csv_rows(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap().lines().next(),
            Some("0,1.500,0.5,\"[\"\"'a b'\"\",\"\"'c,d'\"\"]\",")
        );
    }
}
