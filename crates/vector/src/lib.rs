//! File formats both ways. Embeddings to CQL `vector<…>` values, streaming: readers, the conversion
//! kernel, writers, and the pipeline that joins them; and CQL values back into Arrow arrays and the
//! files an unload writes.
//!
//! - [`input`]: the embedding readers (npy, Parquet, Arrow, ANN formats);
//! - [`columns`]: the input's other columns as CQL values (ids, labels, timestamps), and
//!   [`arrays`] the other way: CQL value bytes into Arrow arrays (what `unload` writes);
//! - [`kernel`]: the vector conversion kernel;
//! - [`output`]: the writers of converted values;
//! - [`convert`]: the pipeline joining readers, kernel and writers (a file in, a file or any
//!   `Write` out; see its example).
//!
//! # Example
//!
//! Rows of numbers to `vector<float, 2>` values (each the elements' big-endian IEEE 754 bytes),
//! and a cast that would lose information refused with its row and element:
//!
//! ```
//! use cqlwire_codec::types::{parse_type, UdtRegistry};
//! use cqlwire_vector::kernel::{Rows, VectorEncoder, VectorError};
//!
//! let ty = parse_type("vector<float, 2>", &UdtRegistry::new())?;
//! let encoder = VectorEncoder::new(&ty)?;
//! assert_eq!(encoder.value_size(), Some(8));
//!
//! // Two rows, numbered from 100 in the input.
//! let mut values = Vec::new();
//! encoder.encode_rows(Rows::F32(&[1.0, -2.0, 0.5, 3.0]), 100, &mut values)?;
//! assert_eq!(values[..8], [0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0]);
//! assert_eq!(values.len(), 16);
//!
//! // 1e300 is no float: the error names the row and the element.
//! let error = encoder.encode_rows(Rows::F64(&[0.0, 0.0, 1.0, 1e300]), 100, &mut Vec::new());
//! let Err(error @ VectorError::Cast { row: 101, element: 1, .. }) = error else {
//!     panic!("{error:?}");
//! };
//! assert_eq!(error.to_string(), "value 1e300 is out of range for float at row 101 (element 1)");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod arrays;
pub mod columns;
pub mod convert;
pub mod input;
pub mod kernel;
pub mod output;
mod registry;

use cqlwire_codec::{hex, types, vint};
