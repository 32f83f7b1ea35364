//! `--stats`: per statement (query text or prepared id) the count of answered requests, errors and
//! latency percentiles; per direction and opcode the message counts; the problems; the TLS
//! connections, decrypted or not. The ScyllaDB driver's probes of tables only ScyllaDB has
//! ([`DRIVER_PROBES`]), which Apache Cassandra refuses whenever that driver reads the schema, are
//! noted apart and not counted as errors.
//!
//! At most [`MAX_STATEMENTS`] distinct statements are kept (the first seen); the requests of the
//! others are counted together in [`Stats::more`], and the others themselves by a 64-bit hash of
//! their text, up to [`MAX_MORE_COUNTED`] of them.

use super::{Record, Side};
use cqlwire_protocol::frame::Opcode;
use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasher;

/// Distinct statements [`Stats`] keeps by default; a capture of as many distinct query texts as
/// requests (literals in the text instead of bound values) would otherwise keep every text.
pub const MAX_STATEMENTS: usize = 10_000;

/// Statements beyond the kept ones that are told apart (by a hash, 8 bytes and some each) to count
/// them; beyond, [`More::distinct`] is a lower bound.
pub const MAX_MORE_COUNTED: usize = 1 << 20;

/// The ScyllaDB Rust driver's reads of tables that only ScyllaDB has, which it sends while it reads
/// the schema (cqlwire's `load`, `unload`, `search` and `bench` send them too) and which Apache
/// Cassandra answers with ERROR 0x2200 (`table scylla_tables does not exist`); each also with
/// ` where keyspace_name in ?` after it, as the driver sends it when it reads some keyspaces only.
pub(crate) const DRIVER_PROBES: [&str; 3] = [
    "SELECT keyspace_name, table_name, partitioner FROM system_schema.scylla_tables",
    "SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces",
    "SELECT keyspace_name, initial_tablets, consistency FROM system_schema.scylla_keyspaces",
];

/// The error code (Invalid) with which Apache Cassandra refuses a [`DRIVER_PROBES`] statement.
const PROBE_REFUSED: i32 = 0x2200;

/// Whether `statement` (a query's text, or `PREPARE ` and the text) is one of the
/// [`DRIVER_PROBES`].
pub(crate) fn is_driver_probe(statement: &str) -> bool {
    let statement = statement.strip_prefix("PREPARE ").unwrap_or(statement);
    DRIVER_PROBES.iter().any(|probe| {
        statement
            .strip_prefix(probe)
            .is_some_and(|rest| rest.is_empty() || rest == " where keyspace_name in ?")
    })
}

/// What is known of one statement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statement {
    /// Answered requests.
    pub count: u64,
    /// Answers that were ERROR (the refusals of the ScyllaDB driver's probes of tables only
    /// ScyllaDB has are not counted).
    pub errors: u64,
    /// Answers that were the ERROR 0x2200 (Invalid) of one of the ScyllaDB driver's probes.
    pub probes_refused: u64,
    /// Latencies in nanoseconds, sorted by [`Stats::finish`].
    pub latencies: Vec<u64>,
}

impl Statement {
    /// The latency at quantile `q` (0 to 1, nearest rank), in nanoseconds.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.latencies.is_empty() {
            return None;
        }
        let rank = (q * self.latencies.len() as f64).ceil() as usize;
        Some(self.latencies[rank.clamp(1, self.latencies.len()) - 1])
    }
}

/// The statements beyond the kept ones, counted together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct More {
    /// Distinct statements (a lower bound once [`MAX_MORE_COUNTED`] were seen).
    pub distinct: u64,
    /// Answered requests.
    pub count: u64,
    /// Answers that were ERROR.
    pub errors: u64,
}

/// Counters of a run.
#[derive(Debug, Clone)]
pub struct Stats {
    /// By statement text, at most `max_statements` of them.
    pub statements: BTreeMap<String, Statement>,
    /// The statements that were not kept.
    pub more: More,
    /// Hashes of the statements not kept, to count them.
    more_seen: HashSet<u64, foldhash::fast::RandomState>,
    /// Distinct statements kept.
    max_statements: usize,
    /// Messages by sender and opcode name.
    pub opcodes: BTreeMap<(&'static str, &'static str), u64>,
    /// Error codes seen, with their counts (the refusals of the ScyllaDB driver's probes left out).
    pub error_codes: BTreeMap<i32, u64>,
    /// Messages whose body could not be decoded.
    pub undecoded: u64,
    /// Problems reported.
    pub problems: u64,
    /// TLS connections named.
    pub tls_connections: u64,
    /// TLS connections decrypted.
    pub tls_decrypted: u64,
    /// IP fragments the capture skipped (not reassembled), as the caller reports them.
    pub ip_fragments: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats::with_max_statements(MAX_STATEMENTS)
    }
}

/// `request`/`response`, as `dir` says in JSON.
pub(crate) fn side_name(side: Side) -> &'static str {
    match side {
        Side::Client => "request",
        Side::Server => "response",
    }
}

impl Stats {
    /// Statistics keeping at most `max` distinct statements (see [`MAX_STATEMENTS`]).
    pub fn with_max_statements(max: usize) -> Self {
        Stats {
            statements: BTreeMap::new(),
            more: More::default(),
            more_seen: HashSet::default(),
            max_statements: max,
            opcodes: BTreeMap::new(),
            error_codes: BTreeMap::new(),
            undecoded: 0,
            problems: 0,
            tls_connections: 0,
            tls_decrypted: 0,
            ip_fragments: 0,
        }
    }

    /// Counts a record.
    pub fn add(&mut self, record: &Record) {
        let m = match record {
            Record::Problem(_) => {
                self.problems += 1;
                return;
            }
            Record::Message(m) => m,
            Record::Tls(t) => {
                self.tls_connections += 1;
                self.tls_decrypted += u64::from(t.decrypted);
                return;
            }
        };
        let name = m.header.opcode.name().unwrap_or("UNKNOWN");
        *self.opcodes.entry((side_name(m.side), name)).or_default() += 1;
        let error = match &m.message {
            Ok(message) => match &message.body {
                cqlwire_protocol::message::Body::Error(e) => Some(e.code),
                _ => None,
            },
            Err(_) => {
                self.undecoded += 1;
                None
            }
        };
        let statement = m.request.as_ref().and_then(|r| r.statement.as_ref());
        let probe = error == Some(PROBE_REFUSED) && statement.is_some_and(|t| is_driver_probe(t));
        if let (Some(code), false) = (error, probe) {
            *self.error_codes.entry(code).or_default() += 1;
        }
        if let Some(request) = &m.request {
            if let Some(text) = &request.statement {
                let error = u64::from(m.header.opcode == Opcode::Error && !probe);
                let refused = u64::from(probe);
                if let Some(s) = self.statements.get_mut(text) {
                    s.count += 1;
                    s.errors += error;
                    s.probes_refused += refused;
                    s.latencies.push(request.latency);
                } else if self.statements.len() < self.max_statements {
                    let s = Statement {
                        count: 1,
                        errors: error,
                        probes_refused: refused,
                        latencies: vec![request.latency],
                    };
                    self.statements.insert(text.clone(), s);
                } else {
                    self.count_more(text, error);
                }
            }
        }
    }

    /// Counts an answered request of a statement that is not kept.
    fn count_more(&mut self, text: &str, error: u64) {
        self.more.count += 1;
        self.more.errors += error;
        if self.more_seen.len() < MAX_MORE_COUNTED {
            // A fixed seed: equal texts hash alike within the run.
            let hash = foldhash::fast::FixedState::default().hash_one(text);
            if self.more_seen.insert(hash) {
                self.more.distinct += 1;
            }
        }
    }

    /// Sorts the latencies; call once at the end.
    pub fn finish(&mut self) {
        for s in self.statements.values_mut() {
            s.latencies.sort_unstable();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_probes_are_the_drivers_texts_alone_or_filtered_by_keyspace() {
        for probe in DRIVER_PROBES {
            assert!(is_driver_probe(probe));
            assert!(is_driver_probe(&format!(
                "{probe} where keyspace_name in ?"
            )));
            assert!(is_driver_probe(&format!(
                "PREPARE {probe} where keyspace_name in ?"
            )));
            // A user's own statements on the same tables are theirs.
            assert!(!is_driver_probe(&format!(
                "{probe} where keyspace_name = 'ks'"
            )));
            assert!(!is_driver_probe(&format!("{probe} LIMIT 1")));
        }
        assert!(!is_driver_probe(
            "SELECT * FROM system_schema.scylla_tables"
        ));
        assert!(!is_driver_probe("SELECT * FROM system.local"));
    }
}
