//! The hand-off of rows from a producing thread to encoding threads
//! ([`super::VectorEncoder::encode_fixed_values_produced`]): destinations are published as they are
//! made, and encoding threads claim them in runs of [`HAND_OFF_ROWS`].

use super::VectorError;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Rows whose destinations [`super::VectorEncoder::encode_fixed_values_produced`] publishes at once, and
/// that one claim of an encoding thread takes.
pub(super) const HAND_OFF_ROWS: usize = 64;

/// The state shared by the producing thread and the encoding threads of
/// [`super::VectorEncoder::encode_fixed_values_produced`].
pub(super) struct RowHandOff<'d> {
    /// Address of each row's destination, valid for rows below `made`.
    destinations: Vec<AtomicUsize>,
    /// Length of each row's destination, valid for rows below `made`.
    lengths: Vec<AtomicUsize>,
    /// Rows whose destinations exist (published with release ordering).
    made: AtomicUsize,
    /// Rows handed to an encoding thread so far (may run past the count).
    claimed: AtomicUsize,
    /// Set by the first failure: production and encoding stop.
    stop: AtomicBool,
    /// The first encoding error.
    error: Mutex<Option<VectorError>>,
    /// The destinations are exclusive borrows for `'d`, lent to the encoding threads.
    lent: PhantomData<&'d mut [u8]>,
}

/// Sets its flag when dropped by a panic: the producer of
/// [`super::VectorEncoder::encode_fixed_values_produced`] holds one, so that no encoding thread waits for
/// rows a panicking producer will never make (the scope waits for those threads before it lets the
/// panic go on).
pub(super) struct StopOnUnwind<'a>(&'a AtomicBool);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

impl<'d> RowHandOff<'d> {
    /// The hand-off of `count` rows, none made yet.
    pub(super) fn new(count: usize) -> Self {
        RowHandOff {
            destinations: (0..count).map(|_| AtomicUsize::new(0)).collect(),
            lengths: (0..count).map(|_| AtomicUsize::new(0)).collect(),
            made: AtomicUsize::new(0),
            claimed: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            lent: PhantomData,
        }
    }

    /// Lends row `row`'s destination (borrowed for `'d`, longer than this hand-off lives) to the
    /// encoding threads; rows are published in order, [`HAND_OFF_ROWS`] at a time and at the last
    /// row.
    pub(super) fn publish(&self, row: usize, destination: &'d mut [u8]) {
        let count = self.destinations.len();
        let (Some(address), Some(length)) = (self.destinations.get(row), self.lengths.get(row))
        else {
            return;
        };
        address.store(destination.as_mut_ptr() as usize, Ordering::Relaxed);
        length.store(destination.len(), Ordering::Relaxed);
        if (row + 1).is_multiple_of(HAND_OFF_ROWS) || row + 1 == count {
            self.made.store(row + 1, Ordering::Release);
        }
    }

    /// Whether something failed, so that production and encoding stop.
    pub(super) fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Stops production and encoding.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// A guard that stops production and encoding if the producer panics.
    pub(super) fn stop_on_unwind(&self) -> StopOnUnwind<'_> {
        StopOnUnwind(&self.stop)
    }

    /// The first encoding error, if any.
    pub(super) fn into_error(self) -> Option<VectorError> {
        self.error.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims `HAND_OFF_ROWS` rows at a time, waits until their destinations exist, and encodes
    /// them with `encode(first row, destinations)`, until every row is claimed or something failed.
    pub(super) fn encode_claimed_rows(
        &self,
        encode: impl Fn(usize, &mut [&mut [u8]]) -> Result<(), VectorError>,
    ) {
        let count = self.destinations.len();
        let mut values = Vec::with_capacity(HAND_OFF_ROWS);
        loop {
            let start = self.claimed.fetch_add(HAND_OFF_ROWS, Ordering::Relaxed);
            if start >= count {
                return;
            }
            let end = (start + HAND_OFF_ROWS).min(count);
            let mut spins = 0u32;
            while self.made.load(Ordering::Acquire) < end {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                // A short wait spins; a long one (a slow producer) gives the core away.
                spins += 1;
                if spins < 128 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            values.clear();
            values.extend((start..end).map(|row| {
                let address = self.destinations[row].load(Ordering::Relaxed) as *mut u8;
                let len = self.lengths[row].load(Ordering::Relaxed);
                // SAFETY: row `row` is below `made`, so its destination was stored (by `publish`)
                // before `made` was released, and this load acquired it; `publish` took it as an
                // exclusive borrow for `'d`, which outlives `self`, so it is valid and nothing
                // else uses it; and this thread alone claimed the row (`claimed` hands each run
                // out once), so no other slice of it exists.
                unsafe { std::slice::from_raw_parts_mut(address, len) }
            }));
            if let Err(error) = encode(start, &mut values) {
                self.stop.store(true, Ordering::Relaxed);
                let mut first = self.error.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(error);
                return;
            }
        }
    }
}
