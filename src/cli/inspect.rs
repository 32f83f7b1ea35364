//! `cqlwire inspect`: whole captured CQL conversations (pcap/pcapng, raw or hex byte streams)
//! decoded message by message, as text lines, explain trees, JSON lines or statistics.

use super::progress::{self, Unit};
use super::CliError;
use crate::display::{one_line, Visible};
use crate::files;
use crate::messages;
use cqlwire_codec::hex::HexReader;
use cqlwire_codec::value::explain::format_line;
use cqlwire_codec::value::json::JsonWriter;
use cqlwire_inspect::capture::{Capture, Timestamp};
use cqlwire_inspect::{
    side_name, Inspector, KeyLog, KeyedHash, MessageRecord, Options, Problem, Record,
    RenderMessage, Side, Statement, Stats, TlsRecord, ValueForm, DEFAULT_MAX_FRAME, MAX_KEY_BYTES,
    MAX_MORE_COUNTED,
};
use cqlwire_protocol::frame::Opcode;
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Parses `--conn`: a connection number from 1, or a label `<client ip:port>-<server ip:port>`.
fn parse_conn(text: &str) -> Result<String, String> {
    let number = text.parse::<u64>().ok();
    let label = text.split_once('-').filter(|(client, server)| {
        client.parse::<std::net::SocketAddr>().is_ok()
            && server.parse::<std::net::SocketAddr>().is_ok()
    });
    match (number, label) {
        (Some(0), _) => Err("connections are numbered from 1".to_string()),
        (Some(_), _) | (None, Some(_)) => Ok(text.to_string()),
        (None, None) => Err(format!(
            "'{text}' is neither a connection number nor a label like \
             10.0.0.1:40000-10.0.0.2:9042"
        )),
    }
}

/// How `inspect` prints the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InspectFormat {
    /// One line per message: time, connection, direction, version, stream, opcode, gist, latency.
    Text,
    /// Each message's full decoded tree, offsets into its direction's stream.
    Explain,
    /// One JSON object per message (JSON lines).
    Json,
}

/// Arguments of `cqlwire inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples (on the captures committed in fixtures/inspect):
  $ cqlwire inspect fixtures/inspect/v4-lz4.pcap --opcode EXECUTE | head -2
  03:28:49.968175 127.0.0.1:44892-127.0.0.1:9042 > v4 s23 EXECUTE 0x7307de6e34e5125ed660c0733a63f921 \
\"INSERT INTO everything (id, a, b, bl, bo, d, de, db, du, f, i, n, s, t, tm, ts, tu, ti, u, vc, vi, l, st, m, fl, tup, ad…\" LOCAL_ONE, 32 values
  03:28:50.002091 127.0.0.1:44892-127.0.0.1:9042 < v4 s23 RESULT Void (33.916 ms)
  $ cqlwire inspect fixtures/inspect/v5-none.pcap --format json --opcode RESULT --redact | head -1
  $ cqlwire inspect fixtures/inspect/v5-lz4.pcap --format explain --stream 7
  $ cqlwire inspect fixtures/inspect/v4-snappy.pcap --stats
  $ cqlwire inspect fixtures/inspect/v4-none.pcap --slower-than 5ms
  $ tcpdump -i lo -w - -U port 9042 | cqlwire inspect -
  cqlwire inspect --client C2S.bin --server S2C.bin [OPTIONS]   # Wireshark \"Follow TCP stream\" raw

Inputs: pcap or pcapng (by magic; standard input with `-`), CQL found on --port (default 9042 and
19042) or by a frame header at the start of a connection. `>` is a request, `<` a response. Malformed
traffic is reported (a `!` line, or a JSON object with \"problem\") with its offset and the run goes on.
--opcode also keeps the responses to requests of that opcode.

Secrets: by default the password of a SASL PLAIN token (PasswordAuthenticator's AUTH_RESPONSE,
`authzid NUL user NUL password`) and the password literal of CREATE/ALTER ROLE|USER ... [HASHED]
PASSWORD [=] '...' are shown as <password: N bytes>, in every format; --show-secrets shows them.

--redact (every format, and --stats) keeps the shape of the conversation and removes its data:
  removed: row and bound values, auth tokens, custom payload values and paging states, each shown as
    its type, length and tag (json {\"$redacted\": \"1a2b3c4d\", \"len\": 4}); every literal of a
    query text (strings, numbers, booleans, uuids, blobs, durations, NaN/Infinity, collection
    literals of literals) as ?<kind>:<tag> (e.g. ?text:1a2b3c4d, ?list:5e6f7a8b); comments of query
    texts; in error messages and warnings every quoted or bracketed span ('...', \"...\", `...`,
    (...), [...], {...}, <...>, from the first opener to the last closer) and every word with a digit
    or true/false, as ?:<tag>; passwords as <password: N bytes> (never tagged).
  kept: statement shape, keywords, keyspace/table/column/marker names, types, lengths, null and
    unset, counts, flags, consistency levels, stream ids, prepared ids, addresses, timings.
A tag is the first 32 bits of HMAC-SHA256 of the value's bytes under a key drawn from the operating
system for each run: equal values share a tag within one output, and nothing can be learnt from a
tag without the key. --redact-key FILE uses the file's bytes as they are (32 to 4096 bytes, e.g.
`head -c 32 /dev/urandom > FILE`) as the key instead, so tags compare across runs that share it.

TLS: a connection that starts with a TLS record is named once (a line with its version, SNI and cipher
suite; in json {\"conn\": …, \"tls\": {\"version\", \"offered\", \"sni\", \"cipher\", \"hello_retry_request\",
\"decrypted\"}}) and never parsed as CQL without its keys. --tls-keylog (an NSS key log, repeatable) decrypts
TLS 1.2 (AES-GCM, ChaCha20-Poly1305) and TLS 1.3: the CQL inside decodes as in plaintext, its offsets
counting in the decrypted stream. On a --port port such a connection is CQL over TLS; on another port it
is kept when its first decrypted bytes are a CQL frame. Secrets never appear in any output. A key log
from the Python driver:
  ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); ctx.keylog_filename = \"keys.log\"
  cluster = Cluster([\"10.0.0.1\"], ssl_context=ctx)
  $ cqlwire inspect fixtures/inspect/tls13-v5-lz4.pcap --tls-keylog fixtures/inspect/tls13-v5-lz4.keylog | head -1
  02:32:02.095051 127.0.0.1:42830-127.0.0.1:9042 TLS 1.3 (offered TLS 1.3), SNI \"cassandra.test\", \
TLS_AES_256_GCM_SHA384, decrypted")]
pub struct Args {
    /// Capture files (pcap/pcapng; `-` for standard input), or raw/hex streams with --raw/--hex.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = InspectFormat::Text)]
    pub format: InspectFormat,
    /// A server port carrying CQL (repeatable; default 9042 and 19042).
    #[arg(long = "port", value_name = "N")]
    pub ports: Vec<u16>,
    /// Only this connection: its number (from 1) or its `client-server` label.
    #[arg(long, value_name = "ID", value_parser = parse_conn)]
    pub conn: Option<String>,
    /// Only this stream id.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub stream: Option<i16>,
    /// Only these opcodes (repeatable, e.g. QUERY, EXECUTE), and the responses to them.
    #[arg(long = "opcode", value_name = "OP")]
    pub opcodes: Vec<String>,
    /// Only request/response pairs at least this slow (`250us`, `10ms`, `1.5s`).
    #[arg(long, value_name = "DURATION")]
    pub slower_than: Option<String>,
    /// Print statistics (per statement and per opcode) instead of the messages.
    #[arg(long)]
    pub stats: bool,
    /// Largest frame body accepted, also once decompressed; larger declared lengths are reported
    /// and skipped (the default, 256 MiB, is the protocol's limit, so every frame a server may
    /// send decodes; peak memory follows the largest frame, about twice its size).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME)]
    pub max_frame: usize,
    /// Replace every value, token, payload, paging state, query literal and quoted server text by
    /// its type, length and a keyed hash (see below).
    #[arg(long)]
    pub redact: bool,
    /// With --redact (implied): the key of the hash, a file of 32 to 4096 bytes, so hashes compare
    /// across runs.
    #[arg(long, value_name = "FILE")]
    pub redact_key: Option<PathBuf>,
    /// Show passwords (SASL PLAIN tokens, role statements), masked by default.
    #[arg(long, conflicts_with_all = ["redact", "redact_key"])]
    pub show_secrets: bool,
    /// An NSS key log (SSLKEYLOGFILE format) with the secrets of captured TLS connections, which
    /// are then decrypted; message offsets count in the decrypted stream (repeatable).
    #[arg(long = "tls-keylog", value_name = "FILE")]
    pub tls_keylogs: Vec<PathBuf>,
    /// No progress bar and no summary on standard error.
    #[arg(long)]
    pub quiet: bool,
    /// The client-to-server bytes of one connection (raw, or hex with --hex).
    #[arg(long, value_name = "FILE", conflicts_with = "raw")]
    pub client: Option<PathBuf>,
    /// The server-to-client bytes of one connection (raw, or hex with --hex).
    #[arg(long, value_name = "FILE", conflicts_with = "raw")]
    pub server: Option<PathBuf>,
    /// Each INPUT is the raw bytes of one direction of a connection (client or server, as the
    /// direction bit of its first frame says).
    #[arg(long)]
    pub raw: bool,
    /// Raw inputs (--client/--server, or INPUT with --raw implied) are hex text.
    #[arg(long)]
    pub hex: bool,
}

/// Parses `250us`, `10ms`, `1.5s`, `2m`, `100ns` into nanoseconds.
fn parse_duration(text: &str) -> Result<u64, CliError> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "" => 1e9,
        "m" | "min" => 60e9,
        _ => {
            return Err(CliError::usage(format!(
                "invalid duration {text:?}: use e.g. 250us, 10ms, 1.5s"
            )))
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        CliError::usage(format!(
            "invalid duration {text:?}: use e.g. 250us, 10ms, 1.5s"
        ))
    })?;
    Ok((value * scale).round() as u64)
}

/// The selection the filters make.
struct Filter {
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

/// Most bytes of requests `--slower-than` holds until their response; beyond, the oldest are
/// forgotten (a slow response whose request was forgotten is printed alone).
const HELD_MAX_BYTES: usize = 32 << 20;

/// What holding a request costs: its body twice (the bytes and what is decoded from them) and a
/// fixed part.
fn held_cost(m: &MessageRecord) -> usize {
    2 * m.body.len() + 512
}

impl Filter {
    fn new(args: &Args) -> Result<Self, CliError> {
        let opcodes = args
            .opcodes
            .iter()
            .map(|name| {
                name.parse::<Opcode>()
                    .map_err(|e| CliError::usage(format!("{e} for --opcode")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Filter {
            conn: args.conn.clone(),
            stream: args.stream,
            opcodes,
            slower_than: args
                .slower_than
                .as_deref()
                .map(parse_duration)
                .transpose()?,
            held: HashMap::new(),
            held_order: BTreeMap::new(),
            held_bytes: 0,
            held_seq: 0,
            held_forgotten: 0,
        })
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
    fn pass(&mut self, record: Record) -> Vec<Record> {
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

/// Writes what is printed for one record.
struct Printer<'k, W: Write> {
    out: W,
    format: InspectFormat,
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

impl<W: Write> Printer<'_, W> {
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
            InspectFormat::Json => {
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
            InspectFormat::Json => {
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
                if let Some(r) = m.request.as_ref().filter(|_| m.time.0 != 0) {
                    w.key("latency_ms");
                    w.f64(r.latency as f64 / 1e6);
                }
                w.end_object();
                spilled?;
                self.end_json_line()
            }
            InspectFormat::Text | InspectFormat::Explain => {
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
                if self.format == InspectFormat::Explain {
                    self.explain(m, form)?;
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

/// The statements of the statistics as `form` shows them; those it shows alike are merged.
fn shown_statements(stats: &Stats, form: ValueForm<'_>) -> BTreeMap<String, Statement> {
    let mut shown: BTreeMap<String, Statement> = BTreeMap::new();
    for (text, s) in &stats.statements {
        let merged = shown.entry(form.statement(text).into_owned()).or_default();
        merged.count += s.count;
        merged.errors += s.errors;
        merged.latencies.extend_from_slice(&s.latencies);
    }
    for s in shown.values_mut() {
        s.latencies.sort_unstable();
    }
    shown
}

/// Prints the statistics, statements in `form`.
fn print_stats<W: Write>(
    out: &mut W,
    stats: &Stats,
    form: ValueForm<'_>,
    json: bool,
) -> io::Result<()> {
    let statements = shown_statements(stats, form);
    let ms = |ns: Option<u64>| ns.map(|n| n as f64 / 1e6);
    if json {
        let statements: Vec<Json> = statements
            .iter()
            .map(|(text, s)| {
                json!({"statement": text, "count": s.count, "errors": s.errors,
                       "p50_ms": ms(s.quantile(0.5)), "p99_ms": ms(s.quantile(0.99)),
                       "max_ms": ms(s.latencies.last().copied())})
            })
            .collect();
        let opcodes: Vec<Json> = stats
            .opcodes
            .iter()
            .map(|((dir, op), n)| json!({"dir": dir, "opcode": op, "count": n}))
            .collect();
        let errors: Map<String, Json> = stats
            .error_codes
            .iter()
            .map(|(code, n)| (format!("0x{code:04x}"), json!(n)))
            .collect();
        let mut document = json!({"statements": statements, "opcodes": opcodes,
            "error_codes": errors, "undecoded": stats.undecoded, "problems": stats.problems,
            "tls": {"connections": stats.tls_connections, "decrypted": stats.tls_decrypted}});
        let more = &stats.more;
        if more.count > 0 {
            document["more_statements"] =
                json!({"distinct": more.distinct, "count": more.count, "errors": more.errors});
        }
        if stats.ip_fragments > 0 {
            document["ip_fragments"] = json!(stats.ip_fragments);
        }
        return writeln!(out, "{document}");
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

/// A reader that advances a progress bar.
struct Counted<R> {
    inner: R,
    bar: indicatif::ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

/// Opens an input, hex-decoded when asked.
fn open(path: &Path, hex: bool) -> Result<Box<dyn Read>, CliError> {
    let input = files::open_input(Some(path))?;
    Ok(if hex {
        Box::new(HexReader::new(input))
    } else {
        input
    })
}

/// The key of `--redact`: read from `--redact-key FILE`, else drawn at random; `None` without
/// redaction.
fn redact_key(args: &Args) -> Result<Option<KeyedHash>, CliError> {
    let Some(path) = &args.redact_key else {
        return match args.redact {
            true => KeyedHash::random()
                .map(Some)
                .map_err(|e| CliError::data(e.to_string())),
            false => Ok(None),
        };
    };
    let mut key = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_KEY_BYTES as u64 + 1).read_to_end(&mut key))
        .map_err(|e| CliError::data(format!("--redact-key {}: {e}", path.display())))?;
    KeyedHash::from_key(&key)
        .map(Some)
        .map_err(|e| CliError::usage(format!("--redact-key {}: {e}", path.display())))
}

/// Runs `cqlwire inspect`.
pub fn run(args: Args) -> Result<(), CliError> {
    let key = redact_key(&args)?;
    let raw_pair = args.client.is_some() || args.server.is_some();
    if raw_pair && !args.inputs.is_empty() {
        return Err(CliError::usage(
            "give either INPUT files or --client/--server, not both",
        ));
    }
    let mut filter = Filter::new(&args)?;
    let options = Options {
        ports: if args.ports.is_empty() {
            Options::default().ports
        } else {
            args.ports.clone()
        },
        max_frame: args.max_frame,
        explain: args.format == InspectFormat::Explain && !args.stats,
        tls_key_log: read_key_logs(&args.tls_keylogs)?,
    };
    // On a terminal, control characters of captured text are shown, not obeyed (a query or value
    // holding ESC sequences cannot drive the terminal); a pipe or file gets the exact text and JSON.
    let buffered = messages::Stdout(io::BufWriter::new(io::stdout().lock()));
    let out: Box<dyn Write> = if io::stdout().is_terminal() {
        Box::new(Visible(buffered))
    } else {
        Box::new(buffered)
    };
    let mut printer = Printer {
        out,
        format: args.format,
        values: match (&key, args.show_secrets) {
            (Some(key), _) => ValueForm::Redacted(key),
            (None, true) => ValueForm::Plain,
            (None, false) => ValueForm::Masked,
        },
        json: JsonWriter::new(),
        problems: 0,
        messages: 0,
    };
    let mut stats = Stats::default();
    let mut failed: Option<io::Error> = None;
    let mut sink = |record: Record| {
        if failed.is_some() {
            return;
        }
        for record in filter.pass(record) {
            if args.stats {
                stats.add(&record);
                continue;
            }
            let result = match &record {
                Record::Message(m) => printer.message(m),
                Record::Problem(p) => printer.problem(p),
                Record::Tls(t) => printer.tls(t),
            };
            if let Err(e) = result {
                failed = Some(e);
            }
        }
    };
    let options_ports = options.ports.clone();
    let mut ip_fragments = 0;
    let mut inspector = Inspector::new(options);
    if raw_pair {
        let mut client = args
            .client
            .as_deref()
            .map(|p| open(p, args.hex))
            .transpose()?;
        let mut server = args
            .server
            .as_deref()
            .map(|p| open(p, args.hex))
            .transpose()?;
        inspector.raw(
            "client-server",
            client.as_mut().map(|r| r as &mut dyn Read),
            server.as_mut().map(|r| r as &mut dyn Read),
            &mut sink,
        )?;
    } else {
        let inputs = if args.inputs.is_empty() {
            vec![PathBuf::from("-")]
        } else {
            args.inputs.clone()
        };
        // Several capture files are one capture, in order (rotated files): connections, their
        // streams and pending requests go on from one file to the next.
        let mut capture: Option<Capture<'static>> = None;
        for path in &inputs {
            let name = files::named(Some(path))
                .map_or("standard input".into(), |p| p.display().to_string());
            let len = files::named(Some(path))
                .and_then(|p| std::fs::metadata(p).ok())
                .map(|m| m.len());
            let bar = progress::bar(len, Unit::Bytes, args.quiet);
            let input = Counted {
                inner: open(path, args.hex)?,
                bar: bar.clone(),
            };
            if args.raw || args.hex {
                // One direction: the client's or the server's, as its first header's direction
                // bit says.
                let mut input = BufReader::new(input);
                let from_server = input.fill_buf()?.first().is_some_and(|b| b & 0x80 != 0);
                let input = &mut input as &mut dyn Read;
                let (client, server) = if from_server {
                    (None, Some(input))
                } else {
                    (Some(input), None)
                };
                inspector.raw(&name, client, server, &mut sink)?;
            } else {
                let input = BufReader::with_capacity(1 << 16, input);
                let opened = match capture.as_mut() {
                    Some(capture) => capture.continue_with(input),
                    None => Capture::new(input).map(|c| capture = Some(c)),
                };
                opened.map_err(|e| {
                    CliError::data(format!(
                        "{e} ({name}; for raw CQL bytes use --raw or --client/--server, for hex \
                         text --hex)"
                    ))
                })?;
                if let Some(capture) = capture.as_mut() {
                    capture
                        .read_file(&mut |event| inspector.event(event, &mut sink))
                        .map_err(|e| CliError::data(format!("{e} ({name})")))?;
                }
            }
            bar.finish_and_clear();
        }
        if let Some(mut capture) = capture {
            capture.finish(&mut |event| inspector.event(event, &mut sink));
            inspector.finish(&mut sink);
            ip_fragments = capture.stats().ip_fragments;
            if !args.quiet && inspector.cql_bytes() == 0 {
                port_hint(&inspector, &options_ports);
            }
        }
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    if args.stats {
        stats.ip_fragments = ip_fragments;
        stats.finish();
        let json = args.format == InspectFormat::Json;
        print_stats(&mut printer.out, &stats, printer.values, json)?;
    }
    printer.flush_json()?;
    printer.out.flush()?;
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut summary = Vec::new();
    if printer.problems > 0 {
        summary.push(format!(
            "{}, {} reported (malformed traffic was skipped)",
            plural(printer.messages, "message"),
            plural(printer.problems, "problem")
        ));
    }
    if ip_fragments > 0 {
        summary.push(format!(
            "{} skipped (not reassembled)",
            plural(ip_fragments, "IP fragment")
        ));
    }
    if !args.quiet && !summary.is_empty() {
        messages::line(format_args!("cqlwire: {}", summary.join("; ")));
    }
    Ok(())
}

/// Says where the TCP traffic of a capture without CQL on `ports` is, when it has any: the
/// busiest ports of the other connections, and `--port` for the busiest.
fn port_hint(inspector: &Inspector, ports: &[u16]) {
    let busiest: Vec<(u16, u64)> = inspector.other_ports().into_iter().take(3).collect();
    let Some(&(first, _)) = busiest.first() else {
        return;
    };
    let watched: Vec<String> = ports.iter().map(u16::to_string).collect();
    let seen: Vec<String> = busiest
        .iter()
        .map(|(port, bytes)| format!("{port} ({bytes} bytes)"))
        .collect();
    messages::line(format_args!(
        "cqlwire: hint: no CQL found on port {}; TCP traffic on port {}: if it is CQL, name \
         its port with --port {first}",
        watched.join(" or "),
        seen.join(", ")
    ));
}

/// Reads the `--tls-keylog` files into one key log (none without any); a file's malformed lines are
/// skipped with one warning line.
fn read_key_logs(paths: &[PathBuf]) -> Result<Option<Arc<KeyLog>>, CliError> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut log = KeyLog::new();
    for path in paths {
        let (lines, skipped, first) = (log.lines(), log.skipped_lines(), log.first_skipped_line());
        let file = std::fs::File::open(path)
            .map_err(|e| CliError::data(format!("key log {}: {e}", path.display())))?;
        log.read_from(BufReader::new(file))
            .map_err(|e| CliError::data(format!("{e} ({})", path.display())))?;
        let new = log.skipped_lines() - skipped;
        if new > 0 {
            let at = match (first, log.first_skipped_line()) {
                (None, Some(line)) => format!(", the first at line {}", line - lines),
                _ => String::new(),
            };
            messages::line(format_args!(
                "cqlwire: warning: key log {}: {new} malformed line{} skipped{at}",
                path.display(),
                if new == 1 { "" } else { "s" }
            ));
        }
    }
    let dropped = log.dropped_client_randoms();
    if dropped > 0 {
        messages::line(format_args!(
            "cqlwire: warning: key log: {dropped} older client randoms dropped to keep the latest {}; \
             their connections stay encrypted",
            KeyLog::DEFAULT_MAX_CLIENT_RANDOMS
        ));
    }
    Ok(Some(Arc::new(log)))
}

impl<W: Write> Printer<'_, W> {
    /// Names a TLS connection: a line like a message's (text, explain), or
    /// `{"conn": …, "tls": {"version", "offered", "sni", "cipher", "hello_retry_request",
    /// "decrypted"}}`. The server name is escaped (Rust escapes in text, JSON escapes in json).
    fn tls(&mut self, t: &TlsRecord) -> io::Result<()> {
        let s = &t.summary;
        match self.format {
            InspectFormat::Json => {
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
            InspectFormat::Text | InspectFormat::Explain => writeln!(
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
