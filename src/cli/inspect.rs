//! `cqlwire inspect`: whole captured CQL conversations (pcap/pcapng, raw or hex byte streams)
//! decoded message by message, as text lines, explain trees, JSON lines or statistics.

use super::progress::{self, Unit};
use super::CliError;
use crate::display::Visible;
use crate::files;
use crate::messages;
use cqlwire_codec::hex::HexReader;
use cqlwire_inspect::capture::Capture;
use cqlwire_inspect::{
    read_key_logs, Filter, Format, Inspector, KeyLog, KeyedHash, Options, Printer, Record, Stats,
    ValueForm, DEFAULT_MAX_FRAME, MAX_KEY_BYTES,
};
use cqlwire_protocol::frame::Opcode;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How `inspect` prints the messages (the library's [`Format`], named for the command line).
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
    (...), [...], {...}, <...>, from the first opener to the last closer) and every word that is
    not one of a fixed list of the server's own words (names, numbers, addresses, true/false), as
    ?:<tag>; passwords as <password: N bytes> (never tagged).
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
    /// Replace every value, token, payload, paging state, query literal and server text (but its
    /// known words) by its type, length and a keyed hash (see below).
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
    let mut filter = filter(&args)?;
    let options = Options {
        ports: if args.ports.is_empty() {
            Options::default().ports
        } else {
            args.ports.clone()
        },
        max_frame: args.max_frame,
        explain: args.format == InspectFormat::Explain && !args.stats,
        tls_key_log: key_log(&args.tls_keylogs)?,
    };
    // On a terminal, control characters of captured text are shown, not obeyed (a query or value
    // holding ESC sequences cannot drive the terminal); a pipe or file gets the exact text and JSON.
    let buffered = messages::Stdout(io::BufWriter::new(io::stdout().lock()));
    let out: Box<dyn Write> = if io::stdout().is_terminal() {
        Box::new(Visible(buffered))
    } else {
        Box::new(buffered)
    };
    let values = match (&key, args.show_secrets) {
        (Some(key), _) => ValueForm::Redacted(key),
        (None, true) => ValueForm::Plain,
        (None, false) => ValueForm::Masked,
    };
    let format = match args.format {
        InspectFormat::Text => Format::Text,
        InspectFormat::Explain => Format::Explain,
        InspectFormat::Json => Format::Json,
    };
    let mut printer = Printer::new(out, format, values);
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
            if let Err(e) = printer.record(&record) {
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
                // bit says (a TLS stream: its first handshake message, a ServerHello or not).
                let mut input = BufReader::new(input);
                let head = input.fill_buf()?;
                let from_server = if cqlwire_inspect::looks_like_tls(head) {
                    head.get(5) == Some(&2)
                } else {
                    head.first().is_some_and(|b| b & 0x80 != 0)
                };
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
        printer.stats(&stats)?;
    }
    printer.finish()?;
    if let Some(summary) = printer.summary(ip_fragments).filter(|_| !args.quiet) {
        messages::line(format_args!("cqlwire: {summary}"));
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

/// Reads the `--tls-keylog` files into one key log (none without any), with a warning line per
/// file with malformed lines.
fn key_log(paths: &[PathBuf]) -> Result<Option<Arc<KeyLog>>, CliError> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut warn = |text: String| messages::line(format_args!("cqlwire: warning: {text}"));
    let log = read_key_logs(paths, &mut warn).map_err(|e| CliError::data(e.to_string()))?;
    Ok(Some(Arc::new(log)))
}

/// The selection `--conn`, `--stream`, `--opcode` and `--slower-than` make.
fn filter(args: &Args) -> Result<Filter, CliError> {
    let opcodes = args
        .opcodes
        .iter()
        .map(|name| {
            name.parse::<Opcode>()
                .map_err(|e| CliError::usage(format!("{e} for --opcode")))
        })
        .collect::<Result<_, _>>()?;
    let slower_than = args.slower_than.as_deref().map(|text| {
        parse_duration(text).ok_or_else(|| {
            CliError::usage(format!(
                "invalid duration {text:?}: use e.g. 250us, 10ms, 1.5s"
            ))
        })
    });
    let slower_than = slower_than.transpose()?;
    Ok(Filter::new(
        args.conn.clone(),
        args.stream,
        opcodes,
        slower_than,
    ))
}

/// Checks a connection selector: a connection number from 1, or a label `<client
/// ip:port>-<server ip:port>`; gives it back, or says what is wrong.
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

/// Parses `250us`, `10ms`, `1.5s`, `2m`, `100ns` (no unit: seconds) into nanoseconds; `None`
/// for anything else.
fn parse_duration(text: &str) -> Option<u64> {
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
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    Some((value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_connection_selectors_parse() {
        assert_eq!(parse_duration("250us"), Some(250_000));
        assert_eq!(parse_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_duration("2"), Some(2_000_000_000));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_conn("3").as_deref(), Ok("3"));
        assert!(parse_conn("10.0.0.1:40000-10.0.0.2:9042").is_ok());
        assert!(parse_conn("0").is_err() && parse_conn("x").is_err());
    }
}
