//! The inspector library's tests in one binary: the capture layer and TCP reassembly against real
//! and generated captures (capture), and message bodies against the Python driver and two real
//! Cassandra sessions (messages).

mod capture;
mod messages;
