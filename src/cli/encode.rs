//! `cqlwire encode`: a CQL literal (or JSON) to the bytes of one value.

use super::util::{cli_type, text_argument};
use super::CliError;
use crate::files;
use cqlwire_codec::hex;
use cqlwire_codec::value::{self, cql, json};
use std::io::Write;

/// How `encode` writes the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EncodeFormat {
    /// `0x` and lowercase hex digits, one line.
    Hex,
    /// The raw bytes (refused when standard output is a terminal).
    Raw,
}

/// Arguments of `cqlwire encode`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  $ cqlwire encode 'map<text, int>' \"{'a': 1, 'it''s': null}\"
  0x00000002000000016100000004000000010000000469742773ffffffff
  $ cqlwire encode --udt 'addr(street text, zip int)' 'list<frozen<addr>>' \"[{street: 'Main', zip: 1}]\"
  0x0000000100000010000000044d61696e0000000400000001
  $ cqlwire encode 'vector<float, 3>' --json '[0.5, \"NaN\", -1]'
  0x3f0000007fc00000bf800000
  $ echo \"'2024-01-01 12:00:00.000Z'\" | cqlwire encode timestamp --format raw > ts.bin

Literals are cqlsh-style: [1, 2] lists and vectors, {1, 2} sets, {'k': 1} maps, (1, 'x') tuples,
{field: 1} UDTs, 'text' with '' escaping, 0x… blobs, NaN/Infinity, '2024-01-01 12:00:00.000Z',
'2024-01-01', '12:34:56.123456789', 1h30m or P1DT2H, null, <empty>. `cqlwire decode` prints the same forms.")]
pub struct Args {
    /// The CQL type (see `cqlwire decode --help`).
    #[arg(value_name = "TYPE")]
    pub type_text: String,
    /// The value as a CQL literal (or JSON with --json); read from standard input when absent or
    /// `-`. May start with `-` (`-1`, `-Infinity`, `-1h`).
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub value: Option<String>,
    /// Declares a user-defined type: `name(field1 type1, ...)`; repeatable.
    #[arg(long = "udt", value_name = "DECL")]
    pub udts: Vec<String>,
    /// The value is JSON in the format `cqlwire decode --format json` prints.
    #[arg(long)]
    pub json: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = EncodeFormat::Hex)]
    pub format: EncodeFormat,
}

/// Bytes written as hex at a time.
const HEX_STEP: usize = 64 << 10;

/// Runs `cqlwire encode`.
pub fn run(args: Args) -> Result<(), CliError> {
    let ty = cli_type(&args.type_text, &args.udts)?;
    let text = text_argument(args.value, "value")?;
    let parsed = if args.json {
        let document = json::parse_document(&text)
            .map_err(|e| CliError::data(format!("invalid JSON: {e}")))?;
        json::from_json(&ty, &document)
    } else {
        cql::parse_cql(&ty, &text)
    }
    .map_err(|e| CliError::data(format!("invalid {ty} value: {e}")))?;
    let bytes = value::encode(&ty, &parsed)
        .map_err(|e| CliError::data(format!("cannot encode as {ty}: {e}")))?;
    match args.format {
        EncodeFormat::Hex => {
            let mut out = files::Output::open(None, false)?;
            out.write_all(b"0x")?;
            // In steps, so that a large value is not held a second time as hex text.
            for chunk in bytes.chunks(HEX_STEP) {
                out.write_all(hex::encode(chunk).as_bytes())?;
            }
            writeln!(out)?;
            out.commit()?;
        }
        EncodeFormat::Raw => {
            let mut out = files::Output::open(None, true)?;
            out.write_all(&bytes)?;
            out.commit()?;
        }
    }
    Ok(())
}
