//! Progress bars on standard error: shown only when it is a terminal and `--quiet` is not given.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// What a progress bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Input bytes, shown as KiB/MiB/GiB and a byte rate.
    Bytes,
    /// Rows, with the caller's message (e.g. the megabytes written) beside them.
    Rows,
    /// Queries, with the caller's message (e.g. the errors) beside them.
    Queries,
    /// Nothing counted: the caller's message and the time spent (a wait).
    Waiting,
}

/// A progress bar towards `len` (a spinner when the total is unknown), or a hidden one when
/// standard error is not a terminal or `quiet` is set.
pub fn bar(len: Option<u64>, unit: Unit, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let template = match (unit, len.is_some()) {
        (Unit::Bytes, true) => {
            "{bar:30} {binary_bytes}/{binary_total_bytes}  {binary_bytes_per_sec}  ETA {eta}"
        }
        (Unit::Bytes, false) => "{spinner} {binary_bytes}  {binary_bytes_per_sec}",
        (Unit::Rows, true) => "{bar:30} {human_pos}/{human_len} rows  {msg}  ETA {eta}",
        (Unit::Rows, false) => "{spinner} {human_pos} rows  {msg}",
        (Unit::Queries, true) => "{bar:30} {human_pos}/{human_len} queries  {msg}  ETA {eta}",
        (Unit::Queries, false) => "{spinner} {human_pos} queries  {msg}",
        (Unit::Waiting, _) => "{spinner} {msg}  {elapsed}",
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}
