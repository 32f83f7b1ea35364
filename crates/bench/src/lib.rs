//! VectorDBBench's performance case on Cassandra: its dataset folders, its metrics, its result
//! files and the charts drawn from them, and the case itself against a live database on the engine
//! of `cqlwire-client`.
//!
//! - [`case`]: the stages against the database (table, load, index, serial pass, concurrency
//!   sweep) and their report;
//! - [`filtered`]: what a filtered case needs of the table (the filtered column, its index, the
//!   query's condition) and a reader adding the column to the training rows;
//! - [`folder`]: a dataset folder's files (the training set in one or several Parquet files, the
//!   queries, the ground truths of the unfiltered and filtered cases, the rows' labels) and
//!   VectorDBBench's filters;
//! - [`dataset`]: what a case reads, a folder or a training, a test and a ground-truth file;
//! - [`truth`]: the ground truth, the queries and the labels, read whole and checked;
//! - [`metrics`]: recall, NDCG and latency percentiles as VectorDBBench computes them;
//! - [`streaming`]: VectorDBBench's streaming case, the insert at a fixed rate with searches at
//!   its stages;
//! - [`job`]: a case with its outputs, and the rules both faces share;
//! - [`result`]: VectorDBBench's result file; [`standard`]: its standard datasets; [`context`]:
//!   the machine a case ran on;
//! - [`sweep`]: a sweep over the index's options and k, a case per value set;
//! - [`text`]: a run's text summary;
//! - [`chart`]: QPS and p99 latency against concurrency, recall against QPS with the Pareto
//!   frontier, as SVG.
//!
//! # Example
//!
//! One query's recall and NDCG at k = 4, as VectorDBBench scores them:
//!
//! ```
//! use cqlwire_bench::metrics::{calc_ndcg, calc_recall, ideal_dcg};
//!
//! let truth = [10, 11, 12, 13];
//! let got = [10, 12, 99, 98];
//! assert_eq!(calc_recall(4, &truth, &got), 0.5);
//! // Id 10 at rank 0 adds 1 / log2(2), id 12 at rank 2 adds 1 / log2(4).
//! let expected = (1.0 + 0.5) / ideal_dcg(4);
//! assert!((calc_ndcg(&truth, &got, ideal_dcg(4)) - expected).abs() < 1e-15);
//! ```

pub mod case;
pub mod chart;
pub mod context;
pub mod dataset;
pub mod filtered;
pub mod folder;
pub mod job;
pub mod metrics;
pub mod result;
pub mod standard;
pub mod streaming;
pub mod sweep;
pub mod text;
pub mod truth;

use cqlwire_vector::input::InputError;

/// Why a dataset folder or one of its files cannot be used: one line, naming the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// A file or the folder could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A Parquet file the vector crate's input refused (its message names the file).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A Parquet file the parquet crate cannot read.
    #[error("{file}: not a readable Parquet file: {}", one_line(.message))]
    Parquet {
        /// The file.
        file: String,
        /// What the reader said.
        message: String,
    },
    /// No `train.parquet`, `shuffle_train.parquet` or `*train-NN-of-MM.parquet` in the folder.
    #[error(
        "{folder}: no training set (train.parquet, shuffle_train.parquet or \
         {{train|shuffle_train}}-NN-of-MM.parquet){skipped}"
    )]
    NoTrainingSet {
        /// The folder.
        folder: String,
        /// The files whose names look like a training set's but are not, with why (empty, or
        /// `; skipped …`).
        skipped: String,
    },
    /// Several training sets (or two files of one index), none chosen.
    #[error("{folder}: several training sets ({sets}); choose one")]
    SeveralTrainingSets {
        /// The folder.
        folder: String,
        /// The sets, comma-separated.
        sets: String,
    },
    /// A file of a split training set is missing.
    #[error("{folder}: the training set lacks {name}")]
    MissingTrainFile {
        /// The folder.
        folder: String,
        /// The missing file's name.
        name: String,
    },
    /// A file numbered past its set's count (`train-10-of-10.parquet`).
    #[error("{folder}: {name} is numbered past the files of its set (numbers start at 00)")]
    StrayTrainFile {
        /// The folder.
        folder: String,
        /// The file's name.
        name: String,
    },
    /// A file the case needs is not in the folder.
    #[error("{folder}: no {name}")]
    MissingFile {
        /// The folder.
        folder: String,
        /// The file's name (or names, for a filter's ground truth).
        name: String,
    },
    /// A column is missing.
    #[error("{file}: no column '{column}' (columns: {columns})")]
    MissingColumn {
        /// The file.
        file: String,
        /// The column looked for.
        column: String,
        /// The file's columns.
        columns: String,
    },
    /// A column has another type than the layout's.
    #[error("{file}: column '{column}' has type {found}; expected {expected}")]
    ColumnType {
        /// The file.
        file: String,
        /// The column.
        column: String,
        /// Its type.
        found: String,
        /// The type of the layout.
        expected: &'static str,
    },
    /// A null where the layout has none.
    #[error("{file}: row {row} has no {column}")]
    NullValue {
        /// The file.
        file: String,
        /// The row (from 0).
        row: u64,
        /// The column.
        column: String,
    },
    /// An id that appears twice.
    #[error("{file}: row {row} repeats id {id}")]
    DuplicateId {
        /// The file.
        file: String,
        /// The row (from 0) of the second appearance.
        row: u64,
        /// The id.
        id: i64,
    },
    /// A query the server cannot answer: a non-finite element, or all zeros for a cosine index.
    #[error("{file}: query {row} {reason}")]
    UnanswerableQuery {
        /// The test file.
        file: String,
        /// The query (row) from 0.
        row: u64,
        /// Why.
        reason: String,
    },
    /// A test file without a query.
    #[error("{file}: no query in it")]
    NoQueries {
        /// The test file.
        file: String,
    },
    /// A ground-truth id outside the training set's ids.
    #[error("{file}: row {row} holds id {id}, outside the training ids {range}")]
    IdOutOfRange {
        /// The file.
        file: String,
        /// The row (query) from 0.
        row: u64,
        /// The id.
        id: i64,
        /// The ids allowed, `start..end`.
        range: String,
    },
    /// A negative ground-truth id (ids are row numbers of the training set, from 0).
    #[error("{file}: row {row} holds a negative id {id} (ids are training row numbers, from 0)")]
    NegativeId {
        /// The file.
        file: String,
        /// The row (query) from 0.
        row: u64,
        /// The id.
        id: i64,
    },
    /// Ground-truth lists without ids.
    #[error("{file}: the neighbour lists are empty")]
    EmptyLists {
        /// The file.
        file: String,
    },
    /// Queries of another dimension than the training rows'.
    #[error("{test}: queries of {test_dimension} dimensions, the training set {train} has {train_dimension}")]
    Dimensions {
        /// The training set (a folder or a file).
        train: String,
        /// Its dimension.
        train_dimension: usize,
        /// The test file.
        test: String,
        /// Its dimension.
        test_dimension: usize,
    },
    /// A path that is neither a dataset folder nor an HDF5 file.
    #[error("{path}: not a dataset folder or an ann-benchmarks HDF5 file (.hdf5, .h5)")]
    NotADataset {
        /// The path.
        path: String,
    },
    /// A dataset's distance that no Cassandra similarity function measures.
    #[error(
        "{file}: its distance '{distance}' has no similarity function in Cassandra's vector \
         index (cosine, euclidean, dot_product)"
    )]
    UnsupportedDistance {
        /// The file.
        file: String,
        /// The distance it declares.
        distance: String,
    },
    /// A similarity function asked for that is not the one the dataset's ground truth was made
    /// with.
    #[error(
        "{file}: its ground truth is by {distance} distance (the similarity function \
         {similarity}), not {asked}"
    )]
    SimilarityConflict {
        /// The file.
        file: String,
        /// The distance it declares.
        distance: String,
        /// The similarity function that distance is.
        similarity: &'static str,
        /// The one asked for.
        asked: String,
    },
    /// Ground truth for another number of queries.
    #[error("{file}: {lists} neighbour lists for {queries} queries")]
    QueryCount {
        /// The file.
        file: String,
        /// Lists in the file.
        lists: usize,
        /// Queries.
        queries: usize,
    },
}

impl DatasetError {
    /// Whether the error is in what was asked for (a path that is no dataset, a similarity
    /// function that cannot be, or is not, the dataset's) rather than in a file's data.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DatasetError::NotADataset { .. }
                | DatasetError::UnsupportedDistance { .. }
                | DatasetError::SimilarityConflict { .. }
        )
    }
}

/// The message on one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
