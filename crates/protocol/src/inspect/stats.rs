//! `--stats`: per statement (query text or prepared id) the count of answered requests, errors and
//! latency percentiles; per direction and opcode the message counts; the problems; the TLS
//! connections, decrypted or not.

use super::{Record, Side};
use crate::frame::Opcode;
use std::collections::BTreeMap;

/// What is known of one statement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statement {
    /// Answered requests.
    pub count: u64,
    /// Answers that were ERROR.
    pub errors: u64,
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

/// Counters of a run.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// By statement text.
    pub statements: BTreeMap<String, Statement>,
    /// Messages by sender and opcode name.
    pub opcodes: BTreeMap<(&'static str, &'static str), u64>,
    /// Error codes seen, with their counts.
    pub error_codes: BTreeMap<i32, u64>,
    /// Messages whose body could not be decoded.
    pub undecoded: u64,
    /// Problems reported.
    pub problems: u64,
    /// TLS connections named.
    pub tls_connections: u64,
    /// TLS connections decrypted.
    pub tls_decrypted: u64,
}

/// `request`/`response`, as `dir` says in JSON.
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::Client => "request",
        Side::Server => "response",
    }
}

impl Stats {
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
                crate::message::Body::Error(e) => Some(e.code),
                _ => None,
            },
            Err(_) => {
                self.undecoded += 1;
                None
            }
        };
        if let Some(code) = error {
            *self.error_codes.entry(code).or_default() += 1;
        }
        if let Some(request) = &m.request {
            if let Some(text) = &request.statement {
                let s = self.statements.entry(text.clone()).or_default();
                s.count += 1;
                s.errors += u64::from(m.header.opcode == Opcode::Error);
                s.latencies.push(request.latency);
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
