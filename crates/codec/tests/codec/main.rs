//! The codec's tests in one binary: every value against the Python driver's bytes (driver_golden,
//! vint_driver), malformed bytes refused as the fixtures say (malformed), and property tests of the
//! wire bytes (roundtrip) and of the CQL and JSON forms (text_formats) on random types and values.

mod driver_golden;
mod malformed;
mod refused;
mod roundtrip;
mod text_formats;
mod values;
mod vint_driver;
