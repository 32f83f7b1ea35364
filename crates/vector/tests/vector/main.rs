//! The vector library's tests in one binary: the input readers against the convert fixtures
//! (input_readers) and the conversion kernel against the Python driver (vector_driver).

mod input_readers;
mod vector_driver;
