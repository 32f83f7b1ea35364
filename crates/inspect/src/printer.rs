//! What `inspect` prints: each [`Record`] as a text line, an explain tree or a JSON line
//! ([`Printer`], one writer and one schema for every JSON line, docs/inspect.md), the statistics
//! as a table or one JSON document, and the selection of records to print ([`Filter`]).

use crate::capture::Timestamp;
use crate::stats::side_name;
use crate::{
    MessageRecord, Problem, Record, RenderMessage, Side, Statement, Stats, TlsRecord, ValueForm,
    MAX_MORE_COUNTED,
};
use cqlwire_codec::value::explain::format_line;
use cqlwire_codec::value::json::JsonWriter;
use cqlwire_protocol::frame::Opcode;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

/// How records are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line per message: time, connection, direction, version, stream, opcode, gist, latency.
    Text,
    /// Each message's line and its full decoded tree, offsets into its direction's stream.
    Explain,
    /// One JSON object per message (JSON lines).
    Json,
}

/// Whether `c` may not appear as it is in one line of output: a control character (newline and
/// tab included), a line or paragraph separator, or a bidirectional control.
fn breaks_a_line(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` made fit for one line of output whatever it holds: each character `breaks_a_line`
/// names is escaped as Rust's `{:?}` escapes it (`\n`, `\r`, `\t`, `\u{1b}`), the rule the quoted
/// query texts already follow, so text from a capture can never end a line or forge another.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(breaks_a_line) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if breaks_a_line(c) {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// The selection of records to print: by connection, stream id and opcode (a response passes
/// with its request's opcode), and request/response pairs at least this slow.
#[derive(Debug)]
pub struct Filter {
    conn: Option<String>,
    stream: Option<i16>,
    opcodes: Vec<Opcode>,
    slower_than: Option<u64>,
    /// Requests held until their response tells whether the pair is slow enough: by connection
    /// and stream, with their place in the order and their cost.
    held: HashMap<(u64, i16), (u64, usize, Record)>,
    /// The held requests oldest first, by place in the order.
    held_order: BTreeMap<u64, (u64, i16)>,
    /// Bytes the held requests cost ([`held_cost`]).
    held_bytes: usize,
    /// The next place in the order.
    held_seq: u64,
    /// Held requests forgotten over [`HELD_MAX_BYTES`].
    held_forgotten: u64,
}

/// Most bytes of requests the slow-pair filter holds until their response; beyond, the oldest are
/// forgotten (a slow response whose request was forgotten is printed alone).
const HELD_MAX_BYTES: usize = 32 << 20;

/// What holding a request costs: its body twice (the bytes and what is decoded from them) and a
/// fixed part.
fn held_cost(m: &MessageRecord) -> usize {
    2 * m.body.len() + 512
}

impl Filter {
    /// A filter keeping the connection `conn` (its number or label), the stream id `stream`,
    /// the `opcodes` (none: all) and the pairs whose latency is at least `slower_than`
    /// nanoseconds (`None` keeps every record).
    pub fn new(
        conn: Option<String>,
        stream: Option<i16>,
        opcodes: Vec<Opcode>,
        slower_than: Option<u64>,
    ) -> Self {
        Filter {
            conn,
            stream,
            opcodes,
            slower_than,
            held: HashMap::new(),
            held_order: BTreeMap::new(),
            held_bytes: 0,
            held_seq: 0,
            held_forgotten: 0,
        }
    }

    /// Whether a message passes the static filters.
    fn keeps(&self, m: &MessageRecord) -> bool {
        self.conn
            .as_ref()
            .is_none_or(|c| *c == m.conn || *c == m.conn_id.to_string())
            && self.stream.is_none_or(|s| s == m.header.stream)
            && (self.opcodes.is_empty()
                || self.opcodes.iter().any(|op| m.header.opcode == *op)
                || m.request
                    .as_ref()
                    .is_some_and(|r| self.opcodes.iter().any(|op| r.opcode == *op)))
    }

    /// The records to print for `record`, in order.
    pub fn pass(&mut self, record: Record) -> Vec<Record> {
        let Record::Message(m) = &record else {
            let conn = match &record {
                Record::Problem(p) => p.conn.as_ref().map(|(id, label)| (*id, label)),
                Record::Tls(t) => Some((t.conn_id, &t.conn)),
                Record::Message(_) => unreachable!(),
            };
            let conn_ok = match (&self.conn, conn) {
                (Some(c), Some((id, label))) => c == label || *c == id.to_string(),
                _ => true,
            };
            return if conn_ok { vec![record] } else { vec![] };
        };
        if !self.keeps(m) {
            return vec![];
        }
        let Some(min) = self.slower_than else {
            return vec![record];
        };
        let key = (m.conn_id, m.header.stream);
        match m.side {
            Side::Client => {
                if m.header.stream < 0 {
                    return vec![];
                }
                let (cost, time, offset) = (held_cost(m), m.time, m.offset);
                self.release(key);
                self.held_seq += 1;
                self.held_order.insert(self.held_seq, key);
                self.held_bytes += cost;
                self.held.insert(key, (self.held_seq, cost, record));
                let mut out = vec![];
                while self.held_bytes > HELD_MAX_BYTES && self.held.len() > 1 {
                    let Some((_, oldest)) = self.held_order.pop_first() else {
                        break;
                    };
                    self.release(oldest);
                    self.held_forgotten += 1;
                    if self.held_forgotten == 1 {
                        out.push(Record::Problem(Problem {
                            conn: None,
                            side: None,
                            time,
                            offset,
                            message: format!(
                                "--slower-than holds more than {} MiB of requests waiting for \
                                 their response: the oldest are forgotten (a slow response whose \
                                 request was forgotten is printed alone)",
                                HELD_MAX_BYTES >> 20
                            ),
                        }));
                    }
                }
                out
            }
            Side::Server => {
                let request = self.release(key);
                match &m.request {
                    Some(r) if r.latency >= min => request.into_iter().chain([record]).collect(),
                    _ => vec![],
                }
            }
        }
    }

    /// The request held on `key`, no longer held.
    fn release(&mut self, key: (u64, i16)) -> Option<Record> {
        let (seq, cost, record) = self.held.remove(&key)?;
        self.held_order.remove(&seq);
        self.held_bytes -= cost;
        Some(record)
    }
}
/// A capture time as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC), digits written by hand (a JSON line
/// has one: chrono's formatter was 6% of `--format json`); `None` for none.
fn time_digits(time: Timestamp) -> Option<[u8; 27]> {
    use chrono::{Datelike, Timelike};
    if time.0 == 0 {
        return None;
    }
    let t = chrono::DateTime::from_timestamp_nanos(time.0);
    let mut text = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |at: usize, width: usize, mut n: u32| {
        for i in (at..at + width).rev() {
            text[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    // Nanosecond timestamps span the years 1677 to 2262: always four digits.
    put(0, 4, t.year().unsigned_abs());
    put(5, 2, t.month());
    put(8, 2, t.day());
    put(11, 2, t.hour());
    put(14, 2, t.minute());
    put(17, 2, t.second());
    put(20, 6, t.nanosecond() % 1_000_000_000 / 1000);
    Some(text)
}

/// Formats a capture time: `HH:MM:SS.ffffff` (UTC), or RFC 3339 for JSON; `None` for none.
fn time_text(time: Timestamp, full: bool) -> Option<String> {
    let text = time_digits(time)?;
    let text = if full { &text[..] } else { &text[11..26] };
    Some(String::from_utf8_lossy(text).into_owned())
}

/// `1.546 ms`.
fn latency_text(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}
/// Writes the records of a run in one [`Format`], and the statistics.
pub struct Printer<'k, W: Write> {
    out: W,
    format: Format,
    /// How values, tokens, query and server text are written (`--redact`, `--show-secrets`).
    values: ValueForm<'k>,
    /// The JSON lines not written out yet (the buffer is reused).
    json: JsonWriter,
    problems: u64,
    messages: u64,
}

/// A run that stops on an input error still writes the lines gathered before it.
impl<W: Write> Drop for Printer<'_, W> {
    fn drop(&mut self) {
        let _ = self.flush_json();
    }
}

/// JSON lines gathered before they are written out in one go.
const JSON_CHUNK: usize = 64 << 10;

/// The JSON of one message gathered before it is written out in the middle (between rows, inside
/// a long blob): large enough that common messages go out whole, at line ends.
const JSON_SPILL: usize = 1 << 20;

impl<'k, W: Write> Printer<'k, W> {
    /// A printer writing to `out` in `format`, data shown as `values` says.
    pub fn new(out: W, format: Format, values: ValueForm<'k>) -> Self {
        Printer {
            out,
            format,
            values,
            json: JsonWriter::new(),
            problems: 0,
            messages: 0,
        }
    }

    /// Writes one record.
    pub fn record(&mut self, record: &Record) -> io::Result<()> {
        match record {
            Record::Message(m) => self.message(m),
            Record::Problem(p) => self.problem(p),
            Record::Tls(t) => self.tls(t),
        }
    }

    /// Writes the statistics: a table, or one JSON document in [`Format::Json`].
    pub fn stats(&mut self, stats: &Stats) -> io::Result<()> {
        let json = self.format == Format::Json;
        write_stats(&mut self.out, stats, self.values, json)
    }

    /// Writes out what is gathered and flushes the output.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_json()?;
        self.out.flush()
    }

    /// Messages written so far.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// Problems written so far.
    pub fn problems(&self) -> u64 {
        self.problems
    }

    /// The run's summary line when it has something to say: the messages and the problems when
    /// a problem was reported, and the IP fragments skipped.
    pub fn summary(&self, ip_fragments: u64) -> Option<String> {
        let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let mut summary = Vec::new();
        if self.problems > 0 {
            summary.push(format!(
                "{}, {} reported (malformed traffic was skipped)",
                plural(self.messages, "message"),
                plural(self.problems, "problem")
            ));
        }
        if ip_fragments > 0 {
            summary.push(format!(
                "{} skipped (not reassembled)",
                plural(ip_fragments, "IP fragment")
            ));
        }
        (!summary.is_empty()).then(|| summary.join("; "))
    }

    /// Ends a JSON line; writes the lines gathered once there are enough.
    fn end_json_line(&mut self) -> io::Result<()> {
        self.json.end_line();
        if self.json.buf.len() >= JSON_CHUNK {
            self.flush_json()?;
        }
        Ok(())
    }

    /// Writes the JSON lines gathered.
    fn flush_json(&mut self) -> io::Result<()> {
        self.out.write_all(&self.json.buf)?;
        self.json.clear();
        Ok(())
    }

    fn problem(&mut self, p: &Problem) -> io::Result<()> {
        self.problems += 1;
        let side = p.side.map(side_name);
        match self.format {
            Format::Json => {
                let w = &mut self.json;
                w.begin_object();
                if let Some(t) = time_digits(p.time) {
                    w.key("time");
                    w.str(std::str::from_utf8(&t).expect("digits are ASCII"));
                }
                if let Some((_, label)) = &p.conn {
                    w.key("conn");
                    w.str(label);
                }
                if let Some(side) = side {
                    w.key("dir");
                    w.str(side);
                }
                w.key("offset");
                w.u64(p.offset);
                w.key("problem");
                w.str(&p.message);
                w.end_object();
                self.end_json_line()
            }
            _ => {
                let place = match &p.conn {
                    Some((_, label)) => format!(
                        "{label} {}",
                        match p.side {
                            Some(Side::Client) => ">",
                            Some(Side::Server) => "<",
                            None => "?",
                        }
                    ),
                    None => "capture file".into(),
                };
                writeln!(
                    self.out,
                    "{} {place} ! {} (offset {})",
                    time_text(p.time, false).unwrap_or_else(|| "-".into()),
                    one_line(&p.message),
                    p.offset
                )
            }
        }
    }

    fn message(&mut self, m: &MessageRecord) -> io::Result<()> {
        self.messages += 1;
        let h = &m.header;
        // A response to a statement that mentions a password may quote it back (a syntax error).
        let form = self
            .values
            .answering(m.request.as_ref().and_then(|r| r.statement.as_deref()));
        let opcode = h.opcode.name().unwrap_or("UNKNOWN");
        match self.format {
            Format::Json => {
                let w = &mut self.json;
                w.begin_object();
                if let Some(t) = time_digits(m.time) {
                    w.key("time");
                    w.str(std::str::from_utf8(&t).expect("digits are ASCII"));
                }
                w.key("conn");
                w.str(&m.conn);
                w.key("dir");
                w.str(side_name(m.side));
                // The message's version (the header's without the direction bit) in this place.
                w.key("version");
                w.u64(u64::from(
                    m.message
                        .as_ref()
                        .map_or(h.version, |message| message.version),
                ));
                w.key("stream");
                w.i64(i64::from(h.stream));
                w.key("offset");
                w.u64(m.offset);
                // A long message goes out in pieces as it is written (after a row or 64 KiB of a
                // blob, once a MiB is gathered), so the buffer stays small whatever its size.
                let mut spilled = Ok(());
                match &m.message {
                    Ok(message) => {
                        let out = &mut self.out;
                        message.write_json_fields_spilling(w, form, &mut |w| {
                            if w.buf.len() >= JSON_SPILL && spilled.is_ok() {
                                spilled = out.write_all(&w.buf);
                                w.buf.clear();
                            }
                        });
                    }
                    Err(e) => {
                        w.key("opcode");
                        w.str(opcode);
                        w.key("error");
                        w.str(&e.to_string());
                    }
                }
                let notes = m
                    .message
                    .as_ref()
                    .map(RenderMessage::refused_notes)
                    .unwrap_or_default();
                if !notes.is_empty() {
                    w.key("notes");
                    w.begin_array();
                    for note in &notes {
                        w.str(note);
                    }
                    w.end_array();
                }
                if let Some(r) = m.request.as_ref().filter(|_| m.time.0 != 0) {
                    w.key("latency_ms");
                    w.f64(r.latency as f64 / 1e6);
                }
                w.end_object();
                spilled?;
                self.end_json_line()
            }
            Format::Text | Format::Explain => {
                let arrow = if m.side == Side::Client { ">" } else { "<" };
                let gist = match &m.message {
                    Ok(message) => message.gist_in(form),
                    Err(e) => format!("undecodable body: {e}"),
                };
                let latency = m
                    .request
                    .as_ref()
                    .filter(|_| m.time.0 != 0)
                    .map(|r| format!(" ({})", latency_text(r.latency)))
                    .unwrap_or_default();
                writeln!(
                    self.out,
                    "{} {} {arrow} v{} s{} {opcode} {}{latency}",
                    time_text(m.time, false).unwrap_or_else(|| "-".into()),
                    m.conn,
                    h.version,
                    h.stream,
                    one_line(&gist)
                )?;
                if self.format == Format::Explain {
                    self.explain(m, form)?;
                }
                if let Ok(message) = &m.message {
                    for note in message.refused_notes() {
                        writeln!(self.out, "  note: {}", one_line(&note))?;
                    }
                }
                Ok(())
            }
        }
    }

    fn explain(&mut self, m: &MessageRecord, form: ValueForm<'_>) -> io::Result<()> {
        let h = &m.header;
        let hex = cqlwire_codec::hex::encode(&h.to_bytes());
        let (place, start) = match m.in_segment {
            Some(at) => (
                format!(
                    "at byte {at} of the payload of the v5 segment at byte {}",
                    m.offset
                ),
                at,
            ),
            None => (
                format!("at byte {} of the stream", m.offset),
                m.offset as usize,
            ),
        };
        // A v4 body that was LZ4/Snappy-compressed on the wire is explained as decompressed: its
        // offsets count from the start of the decompressed body, which has no place in the stream.
        let decompressed = m.in_segment.is_none() && h.is_compressed();
        let place = if decompressed {
            format!(
                "{place}; body decompressed to {} bytes, offsets below count from its start",
                m.body.len()
            )
        } else {
            place
        };
        writeln!(
            self.out,
            "  {start:04}  {hex}  header: v{} {} flags {:?} stream {} {} length {} ({place})",
            h.version,
            h.direction.name(),
            h.flags.names().collect::<Vec<_>>(),
            h.stream,
            h.opcode.name().unwrap_or("UNKNOWN"),
            h.length
        )?;
        let base = if decompressed { 0 } else { start + 9 };
        let out = &mut self.out;
        let mut written = Ok(());
        let result = m.explain_each(form, &mut |line| {
            if written.is_ok() {
                let text = format_line(&line, &m.body, base, 1);
                written = writeln!(out, "{}", one_line(&text));
            }
        });
        written?;
        if let Some(Err(e)) = result {
            writeln!(self.out, "  error: {}", one_line(&e.to_string()))?;
        }
        Ok(())
    }
}
impl<W: Write> Printer<'_, W> {
    /// Names a TLS connection: a line like a message's (text, explain), or
    /// `{"conn": …, "tls": {"version", "offered", "sni", "cipher", "hello_retry_request",
    /// "decrypted"}}`. The server name is escaped (Rust escapes in text, JSON escapes in json).
    fn tls(&mut self, t: &TlsRecord) -> io::Result<()> {
        let s = &t.summary;
        match self.format {
            Format::Json => {
                let w = &mut self.json;
                w.begin_object();
                if let Some(time) = time_digits(t.time) {
                    w.key("time");
                    w.str(std::str::from_utf8(&time).expect("digits are ASCII"));
                }
                w.key("conn");
                w.str(&t.conn);
                w.key("tls");
                w.begin_object();
                w.key("version");
                match s.chosen_version {
                    Some(version) => w.display(&version),
                    None => w.null(),
                }
                w.key("offered");
                w.begin_array();
                for version in &s.offered_versions {
                    w.display(version);
                }
                w.end_array();
                w.key("sni");
                match &s.server_name {
                    Some(name) => w.str(name),
                    None => w.null(),
                }
                w.key("cipher");
                match s.cipher_suite {
                    Some(suite) => w.display(&suite),
                    None => w.null(),
                }
                w.key("hello_retry_request");
                w.bool(s.hello_retry_request);
                w.key("decrypted");
                w.bool(t.decrypted);
                w.end_object();
                w.end_object();
                self.end_json_line()
            }
            Format::Text | Format::Explain => writeln!(
                self.out,
                "{} {} {s}, {}",
                time_text(t.time, false).unwrap_or_else(|| "-".into()),
                t.conn,
                if t.decrypted {
                    "decrypted"
                } else {
                    "not decrypted"
                }
            ),
        }
    }
}

/// The statements of the statistics as `form` shows them; those it shows alike are merged.
fn shown_statements(stats: &Stats, form: ValueForm<'_>) -> BTreeMap<String, Statement> {
    let mut shown: BTreeMap<String, Statement> = BTreeMap::new();
    for (text, s) in &stats.statements {
        let merged = shown.entry(form.statement(text).into_owned()).or_default();
        merged.count += s.count;
        merged.errors += s.errors;
        merged.probes_refused += s.probes_refused;
        merged.latencies.extend_from_slice(&s.latencies);
    }
    for s in shown.values_mut() {
        s.latencies.sort_unstable();
    }
    shown
}

/// Writes the statistics, statements in `form`.
fn write_stats<W: Write>(
    out: &mut W,
    stats: &Stats,
    form: ValueForm<'_>,
    json: bool,
) -> io::Result<()> {
    let statements = shown_statements(stats, form);
    let ms = |ns: Option<u64>| ns.map(|n| n as f64 / 1e6);
    if json {
        let mut w = JsonWriter::new();
        let ms_field = |w: &mut JsonWriter, key: &str, ns: Option<u64>| {
            w.key(key);
            match ms(ns) {
                Some(v) => w.f64(v),
                None => w.null(),
            }
        };
        w.begin_object();
        w.key("statements");
        w.begin_array();
        for (text, s) in &statements {
            w.begin_object();
            w.key("statement");
            w.str(text);
            w.key("count");
            w.u64(s.count);
            w.key("errors");
            w.u64(s.errors);
            ms_field(&mut w, "p50_ms", s.quantile(0.5));
            ms_field(&mut w, "p99_ms", s.quantile(0.99));
            ms_field(&mut w, "max_ms", s.latencies.last().copied());
            w.end_object();
        }
        w.end_array();
        w.key("driver_probes");
        w.begin_array();
        for (text, s) in statements.iter().filter(|(_, s)| s.probes_refused > 0) {
            w.begin_object();
            w.key("statement");
            w.str(text);
            w.key("refused");
            w.u64(s.probes_refused);
            w.key("code");
            w.str("0x2200");
            w.end_object();
        }
        w.end_array();
        w.key("opcodes");
        w.begin_array();
        for ((dir, op), n) in &stats.opcodes {
            w.begin_object();
            w.key("dir");
            w.str(dir);
            w.key("opcode");
            w.str(op);
            w.key("count");
            w.u64(*n);
            w.end_object();
        }
        w.end_array();
        w.key("error_codes");
        w.begin_object();
        for (code, n) in &stats.error_codes {
            w.key(&format!("0x{code:04x}"));
            w.u64(*n);
        }
        w.end_object();
        for (key, n) in [("undecoded", stats.undecoded), ("problems", stats.problems)] {
            w.key(key);
            w.u64(n);
        }
        w.key("tls");
        w.begin_object();
        w.key("connections");
        w.u64(stats.tls_connections);
        w.key("decrypted");
        w.u64(stats.tls_decrypted);
        w.end_object();
        let more = &stats.more;
        if more.count > 0 {
            w.key("more_statements");
            w.begin_object();
            for (key, n) in [
                ("distinct", more.distinct),
                ("count", more.count),
                ("errors", more.errors),
            ] {
                w.key(key);
                w.u64(n);
            }
            w.end_object();
        }
        if stats.ip_fragments > 0 {
            w.key("ip_fragments");
            w.u64(stats.ip_fragments);
        }
        w.end_object();
        w.end_line();
        return out.write_all(&w.buf);
    }
    writeln!(
        out,
        "{:>6} {:>6} {:>10} {:>10} {:>10}  statement",
        "count", "errors", "p50 ms", "p99 ms", "max ms"
    )?;
    let cell = |ns: Option<u64>| ms(ns).map_or("-".into(), |v| format!("{v:.3}"));
    for (text, s) in &statements {
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = one_line(&text);
        writeln!(
            out,
            "{:>6} {:>6} {:>10} {:>10} {:>10}  {}",
            s.count,
            s.errors,
            cell(s.quantile(0.5)),
            cell(s.quantile(0.99)),
            cell(s.latencies.last().copied()),
            text
        )?;
    }
    let more = &stats.more;
    if more.count > 0 {
        let at_least = if more.distinct as usize >= MAX_MORE_COUNTED {
            "at least "
        } else {
            ""
        };
        writeln!(
            out,
            "{:>6} {:>6} {:>10} {:>10} {:>10}  ({at_least}{} more statements)",
            more.count, more.errors, "-", "-", "-", more.distinct
        )?;
    }
    for (text, s) in statements.iter().filter(|(_, s)| s.probes_refused > 0) {
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let plural = if s.probes_refused == 1 { "" } else { "s" };
        writeln!(
            out,
            "note: a ScyllaDB driver's probe of a table only ScyllaDB has, refused {} time{plural} \
             (0x2200) and not counted as errors: {}",
            s.probes_refused,
            one_line(&text)
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{:>6}  {:<8} opcode", "count", "dir")?;
    for ((dir, op), n) in &stats.opcodes {
        writeln!(out, "{n:>6}  {dir:<8} {op}")?;
    }
    for (code, n) in &stats.error_codes {
        writeln!(out, "{n:>6}  error    0x{code:04x}")?;
    }
    writeln!(
        out,
        "\n{} undecodable bodies, {} problems",
        stats.undecoded, stats.problems
    )?;
    if stats.ip_fragments > 0 {
        writeln!(
            out,
            "{} IP fragments skipped (not reassembled)",
            stats.ip_fragments
        )?;
    }
    if stats.tls_connections == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "{} TLS connections ({} decrypted)",
        stats.tls_connections, stats.tls_decrypted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_what_could_end_or_forge_a_line() {
        assert_eq!(one_line("plain é \"q\" \\"), "plain é \"q\" \\");
        assert_eq!(
            one_line("a\nb\r\t\u{1b}[2J\u{85}\u{2028}\u{202e}"),
            "a\\nb\\r\\t\\u{1b}[2J\\u{85}\\u{2028}\\u{202e}"
        );
    }
}
