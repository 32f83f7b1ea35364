//! The `cqlwire` command line: one file per command, each with its usage text beside its code.

mod compress;
pub mod convert;
pub mod decode;
mod decompress;
pub mod encode;
mod lz4_stream;

use clap::{Parser, Subcommand};
use std::fmt;
use std::io;

/// Command-line interface of cqlwire.
#[derive(Debug, Parser)]
#[command(
    name = "cqlwire",
    version,
    about = "The bytes of the Cassandra/ScyllaDB native protocol (CQL): convert embeddings to CQL \
             vector values, compress and decompress LZ4 bodies and frames, decode and encode values.",
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
    /// Compress a payload into a CQL v4 LZ4 body, or the frames of a v3/v4 stream.
    Compress(compress::Args),
    /// Decompress a CQL v4 LZ4 body, or the compressed frames of a v3/v4 stream.
    Decompress(decompress::Args),
    /// Convert embeddings (NPY, Parquet, fvecs/ivecs/bvecs, fbin/ibin/u8bin/i8bin, Arrow) to CQL
    /// vector values, at memory speed.
    Convert(convert::Args),
}

/// Runs the chosen command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Decode(args) => decode::run(args),
        Command::Encode(args) => encode::run(args),
        Command::Compress(args) => compress::run(args),
        Command::Decompress(args) => decompress::run(args),
        Command::Convert(args) => convert::run(args),
    }
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

impl From<cqlwire::files::OutputError> for CliError {
    fn from(error: cqlwire::files::OutputError) -> Self {
        CliError::data(error)
    }
}

impl From<cqlwire::hex::HexError> for CliError {
    fn from(error: cqlwire::hex::HexError) -> Self {
        CliError::Data(format!("invalid hex input: {error}"))
    }
}
