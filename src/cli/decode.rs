//! `cqlwire decode`: the bytes of one value, as a CQL literal, lossless JSON or an annotated dump.

use super::util::{cli_type, hex_argument, MAX_VALUE_BYTES};
use super::CliError;
use crate::{display, files, messages};
use cqlwire_codec::types::CqlType;
use cqlwire_codec::value::print::{self, PrintError, TextForm};
use cqlwire_codec::value::{self, explain, refused};
use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// How `decode` prints the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeFormat {
    /// A cqlsh-style CQL literal.
    Cql,
    /// Lossless JSON (see docs/decode-encode.md).
    Json,
    /// One line per wire item: offset, bytes, meaning.
    Explain,
}

/// Arguments of `cqlwire decode`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  $ cqlwire decode 'list<int>' 0000000200000004000000010000000400000002
  [1, 2]
  $ cqlwire decode --udt 'addr(street text, zip int)' addr '00 00 00 02 4f 6b 00 00 00 04 00 00 30 39' --format json
  {\"street\":\"Ok\",\"zip\":12345}
  $ cqlwire decode 'map<text, frozen<list<int>>>' --format explain \\
      '00000001 00000001 61 00000010 00000002 00000004 0000002a 00000004 ffffff'
  0000  00000001                  entry count 1
  0004  00000001                    key length 1 [map key #0]
  0008  61                          text \"a\" [map key #0]
  0009  00000010                    value length 16 [map value #0]
  0013  00000002                    element count 2 [map value #0]
  0017  00000004                      element length 4 [map value #0 / element 0]
  0021  0000002a                      int 42 [map value #0 / element 0]
  cqlwire: error: element length 4 exceeds the 0 bytes left at byte 25 (map value #0 / element 1)

The payload is hex (argument or standard input; 0x, any case, spaces, ':' and newlines are fine) or raw
bytes with --binary FILE. Offsets are decimal, as in error messages. Exit 1 on a malformed payload, 2 on
an invalid type or --udt.

Bytes the wire carries but Apache Cassandra refuses are shown, with one warning line each on standard
error (exit 0; --strict: exit 1):
  $ cqlwire decode 'list<int>' 00000002000000040000000100000000
  [1, <empty>]
  cqlwire: warning: Apache Cassandra refuses an empty element in a list (it keeps no empty value inside a collection) at byte 12 (element 1)")]
pub struct Args {
    /// The CQL type: `int`, `map<text, frozen<list<int>>>`, `vector<float, 3>`, a --udt name, or a Java
    /// class name such as `org.apache.cassandra.db.marshal.Int32Type`.
    #[arg(value_name = "TYPE")]
    pub type_text: String,
    /// The payload in hex, whole or split over several arguments (`00 00 00 2a`); read from
    /// standard input when absent or `-`.
    #[arg(value_name = "HEX", conflicts_with = "binary", num_args = 0..)]
    pub hex: Vec<String>,
    /// Declares a user-defined type: `name(field1 type1, field2 type2, ...)`; repeatable, later
    /// declarations may use earlier ones.
    #[arg(long = "udt", value_name = "DECL")]
    pub udts: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DecodeFormat::Cql)]
    pub format: DecodeFormat,
    /// Read the payload as raw bytes from FILE (`-` for standard input) instead of hex.
    #[arg(long, value_name = "FILE")]
    pub binary: Option<PathBuf>,
    /// Accept bytes after the value (they are ignored; `explain` shows them).
    #[arg(long)]
    pub allow_trailing: bool,
    /// Exit 1 when the bytes hold what Apache Cassandra refuses (a null or empty element in a
    /// list, set or map; the empty value of smallint, tinyint, date, time, duration or counter).
    /// Without it each finding is a warning and the exit code stays 0.
    #[arg(long)]
    pub strict: bool,
}

/// Runs `cqlwire decode`.
pub fn run(args: Args) -> Result<(), CliError> {
    let ty = cli_type(&args.type_text, &args.udts)?;
    let bytes = match &args.binary {
        Some(path) => {
            files::refuse_same_file(Some(path), None)?;
            files::read_input(Some(path), MAX_VALUE_BYTES)?
        }
        None => hex_argument(&args.hex)?,
    };
    print_value(&args, &ty, &bytes)?;
    report_refusals(&ty, &bytes, args.allow_trailing, args.strict)
}

/// Prints the value in the chosen format.
fn print_value(args: &Args, ty: &CqlType, bytes: &[u8]) -> Result<(), CliError> {
    let mut out = files::Output::open(None, false)?;
    let form = match args.format {
        DecodeFormat::Explain => return print_explanation(out, ty, bytes, args.allow_trailing),
        DecodeFormat::Json => TextForm::Json,
        DecodeFormat::Cql => TextForm::Cql,
    };
    // On a terminal, control characters in the text are shown visibly instead of acting on it.
    let show: &dyn Fn(&str) -> Cow<'_, str> = if std::io::stdout().is_terminal() {
        &display::visible
    } else {
        &as_is
    };
    match print::write_text(ty, bytes, args.allow_trailing, form, show, &mut out) {
        Ok(()) => Ok(out.commit()?),
        Err(PrintError::Decode(e)) => Err(payload_error(ty, bytes, e)),
        Err(PrintError::Io(e)) => Err(e.into()),
        Err(other) => Err(CliError::data(other)),
    }
}

/// Says on standard error what Apache Cassandra refuses in the (decoded) payload, one line per
/// finding: warnings, or with `strict` errors, the last one returned (exit 1).
fn report_refusals(
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
    strict: bool,
) -> Result<(), CliError> {
    let mut lines = refused::refusal_lines(ty, bytes, allow_trailing)
        .map_err(|e| payload_error(ty, bytes, e))?
        .lines;
    let last = if strict { lines.pop() } else { None };
    let level = if strict { "error" } else { "warning" };
    for line in &lines {
        messages::line(format_args!("cqlwire: {level}: {line}"));
    }
    last.map_or(Ok(()), |line| Err(CliError::data(line)))
}

/// Text shown as it is (output that is not a terminal).
fn as_is(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

/// The error for a payload that does not decode; when its start is a whole value, says that
/// `--allow-trailing` ignores the bytes after it.
fn payload_error(ty: &CqlType, bytes: &[u8], error: value::DecodeError) -> CliError {
    match value::decode_pieces(ty, bytes, true, &mut drop) {
        Ok(used) if used < bytes.len() => CliError::data(format!(
            "{error}; --allow-trailing ignores the bytes after the value"
        )),
        _ => CliError::data(error),
    }
}

/// Prints one line per wire item, as it is read, up to the end or the fault; a fault is returned as
/// the error (after the lines before it are out).
fn print_explanation(
    mut out: files::Output,
    ty: &CqlType,
    bytes: &[u8],
    allow_trailing: bool,
) -> Result<(), CliError> {
    let mut written = Ok(());
    let result = value::explain_each(ty, bytes, allow_trailing, &mut |line| {
        if written.is_ok() {
            written = writeln!(out, "{}", explain::format_line(&line, bytes, 0, 0));
        }
    });
    written?;
    out.commit()?;
    result.map_err(|e| payload_error(ty, bytes, e))
}
