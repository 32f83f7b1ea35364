//! The input flags of every command that reads a dataset file (`convert`, `load`): one
//! [`InputArgs`] group flattened into each, turned into the library's [`InputOptions`] by
//! [`InputArgs::options`].

use cqlwire_vector::input::{
    parse_rows, parse_shard, InputFormat, InputOptions, RowSelection, UnknownInputFormat,
};
use std::ops::Range;

/// Which vectors of the input file are read, and how the file is read.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// The vector column of a Parquet or Arrow input [default: the only list column, else emb,
    /// embedding or vector].
    #[arg(long)]
    pub column: Option<String>,
    /// Input format: npy, parquet, fvecs, ivecs, bvecs, fbin, ibin, u8bin, i8bin, arrow, hdf5
    /// [default: from the extension, else the magic bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// The dataset of an HDF5 input (ann-benchmarks files hold train, test, neighbors, distances).
    #[arg(long, value_name = "NAME", default_value = "train")]
    pub dataset: String,
    /// Convert rows START..END only (0-based, END exclusive; `START..` to the end, `..END` from 0).
    #[arg(long, value_name = "START..END", value_parser = parse_rows, conflicts_with = "shard")]
    pub rows: Option<Range<u64>>,
    /// Convert the K-th of N contiguous, balanced parts (1 ≤ K ≤ N).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
}

impl InputArgs {
    /// The library's options for these flags: `batch_rows` rows per batch where the reader does
    /// not choose, and whether rows without a vector column are accepted (`vectors_optional`).
    pub fn options(&self, batch_rows: usize, vectors_optional: bool) -> InputOptions {
        InputOptions {
            format: self.input_format,
            column: self.column.clone(),
            dataset: self.dataset.clone(),
            selection: RowSelection::of(self.rows.clone(), self.shard),
            batch_rows,
            vectors_optional,
        }
    }
}

/// Parses `--input-format`.
pub(super) fn parse_input_format(text: &str) -> Result<InputFormat, String> {
    text.parse()
        .map_err(|error: UnknownInputFormat| error.to_string())
}
