//! The CQL value codec: the bytes of one value of any CQL type, and its text forms.
//!
//! - [`types`]: the CQL type grammar (CQL syntax and Java class names);
//! - [`value`]: values between wire bytes and CQL literals, lossless JSON or an annotated explanation;
//! - [`vint`]: Cassandra's variable-length integers;
//! - [`cursor`]: the bounds-checked reader shared by the decoders;
//! - [`hex`]: hex text as people paste it.
//!
//! ```
//! use cqlwire_codec::types::{parse_type, UdtRegistry};
//! use cqlwire_codec::value::{self, cql::format_cql};
//!
//! let ty = parse_type("list<int>", &UdtRegistry::default()).unwrap();
//! let bytes = cqlwire_codec::hex::parse("0x00000001 00000004 0000002a").unwrap();
//! let decoded = value::decode(&ty, &bytes).unwrap();
//! assert_eq!(format_cql(&ty, &decoded), "[42]");
//! ```

pub mod cursor;
pub mod hex;
mod lexer;
pub mod types;
pub mod value;
pub mod vint;
