//! Various utilities.
// TODO(2.0): Deconstruct this module by extracting submodules to the top level.

pub mod parse;
