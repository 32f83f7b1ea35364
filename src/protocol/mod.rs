//! The CQL native protocol (v3, v4, v5) above the value codec: message bodies ([`message`]).

pub mod message;
