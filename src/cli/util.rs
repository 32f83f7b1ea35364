//! Helpers that several commands share: the TYPE argument, and values read from arguments or
//! standard input.

use super::CliError;
use crate::display::elide;
use crate::files;
use cqlwire_codec::hex;
use cqlwire_codec::hex::{HexError, HexReader};
use cqlwire_codec::types::{parse_type, CqlType, UdtRegistry};
use std::io::Read;

/// Largest value read: the largest frame Cassandra accepts, which every value travels in.
pub const MAX_VALUE_BYTES: u64 = 256 << 20;

/// Largest literal text read from standard input: three characters per byte of the largest value
/// (a blob's two hex digits and a separator).
const MAX_TEXT_BYTES: u64 = 3 * MAX_VALUE_BYTES;

/// Characters of an argument quoted in an error message; longer ones are cut in the middle.
const QUOTED_CHARS: usize = 80;

/// Parses the TYPE argument after declaring every `--udt`; errors are usage errors (exit 2).
pub fn cli_type(type_text: &str, declarations: &[String]) -> Result<CqlType, CliError> {
    let mut udts = UdtRegistry::new();
    for declaration in declarations {
        udts.declare(declaration).map_err(|e| {
            let quoted = elide(declaration, QUOTED_CHARS);
            CliError::usage(format!("invalid --udt {quoted:?}: {e}"))
        })?;
    }
    parse_type(type_text, &udts).map_err(|e| {
        let quoted = elide(type_text, QUOTED_CHARS);
        CliError::usage(format!("invalid type {quoted:?}: {e}"))
    })
}

/// Whether an argument means standard input: absent, or `-`.
fn is_stdin(argument: Option<&str>) -> bool {
    matches!(argument, None | Some("-"))
}

/// Reads a whole text argument, or standard input when the argument is absent or `-`.
pub fn text_argument(argument: Option<String>, what: &str) -> Result<String, CliError> {
    match argument {
        Some(text) if !is_stdin(Some(&text)) => Ok(text),
        _ => String::from_utf8(files::read_input(None, MAX_TEXT_BYTES)?)
            .map_err(|_| CliError::data(format!("the {what} on standard input is not UTF-8 text"))),
    }
}

/// The bytes spelled by hex words given as arguments, or by hex text on standard input when there
/// are none or the only one is `-`. Standard input is decoded while it is read and held to
/// [`MAX_VALUE_BYTES`] of decoded bytes, so neither its size nor a bad character late in it costs
/// memory.
pub fn hex_argument(words: &[String]) -> Result<Vec<u8>, CliError> {
    let hex_error = |e: HexError| {
        let hint = if e.looks_binary() {
            " (raw bytes? read them with --binary -)"
        } else {
            ""
        };
        CliError::data(format!("invalid hex input: {e}{hint}"))
    };
    if !(words.is_empty() || is_stdin(words.first().map(String::as_str)) && words.len() == 1) {
        return hex::parse(&words.join(" ")).map_err(hex_error);
    }
    let mut bytes = Vec::new();
    HexReader::new(files::open_input(None)?)
        .take(MAX_VALUE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| match HexError::from_io(&e) {
            Some(hex) => hex_error(hex.clone()),
            None => CliError::from(e),
        })?;
    if bytes.len() as u64 > MAX_VALUE_BYTES {
        return Err(CliError::data(format!(
            "standard input: hex text of more than {MAX_VALUE_BYTES} bytes, the largest value"
        )));
    }
    Ok(bytes)
}

/// `n` and the noun, plural unless `n` is 1.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A byte count in bytes below 1 kB, else kB or MB with one decimal.
pub fn amount(bytes: u64) -> String {
    match bytes {
        0..1_000 => counted(bytes, "byte"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}
