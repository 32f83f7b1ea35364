//! What is shown of the data a capture carries, in one place: the [`ValueForm`] every value,
//! token and text is written in (`secrets.rs`: plain, masked, redacted, as the protocol's `Mask`
//! too), row and bound values redacted (`values.rs`), query text redacted through a CQL lexer
//! (`cql_lexer.rs`), server text redacted but for the words of `server_words.rs`, and the keyed
//! hash whose tags stand for what is removed ([`KeyedHash`], `keyed_hash.rs`).

pub(crate) mod cql_lexer;
mod keyed_hash;
pub(crate) mod secrets;
mod server_words;
pub(crate) mod values;

pub use keyed_hash::{KeyError, KeyedHash, MAX_KEY_BYTES, MIN_KEY_BYTES, TAG_HEX_DIGITS};
pub use secrets::ValueForm;
