//! Embeddings to CQL `vector<…>` values, streaming: readers, the conversion kernel, writers, and the
//! pipeline that joins them.
//!
//! - [`input`]: the embedding readers (npy, Parquet, Arrow, ANN formats);
//! - [`columns`]: the input's other columns as CQL values (ids, labels, timestamps);
//! - [`kernel`]: the vector conversion kernel;
//! - [`output`]: the writers of converted values;
//! - [`convert`]: the pipeline joining readers, kernel and writers.

#![warn(missing_docs)]
pub mod columns;
pub mod convert;
pub mod input;
pub mod kernel;
pub mod output;

use cqlwire_codec::{hex, types, vint};
