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
//! ([`record_layout`]).
//!
//! The genuinely variable elements (varint, decimal, text, ascii) are formatted straight into the
//! output: an unsigned vint length then the value's bytes, no allocation per element for values
//! that fit in an i64; the common elements by the loops of the `variable` module, with fixed-size
//! stores into room kept ahead of the output, the rest by [`write_variable`]. Parallel tasks write
//! into buffers kept for the next batch.

use crate::input::{Batch, ElementType, Elements};
use crate::types::{CqlType, NativeType};
use half::f16;
use rayon::prelude::*;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

mod variable;
use variable::Source;

/// Rows per parallel task of fixed-size values of `value_size` bytes: about 256 KiB of output, at
/// least one row.
fn task_rows(value_size: usize) -> usize {
    ((256 << 10) / value_size.max(1)).max(1)
}

/// Rows whose destinations [`VectorEncoder::encode_fixed_values_produced`] publishes at once, and
/// that one claim of an encoding thread takes.
const PRODUCED_ROWS: usize = 64;

/// The state shared by the producing thread and the encoding threads of
/// [`VectorEncoder::encode_fixed_values_produced`].
struct Produced {
    /// Address and length of each row's destination, valid for rows below `made`.
    destinations: Vec<AtomicUsize>,
    lengths: Vec<AtomicUsize>,
    /// Rows whose destinations exist (published with release ordering).
    made: AtomicUsize,
    /// Rows handed to an encoding thread so far (may run past the count).
    claimed: AtomicUsize,
    /// Set by the first failure: production and encoding stop.
    stop: AtomicBool,
    error: Mutex<Option<VectorError>>,
}

/// Sets its flag when dropped by a panic: the producer of
/// [`VectorEncoder::encode_fixed_values_produced`] holds one, so that no encoding thread waits for
/// rows a panicking producer will never make (the scope waits for those threads before it lets the
/// panic go on).
struct StopOnUnwind<'a>(&'a AtomicBool);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

impl Produced {
    /// Claims `PRODUCED_ROWS` rows at a time, waits until their destinations exist, and encodes
    /// them with `encode(first row, destinations)`, until every row is claimed or something failed.
    fn encode(&self, encode: impl Fn(usize, &mut [&mut [u8]]) -> Result<(), VectorError>) {
        let count = self.destinations.len();
        let mut values = Vec::with_capacity(PRODUCED_ROWS);
        loop {
            let start = self.claimed.fetch_add(PRODUCED_ROWS, Ordering::Relaxed);
            if start >= count {
                return;
            }
            let end = (start + PRODUCED_ROWS).min(count);
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
                // SAFETY: row `row` is below `made`, so its destination was stored before `made`
                // was released; the producer lent it to this function for as long as it runs, and
                // this thread alone claimed the row.
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

/// Elements converted per check-then-convert block (fits in L1 with its output).
const BLOCK_ELEMENTS: usize = 4096;

/// 2^63: one past `i64::MAX`, exactly representable as a float (so `-2^63..2^63` is i64's range).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808u64 as f64;

/// Fixed-size batches with less output than this are converted on the calling thread: one core
/// converts at memory bandwidth (about 20 GB/s), ten times the rate at which files are read and
/// written, and waking the pool for a few milliseconds of work costs more than it saves (measured
/// end to end: futex and sched_yield calls of idle workers competing with the reader and writer).
const PARALLEL_FIXED_BYTES: usize = 16 << 20;

/// Outputs of at least this many bytes are written with non-temporal stores where the conversion
/// is a plain byte swap ([`Stores::Streaming`]): half the 32 MiB last-level cache of this project's
/// machine, so that the output and the input it is read from do not stay cached for whoever reads
/// them next anyway, and storing through the cache only adds a read of every destination line
/// (measured on 10,000 × 768 floats into separate rows: 12–14 % less time, 1 and 2 threads).
const STREAMING_BYTES: usize = 16 << 20;

/// How a conversion writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stores {
    /// Through the cache, for output read again soon (e.g. a batch about to be written out).
    Cached,
    /// Byte swaps of same-width values bypass the cache (see [`STREAMING_BYTES`]).
    Streaming,
}

impl Stores {
    /// The stores for an output of `bytes` bytes in all.
    fn for_output(bytes: usize) -> Stores {
        if bytes >= STREAMING_BYTES {
            Stores::Streaming
        } else {
            Stores::Cached
        }
    }
}

/// Elements encoded per parallel task for variable-size element types (about a millisecond of work).
const VARIABLE_TASK_ELEMENTS: usize = 16 << 10;

/// Why a batch could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    /// The target type cannot be produced from numeric embeddings (a usage error).
    #[error("{0}")]
    Unsupported(String),
    /// An element does not convert exactly to the target element type.
    #[error("value {value} {problem} at row {row} (element {element})")]
    Cast {
        /// The element as read from the input.
        value: String,
        /// What is wrong with it, e.g. `is out of range for float`.
        problem: String,
        /// Absolute (0-based) row index in the input.
        row: u64,
        /// 0-based element index in the row.
        element: usize,
    },
    /// The batch does not hold `rows × dimension` elements (a reader bug or a ragged input).
    #[error("batch at row {first_row} holds {elements} elements, not {rows} rows × {dimension}")]
    Shape {
        /// First row of the batch.
        first_row: u64,
        /// Elements in the batch.
        elements: usize,
        /// Rows in the batch.
        rows: usize,
        /// The target dimension.
        dimension: usize,
    },
}

impl VectorError {
    /// The absolute row the error is about, if it is about one.
    pub fn row(&self) -> Option<u64> {
        match self {
            VectorError::Cast { row, .. } => Some(*row),
            VectorError::Shape { first_row, .. } => Some(*first_row),
            VectorError::Unsupported(_) => None,
        }
    }
}

/// A target element type whose encoded elements all have one size (vint prefix included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FixedTarget {
    /// `boolean`: one byte, from the numbers 0 and 1 only.
    Boolean,
    /// `float`: 4 bytes.
    Float,
    /// `double`: 8 bytes.
    Double,
    /// `int`: 4 bytes.
    Int,
    /// `bigint` and `timestamp`: 8 bytes.
    BigInt,
    /// `tinyint`: the vint length `01`, then 1 byte.
    TinyInt,
    /// `smallint`: the vint length `02`, then 2 bytes.
    SmallInt,
    /// `date`: the vint length `04`, then 4 bytes (days, unsigned with 2^31 as the epoch).
    Date,
    /// `time`: the vint length `08`, then 8 bytes (nanoseconds since midnight).
    Time,
}

impl FixedTarget {
    /// Size of one element in bytes.
    fn size(self) -> usize {
        match self {
            FixedTarget::Boolean => 1,
            FixedTarget::TinyInt => 2,
            FixedTarget::SmallInt => 3,
            FixedTarget::Float | FixedTarget::Int => 4,
            FixedTarget::Date => 5,
            FixedTarget::Double | FixedTarget::BigInt => 8,
            FixedTarget::Time => 9,
        }
    }
}

/// How the target element type is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Elements of one size (fixed-size types, or a constant vint prefix and a fixed payload).
    Fixed(FixedTarget),
    /// Variable-size elements: vint length then the value, for this native type.
    Variable(NativeType),
}

/// The byte layout of an encoded batch's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Every row is this many bytes (element types of one encoded size).
    Fixed(usize),
    /// Row `i` ends at byte `ends[i]` (variable-size element types).
    Variable(Vec<usize>),
}

/// The CQL values of a batch's rows, concatenated, with the batch's validity and passed-through
/// columns. Null rows are encoded as zero vectors here; writers decide what to do with them.
#[derive(Debug, Clone)]
pub struct EncodedBatch {
    /// Absolute index of the first row.
    pub first_row: u64,
    /// Number of rows.
    pub rows: usize,
    /// The values, concatenated.
    pub bytes: Vec<u8>,
    /// Where each row's value lies in `bytes`.
    pub layout: Layout,
    /// Per-row validity (false = null row); None when every row is valid.
    pub validity: Option<Vec<bool>>,
    /// The input's other columns for these rows (Parquet and Arrow inputs).
    pub columns: Option<arrow_array::RecordBatch>,
}

impl EncodedBatch {
    /// Where the value of row `index` (relative to the batch) lies in `bytes`.
    fn byte_range(&self, index: usize) -> Option<std::ops::Range<usize>> {
        match &self.layout {
            Layout::Fixed(size) => {
                let start = index.checked_mul(*size)?;
                Some(start..start.checked_add(*size)?)
            }
            Layout::Variable(ends) => {
                let start = match index.checked_sub(1) {
                    None => 0,
                    Some(previous) => *ends.get(previous)?,
                };
                Some(start..*ends.get(index)?)
            }
        }
    }

    /// The value of row `index` (relative to the batch), or an empty slice when out of range.
    pub fn row(&self, index: usize) -> &[u8] {
        self.rows_bytes(index..index.saturating_add(1))
    }

    /// The values of the consecutive rows `rows` (relative to the batch), which are contiguous;
    /// an empty slice when the range is empty or out of range.
    pub fn rows_bytes(&self, rows: std::ops::Range<usize>) -> &[u8] {
        let Some(last) = rows.end.checked_sub(1).filter(|&last| last >= rows.start) else {
            return &[];
        };
        self.byte_range(rows.start)
            .zip(self.byte_range(last))
            .and_then(|(first, last)| self.bytes.get(first.start..last.end))
            .unwrap_or(&[])
    }

    /// Whether row `index` (relative to the batch) is a value rather than null.
    pub fn is_valid(&self, index: usize) -> bool {
        match &self.validity {
            None => true,
            Some(valid) => valid.get(index).copied().unwrap_or(false),
        }
    }
}

/// Row-major elements borrowed from a batch, in native byte order.
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    /// Half-precision floats.
    F16(&'a [f16]),
    /// Single-precision floats.
    F32(&'a [f32]),
    /// Double-precision floats.
    F64(&'a [f64]),
    /// Signed bytes.
    I8(&'a [i8]),
    /// Unsigned bytes.
    U8(&'a [u8]),
    /// 16-bit integers.
    I16(&'a [i16]),
    /// 32-bit integers.
    I32(&'a [i32]),
    /// 64-bit integers.
    I64(&'a [i64]),
}

impl<'a> From<&'a Elements> for Rows<'a> {
    fn from(elements: &'a Elements) -> Self {
        match elements {
            Elements::F16(v) => Rows::F16(v),
            Elements::F32(v) => Rows::F32(v),
            Elements::F64(v) => Rows::F64(v),
            Elements::I8(v) => Rows::I8(v),
            Elements::U8(v) => Rows::U8(v),
            Elements::I16(v) => Rows::I16(v),
            Elements::I32(v) => Rows::I32(v),
            Elements::I64(v) => Rows::I64(v),
        }
    }
}

impl<'a> Rows<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Rows::F16(v) => v.len(),
            Rows::F32(v) => v.len(),
            Rows::F64(v) => v.len(),
            Rows::I8(v) => v.len(),
            Rows::U8(v) => v.len(),
            Rows::I16(v) => v.len(),
            Rows::I32(v) => v.len(),
            Rows::I64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements `start..end` (clamped to the elements held).
    pub fn slice(self, start: usize, end: usize) -> Rows<'a> {
        fn part<T>(v: &[T], start: usize, end: usize) -> &[T] {
            let end = end.min(v.len());
            v.get(start.min(end)..end).unwrap_or(&[])
        }
        match self {
            Rows::F16(v) => Rows::F16(part(v, start, end)),
            Rows::F32(v) => Rows::F32(part(v, start, end)),
            Rows::F64(v) => Rows::F64(part(v, start, end)),
            Rows::I8(v) => Rows::I8(part(v, start, end)),
            Rows::U8(v) => Rows::U8(part(v, start, end)),
            Rows::I16(v) => Rows::I16(part(v, start, end)),
            Rows::I32(v) => Rows::I32(part(v, start, end)),
            Rows::I64(v) => Rows::I64(part(v, start, end)),
        }
    }

    /// The element at `index` as a number, for error messages and variable-size encoding.
    fn number(&self, index: usize) -> Option<Number> {
        Some(match self {
            Rows::F16(v) => v.get(index)?.number(),
            Rows::F32(v) => v.get(index)?.number(),
            Rows::F64(v) => v.get(index)?.number(),
            Rows::I8(v) => v.get(index)?.number(),
            Rows::U8(v) => v.get(index)?.number(),
            Rows::I16(v) => v.get(index)?.number(),
            Rows::I32(v) => v.get(index)?.number(),
            Rows::I64(v) => v.get(index)?.number(),
        })
    }
}

/// One input element, widened without loss.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    /// An integer input element.
    Int(i64),
    /// A half- or single-precision input element (displayed with the digits of an f32).
    Single(f32),
    /// A double-precision input element.
    Float(f64),
}

impl Number {
    /// The floating-point value, or None for an integer.
    fn float(self) -> Option<f64> {
        match self {
            Number::Int(_) => None,
            Number::Single(x) => Some(f64::from(x)),
            Number::Float(x) => Some(x),
        }
    }
}

impl Number {
    /// The number as an error message quotes it: the plain form, or the exponent form when the
    /// plain one runs past 17 characters (1e300 would otherwise print 301 digits).
    fn quoted(self) -> String {
        let plain = self.to_string();
        match self {
            Number::Single(x) if plain.len() > 17 => format!("{x:e}"),
            Number::Float(x) if plain.len() > 17 => format!("{x:e}"),
            _ => plain,
        }
    }
}

impl fmt::Display for Number {
    /// See [`push_number`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::new();
        push_number(*self, &mut text);
        f.write_str(std::str::from_utf8(&text).unwrap_or_default())
    }
}

/// Appends the shortest text that reads back as the same number of the input's type, positional (no
/// exponent, no trailing `.0`), a tie between two shortest texts going to the even last digit:
/// NumPy's `format_float_positional(x, unique=True, trim="-")`. Rust's `{}` is positional too but
/// rounds ties up (`1310867.3` where NumPy writes `1310867.2`) and is several times slower than
/// zmij, which finds the digits here. Non-finite values are written as Rust's `NaN`, `inf`, `-inf`.
fn push_number(number: Number, text: &mut Vec<u8>) {
    let mut buffer = zmij::Buffer::new();
    let printed = match number {
        Number::Int(i) => return text.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        Number::Single(x) => buffer.format(x),
        Number::Float(x) => buffer.format(x),
    };
    // zmij writes non-finite values as Rust does.
    if number.float().is_some_and(f64::is_finite) {
        push_positional(printed, text);
    } else {
        text.extend_from_slice(printed.as_bytes());
    }
}

/// Appends a finite float printed by zmij (`-1.5`, `1e-7`, `1.2345e+20`: shortest digits, an
/// exponent for large and small magnitudes) in positional form: `-1.5`, `0.0000001`,
/// `123450000000000000000`.
fn push_positional(printed: &str, text: &mut Vec<u8>) {
    // Between 1e-5 and 1e16 zmij already writes positional digits, with `.0` after an integer.
    if !printed.contains('e') {
        text.extend_from_slice(printed.strip_suffix(".0").unwrap_or(printed).as_bytes());
        return;
    }
    let (unsigned, negative) = match printed.strip_prefix('-') {
        Some(rest) => (rest, true),
        None => (printed, false),
    };
    let (mantissa, exponent) = match unsigned.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The significant digits without leading and trailing zeros, and where the point goes: the
    // value is 0.DIGITS × 10^point.
    let mut point = i32::try_from(whole.len())
        .unwrap_or(0)
        .saturating_add(exponent);
    let leading = whole
        .bytes()
        .chain(fraction.bytes())
        .take_while(|&d| d == b'0')
        .count();
    point = point.saturating_sub(i32::try_from(leading).unwrap_or(0));
    let significant = whole.bytes().chain(fraction.bytes()).skip(leading);
    let mut digits = [0u8; 32];
    let mut count = 0;
    for (slot, digit) in digits.iter_mut().zip(significant) {
        *slot = digit;
        count += 1;
    }
    while count > 0 && digits.get(count - 1) == Some(&b'0') {
        count -= 1;
    }
    let digits = digits.get(..count).unwrap_or_default();
    if negative {
        text.push(b'-');
    }
    let zeros = |text: &mut Vec<u8>, n: usize| text.extend(std::iter::repeat_n(b'0', n));
    match usize::try_from(point) {
        _ if digits.is_empty() => text.push(b'0'),
        Err(_) | Ok(0) => {
            text.extend_from_slice(b"0.");
            zeros(text, point.unsigned_abs() as usize);
            text.extend_from_slice(digits);
        }
        Ok(point) if point >= digits.len() => {
            text.extend_from_slice(digits);
            zeros(text, point - digits.len());
        }
        Ok(point) => {
            let (integer, fraction) = digits.split_at(point);
            text.extend_from_slice(integer);
            text.push(b'.');
            text.extend_from_slice(fraction);
        }
    }
}

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
    parts: Parts,
}

/// Output buffers (bytes, row ends) of finished parallel tasks, reused by the next batch's tasks so
/// that their memory is not allocated, faulted in and returned to the system for every batch. A
/// clone starts with none.
#[derive(Debug, Default)]
struct Parts(std::sync::Mutex<Vec<(Vec<u8>, Vec<usize>)>>);

impl Clone for Parts {
    fn clone(&self) -> Self {
        Parts::default()
    }
}

impl Parts {
    /// A kept pair of buffers, emptied, or new ones.
    fn take(&self) -> (Vec<u8>, Vec<usize>) {
        let kept = self.0.lock().ok().and_then(|mut parts| parts.pop());
        let (mut bytes, mut ends) = kept.unwrap_or_default();
        bytes.clear();
        ends.clear();
        (bytes, ends)
    }

    /// Keeps `parts` for [`Parts::take`].
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
            CqlType::Native(native) => match native {
                NativeType::Boolean => Target::Fixed(FixedTarget::Boolean),
                NativeType::Float => Target::Fixed(FixedTarget::Float),
                NativeType::Double => Target::Fixed(FixedTarget::Double),
                NativeType::Int => Target::Fixed(FixedTarget::Int),
                NativeType::BigInt | NativeType::Timestamp => Target::Fixed(FixedTarget::BigInt),
                NativeType::TinyInt => Target::Fixed(FixedTarget::TinyInt),
                NativeType::SmallInt => Target::Fixed(FixedTarget::SmallInt),
                NativeType::Date => Target::Fixed(FixedTarget::Date),
                NativeType::Time => Target::Fixed(FixedTarget::Time),
                NativeType::Varint | NativeType::Decimal | NativeType::Text | NativeType::Ascii => {
                    Target::Variable(*native)
                }
                _ => return Err(unsupported_element(ty)),
            },
            _ => return Err(unsupported_element(ty)),
        };
        Ok(VectorEncoder {
            element: element.as_ref().clone(),
            dimension: *dimension,
            target,
            parts: Parts::default(),
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
    pub fn element(&self) -> &CqlType {
        &self.element
    }

    /// Whether a batch of `rows` rows is worth splitting across a thread pool: fixed-size batches of
    /// at least [`PARALLEL_FIXED_BYTES`], variable-size batches of more than one task's elements.
    /// Callers that install a pool for [`VectorEncoder::encode_batch`] only need to when this holds;
    /// otherwise the batch is encoded on the calling thread anyway, and handing it to a pool worker
    /// only costs a wake-up.
    pub fn worth_splitting(&self, rows: usize) -> bool {
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
        self.check_shape(rows, batch.rows, batch.first_row)?;
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
                self.encode_fixed(rows, first_row, fixed, &mut [dst], Stores::Cached)
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
    /// [`VectorEncoder::worth_splitting`] says so (when several rows fail, which one is reported is
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
        let stores = Stores::for_output(dst.len());
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

    /// Checks that `rows` holds `count × dimension` elements.
    fn check_shape(&self, rows: Rows<'_>, count: usize, first_row: u64) -> Result<(), VectorError> {
        if count.checked_mul(self.dimension) != Some(rows.len()) {
            return Err(VectorError::Shape {
                first_row,
                elements: rows.len(),
                rows: count,
                dimension: self.dimension,
            });
        }
        Ok(())
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
        stores: Stores,
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
    /// when [`VectorEncoder::worth_splitting`] says so. `first_row` is the absolute index of the
    /// first row, for error messages; when several rows fail, which one is reported is unspecified.
    pub fn encode_fixed_values(
        &self,
        rows: Rows<'_>,
        first_row: u64,
        values: &mut [&mut [u8]],
    ) -> Result<(), VectorError> {
        self.check_row_count(rows, first_row, values.len())?;
        let stores = Stores::for_output(values.iter().map(|value| value.len()).sum());
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
    /// that must be allocated here), and, when [`VectorEncoder::worth_splitting`] says so, the rows
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
        let stores = Stores::for_output(count.saturating_mul(self.value_size().unwrap_or(0)));
        let shared = Produced {
            destinations: (0..count).map(|_| AtomicUsize::new(0)).collect(),
            lengths: (0..count).map(|_| AtomicUsize::new(0)).collect(),
            made: AtomicUsize::new(0),
            claimed: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
        };
        let encode = || {
            shared.encode(|start, values| {
                self.encode_fixed_rows(rows, first_row, start, values, stores)
            })
        };
        let mut failed = None;
        rayon::in_place_scope(|scope| {
            // This thread produces; the pool's other threads encode meanwhile.
            let _stop_on_unwind = StopOnUnwind(&shared.stop);
            if self.worth_splitting(count) {
                for _ in 1..rayon::current_num_threads() {
                    scope.spawn(|_| encode());
                }
            }
            for row in 0..count {
                if shared.stop.load(Ordering::Relaxed) {
                    break;
                }
                match produce(row) {
                    Ok(dst) => {
                        shared.destinations[row]
                            .store(dst.as_mut_ptr() as usize, Ordering::Relaxed);
                        shared.lengths[row].store(dst.len(), Ordering::Relaxed);
                        if (row + 1) % PRODUCED_ROWS == 0 || row + 1 == count {
                            shared.made.store(row + 1, Ordering::Release);
                        }
                    }
                    Err(error) => {
                        failed = Some(error);
                        shared.stop.store(true, Ordering::Relaxed);
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
        match shared.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
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
        stores: Stores,
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
                let (mut bytes, mut ends) = self.parts.take();
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
        self.parts.keep(parts);
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

/// The error for an element type that cannot be made from numbers.
fn unsupported_element(ty: &CqlType) -> VectorError {
    let names: Vec<&str> = NUMBER_ELEMENTS.iter().map(|t| t.cql_name()).collect();
    VectorError::Unsupported(format!(
        "cannot convert numeric embeddings to {ty}: the element type must be one of {}",
        names.join(", ")
    ))
}

/// The element types a vector of numbers can be converted to (what [`VectorEncoder::new`] accepts).
pub const NUMBER_ELEMENTS: [NativeType; 14] = [
    NativeType::Float,
    NativeType::Double,
    NativeType::Int,
    NativeType::BigInt,
    NativeType::Timestamp,
    NativeType::Boolean,
    NativeType::SmallInt,
    NativeType::TinyInt,
    NativeType::Varint,
    NativeType::Decimal,
    NativeType::Date,
    NativeType::Time,
    NativeType::Text,
    NativeType::Ascii,
];

/// The default target element type for an input element type: f16/f32 → float,
/// f64 → double, i64 → bigint, every other integer → int.
pub fn default_element(source: ElementType) -> NativeType {
    match source {
        ElementType::F16 | ElementType::F32 => NativeType::Float,
        ElementType::F64 => NativeType::Double,
        ElementType::I64 => NativeType::BigInt,
        ElementType::I8 | ElementType::U8 | ElementType::I16 | ElementType::I32 => NativeType::Int,
    }
}

/// Why `number` does not convert exactly to the fixed-size `target`.
fn fixed_problem(number: Number, target: FixedTarget) -> String {
    let name = match target {
        FixedTarget::Boolean => return "is not 0 or 1, so not a boolean".into(),
        FixedTarget::Float => "float",
        FixedTarget::Double => "double",
        FixedTarget::Int => "int",
        FixedTarget::BigInt => "bigint",
        FixedTarget::TinyInt => "tinyint",
        FixedTarget::SmallInt => "smallint",
        FixedTarget::Date => "date",
        FixedTarget::Time => "time",
    };
    match (number.float(), target) {
        (None, FixedTarget::Float | FixedTarget::Double) => {
            format!("cannot be represented exactly as a {name}")
        }
        (Some(_), FixedTarget::Float | FixedTarget::Double) => {
            format!("is out of range for {name}")
        }
        (Some(x), _) => float_integer_problem(x, name),
        (None, _) => format!("is out of range for {name}"),
    }
}

/// Why the float `x` is not a valid value of the integer type `name` (given that it is not).
fn float_integer_problem(x: f64, name: &str) -> String {
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    if x.is_nan() {
        format!("is not a number, so not {article} {name}")
    } else if x.is_finite() && x.fract() != 0.0 {
        format!("has a fraction, so is not {article} {name}")
    } else {
        format!("is out of range for {name}")
    }
}

/// Appends `number` as one vint-prefixed element of the variable-size `native` type (text, ascii,
/// varint, decimal) to `out`, formatting in `text` (a reused buffer); on error `out` is unchanged.
/// Values that fit in an i64 take no allocation; larger integral floats go through a `BigInt`.
fn write_variable(
    number: Number,
    native: NativeType,
    text: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match native {
        NativeType::Text | NativeType::Ascii => {
            // Written in place after a one-byte length, moved up in the rare case (a float
            // of over 127 digits, such as 1e-300) whose length needs a longer vint.
            let start = out.len();
            out.push(0);
            push_number(number, out);
            let length = out.len() - start - 1;
            match u8::try_from(length) {
                Ok(short) if short < 0x80 => {
                    if let Some(prefix) = out.get_mut(start) {
                        *prefix = short;
                    }
                }
                _ => {
                    let (prefix, width) = crate::vint::encode_unsigned_array(length as u64);
                    out.splice(start..start + 1, prefix.into_iter().take(width));
                }
            }
        }
        NativeType::Varint => match varint_of(number)? {
            Ok(small) => {
                let (bytes, start) = varint_bytes(small);
                push_prefixed(&[bytes.get(start..).unwrap_or_default()], out);
            }
            Err(big) => push_prefixed(&[&big.to_signed_bytes_be()], out),
        },
        NativeType::Decimal => {
            let (unscaled, scale) = decimal_of(number, text)?;
            let scale = scale.to_be_bytes();
            match unscaled {
                Ok(small) => {
                    let (bytes, start) = varint_bytes(small);
                    push_prefixed(&[&scale, bytes.get(start..).unwrap_or_default()], out);
                }
                Err(big) => push_prefixed(&[&scale, &big.to_signed_bytes_be()], out),
            }
        }
        _ => return Err(format!("cannot be converted to {}", native.cql_name())),
    }
    Ok(())
}

/// Appends the unsigned vint of the total length of `parts`, then the parts.
fn push_prefixed(parts: &[&[u8]], out: &mut Vec<u8>) {
    let length: usize = parts.iter().map(|part| part.len()).sum();
    match u8::try_from(length) {
        // One byte for lengths below 0x80, the usual case.
        Ok(short) if short < 0x80 => out.push(short),
        _ => {
            let (prefix, width) = crate::vint::encode_unsigned_array(length as u64);
            out.extend_from_slice(prefix.get(..width).unwrap_or_default());
        }
    }
    for part in parts {
        out.extend_from_slice(part);
    }
}

/// The two's-complement big-endian bytes of `value` in a fixed buffer, and where its shortest form
/// (the `varint` encoding: no redundant sign bytes, at least one byte) starts.
fn varint_bytes(value: i64) -> ([u8; 8], usize) {
    let sign_bits = if value < 0 {
        value.leading_ones()
    } else {
        value.leading_zeros()
    };
    // One sign bit is kept: 64 - sign_bits + 1 bits, rounded up to whole bytes.
    let length = (72 - sign_bits as usize) / 8;
    (value.to_be_bytes(), 8 - length)
}

/// The varint value of `number`: an i64 when it fits, else a `BigInt` (integral floats beyond
/// ±2^63); an error for a float that is not an integer.
fn varint_of(number: Number) -> Result<Result<i64, num_bigint::BigInt>, String> {
    let x = match number {
        Number::Int(i) => return Ok(Ok(i)),
        Number::Single(_) | Number::Float(_) => number.float().unwrap_or(f64::NAN),
    };
    if !(x.is_finite() && x.fract() == 0.0) {
        return Err(float_integer_problem(x, "varint"));
    }
    // -2^63 ≤ x < 2^63 is exactly i64's range; `as` is exact for integral x there.
    if (-TWO_POW_63..TWO_POW_63).contains(&x) {
        return Ok(Ok(x as i64));
    }
    <num_bigint::BigInt as num_traits::FromPrimitive>::from_f64(x)
        .map(Err)
        .ok_or_else(|| "is not an integer".into())
}

/// The decimal (unscaled value, scale) of `number`: an integer with scale 0, or for a float the
/// digits of its shortest decimal representation that round-trips (as an f32 for f16/f32 inputs)
/// with the scale its count of fractional digits. Formats in `text`; the unscaled value is an i64
/// when it fits, else a `BigInt`.
fn decimal_of(
    number: Number,
    text: &mut Vec<u8>,
) -> Result<(Result<i64, num_bigint::BigInt>, i32), String> {
    if let Number::Int(i) = number {
        return Ok((Ok(i), 0));
    }
    if !number.float().is_some_and(f64::is_finite) {
        return Err("is not finite, so not a decimal".into());
    }
    text.clear();
    push_number(number, text);
    // ASCII digits, a point and a sign.
    let text = std::str::from_utf8(text).unwrap_or_default();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let scale = i32::try_from(fraction.len()).map_err(|_| "has too many digits for a decimal")?;
    let (negative, whole) = match whole.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, whole),
    };
    // Accumulate towards the sign so that i64::MIN's digits fit too.
    let small = whole
        .bytes()
        .chain(fraction.bytes())
        .try_fold(0i64, |acc, digit| {
            let digit = i64::from(digit.wrapping_sub(b'0'));
            let acc = acc.checked_mul(10)?;
            if negative {
                acc.checked_sub(digit)
            } else {
                acc.checked_add(digit)
            }
        });
    if let Some(small) = small {
        return Ok((Ok(small), scale));
    }
    let digits = format!("{}{whole}{fraction}", if negative { "-" } else { "" });
    let big = digits
        .parse()
        .map_err(|_| format!("cannot be written as a decimal ({text})"))?;
    Ok((Err(big), scale))
}

/// Converts `rows` to the fixed-size `target` in the destinations `dst`, filled in order with the
/// records of consecutive elements (one slice for them all, or e.g. one per row: the conversion is
/// chosen once, not per destination); on a value that does not convert exactly, returns its index
/// (nothing else is promised about `dst` then).
fn convert_fixed(
    rows: Rows<'_>,
    target: FixedTarget,
    dst: &mut [&mut [u8]],
    stores: Stores,
) -> Result<(), usize> {
    // Exact float bounds of the integer types: -2^31, 2^31 - 1, -2^63 and 2^63 (exclusive).
    const INT_MIN: f64 = -2_147_483_648.0;
    const INT_MAX: f64 = 2_147_483_647.0;
    const LONG_MIN: f64 = -TWO_POW_63;
    const LONG_END: f64 = TWO_POW_63;
    let fits_int = |x: f64| x.fract() == 0.0 && (INT_MIN..=INT_MAX).contains(&x);
    let fits_long = |x: f64| x.fract() == 0.0 && (LONG_MIN..LONG_END).contains(&x);
    // Round to nearest like NumPy's astype('>f4') and struct.pack('>f'): only overflow to infinity
    // is refused (a double just above f32::MAX rounds down to it).
    let fits_float = |x: f64| !x.is_finite() || (x as f32).is_finite();
    // An i64 is exactly a float/double when converting back gives it again (2^63 is out of range).
    let long_exact_f32 = |i: i64| {
        let f = i as f32;
        f64::from(f) < LONG_END && f as i64 == i
    };
    let long_exact_f64 = |i: i64| {
        let f = i as f64;
        f < LONG_END && f as i64 == i
    };
    let boolean = |x: f64| x == 0.0 || x == 1.0;
    use FixedTarget as T;
    match (rows, target) {
        // The hot paths: same width, a pure byte-order conversion.
        (Rows::F32(s), T::Float) => reverse(s, dst, stores, |x: f32| x.to_bits().to_be_bytes()),
        (Rows::F64(s), T::Double) => reverse(s, dst, stores, |x: f64| x.to_bits().to_be_bytes()),
        (Rows::I32(s), T::Int) => reverse(s, dst, stores, |x: i32| x.to_be_bytes()),
        (Rows::I64(s), T::BigInt) => reverse(s, dst, stores, |x: i64| x.to_be_bytes()),
        // Widening casts, always exact.
        (Rows::F16(s), T::Float) => swap(s, dst, |x: f16| f32::from(x).to_be_bytes()),
        (Rows::F16(s), T::Double) => swap(s, dst, |x: f16| f64::from(x).to_be_bytes()),
        (Rows::F32(s), T::Double) => swap(s, dst, |x: f32| f64::from(x).to_be_bytes()),
        (Rows::I8(s), T::Float) => swap(s, dst, |x: i8| f32::from(x).to_be_bytes()),
        (Rows::U8(s), T::Float) => swap(s, dst, |x: u8| f32::from(x).to_be_bytes()),
        (Rows::I16(s), T::Float) => swap(s, dst, |x: i16| f32::from(x).to_be_bytes()),
        (Rows::I8(s), T::Double) => swap(s, dst, |x: i8| f64::from(x).to_be_bytes()),
        (Rows::U8(s), T::Double) => swap(s, dst, |x: u8| f64::from(x).to_be_bytes()),
        (Rows::I16(s), T::Double) => swap(s, dst, |x: i16| f64::from(x).to_be_bytes()),
        (Rows::I32(s), T::Double) => swap(s, dst, |x: i32| f64::from(x).to_be_bytes()),
        (Rows::I8(s), T::Int) => swap(s, dst, |x: i8| i32::from(x).to_be_bytes()),
        (Rows::U8(s), T::Int) => swap(s, dst, |x: u8| i32::from(x).to_be_bytes()),
        (Rows::I16(s), T::Int) => swap(s, dst, |x: i16| i32::from(x).to_be_bytes()),
        (Rows::I8(s), T::BigInt) => swap(s, dst, |x: i8| i64::from(x).to_be_bytes()),
        (Rows::U8(s), T::BigInt) => swap(s, dst, |x: u8| i64::from(x).to_be_bytes()),
        (Rows::I16(s), T::BigInt) => swap(s, dst, |x: i16| i64::from(x).to_be_bytes()),
        (Rows::I32(s), T::BigInt) => swap(s, dst, |x: i32| i64::from(x).to_be_bytes()),
        // Narrowing casts, checked.
        (Rows::F64(s), T::Float) => checked(s, dst, fits_float, |x: f64| (x as f32).to_be_bytes()),
        (Rows::I32(s), T::Float) => checked(
            s,
            dst,
            |i| long_exact_f32(i64::from(i)),
            |x: i32| (x as f32).to_be_bytes(),
        ),
        (Rows::I64(s), T::Float) => {
            checked(s, dst, long_exact_f32, |x: i64| (x as f32).to_be_bytes())
        }
        (Rows::I64(s), T::Double) => {
            checked(s, dst, long_exact_f64, |x: i64| (x as f64).to_be_bytes())
        }
        (Rows::I64(s), T::Int) => checked(
            s,
            dst,
            |i| i32::try_from(i).is_ok(),
            |x: i64| (x as i32).to_be_bytes(),
        ),
        (Rows::F16(s), T::Int) => checked(
            s,
            dst,
            |x| fits_int(f64::from(x)),
            |x: f16| (f32::from(x) as i32).to_be_bytes(),
        ),
        (Rows::F32(s), T::Int) => checked(
            s,
            dst,
            |x| fits_int(f64::from(x)),
            |x: f32| (x as i32).to_be_bytes(),
        ),
        (Rows::F64(s), T::Int) => checked(s, dst, fits_int, |x: f64| (x as i32).to_be_bytes()),
        (Rows::F16(s), T::BigInt) => checked(
            s,
            dst,
            |x| fits_long(f64::from(x)),
            |x: f16| (f32::from(x) as i64).to_be_bytes(),
        ),
        (Rows::F32(s), T::BigInt) => checked(
            s,
            dst,
            |x| fits_long(f64::from(x)),
            |x: f32| (x as i64).to_be_bytes(),
        ),
        (Rows::F64(s), T::BigInt) => checked(s, dst, fits_long, |x: f64| (x as i64).to_be_bytes()),
        // Booleans from 0 and 1.
        (Rows::F16(s), T::Boolean) => checked(
            s,
            dst,
            |x| boolean(f64::from(x)),
            |x: f16| [u8::from(f32::from(x) != 0.0)],
        ),
        (Rows::F32(s), T::Boolean) => checked(
            s,
            dst,
            |x| boolean(f64::from(x)),
            |x: f32| [u8::from(x != 0.0)],
        ),
        (Rows::F64(s), T::Boolean) => checked(s, dst, boolean, |x: f64| [u8::from(x != 0.0)]),
        (Rows::I8(s), T::Boolean) => checked(s, dst, |x| x == 0 || x == 1, |x: i8| [x as u8]),
        (Rows::U8(s), T::Boolean) => checked(s, dst, |x| x <= 1, |x: u8| [x]),
        (Rows::I16(s), T::Boolean) => checked(s, dst, |x| x == 0 || x == 1, |x: i16| [x as u8]),
        (Rows::I32(s), T::Boolean) => checked(s, dst, |x| x == 0 || x == 1, |x: i32| [x as u8]),
        (Rows::I64(s), T::Boolean) => checked(s, dst, |x| x == 0 || x == 1, |x: i64| [x as u8]),
        // vint-prefixed integers: a constant length byte, then the value's bytes.
        (rows, T::TinyInt) => prefixed(rows, dst, i8::MIN.into(), i8::MAX.into(), |v| [1, v as u8]),
        (rows, T::SmallInt) => prefixed(rows, dst, i16::MIN.into(), i16::MAX.into(), |v| {
            let [hi, lo] = (v as i16).to_be_bytes();
            [2, hi, lo]
        }),
        (rows, T::Date) => prefixed(rows, dst, 0, u32::MAX.into(), |v| {
            let [a, b, c, d] = (v as u32).to_be_bytes();
            [4, a, b, c, d]
        }),
        (rows, T::Time) => prefixed(rows, dst, 0, NANOS_PER_DAY - 1, |v| {
            let [a, b, c, d, e, f, g, h] = v.to_be_bytes();
            [8, a, b, c, d, e, f, g, h]
        }),
    }
}

/// Writes `N`-byte vint-prefixed records of `src` into `dst` (exactly `N` bytes per value): the
/// length `N - 1`, then the value's low `N - 1` bytes big-endian, as `encode` does one at a time.
/// Records of 3, 5 and 9 bytes straddle vector lanes, which the compiler does not vectorise: with
/// SSSE3 (checked at run time), and when [`record_layout`] fits, 16 values become `16 × N` bytes in
/// `N` byte shuffles. The rest, and 2-byte records (`tinyint`, which [`swap`]'s AVX2 loop already
/// builds a lane at a time), go through [`swap`].
///
/// The shuffles fill the bytes above a value's own with zeros, so `zero_fill` says whether that is
/// exact for every value here: true for unsigned values, for values already checked to be
/// non-negative, and whenever `N - 1` is at most the value's size (no byte above it is written).
#[inline(always)]
fn records<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [u8],
    zero_fill: bool,
    encode: impl Fn(S) -> [u8; N] + Copy,
) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let exact = zero_fill || N - 1 <= std::mem::size_of::<S>();
        let straddles = !N.is_power_of_two();
        if straddles
            && exact
            && RecordsOf::<S, N>::RECORDS.fits
            && std::arch::is_x86_feature_detected!("ssse3")
        {
            // SAFETY: the processor supports SSSE3, checked just above.
            done = unsafe { records_ssse3::<S, N>(src, dst) };
        }
    }
    let _ = swap(
        src.get(done..).unwrap_or_default(),
        &mut [dst.get_mut(done * N..).unwrap_or_default()],
        encode,
    );
}

/// How the SSSE3 record kernel builds 16 records of `n` bytes from 16 values of `size` bytes
/// (little-endian): output chunk `c` (bytes `16 c .. 16 c + 16` of the `16 n`) is a byte shuffle
/// of the 16 input bytes at `loads[c]`, ORed with the length bytes `lengths[c]`.
struct RecordLayout {
    /// Whether every chunk's bytes lie within one 16-byte load inside the 16 values (if not, the
    /// kernel is not used for this pair of sizes).
    fits: bool,
    /// Where each chunk's 16 input bytes start, at most `16 size - 16`.
    loads: [usize; 9],
    /// Each chunk's shuffle: the input byte of each output byte, or -128 for a zero.
    shuffles: [[i8; 16]; 9],
    /// Each chunk's length bytes (`n - 1`), zero elsewhere.
    lengths: [[i8; 16]; 9],
}

/// The [`RecordLayout`] of `n`-byte records (2 to 9) from `size`-byte values (1 to 8).
const fn record_layout(size: usize, n: usize) -> RecordLayout {
    let mut layout = RecordLayout {
        fits: n >= 2 && n <= 9 && size >= 1 && size <= 8,
        loads: [0; 9],
        shuffles: [[-128; 16]; 9],
        lengths: [[0; 16]; 9],
    };
    if !layout.fits {
        return layout;
    }
    let mut chunk = 0;
    while chunk < n {
        // The first and last input byte the chunk needs.
        let (mut first, mut last) = (usize::MAX, 0);
        let mut j = 0;
        while j < 16 {
            let (record, byte) = ((16 * chunk + j) / n, (16 * chunk + j) % n);
            // Byte `byte` of the record is value byte `n - 1 - byte` (little-endian) after the length.
            if byte > 0 && n - 1 - byte < size {
                let at = size * record + n - 1 - byte;
                if at < first {
                    first = at;
                }
                if at > last {
                    last = at;
                }
            }
            j += 1;
        }
        let load = if first == usize::MAX || first + 16 > 16 * size {
            16 * size - 16
        } else {
            first
        };
        if first != usize::MAX && (first < load || last >= load + 16) {
            layout.fits = false;
            return layout;
        }
        layout.loads[chunk] = load;
        let mut j = 0;
        while j < 16 {
            let (record, byte) = ((16 * chunk + j) / n, (16 * chunk + j) % n);
            if byte == 0 {
                layout.lengths[chunk][j] = (n - 1) as i8;
            } else if n - 1 - byte < size {
                layout.shuffles[chunk][j] = (size * record + n - 1 - byte - load) as i8;
            }
            j += 1;
        }
        chunk += 1;
    }
    layout
}

/// The [`RecordLayout`] of `N`-byte records from values of type `S`, computed at compile time.
struct RecordsOf<S, const N: usize>(std::marker::PhantomData<S>);

impl<S, const N: usize> RecordsOf<S, N> {
    const RECORDS: RecordLayout = record_layout(std::mem::size_of::<S>(), N);
}

/// The SSSE3 part of [`records`]: whole groups of 16 values; returns how many values it wrote. Each
/// group reads only its own `16 × size` input bytes and writes only its own `16 × N` output bytes.
/// Only called when the layout fits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
fn records_ssse3<S: Copy, const N: usize>(src: &[S], dst: &mut [u8]) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_or_si128, _mm_shuffle_epi8, _mm_storeu_si128,
    };
    let layout = &RecordsOf::<S, N>::RECORDS;
    let groups = src.len().min(dst.len() / N) / 16;
    for (values, out) in src
        .chunks_exact(16)
        .zip(dst.chunks_exact_mut(16 * N))
        .take(groups)
    {
        for chunk in 0..N {
            // SAFETY: `values` is 16 × size bytes and each load reads 16 of them from
            // `loads[chunk]` ≤ 16 × size - 16 (record_layout); `out` is 16 × N bytes and each store
            // writes bytes 16 × chunk .. 16 × chunk + 16; the masks are 16-byte arrays (unaligned
            // loads).
            unsafe {
                let input = _mm_loadu_si128(
                    values
                        .as_ptr()
                        .cast::<u8>()
                        .add(layout.loads[chunk])
                        .cast::<__m128i>(),
                );
                let shuffle = _mm_loadu_si128(layout.shuffles[chunk].as_ptr().cast::<__m128i>());
                let lengths = _mm_loadu_si128(layout.lengths[chunk].as_ptr().cast::<__m128i>());
                let records = _mm_or_si128(_mm_shuffle_epi8(input, shuffle), lengths);
                _mm_storeu_si128(out.as_mut_ptr().add(16 * chunk).cast::<__m128i>(), records);
            }
        }
    }
    groups * 16
}

/// Nanoseconds in a day: a `time` is below this.
const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Converts `rows` to an integer target whose values are `min..=max` (all exactly representable as
/// f64), each written by `encode`: integers are range-checked, floats must also be integral.
#[inline(always)]
fn prefixed<const N: usize>(
    rows: Rows<'_>,
    dst: &mut [&mut [u8]],
    min: i64,
    max: i64,
    encode: impl Fn(i64) -> [u8; N] + Copy,
) -> Result<(), usize> {
    let fits = move |x: i64| min <= x && x <= max;
    let (low, high) = (min as f64, max as f64);
    let fits_float = move |x: f64| x.fract() == 0.0 && low <= x && x <= high;
    // Integers go through the record kernel, whose zero fill is exact for non-negative values.
    let zero_fill = min >= 0;
    match rows {
        Rows::I8(s) => integers(s, dst, fits, zero_fill, encode),
        Rows::U8(s) => integers(s, dst, fits, true, encode),
        Rows::I16(s) => integers(s, dst, fits, zero_fill, encode),
        Rows::I32(s) => integers(s, dst, fits, zero_fill, encode),
        Rows::I64(s) => integers(s, dst, fits, zero_fill, encode),
        Rows::F16(s) => checked(
            s,
            dst,
            |x| fits_float(x.into()),
            |x: f16| encode(f32::from(x) as i64),
        ),
        Rows::F32(s) => checked(s, dst, |x| fits_float(x.into()), |x: f32| encode(x as i64)),
        Rows::F64(s) => checked(s, dst, fits_float, |x: f64| encode(x as i64)),
    }
}

/// The integers of `src`, each checked with `fits` and written as an `N`-byte record by `encode`
/// through [`records`] (whose shuffles' zero fill `zero_fill` allows); returns the index of the
/// first element that fails.
#[inline(always)]
fn integers<S: Copy + Into<i64>, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(i64) -> bool + Copy,
    zero_fill: bool,
    encode: impl Fn(i64) -> [u8; N] + Copy,
) -> Result<(), usize> {
    checked_blocks::<S, N>(
        src,
        dst,
        |x| fits(x.into()),
        |s, d| records(s, d, zero_fill, |x: S| encode(x.into())),
    )
}

/// Checks every element of `src` with `fits` (block by block, so each block is still in cache when
/// converted), then converts it with `convert`; returns the index of the first element that fails.
#[inline(always)]
fn checked<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(S) -> bool + Copy,
    convert: impl Fn(S) -> [u8; N] + Copy,
) -> Result<(), usize> {
    checked_blocks::<S, N>(src, dst, fits, |s, d| {
        let _ = swap(s, &mut [d], convert);
    })
}

/// [`checked`] with a block converter: checks each block of `src` (at most [`BLOCK_ELEMENTS`], and
/// never across two destinations) with `fits`, then writes its `N`-byte records with
/// `convert_block`; returns the index of the first element that fails.
#[inline(always)]
fn checked_blocks<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    fits: impl Fn(S) -> bool + Copy,
    convert_block: impl Fn(&[S], &mut [u8]),
) -> Result<(), usize> {
    for (first, src, dst) in runs::<S, N>(src, dst) {
        for (block, (src, dst)) in src
            .chunks(BLOCK_ELEMENTS)
            .zip(dst.chunks_mut(BLOCK_ELEMENTS * N))
            .enumerate()
        {
            // A branch-free fold vectorises; the slow search only runs on failure.
            if !src.iter().fold(true, |ok, &x| ok & fits(x)) {
                let position = src.iter().position(|&x| !fits(x)).unwrap_or(0);
                return Err(first + block * BLOCK_ELEMENTS + position);
            }
            convert_block(src, dst);
        }
    }
    Ok(())
}

/// Each destination of `dst` with the run of `src` whose `N`-byte records fill it, and the index
/// of the run's first element (a destination past the end of `src` gets a shorter run).
#[inline(always)]
fn runs<'s, 'd, 'v: 'd, S, const N: usize>(
    src: &'s [S],
    dst: &'d mut [&'v mut [u8]],
) -> impl Iterator<Item = (usize, &'s [S], &'d mut [u8])> + use<'s, 'd, 'v, S, N> {
    let (mut rest, mut first) = (src, 0);
    dst.iter_mut().map(move |dst| {
        let (run, after) = rest.split_at((dst.len() / N).min(rest.len()));
        let start = first;
        (rest, first) = (after, first + run.len());
        (start, run, &mut **dst)
    })
}

/// Converts every element of `src` with `convert` into consecutive `N`-byte records of the
/// destinations `dst` (see [`runs`]), with the AVX2 build of the loop when the processor has it,
/// chosen once for all destinations. Never fails (the `Result` is for `?` in callers).
#[inline(always)]
fn swap<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) -> Result<(), usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2, checked just above.
            unsafe { convert_runs_avx2(src, dst, convert) };
            return Ok(());
        }
    }
    convert_runs(src, dst, convert);
    Ok(())
}

/// [`swap`] for values that `convert` writes as their own `N` bytes in reverse order (a float, int,
/// double or bigint made big-endian): with [`Stores::Streaming`] and AVX2, the bytes bypass the
/// cache ([`reverse_streaming_avx2`]).
#[inline(always)]
fn reverse<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    stores: Stores,
    convert: impl Fn(S) -> [u8; N] + Copy,
) -> Result<(), usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if stores == Stores::Streaming && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2, checked just above.
            unsafe { reverse_streaming_avx2(src, dst, convert) };
            return Ok(());
        }
    }
    swap(src, dst, convert)
}

/// [`convert_runs`] for [`reverse`] with non-temporal stores: each destination's 64-byte-aligned
/// middle is written with `vpshufb` and `vmovntdq` (whole cache lines, so no line is read first),
/// its unaligned ends by [`convert_loop`]; a destination whose aligned middle does not start on a
/// value boundary goes through [`convert_loop`] whole. Ends with a store fence, so the bytes are
/// in memory before anything published after this call.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn reverse_streaming_avx2<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm256_shuffle_epi8, _mm256_stream_si256, _mm_sfence,
    };
    const { assert!(std::mem::size_of::<S>() == N && (N == 4 || N == 8)) };
    // Byte i of each 16-byte lane comes from byte (i / N) × N + N - 1 - i % N.
    let order: [u8; 32] = std::array::from_fn(|i| {
        let i = i % 16;
        ((i / N) * N + N - 1 - i % N) as u8
    });
    // SAFETY: `order` is 32 bytes (an unaligned load).
    let order = unsafe { _mm256_loadu_si256(order.as_ptr().cast::<__m256i>()) };
    for (_, src, dst) in runs::<S, N>(src, dst) {
        let dst = &mut dst[..src.len() * N];
        let head = dst.as_ptr().align_offset(64).min(dst.len());
        if head % N != 0 {
            convert_loop(src, dst, convert);
            continue;
        }
        let middle = (dst.len() - head) / 64 * 64;
        let (head_dst, rest) = dst.split_at_mut(head);
        let (middle_dst, tail_dst) = rest.split_at_mut(middle);
        let (head_src, rest) = src.split_at(head / N);
        let (middle_src, tail_src) = rest.split_at(middle / N);
        convert_loop(head_src, head_dst, convert);
        let (from, to) = (middle_src.as_ptr().cast::<u8>(), middle_dst.as_mut_ptr());
        for offset in (0..middle).step_by(64) {
            // SAFETY: `middle_src` and `middle_dst` are both `middle` bytes (`middle / N` values
            // of N bytes), so bytes `offset .. offset + 64` are inside each; `to + offset` is
            // 64-byte aligned (`head` aligned `dst`), as the streaming store needs 32.
            unsafe {
                let low = _mm256_loadu_si256(from.add(offset).cast::<__m256i>());
                let high = _mm256_loadu_si256(from.add(offset + 32).cast::<__m256i>());
                let out = to.add(offset).cast::<__m256i>();
                _mm256_stream_si256(out, _mm256_shuffle_epi8(low, order));
                _mm256_stream_si256(out.add(1), _mm256_shuffle_epi8(high, order));
            }
        }
        convert_loop(tail_src, tail_dst, convert);
    }
    _mm_sfence();
}

/// [`convert_loop`] over each destination of `dst` and its run of `src` (see [`runs`]).
#[inline(always)]
fn convert_runs<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    for (_, src, dst) in runs::<S, N>(src, dst) {
        convert_loop(src, dst, convert);
    }
}

/// The conversion loop: each element to its `N` bytes, written into a preallocated slice so the
/// compiler can vectorise it (a byte shuffle per vector register).
#[inline(always)]
fn convert_loop<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [u8],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    for (out, &x) in dst.chunks_exact_mut(N).zip(src) {
        out.copy_from_slice(&convert(x));
    }
}

/// [`convert_runs`] compiled with AVX2, so byte swaps become `vpshufb` over 32-byte registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn convert_runs_avx2<S: Copy, const N: usize>(
    src: &[S],
    dst: &mut [&mut [u8]],
    convert: impl Fn(S) -> [u8; N] + Copy,
) {
    convert_runs(src, dst, convert)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random generator (splitmix64) for test data.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    fn encoder(ty: &str) -> VectorEncoder {
        let ty = crate::types::parse_type(ty, &crate::types::UdtRegistry::new()).unwrap();
        VectorEncoder::new(&ty).unwrap()
    }

    fn encode(ty: &str, rows: Rows<'_>, first_row: u64) -> Result<Vec<u8>, VectorError> {
        let mut out = Vec::new();
        encoder(ty).encode_rows(rows, first_row, &mut out)?;
        Ok(out)
    }

    /// Runs both builds of the conversion loop and the reference `to_be_bytes` per element.
    fn compare_paths<S: Copy, const N: usize>(src: &[S], convert: impl Fn(S) -> [u8; N] + Copy) {
        let reference: Vec<u8> = src.iter().flat_map(|&x| convert(x)).collect();
        let mut portable = vec![0xaa; src.len() * N];
        convert_loop(src, &mut portable, convert);
        assert_eq!(portable, reference);
        // One destination, and destinations of 37 records each (the last one shorter).
        for records in [src.len().max(1), 37] {
            let mut dispatched = vec![0xaa; src.len() * N];
            let mut parts: Vec<&mut [u8]> = dispatched.chunks_mut(records * N).collect();
            swap(src, &mut parts, convert).unwrap();
            assert_eq!(dispatched, reference);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut avx2 = vec![0xaa; src.len() * N];
                let mut parts: Vec<&mut [u8]> = avx2.chunks_mut(records * N).collect();
                // SAFETY: AVX2 is available, checked just above.
                unsafe { convert_runs_avx2(src, &mut parts, convert) };
                assert_eq!(avx2, reference);
            }
        }
    }

    /// [`reverse`] with streaming stores into three rows of `values` each, placed `shift` bytes
    /// into a buffer with 48-byte gaps between them (as between Python objects): each row gets its
    /// values' bytes, and no byte outside the rows changes.
    fn check_streaming<S: Copy, const N: usize>(
        src: &[S],
        shift: usize,
        convert: impl Fn(S) -> [u8; N] + Copy,
    ) {
        let row = src.len() / 3 * N;
        let stride = row + 48;
        let mut buffer = vec![0x5au8; shift + 3 * stride];
        let mut parts: Vec<&mut [u8]> = buffer[shift..]
            .chunks_mut(stride)
            .map(|chunk| &mut chunk[..row])
            .collect();
        reverse(src, &mut parts, Stores::Streaming, convert).unwrap();
        let reference: Vec<u8> = src.iter().flat_map(|&x| convert(x)).collect();
        for (at, byte) in buffer.iter().enumerate() {
            let place = at.checked_sub(shift).map(|at| (at / stride, at % stride));
            match place {
                Some((r, offset)) if offset < row => {
                    assert_eq!(
                        *byte,
                        reference[r * row + offset],
                        "shift {shift}, byte {at}"
                    )
                }
                _ => assert_eq!(*byte, 0x5a, "shift {shift}, byte {at} outside the rows"),
            }
        }
    }

    #[test]
    fn streaming_reversal_writes_exactly_each_destination_at_every_alignment() {
        let mut random = Random(11);
        for values in [0, 1, 5, 16, 17, 100, 768] {
            let longs: Vec<i64> = (0..3 * values).map(|_| random.next() as i64).collect();
            let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
            let floats: Vec<f32> = ints.iter().map(|&x| f32::from_bits(x as u32)).collect();
            for shift in 0..64 {
                check_streaming(&ints, shift, |x: i32| x.to_be_bytes());
                check_streaming(&floats, shift, |x: f32| x.to_bits().to_be_bytes());
                check_streaming(&longs, shift, |x: i64| x.to_be_bytes());
            }
        }
    }

    #[test]
    fn avx2_and_portable_loops_match_to_be_bytes_on_random_data() {
        let mut random = Random(7);
        for length in [0, 1, 3, 7, 8, 31, 33, 768, 1000, 4099] {
            let bits: Vec<u64> = (0..length).map(|_| random.next()).collect();
            let floats: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b as u32)).collect();
            let doubles: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            let ints: Vec<i32> = bits.iter().map(|&b| b as i32).collect();
            let longs: Vec<i64> = bits.iter().map(|&b| b as i64).collect();
            compare_paths(&floats, |x: f32| x.to_be_bytes());
            compare_paths(&doubles, |x: f64| x.to_be_bytes());
            compare_paths(&ints, |x: i32| x.to_be_bytes());
            compare_paths(&longs, |x: i64| x.to_be_bytes());
            // The kernel's own path gives the same bytes (bit patterns, NaN payloads included).
            let expected: Vec<u8> = floats.iter().flat_map(|x| x.to_be_bytes()).collect();
            if length % 8 == 0 && length > 0 {
                let ty = format!("vector<float, {}>", 8);
                assert_eq!(encode(&ty, Rows::F32(&floats), 0).unwrap(), expected);
            }
        }
    }

    #[test]
    fn parallel_batches_equal_sequential_rows() {
        let mut random = Random(11);
        let dimension = 5;
        let rows = 3001;
        let floats: Vec<f32> = (0..rows * dimension)
            .map(|_| (random.next() % 1000) as f32 / 7.0)
            .collect();
        for ty in ["vector<float, 5>", "vector<double, 5>", "vector<text, 5>"] {
            let sequential = encode(ty, Rows::F32(&floats), 40).unwrap();
            let mut batch = Batch {
                first_row: 40,
                rows,
                elements: Elements::F32(floats.clone()),
                validity: None,
                columns: None,
            };
            let encoded = encoder(ty).encode_batch(&mut batch, Vec::new()).unwrap();
            assert_eq!(encoded.bytes, sequential, "{ty}");
            let rebuilt: Vec<u8> = (0..rows).flat_map(|i| encoded.row(i).to_vec()).collect();
            assert_eq!(rebuilt, sequential, "{ty}");
        }
    }

    #[test]
    fn large_fixed_size_batches_are_split_across_the_pool_in_order() {
        let dimension = 100;
        let rows = PARALLEL_FIXED_BYTES / (4 * dimension) + 7;
        let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
        let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
        let mut batch = Batch {
            first_row: 0,
            rows,
            elements: Elements::I32(ints.clone()),
            validity: None,
            columns: None,
        };
        let encoded = encoder("vector<int, 100>")
            .encode_batch(&mut batch, Vec::new())
            .unwrap();
        assert!(encoded.bytes.len() >= PARALLEL_FIXED_BYTES);
        assert!(encoded.bytes == expected, "parallel output differs");
        // A cast error in a late task still names its absolute row.
        let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
        let bad = rows * dimension - 3;
        longs[bad] = i64::MAX;
        let mut batch = Batch {
            first_row: 1000,
            rows,
            elements: Elements::I64(longs),
            validity: None,
            columns: None,
        };
        let error = encoder("vector<int, 100>")
            .encode_batch(&mut batch, Vec::new())
            .unwrap_err();
        let place = format!("at row {} (element 97)", 1000 + rows - 1);
        assert!(error.to_string().ends_with(&place), "{error}");
    }

    #[test]
    fn per_row_destinations_get_the_rows_values_small_and_split() {
        let dimension = 100;
        let encoder = encoder("vector<int, 100>");
        // Below and above the size worth splitting across the pool.
        for rows in [3, PARALLEL_FIXED_BYTES / (4 * dimension) + 7] {
            let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
            let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
            let mut out = vec![0xaa; expected.len()];
            let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(4 * dimension).collect();
            encoder
                .encode_fixed_values(Rows::I32(&ints), 0, &mut values)
                .unwrap();
            assert!(out == expected, "{rows} rows: output differs");
            // A cast error in the last row names its absolute row.
            let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
            longs[rows * dimension - 3] = i64::MAX;
            let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(4 * dimension).collect();
            let error = encoder
                .encode_fixed_values(Rows::I64(&longs), 1000, &mut values)
                .unwrap_err();
            let place = format!("at row {} (element 97)", 1000 + rows - 1);
            assert!(error.to_string().ends_with(&place), "{error}");
        }
        // One destination too few, or destinations of the wrong size: a shape error.
        let ints = [1i32; 200];
        let mut out = vec![0u8; 800];
        let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(400).take(1).collect();
        let error = encoder.encode_fixed_values(Rows::I32(&ints), 0, &mut values);
        assert!(matches!(error, Err(VectorError::Shape { .. })), "{error:?}");
        let mut values: Vec<&mut [u8]> = out.chunks_exact_mut(399).take(2).collect();
        let error = encoder.encode_fixed_values(Rows::I32(&ints), 0, &mut values);
        assert!(matches!(error, Err(VectorError::Shape { .. })), "{error:?}");
    }

    #[test]
    fn produced_destinations_get_the_rows_values() {
        let dimension = 100;
        let encoder = encoder("vector<int, 100>");
        // No row, fewer rows than one claim, one claim exactly, one row past it, many claims, and
        // enough to be encoded on the pool while they are produced.
        let split = PARALLEL_FIXED_BYTES / (4 * dimension) + 7;
        for rows in [0, 1, PRODUCED_ROWS, PRODUCED_ROWS + 1, 1000, split] {
            let ints: Vec<i32> = (0..(rows * dimension) as i32).collect();
            let expected: Vec<u8> = ints.iter().flat_map(|x| x.to_be_bytes()).collect();
            let mut out = vec![0xaa; expected.len()];
            let mut chunks = out.chunks_exact_mut(4 * dimension);
            let produce = |_| Ok::<_, ()>(chunks.next().expect("one destination per row"));
            encoder
                .encode_fixed_values_produced(Rows::I32(&ints), 0, rows, produce, |rest| rest())
                .unwrap();
            assert!(out == expected, "{rows} rows: output differs");
            if rows == 0 {
                continue;
            }
            // A cast error in the last row names its absolute row.
            let mut longs: Vec<i64> = ints.iter().map(|&x| i64::from(x)).collect();
            longs[rows * dimension - 3] = i64::MAX;
            let mut chunks = out.chunks_exact_mut(4 * dimension);
            let produce = |_| Ok::<_, ()>(chunks.next().expect("one destination per row"));
            let error = encoder
                .encode_fixed_values_produced(Rows::I64(&longs), 1000, rows, produce, |rest| rest())
                .unwrap_err()
                .unwrap_err();
            let place = format!("at row {} (element 97)", 1000 + rows - 1);
            assert!(error.to_string().ends_with(&place), "{error}");
        }
        // The producer's first error stops it and is returned; nothing is asked of it after that.
        let ints = vec![1i32; 1000 * dimension];
        let mut out = vec![0u8; 4 * ints.len()];
        let mut chunks = out.chunks_exact_mut(4 * dimension);
        let mut asked = 0;
        let produce = |row: usize| {
            asked += 1;
            match row {
                70 => Err("no memory"),
                _ => Ok(chunks.next().unwrap()),
            }
        };
        let error =
            encoder.encode_fixed_values_produced(Rows::I32(&ints), 0, 1000, produce, |_| {
                panic!("nothing is finished after a failed production")
            });
        assert_eq!(error, Err(Ok("no memory")));
        assert_eq!(asked, 71);
        // A producer that panics while the pool waits for its rows: the panic comes through
        // (the waiting threads stop instead of waiting for ever).
        let many = vec![1i32; split * dimension];
        let mut out = vec![0u8; 4 * many.len()];
        let mut chunks = out.chunks_exact_mut(4 * dimension);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let produce = |row: usize| {
                assert!(row < PRODUCED_ROWS * 3, "the producer fails");
                Ok::<_, ()>(chunks.next().unwrap())
            };
            encoder.encode_fixed_values_produced(Rows::I32(&many), 0, split, produce, |r| r())
        }));
        assert!(panicked.is_err());
        // A row count that does not match the elements: a shape error, nothing produced.
        let error = encoder.encode_fixed_values_produced(
            Rows::I32(&ints),
            0,
            999,
            |_| -> Result<&mut [u8], ()> { panic!("nothing is produced for a wrong shape") },
            |rest| rest(),
        );
        assert!(
            matches!(error, Err(Err(VectorError::Shape { .. }))),
            "{error:?}"
        );
    }

    /// The vint-prefixed element types of fixed payload width.
    const PREFIXED: [NativeType; 4] = [
        NativeType::TinyInt,
        NativeType::SmallInt,
        NativeType::Date,
        NativeType::Time,
    ];

    #[test]
    fn record_layouts_fit_for_the_kernel_pairs() {
        // The pairs the SSSE3 record kernel serves: 1- and 2-byte integers to smallint, date and
        // time, and 4-byte integers to date and time.
        for (size, n) in [
            (1, 3),
            (1, 5),
            (1, 9),
            (2, 3),
            (2, 5),
            (2, 9),
            (4, 5),
            (4, 9),
        ] {
            assert!(
                record_layout(size, n).fits,
                "{n}-byte records of {size}-byte values"
            );
        }
        // Too far apart for one 16-byte load: one record at a time.
        for (size, n) in [(4, 2), (4, 3), (8, 9)] {
            assert!(
                !record_layout(size, n).fits,
                "{n}-byte records of {size}-byte values"
            );
        }
    }

    #[test]
    fn record_kernels_match_the_value_codec_at_every_length() {
        let mut random = Random(11);
        for native in PREFIXED {
            let name = native.cql_name();
            let element = CqlType::Native(native);
            // Valid values of every integer source type: the limits, then random ones in range.
            let (min, max): (i64, i64) = match native {
                NativeType::TinyInt => (-128, 127),
                NativeType::SmallInt => (-32768, 32767),
                NativeType::Date => (0, u32::MAX.into()),
                _ => (0, 86_399_999_999_999),
            };
            let longs: Vec<i64> = (0..300)
                .map(|i| match i % 7 {
                    0 => min,
                    1 => max,
                    _ => min + (random.next() % (max - min + 1) as u64) as i64,
                })
                .collect();
            let clamp = |lo: i64, hi: i64| -> Vec<i64> {
                longs
                    .iter()
                    .map(|&x| x.clamp(lo.max(min), hi.min(max)))
                    .collect()
            };
            let bytes: Vec<i8> = clamp(-128, 127).iter().map(|&x| x as i8).collect();
            let unsigned: Vec<u8> = clamp(0, 255).iter().map(|&x| x as u8).collect();
            let shorts: Vec<i16> = clamp(-32768, 32767).iter().map(|&x| x as i16).collect();
            let ints: Vec<i32> = clamp(i32::MIN.into(), i32::MAX.into())
                .iter()
                .map(|&x| x as i32)
                .collect();
            for rows in [
                Rows::I8(&bytes),
                Rows::U8(&unsigned),
                Rows::I16(&shorts),
                Rows::I32(&ints),
                Rows::I64(&longs),
            ] {
                let references: Vec<Vec<u8>> = (0..rows.len())
                    .map(|index| {
                        let value = reference_value(rows.number(index).unwrap(), native).unwrap();
                        let mut reference = Vec::new();
                        cqlwire_codec::value::encode_vector_element(
                            &element,
                            &value,
                            &mut reference,
                        )
                        .unwrap();
                        reference
                    })
                    .collect();
                for length in 1..=rows.len() {
                    let expected = references[..length].concat();
                    let ty = format!("vector<{name}, {length}>");
                    let got = encode(&ty, rows.slice(0, length), 0).unwrap();
                    assert_eq!(got, expected, "{name} from {rows:?}, length {length}");
                }
            }
        }
    }

    #[test]
    fn double_to_float_checks_range_and_passes_non_finite() {
        let max = f64::from(f32::MAX);
        let ok = [
            max,
            -max,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e-300,
        ];
        let bytes = encode("vector<float, 6>", Rows::F64(&ok), 0).unwrap();
        let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect();
        assert_eq!(bytes, expected);
        // The next double above f32::MAX rounds down to it, as NumPy does; 2^128 overflows.
        let above = f64::from_bits(max.to_bits() + 1);
        let bytes = encode("vector<float, 1>", Rows::F64(&[above]), 0).unwrap();
        assert_eq!(bytes, f32::MAX.to_be_bytes());
        let overflow = 2f64.powi(128);
        let error = encode(
            "vector<float, 2>",
            Rows::F64(&[0.0, 1.0, 2.0, -overflow]),
            10,
        );
        assert_eq!(
            error.unwrap_err().to_string(),
            format!(
                "value {:e} is out of range for float at row 11 (element 1)",
                -overflow
            )
        );
    }

    #[test]
    fn long_to_int_checks_range() {
        let ok = [i64::from(i32::MAX), i64::from(i32::MIN)];
        let bytes = encode("vector<int, 2>", Rows::I64(&ok), 0).unwrap();
        assert_eq!(
            bytes,
            [i32::MAX.to_be_bytes(), i32::MIN.to_be_bytes()].concat()
        );
        for bad in [i64::from(i32::MAX) + 1, i64::from(i32::MIN) - 1] {
            let error = encode("vector<int, 1>", Rows::I64(&[bad]), 3).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("value {bad} is out of range for int at row 3 (element 0)")
            );
        }
    }

    #[test]
    fn floats_to_integers_need_integral_values_in_range() {
        let ok = [2_147_483_647.0, -2_147_483_648.0, -0.0, 5.0];
        let bytes = encode("vector<int, 4>", Rows::F64(&ok), 0).unwrap();
        let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as i32).to_be_bytes()).collect();
        assert_eq!(bytes, expected);
        let cases: [(f64, &str); 4] = [
            (2.5, "has a fraction, so is not an int"),
            (f64::NAN, "is not a number, so not an int"),
            (2_147_483_648.0, "is out of range for int"),
            (f64::INFINITY, "is out of range for int"),
        ];
        for (bad, problem) in cases {
            let error = encode("vector<int, 1>", Rows::F64(&[bad]), 0).unwrap_err();
            assert!(error.to_string().contains(problem), "{error}");
        }
        let long_ok = [-TWO_POW_63, f64::from_bits(TWO_POW_63.to_bits() - 1)];
        let bytes = encode("vector<bigint, 2>", Rows::F64(&long_ok), 0).unwrap();
        let expected: Vec<u8> = long_ok
            .iter()
            .flat_map(|&x| (x as i64).to_be_bytes())
            .collect();
        assert_eq!(bytes, expected);
        let error = encode("vector<bigint, 1>", Rows::F64(&[TWO_POW_63]), 0);
        assert!(error
            .unwrap_err()
            .to_string()
            .contains("out of range for bigint"));
        let error = encode("vector<bigint, 1>", Rows::F32(&[0.5]), 0).unwrap_err();
        assert!(error.to_string().contains("fraction"), "{error}");
    }

    #[test]
    fn integers_to_floats_must_be_exact() {
        let ok = [16_777_216i32, -16_777_216, 16_777_218];
        let bytes = encode("vector<float, 3>", Rows::I32(&ok), 0).unwrap();
        let expected: Vec<u8> = ok.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect();
        assert_eq!(bytes, expected);
        let error = encode("vector<float, 1>", Rows::I32(&[16_777_217]), 0).unwrap_err();
        assert!(error.to_string().contains("exactly as a float"), "{error}");
        let error = encode("vector<double, 1>", Rows::I64(&[i64::MAX]), 0).unwrap_err();
        assert!(error.to_string().contains("exactly as a double"), "{error}");
        let bytes = encode("vector<double, 1>", Rows::I64(&[1 << 53]), 0).unwrap();
        assert_eq!(bytes, ((1u64 << 53) as f64).to_be_bytes());
        let error = encode("vector<double, 1>", Rows::I64(&[(1 << 53) + 1]), 0).unwrap_err();
        assert!(error.to_string().contains("exactly"), "{error}");
    }

    #[test]
    fn half_floats_widen_exactly() {
        let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let bytes = encode("vector<float, 1>", Rows::F16(&halves), 0).unwrap();
        let expected: Vec<u8> = halves
            .iter()
            .flat_map(|&h| h.to_f32().to_be_bytes())
            .collect();
        assert_eq!(bytes, expected);
    }

    #[test]
    fn small_integers_widen_and_booleans_come_from_zero_and_one() {
        let bytes = encode("vector<bigint, 2>", Rows::U8(&[255, 0]), 0).unwrap();
        assert_eq!(bytes, [255i64.to_be_bytes(), 0i64.to_be_bytes()].concat());
        let bytes = encode("vector<int, 2>", Rows::I16(&[i16::MIN, -1]), 0).unwrap();
        assert_eq!(
            bytes,
            [i32::from(i16::MIN).to_be_bytes(), (-1i32).to_be_bytes()].concat()
        );
        let bytes = encode("vector<boolean, 3>", Rows::I8(&[1, 0, 1]), 0).unwrap();
        assert_eq!(bytes, [1, 0, 1]);
        let error = encode("vector<boolean, 3>", Rows::F32(&[1.0, 0.0, 2.0]), 0).unwrap_err();
        assert!(error.to_string().contains("row 0 (element 2)"), "{error}");
    }

    /// The value of a vint-prefixed element for `number` the slow, obvious way (through `Value`
    /// and `BigInt`), as the codec did before the direct kernels: the reference they must match.
    fn reference_value(
        number: Number,
        native: NativeType,
    ) -> Result<cqlwire_codec::value::Value, String> {
        use cqlwire_codec::value::Value;
        let integer = |min: i64, max: i64, name: &str| -> Result<i64, String> {
            let value = match number {
                Number::Int(i) => i,
                _ => {
                    let x = number.float().unwrap();
                    if x.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&x) {
                        x as i64
                    } else {
                        return Err(float_integer_problem(x, name));
                    }
                }
            };
            if (min..=max).contains(&value) {
                Ok(value)
            } else {
                Err(format!("is out of range for {name}"))
            }
        };
        let big_integer = |x: f64| <num_bigint::BigInt as num_traits::FromPrimitive>::from_f64(x);
        Ok(match native {
            NativeType::TinyInt => Value::TinyInt(integer(-128, 127, "tinyint")? as i8),
            NativeType::SmallInt => Value::SmallInt(integer(-32768, 32767, "smallint")? as i16),
            NativeType::Date => Value::Date(integer(0, u32::MAX.into(), "date")? as u32),
            NativeType::Time => Value::Time(integer(0, 86_399_999_999_999, "time")?),
            NativeType::Varint => Value::Varint(match number {
                Number::Int(i) => i.into(),
                _ => {
                    let x = number.float().unwrap();
                    if !(x.is_finite() && x.fract() == 0.0) {
                        return Err(float_integer_problem(x, "varint"));
                    }
                    big_integer(x).unwrap()
                }
            }),
            NativeType::Decimal => match number {
                Number::Int(i) => Value::Decimal {
                    unscaled: i.into(),
                    scale: 0,
                },
                _ => {
                    if !number.float().unwrap().is_finite() {
                        return Err("is not finite, so not a decimal".into());
                    }
                    let text = number.to_string();
                    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
                    Value::Decimal {
                        unscaled: format!("{whole}{fraction}").parse().unwrap(),
                        scale: fraction.len() as i32,
                    }
                }
            },
            _ => Value::Text(number.to_string()),
        })
    }

    /// Awkward numbers for every element type: limits on both sides, fractions, non-finite values,
    /// tiny and huge magnitudes, and random bit patterns.
    fn awkward_numbers() -> (Vec<f32>, Vec<f64>, Vec<i64>) {
        let mut doubles = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.5,
            -1.5,
            127.0,
            128.0,
            -128.0,
            -129.0,
            255.0,
            32767.0,
            32768.0,
            -32768.0,
            -32769.0,
            4_294_967_295.0,
            4_294_967_296.0,
            86_399_999_999_999.0,
            86_400_000_000_000.0,
            TWO_POW_63,
            -TWO_POW_63,
            1e19,
            -1e19,
            1e300,
            -1e-300,
            123_456.789,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut random = Random(3);
        for _ in 0..300 {
            let bits = random.next();
            doubles.push(f64::from_bits(bits));
            doubles.push((bits >> 20) as f64 / 1e3);
            doubles.push((bits as i64 >> (bits % 60)) as f64);
        }
        let floats: Vec<f32> = doubles.iter().map(|&x| x as f32).collect();
        let mut longs = vec![
            0,
            -1,
            127,
            128,
            -128,
            -129,
            255,
            256,
            32767,
            32768,
            -32768,
            -32769,
            i64::from(u32::MAX),
            i64::from(u32::MAX) + 1,
            86_399_999_999_999,
            86_400_000_000_000,
            i64::MAX,
            i64::MIN,
        ];
        for _ in 0..300 {
            let bits = random.next() as i64;
            longs.push(bits);
            longs.push(bits >> (bits as u64 % 64));
        }
        (floats, doubles, longs)
    }

    #[test]
    fn direct_element_kernels_match_the_value_codec() {
        let (floats, doubles, longs) = awkward_numbers();
        let halves: Vec<f16> = floats.iter().map(|&x| f16::from_f32(x)).collect();
        let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
        let shorts: Vec<i16> = longs.iter().map(|&x| x as i16).collect();
        let bytes: Vec<i8> = longs.iter().map(|&x| x as i8).collect();
        let unsigned: Vec<u8> = longs.iter().map(|&x| x as u8).collect();
        let inputs = [
            Rows::F16(&halves),
            Rows::F32(&floats),
            Rows::F64(&doubles),
            Rows::I8(&bytes),
            Rows::U8(&unsigned),
            Rows::I16(&shorts),
            Rows::I32(&ints),
            Rows::I64(&longs),
        ];
        let variable = [
            NativeType::Varint,
            NativeType::Decimal,
            NativeType::Text,
            NativeType::Ascii,
        ];
        for native in PREFIXED.into_iter().chain(variable) {
            let name = native.cql_name();
            let element = CqlType::Native(native);
            for rows in inputs {
                let mut valid = Vec::new();
                let mut expected = Vec::new();
                for index in 0..rows.len() {
                    let number = rows.number(index).unwrap();
                    let one = rows.slice(index, index + 1);
                    let got = encode(&format!("vector<{name}, 1>"), one, 5);
                    match reference_value(number, native) {
                        Ok(value) => {
                            let mut reference = Vec::new();
                            cqlwire_codec::value::encode_vector_element(
                                &element,
                                &value,
                                &mut reference,
                            )
                            .unwrap();
                            assert_eq!(got.as_ref().ok(), Some(&reference), "{name} {number}");
                            valid.push(index);
                            expected.extend_from_slice(&reference);
                        }
                        Err(problem) => {
                            let message =
                                format!("value {} {problem} at row 5 (element 0)", number.quoted());
                            assert_eq!(got.unwrap_err().to_string(), message, "{name}");
                        }
                    }
                }
                // All valid elements at once, as one row and as rows of one (bulk paths).
                if !valid.is_empty() {
                    let kept = keep(rows, &valid);
                    let ty = format!("vector<{name}, {}>", valid.len());
                    assert_eq!(
                        encode(&ty, Rows::from(&kept), 0).unwrap(),
                        expected,
                        "{name}"
                    );
                    let single = encode(&format!("vector<{name}, 1>"), Rows::from(&kept), 0);
                    assert_eq!(single.unwrap(), expected, "{name} rows of one");
                }
            }
        }
    }

    /// Random floats of every class: any bits (subnormals, NaN payloads, infinities, huge and tiny
    /// magnitudes), values around the edges of the variable kernels' positional fast path, small
    /// integers, and plain embedding-like values.
    fn float_bits(random: &mut Random, count: usize) -> (Vec<f32>, Vec<f64>) {
        let mut floats = Vec::with_capacity(count);
        let mut doubles = Vec::with_capacity(count);
        let edges = [1e-3, 1e6, 1e-4, 1e-5, 1e7, 1e15, 1e16, 0.0];
        for i in 0..count {
            let bits = random.next();
            let edge: f64 = edges[i % edges.len()];
            let step = (bits % 9) as i64 - 4;
            let (single, double) = match i % 6 {
                0 => (f32::from_bits(bits as u32), f64::from_bits(bits)),
                // Subnormal.
                1 => (
                    f32::from_bits(bits as u32 & 0x807f_ffff),
                    f64::from_bits(bits & 0x800f_ffff_ffff_ffff),
                ),
                // A few ulps from an edge, either sign.
                2 => (
                    f32::from_bits(((edge as f32).to_bits() as i64 + step) as u32),
                    f64::from_bits((edge.to_bits() as i64 + step) as u64),
                ),
                3 => ((bits % 2001) as f32 - 1000.0, (bits % 2001) as f64 - 1000.0),
                _ => {
                    // Uniform in ±[0, 4) with a random scale of 10^-4..10^8.
                    let unit = (bits >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0;
                    let scaled = unit * 10f64.powi((bits % 13) as i32 - 4);
                    (scaled as f32, scaled)
                }
            };
            floats.push(if bits & 1 << 62 != 0 { -single } else { single });
            doubles.push(if bits & 1 << 62 != 0 { -double } else { double });
        }
        (floats, doubles)
    }

    #[test]
    fn variable_kernels_match_the_general_path_on_random_bits() {
        let mut random = Random(11);
        let (floats, doubles) = float_bits(&mut random, 60_000);
        let halves: Vec<f16> = floats.iter().map(|&x| f16::from_f32(x)).collect();
        let longs: Vec<i64> = (0..20_000)
            .map(|i| match i % 4 {
                0 => random.next() as i64,
                1 => (random.next() as i64) >> (random.next() % 64),
                2 => [i64::MIN, i64::MAX, 0, -1, 127, 128, -128, -129][i / 4 % 8],
                _ => (random.next() % 2_000_001) as i64 - 1_000_000,
            })
            .collect();
        let ints: Vec<i32> = longs.iter().map(|&x| x as i32).collect();
        // Mostly tinyint-sized (runs of them take the varint kernel's 16-at-once path), with a
        // larger value now and then; and the same as i8.
        let shorts: Vec<i16> = (0..20_000)
            .map(|_| match random.next() % 40 {
                0 => random.next() as i16,
                1 => [127, -128, 128, -129][random.next() as usize % 4],
                _ => (random.next() % 256) as i16 - 128,
            })
            .collect();
        let bytes: Vec<i8> = shorts.iter().map(|&x| x as i8).collect();
        let inputs = [
            Rows::F16(&halves),
            Rows::F32(&floats),
            Rows::F64(&doubles),
            Rows::I8(&bytes),
            Rows::I16(&shorts),
            Rows::I32(&ints),
            Rows::I64(&longs),
        ];
        let natives = [
            NativeType::Text,
            NativeType::Ascii,
            NativeType::Varint,
            NativeType::Decimal,
        ];
        for native in natives {
            for rows in inputs {
                // Element by element through the general path; the elements that convert are kept.
                let mut general = Vec::new();
                let mut ends = Vec::new();
                let mut valid = Vec::new();
                let mut first_failure = None;
                for index in 0..rows.len() {
                    let number = rows.number(index).unwrap();
                    let mut one = Vec::new();
                    if write_variable(number, native, &mut Vec::new(), &mut one).is_ok() {
                        general.extend_from_slice(&one);
                        ends.push(general.len());
                        valid.push(index);
                    } else {
                        first_failure.get_or_insert(index);
                    }
                }
                // All of them as one row: fails at the same element.
                let mut out = vec![7];
                let failed =
                    variable::encode_rows(rows, rows.len(), native, &mut out, &mut Vec::new());
                assert_eq!(failed.err(), first_failure, "{native:?} {rows:?}");
                // The valid ones as rows of one and as one row (the output grows several times).
                let kept = keep(rows, &valid);
                let mut fast = vec![7];
                let mut fast_ends = Vec::new();
                variable::encode_rows(Rows::from(&kept), 1, native, &mut fast, &mut fast_ends)
                    .unwrap();
                assert_eq!(fast[1..], general[..], "{native:?}");
                let shifted: Vec<usize> = ends.iter().map(|end| end + 1).collect();
                assert_eq!(fast_ends, shifted, "{native:?}");
                let mut whole = Vec::new();
                let mut whole_ends = Vec::new();
                let count = valid.len().max(1);
                variable::encode_rows(
                    Rows::from(&kept),
                    count,
                    native,
                    &mut whole,
                    &mut whole_ends,
                )
                .unwrap();
                assert_eq!(whole, general, "{native:?}");
            }
        }
    }

    /// The elements of `rows` at `indices`, owned.
    fn keep(rows: Rows<'_>, indices: &[usize]) -> Elements {
        fn pick<T: Copy>(v: &[T], indices: &[usize]) -> Vec<T> {
            indices.iter().map(|&i| v[i]).collect()
        }
        match rows {
            Rows::F16(v) => Elements::F16(pick(v, indices)),
            Rows::F32(v) => Elements::F32(pick(v, indices)),
            Rows::F64(v) => Elements::F64(pick(v, indices)),
            Rows::I8(v) => Elements::I8(pick(v, indices)),
            Rows::U8(v) => Elements::U8(pick(v, indices)),
            Rows::I16(v) => Elements::I16(pick(v, indices)),
            Rows::I32(v) => Elements::I32(pick(v, indices)),
            Rows::I64(v) => Elements::I64(pick(v, indices)),
        }
    }

    #[test]
    fn prefixed_kernels_match_on_both_loop_builds() {
        let mut random = Random(5);
        let shorts: Vec<i16> = (0..4099).map(|_| random.next() as i16).collect();
        let days: Vec<i64> = (0..4099).map(|_| (random.next() >> 32) as i64).collect();
        compare_paths(&shorts, |x: i16| {
            let [hi, lo] = x.to_be_bytes();
            [2, hi, lo]
        });
        let expected: Vec<u8> = days
            .iter()
            .flat_map(|&d| [&[4u8][..], &(d as u32).to_be_bytes()].concat())
            .collect();
        assert_eq!(
            encode("vector<date, 4099>", Rows::I64(&days), 0).unwrap(),
            expected
        );
    }

    #[test]
    fn targets_must_be_vectors_of_number_like_types() {
        let registry = crate::types::UdtRegistry::new();
        for ty in [
            "list<float>",
            "vector<uuid, 2>",
            "vector<list<int>, 2>",
            "float",
        ] {
            let ty = crate::types::parse_type(ty, &registry).unwrap();
            assert!(matches!(
                VectorEncoder::new(&ty),
                Err(VectorError::Unsupported(_))
            ));
        }
    }

    #[test]
    fn shape_mismatch_is_an_error() {
        let error = encode("vector<float, 3>", Rows::F32(&[1.0; 4]), 0).unwrap_err();
        assert!(matches!(error, VectorError::Shape { .. }));
    }
}
