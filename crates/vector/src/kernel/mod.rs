//! The conversion kernel: rows of numeric embeddings (a [`Batch`] from [`crate::input`]) to the bytes
//! of CQL `vector<T, N>` values.
//!
//! Element types whose encoded elements all have one size are written by a bulk byte-order
//! conversion into one preallocated buffer: a loop over `chunks_exact_mut` that the compiler
//! vectorises, compiled twice — once for the baseline x86-64 target and once with AVX2 (`vpshufb`),
//! chosen at run time — so a portable binary runs at memory speed. Casts that can lose information
//! (a double beyond the float range, a 64-bit integer beyond `int`, a float with a fraction for an
//! integer type, an integer that a float cannot hold exactly) are checked first and reported with the
//! row and element; NaN and infinities pass through to floating targets.
//!
//! These are the fixed-size types (float, double, int, bigint, timestamp, boolean) and the
//! vint-prefixed types of fixed payload width (tinyint, smallint, date, time), whose vint length is
//! one constant byte, so each element is that byte then the value's big-endian bytes. Records of 3, 5
//! and 9 bytes (smallint, date, time) from 1- and 2-byte integers (and 4-byte ones to date and time)
//! are built 16 at a time by SSSE3 byte shuffles whose masks are computed at compile time
//! (`x86::record_layout`).
//!
//! The genuinely variable elements (varint, decimal, text, ascii) are formatted straight into the
//! output: an unsigned vint length then the value's bytes, no allocation per element for values
//! that fit in an i64; the common elements by the loops of the `variable` module, with fixed-size
//! stores into room kept ahead of the output, the rest by `variable::write_variable`. Parallel tasks
//! write into buffers kept for the next batch.
//!
//! Where things are: this file holds [`VectorEncoder`], the entry points; `target` maps the element
//! type to how it is written; `fixed` holds the checked casts of each input and fixed-size target,
//! `byte_order` the loops that write them (and `x86` their AVX2 and SSSE3 builds); `variable` the
//! variable-size loops and their general one-element path; `handoff` the rows a producing thread
//! hands to encoding threads; `error`, `number` and `float_text` the messages and the text of
//! numbers; `tests.rs` the unit tests of all of them.

mod byte_order;
mod encoded;
mod error;
mod fixed;
mod float_text;
mod handoff;
mod number;
mod rows;
mod target;
mod variable;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use encoded::{EncodedBatch, Layout};
pub use error::VectorError;
pub use rows::Rows;
pub use target::{default_element, NUMBER_ELEMENTS};

use crate::input::Batch;
use crate::types::{CqlType, NativeType};
use byte_order::StoreMode;
use error::{fixed_problem, unsupported_element};
use fixed::convert_fixed;
use handoff::RowHandOff;
use number::Number;
use rayon::prelude::*;
use target::{FixedTarget, Target};
use variable::write_variable;

/// Rows per parallel task of fixed-size values of `value_size` bytes: about 256 KiB of output, at
/// least one row.
fn task_rows(value_size: usize) -> usize {
    ((256 << 10) / value_size.max(1)).max(1)
}

/// Fixed-size batches with less output than this are converted on the calling thread: one core
/// converts at memory bandwidth (about 20 GB/s), ten times the rate at which files are read and
/// written, and waking the pool for a few milliseconds of work costs more than it saves (measured
/// end to end: futex and sched_yield calls of idle workers competing with the reader and writer).
const PARALLEL_FIXED_BYTES: usize = 16 << 20;

/// Elements encoded per parallel task for variable-size element types (about a millisecond of work).
const VARIABLE_TASK_ELEMENTS: usize = 16 << 10;

/// Converts rows of numbers to the bytes of one `vector<T, N>` type.
#[derive(Debug, Clone)]
pub struct VectorEncoder {
    /// The element type `T`.
    element: CqlType,
    /// The dimension `N`.
    dimension: usize,
    /// How elements are written.
    target: Target,
    /// Output buffers of the parallel variable-size tasks, kept for the next batch.
    spare_buffers: SpareTaskBuffers,
}

/// Output buffers (bytes, row ends) of finished parallel tasks, reused by the next batch's tasks so
/// that their memory is not allocated, faulted in and returned to the system for every batch. A
/// clone starts with none.
#[derive(Debug, Default)]
struct SpareTaskBuffers(std::sync::Mutex<Vec<(Vec<u8>, Vec<usize>)>>);

impl Clone for SpareTaskBuffers {
    fn clone(&self) -> Self {
        SpareTaskBuffers::default()
    }
}

impl SpareTaskBuffers {
    /// A kept pair of buffers, emptied, or new ones.
    fn take(&self) -> (Vec<u8>, Vec<usize>) {
        let kept = self.0.lock().ok().and_then(|mut parts| parts.pop());
        let (mut bytes, mut ends) = kept.unwrap_or_default();
        bytes.clear();
        ends.clear();
        (bytes, ends)
    }

    /// Keeps `parts` for [`SpareTaskBuffers::take`].
    fn keep(&self, parts: Vec<(Vec<u8>, Vec<usize>)>) {
        if let Ok(mut kept) = self.0.lock() {
            kept.extend(parts);
        }
    }
}

impl VectorEncoder {
    /// An encoder for `ty`, which must be a vector type whose element type can be made from numbers.
    pub fn new(ty: &CqlType) -> Result<Self, VectorError> {
        let CqlType::Vector(element, dimension) = ty else {
            return Err(VectorError::Unsupported(format!(
                "the target type must be a vector type such as vector<float, 768>, not {ty}"
            )));
        };
        if *dimension == 0 {
            return Err(VectorError::Unsupported(format!(
                "{ty} has no elements: a vector's dimension is at least 1"
            )));
        }
        let target = match element.as_ref() {
            CqlType::Native(native) => Target::of(*native),
            _ => None,
        };
        let Some(target) = target else {
            return Err(unsupported_element(ty));
        };
        Ok(VectorEncoder {
            element: element.as_ref().clone(),
            dimension: *dimension,
            target,
            spare_buffers: SpareTaskBuffers::default(),
        })
    }

    /// The vector's dimension.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// The size of every value in bytes when all values have one size (fixed-size element types
    /// and tinyint, smallint, date, time, whose vint prefixes are constant).
    pub fn value_size(&self) -> Option<usize> {
        match self.target {
            Target::Fixed(fixed) => fixed.size().checked_mul(self.dimension),
            Target::Variable(_) => None,
        }
    }

    /// The size in bytes of one encoded element (with its vint prefix, if any) when all elements
    /// have one size.
    pub fn element_size(&self) -> Option<usize> {
        match self.target {
            Target::Fixed(fixed) => Some(fixed.size()),
            Target::Variable(_) => None,
        }
    }

    /// The element type.
    pub(crate) fn element(&self) -> &CqlType {
        &self.element
    }

    /// Whether a batch of `rows` rows is worth splitting across a thread pool: fixed-size batches of
    /// at least [`PARALLEL_FIXED_BYTES`], variable-size batches of more than one task's elements.
    /// Callers that install a pool for [`VectorEncoder::encode_batch`] only need to when this holds;
    /// otherwise the batch is encoded on the calling thread anyway, and handing it to a pool worker
    /// only costs a wake-up.
    pub(crate) fn worth_splitting(&self, rows: usize) -> bool {
        match self.value_size() {
            Some(size) => rows.saturating_mul(size) >= PARALLEL_FIXED_BYTES,
            None => rows.saturating_mul(self.dimension) > VARIABLE_TASK_ELEMENTS,
        }
    }

    /// Encodes a whole batch, using the current rayon thread pool when it is worth splitting, into
    /// `buffer` (whose allocation is reused and whose content is replaced; when it already has the
    /// right length for fixed-size values it is overwritten without being cleared first). Null rows
    /// are encoded as zero vectors. The batch's validity and columns move into the result; its
    /// elements stay, so their memory can go back to the reader
    /// ([`crate::input::BatchReader::recycle`]).
    pub fn encode_batch(
        &self,
        batch: &mut Batch,
        mut buffer: Vec<u8>,
    ) -> Result<EncodedBatch, VectorError> {
        let rows = Rows::from(&batch.elements);
        self.check_row_count(rows, batch.first_row, batch.rows)?;
        let layout = match self.value_size() {
            Some(size) => {
                buffer.resize(batch.rows.saturating_mul(size), 0);
                self.encode_fixed_into(rows, batch.first_row, &mut buffer)?;
                Layout::Fixed(size)
            }
            None => Layout::Variable({
                buffer.clear();
                self.encode_variable_parallel(rows, batch.first_row, &mut buffer)?
            }),
        };
        Ok(EncodedBatch {
            first_row: batch.first_row,
            rows: batch.rows,
            bytes: buffer,
            layout,
            validity: batch.validity.take(),
            columns: batch.columns.take(),
        })
    }

    /// Encodes `rows` (row-major, `dimension` elements each; `first_row` is the absolute index of
    /// the first, for error messages) on the calling thread, appending the values to `out`.
    pub fn encode_rows(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), VectorError> {
        if self.dimension == 0 || !rows.len().is_multiple_of(self.dimension) {
            return Err(VectorError::Shape {
                first_row,
                elements: rows.len(),
                rows: rows.len() / self.dimension.max(1),
                dimension: self.dimension,
            });
        }
        match self.target {
            Target::Fixed(fixed) => {
                let start = out.len();
                let bytes = rows.len().saturating_mul(fixed.size());
                out.resize(start.saturating_add(bytes), 0);
                let dst = out.get_mut(start..).unwrap_or(&mut []);
                self.encode_fixed(rows, first_row, fixed, &mut [dst], StoreMode::Cached)
            }
            Target::Variable(native) => {
                let mut ends = Vec::new();
                self.encode_variable(rows, first_row, native, out, &mut ends)
            }
        }
    }

    /// Encodes `rows` of an element type of one encoded size (see [`VectorEncoder::element_size`])
    /// into `dst`, which must be exactly `rows.len()` × the element size (the values concatenated,
    /// with no allocation), split across the current rayon pool when
    /// `VectorEncoder::worth_splitting` says so (when several rows fail, which one is reported is
    /// then unspecified).
    pub fn encode_fixed_into(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        dst: &mut [u8],
    ) -> Result<(), VectorError> {
        let fixed = self.fixed_target()?;
        if self.dimension == 0
            || !rows.len().is_multiple_of(self.dimension)
            || rows.len().checked_mul(fixed.size()) != Some(dst.len())
        {
            return Err(VectorError::Shape {
                first_row,
                elements: rows.len(),
                rows: dst.len() / self.value_size().unwrap_or(1).max(1),
                dimension: self.dimension,
            });
        }
        let value_size = fixed.size() * self.dimension;
        let row_count = rows.len() / self.dimension;
        let stores = StoreMode::for_output(dst.len());
        if !self.worth_splitting(row_count) {
            return self.encode_fixed(rows, first_row, fixed, &mut [dst], stores);
        }
        let task_rows = task_rows(value_size);
        dst.par_chunks_mut(task_rows * value_size)
            .enumerate()
            .try_for_each(|(task, dst)| {
                let start_row = task * task_rows;
                let part = rows.slice(
                    start_row * self.dimension,
                    (start_row + task_rows) * self.dimension,
                );
                self.encode_fixed(
                    part,
                    first_row.saturating_add(start_row as u64),
                    fixed,
                    &mut [dst],
                    stores,
                )
            })
    }

    /// A shape error unless `rows` holds exactly `count` rows of this encoder's dimension.
    fn check_row_count(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        count: usize,
    ) -> Result<(), VectorError> {
        if count.checked_mul(self.dimension) == Some(rows.len()) {
            return Ok(());
        }
        Err(VectorError::Shape {
            first_row,
            elements: rows.len(),
            rows: count,
            dimension: self.dimension,
        })
    }

    /// The fixed-size target, or the error for an element type whose values vary in size.
    fn fixed_target(&self) -> Result<FixedTarget, VectorError> {
        match self.target {
            Target::Fixed(fixed) => Ok(fixed),
            Target::Variable(_) => Err(VectorError::Unsupported(format!(
                "{} elements do not all have one size",
                self.element
            ))),
        }
    }

    /// Encodes rows `start..start + values.len()` of `rows` (whose first row is number
    /// `first_row`) into `values`, one row each, all on this thread, with `stores`.
    fn encode_fixed_rows(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        start: usize,
        values: &mut [&mut [u8]],
        stores: StoreMode,
    ) -> Result<(), VectorError> {
        let first_row = first_row.saturating_add(start as u64);
        let fixed = self.fixed_target()?;
        let value_size = fixed.size() * self.dimension;
        if let Some(wrong) = values.iter().position(|value| value.len() != value_size) {
            return Err(VectorError::Shape {
                first_row: first_row.saturating_add(wrong as u64),
                elements: self.dimension,
                rows: values[wrong].len() / value_size.max(1),
                dimension: self.dimension,
            });
        }
        let elements = rows.slice(
            start * self.dimension,
            (start + values.len()) * self.dimension,
        );
        self.encode_fixed(elements, first_row, fixed, values, stores)
    }

    /// Encodes row `i` of `rows` into `values[i]` (each exactly the value size: one destination per
    /// row, e.g. the buffers of separate objects), splitting the rows across the current rayon pool
    /// when `VectorEncoder::worth_splitting` says so. `first_row` is the absolute index of the
    /// first row, for error messages; when several rows fail, which one is reported is unspecified.
    pub fn encode_fixed_values(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        values: &mut [&mut [u8]],
    ) -> Result<(), VectorError> {
        self.check_row_count(rows, first_row, values.len())?;
        let stores = StoreMode::for_output(values.iter().map(|value| value.len()).sum());
        let encode = |start: usize, part: &mut [&mut [u8]]| {
            self.encode_fixed_rows(rows, first_row, start, part, stores)
        };
        if !self.worth_splitting(values.len()) {
            return encode(0, values);
        }
        let task_rows = task_rows(self.value_size().unwrap_or(1));
        values
            .par_chunks_mut(task_rows)
            .enumerate()
            .try_for_each(|(task, part)| encode(task * task_rows, part))
    }

    /// [`VectorEncoder::encode_fixed_values`] for `count` rows whose destinations do not exist yet:
    /// `produce(i)` makes row `i`'s (called on this thread, in row order, e.g. allocating an object
    /// that must be allocated here), and, when `VectorEncoder::worth_splitting` says so, the rows
    /// are encoded on the rayon pool as soon as their destinations exist, so that producing them and
    /// encoding overlap. When every destination is made, `finish` is given the encoding left to do
    /// (all of it for a small `count`), to run on this thread however the caller wants (e.g. after
    /// giving up a lock other threads wait for). The first error of `produce` stops it and is
    /// returned as `Err(Ok(e))`; an encoding error (which row's is unspecified, as with several
    /// threads) stops the production and is returned as `Err(Err(e))`; a panic of `produce` stops
    /// the encoding threads and goes on once they have.
    pub fn encode_fixed_values_produced<'d, E>(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        count: usize,
        mut produce: impl FnMut(usize) -> Result<&'d mut [u8], E>,
        finish: impl FnOnce(&(dyn Fn() + Sync)),
    ) -> Result<(), Result<E, VectorError>> {
        self.check_row_count(rows, first_row, count).map_err(Err)?;
        let stores = StoreMode::for_output(count.saturating_mul(self.value_size().unwrap_or(0)));
        let shared = RowHandOff::new(count);
        let encode = || {
            shared.encode_claimed_rows(|start, values| {
                self.encode_fixed_rows(rows, first_row, start, values, stores)
            })
        };
        let mut failed = None;
        rayon::in_place_scope(|scope| {
            // This thread produces; the pool's other threads encode meanwhile.
            let _stop_on_unwind = shared.stop_on_unwind();
            if self.worth_splitting(count) {
                for _ in 1..rayon::current_num_threads() {
                    scope.spawn(|_| encode());
                }
            }
            for row in 0..count {
                if shared.is_stopped() {
                    break;
                }
                match produce(row) {
                    Ok(dst) => shared.publish(row, dst),
                    Err(error) => {
                        failed = Some(error);
                        shared.stop();
                        break;
                    }
                }
            }
            if failed.is_none() {
                finish(&encode);
            }
        });
        if let Some(error) = failed {
            return Err(Ok(error));
        }
        match shared.into_error() {
            Some(error) => Err(Err(error)),
            None => Ok(()),
        }
    }

    /// Fixed-size encoding of `rows` into the destinations `dst`, filled in order (together exactly
    /// `rows.len() × size` bytes), with `stores`.
    fn encode_fixed(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        fixed: FixedTarget,
        dst: &mut [&mut [u8]],
        stores: StoreMode,
    ) -> Result<(), VectorError> {
        convert_fixed(rows, fixed, dst, stores)
            .map_err(|index| self.cast_error(rows, first_row, index))
    }

    /// Variable-size encoding of `rows` into `out`, split across the thread pool; returns the row ends.
    fn encode_variable_parallel(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        out: &mut Vec<u8>,
    ) -> Result<Vec<usize>, VectorError> {
        let Target::Variable(native) = self.target else {
            return Ok(Vec::new());
        };
        let dimension = self.dimension.max(1);
        let row_count = rows.len() / dimension;
        let task_rows = (VARIABLE_TASK_ELEMENTS / dimension).max(1);
        if !self.worth_splitting(row_count) {
            let mut ends = Vec::with_capacity(row_count);
            self.encode_variable(rows, first_row, native, out, &mut ends)?;
            return Ok(ends);
        }
        let tasks = row_count.div_ceil(task_rows);
        let parts: Vec<(Vec<u8>, Vec<usize>)> = (0..tasks)
            .into_par_iter()
            .map(|task| {
                let start_row = task * task_rows;
                let part = rows.slice(start_row * dimension, (start_row + task_rows) * dimension);
                let (mut bytes, mut ends) = self.spare_buffers.take();
                self.encode_variable(
                    part,
                    first_row.saturating_add(start_row as u64),
                    native,
                    &mut bytes,
                    &mut ends,
                )?;
                Ok((bytes, ends))
            })
            .collect::<Result<_, VectorError>>()?;
        let mut all_ends = Vec::with_capacity(row_count);
        out.reserve(parts.iter().map(|(bytes, _)| bytes.len()).sum());
        for (bytes, ends) in &parts {
            let base = out.len();
            all_ends.extend(ends.iter().map(|end| end + base));
            out.extend_from_slice(bytes);
        }
        self.spare_buffers.keep(parts);
        Ok(all_ends)
    }

    /// Variable-size encoding of `rows` appended to `out`, pushing each row's end offset to `ends`.
    fn encode_variable(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        native: NativeType,
        out: &mut Vec<u8>,
        ends: &mut Vec<usize>,
    ) -> Result<(), VectorError> {
        variable::encode_rows(rows, self.dimension, native, out, ends).map_err(|index| {
            let number = rows.number(index).unwrap_or(Number::Int(0));
            let problem = write_variable(number, native, &mut Vec::new(), &mut Vec::new())
                .err()
                .unwrap_or_default();
            self.error_at(first_row, index, number, problem)
        })
    }

    /// The error for element `index` of `rows`, which failed a fixed-size cast.
    fn cast_error(&self, rows: Rows<'_>, first_row: u64, index: usize) -> VectorError {
        let Target::Fixed(fixed) = self.target else {
            return VectorError::Unsupported("not a fixed-size target".into());
        };
        let number = rows.number(index).unwrap_or(Number::Int(0));
        self.error_at(first_row, index, number, fixed_problem(number, fixed))
    }

    /// The error for element `index` (counted from `first_row`'s first element).
    fn error_at(
        &self,
        first_row: u64,
        index: usize,
        number: Number,
        problem: impl Into<String>,
    ) -> VectorError {
        let dimension = self.dimension.max(1);
        VectorError::Cast {
            value: number.quoted(),
            problem: problem.into(),
            row: first_row.saturating_add((index / dimension) as u64),
            element: index % dimension,
        }
    }
}

#[cfg(test)]
mod tests;
