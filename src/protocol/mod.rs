//! The CQL native protocol, v3 to v5: frame headers and frame streams ([`frame`]).

pub mod frame;
