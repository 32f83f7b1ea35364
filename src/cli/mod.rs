//! The `cqlwire` command line: one file per command, each with its usage text beside its code.

mod bench;
mod compress;
mod connection;
mod convert;
mod decode;
mod decompress;
mod encode;
mod generate;
mod input;
mod inspect;
mod live;
mod load;
mod lz4_stream;
mod progress;
mod search;
mod unload;
mod util;

use clap::{Parser, Subcommand};
use std::fmt;
use std::io;

/// Command-line interface of cqlwire.
#[derive(Debug, Parser)]
#[command(
    name = "cqlwire",
    version,
    about = "The bytes of the Cassandra/ScyllaDB native protocol (CQL): convert embeddings to CQL \
             vector values, load them into a table, search it and unload it, compress and \
             decompress LZ4 bodies and frames, decode and encode values, inspect captured \
             conversations.",
    after_help = "Exit codes: 0 success, 1 bad data or I/O error, 2 bad usage."
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode the bytes of one CQL value (hex or --binary) as a CQL literal, JSON or an annotated dump.
    Decode(decode::Args),
    /// Encode a CQL literal (or JSON) as the bytes of one CQL value.
    Encode(encode::Args),
    // No doc comments here: a variant's doc comment would replace the about and long help that
    // compress.rs and decompress.rs give their `Args`.
    Compress(compress::Args),
    Decompress(decompress::Args),
    /// Convert embeddings (NPY, Parquet, fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin, Arrow) to CQL
    /// vector values, at memory speed.
    Convert(convert::Args),
    /// Generate shell completions or man pages from these definitions.
    Generate(generate::Args),
    /// Decode captured CQL conversations (pcap/pcapng, raw or hex streams): every message, row and
    /// bound value, with latencies, filters and statistics.
    Inspect(inspect::Args),
    /// Load a dataset (Parquet, Arrow, NPY, ANN formats) into a live Cassandra/ScyllaDB table, each
    /// value converted to its column's type and bound as bytes, never through text.
    Load(load::Args),
    /// Unload a live Cassandra/ScyllaDB table into Parquet, Arrow, NPY, fbin, raw or hex by a
    /// parallel token-range scan, each value decoded from its bytes, never through text.
    Unload(unload::Args),
    /// Run a query set's ANN queries on a live table: recall@k against ground truth, queries/s and
    /// latency percentiles, each query vector bound as bytes.
    Search(search::Args),
    /// Run VectorDBBench's performance case on a live table: a dataset folder loaded and indexed,
    /// its queries run serially (recall, NDCG, p99) and at each concurrency level (qps), with its
    /// result file and chart.
    Bench(Box<bench::Args>),
}

/// Runs the chosen command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Decode(args) => decode::run(args),
        Command::Encode(args) => encode::run(args),
        Command::Compress(args) => compress::run(args),
        Command::Decompress(args) => decompress::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Load(args) => load::run(args),
        Command::Unload(args) => unload::run(args),
        Command::Search(args) => search::run(args),
        Command::Bench(args) => bench::run(*args),
    }
}

/// A command-line error of clap as one line: the message, then clap's tips and the usage line,
/// separated by `; ` (clap prints them as paragraphs).
pub fn usage_message(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let mut paragraphs = text
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty());
    let first = paragraphs.next().unwrap_or_default();
    let mut parts = vec![first.strip_prefix("error: ").unwrap_or(&first).to_string()];
    parts.extend(paragraphs.filter_map(|p| {
        if p.starts_with("tip: ") {
            Some(p)
        } else {
            p.strip_prefix("Usage: ")
                .map(|usage| format!("usage: {usage}"))
        }
    }));
    parts.join("; ")
}

/// How a command failed, which decides the exit code.
#[derive(Debug)]
pub enum CliError {
    /// Bad data or an I/O error: exit code 1.
    Data(String),
    /// Bad usage (e.g. an invalid type string given as an argument): exit code 2.
    Usage(String),
    /// The reader of standard output went away (`| head`): end quietly with exit code 0.
    BrokenPipe,
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Data(_) => 1,
            CliError::Usage(_) => 2,
            CliError::BrokenPipe => 0,
        }
    }

    /// A data error from anything displayable.
    pub fn data(message: impl fmt::Display) -> Self {
        CliError::Data(message.to_string())
    }

    /// A usage error from anything displayable.
    pub fn usage(message: impl fmt::Display) -> Self {
        CliError::Usage(message.to_string())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Data(m) | CliError::Usage(m) => f.write_str(m),
            CliError::BrokenPipe => f.write_str("broken pipe"),
        }
    }
}

impl From<io::Error> for CliError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Data(error.to_string())
        }
    }
}

impl From<crate::files::OutputError> for CliError {
    /// The library's message, with the flags that fix it where it has none.
    fn from(error: crate::files::OutputError) -> Self {
        match error {
            crate::files::OutputError::BinaryToTerminal => CliError::data(
                "refusing to write binary output to a terminal (use -o FILE or a text format such \
                 as hex)",
            ),
            other => CliError::data(other),
        }
    }
}

impl From<cqlwire_codec::hex::HexError> for CliError {
    fn from(error: cqlwire_codec::hex::HexError) -> Self {
        CliError::Data(format!("invalid hex input: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn usage_error(args: &[&str]) -> String {
        usage_message(&Cli::try_parse_from(args).unwrap_err())
    }

    #[test]
    fn usage_errors_are_one_line_with_tips_and_usage() {
        let message = usage_error(&["cqlwire", "compress", "--bogus"]);
        assert!(!message.contains('\n'), "{message}");
        assert!(
            message.starts_with("unexpected argument '--bogus' found"),
            "{message}"
        );
        assert!(message.contains("; usage: cqlwire compress"), "{message}");

        let message = usage_error(&["cqlwire", "decode"]);
        assert!(!message.contains('\n'), "{message}");
        assert!(message.contains("<TYPE>"), "{message}");

        let message = usage_error(&["cqlwire", "decompress", "--max-size", "12XB"]);
        assert!(message.contains("unknown size unit"), "{message}");
    }
}
