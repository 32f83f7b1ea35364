//! The allocator every target runs under: the cap on a single allocation and the bound on the
//! live heap of each check ([`MemoryBound`], [`bounded`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write as _;
use std::io::Write;

/// The largest single allocation an input may cause: 64 MiB (and a little, for a TEXMEX row's
/// 4-byte prefix): the readers accept rows up to 64 MiB and a stream, whose size is unknown, gets a
/// row's buffer before its bytes arrive. Above it the input claimed a size its bytes do not hold,
/// or a limit is missing.
pub const ALLOCATION_LIMIT: usize = (64 << 20) + (64 << 10);

/// How much more than a file's size a reader may allocate at once for that file (I/O buffers,
/// messages): a file's size is known, so a reader must not trust a header beyond it.
pub(super) const FILE_ALLOCATION_SLACK: usize = 64 << 10;

/// Most bytes deflate (an HDF5 chunk's gzip filter) makes of one compressed byte.
pub const DEFLATE_RATIO: usize = 1032;

/// Most bytes an LZ4 block (CQL v4 body, v5 segment) inflates to per byte of block: a byte of a
/// match's length adds at most 255 bytes of output.
pub const LZ4_RATIO: usize = 255;

/// A bound on the live heap bytes a check may hold at once for an input of `n` bytes, with at
/// most `c` connections open at once ([`note_connections`]):
/// `per_input_byte × n + constant + min(decompressed_per_input_byte × n, retained_per_connection × c)`
/// (without `retained_per_connection`, the last term is `decompressed_per_input_byte × n`).
#[derive(Debug, Clone, Copy)]
pub struct MemoryBound {
    /// Bytes per input byte: copies, buffers and bookkeeping that follow the input.
    pub per_input_byte: usize,
    /// Bytes whatever the input: fixed buffers and one frame or block in flight.
    pub constant: usize,
    /// Bytes per input byte that decompressed data and what is kept of it may take: a small
    /// multiple of [`LZ4_RATIO`].
    pub decompressed_per_input_byte: usize,
    /// The most the library keeps of decompressed data per open connection, by its caps (`None`:
    /// no cap but the ratio).
    pub retained_per_connection: Option<usize>,
}

impl MemoryBound {
    /// The live heap bytes allowed for an input of `n` bytes with `connections` open at once.
    pub fn limit(&self, n: usize, connections: usize) -> usize {
        let decompressed = self.decompressed_per_input_byte.saturating_mul(n);
        let kept = match self.retained_per_connection {
            Some(cap) => decompressed.min(cap.saturating_mul(connections)),
            None => decompressed,
        };
        self.per_input_byte
            .saturating_mul(n)
            .saturating_add(self.constant)
            .saturating_add(kept)
    }
}

/// The measured run of [`bounded`] on this thread: the live heap before it, the input's length,
/// its bound, and the most connections open at once so far.
#[derive(Debug, Clone, Copy)]
struct Measured {
    before: isize,
    input_len: usize,
    bound: MemoryBound,
    connections: usize,
}

thread_local! {
    /// The largest single allocation on this thread since [`take_largest_allocation`].
    static LARGEST_ALLOCATION: Cell<usize> = const { Cell::new(0) };
    /// Heap bytes allocated and not yet freed by this thread (frees of another thread's
    /// allocations count here too, so it may go below zero).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The highest [`LIVE`] since the measured run began (see [`bounded`]).
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// The run [`bounded`] measures, if any.
    static MEASURED: Cell<Option<Measured>> = const { Cell::new(None) };
    /// Whether allocations are left out of [`PEAK`] and the bound (see [`unmeasured`]).
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

/// The largest single allocation made on this thread since the last call.
pub(super) fn take_largest_allocation() -> usize {
    LARGEST_ALLOCATION.try_with(|l| l.replace(0)).unwrap_or(0)
}

/// A line of at most 192 bytes formatted on the stack: the allocator cannot allocate to report.
struct StackLine {
    bytes: [u8; 192],
    len: usize,
}

impl std::fmt::Write for StackLine {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = (self.len + s.len()).min(self.bytes.len());
        self.bytes[self.len..end].copy_from_slice(&s.as_bytes()[..end - self.len]);
        self.len = end;
        Ok(())
    }
}

/// The system allocator, aborting the process on any allocation above [`ALLOCATION_LIMIT`] and,
/// inside [`bounded`], as soon as the live heap passes the run's [`MemoryBound`] (libFuzzer reports
/// the abort as a crash and saves the input). It counts each thread's live heap bytes and their
/// peak.
pub struct CappedAllocator;

impl CappedAllocator {
    /// Records an allocation of `size` bytes (`freed` bytes given back by a `realloc`); aborts
    /// when it is above a limit.
    fn allocated(size: usize, freed: usize) {
        // Const-initialised thread-locals without destructor: no allocation, no recursion.
        let _ = LARGEST_ALLOCATION.try_with(|l| l.set(l.get().max(size)));
        if size > ALLOCATION_LIMIT {
            // Writing a static message to unbuffered stderr does not allocate.
            let _ = std::io::stderr()
                .write_all(b"fuzz: allocation above ALLOCATION_LIMIT (64 MiB), aborting\n");
            std::process::abort();
        }
        let Ok(live) = LIVE.try_with(|l| {
            l.set(l.get() + size as isize - freed as isize);
            l.get()
        }) else {
            return;
        };
        if PAUSED.try_with(Cell::get).unwrap_or(true) {
            return;
        }
        let _ = PEAK.try_with(|p| p.set(p.get().max(live)));
        let Some(Some(run)) = MEASURED.try_with(Cell::get).ok() else {
            return;
        };
        let limit = run.bound.limit(run.input_len, run.connections);
        let above = live - run.before;
        if above > limit as isize {
            let mut line = StackLine {
                bytes: [0; 192],
                len: 0,
            };
            let _ = writeln!(
                line,
                "fuzz: live heap {above} bytes, over the limit of {limit} bytes for a {}-byte \
                 input with {} connection(s) open (MemoryBound), aborting",
                run.input_len, run.connections
            );
            let _ = std::io::stderr().write_all(&line.bytes[..line.len]);
            std::process::abort();
        }
    }

    /// Records `size` bytes freed.
    fn freed(size: usize) {
        let _ = LIVE.try_with(|l| l.set(l.get() - size as isize));
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the only additions are the counters and
// the size checks.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::allocated(layout.size(), 0);
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::allocated(layout.size(), 0);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the change in size (large blocks grow in place or by remapping).
        Self::allocated(new_size, layout.size());
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator, which is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Self::freed(layout.size());
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `check` on `data` under `bound`: the process aborts, naming the live heap reached, the
/// input's length and the limit, as soon as the heap live on this thread grows more than
/// `bound.limit` bytes above what was live before. Returns the peak reached above that (only
/// [`CappedAllocator`] counts: without it, 0).
pub fn bounded(data: &[u8], bound: MemoryBound, check: impl FnOnce(&[u8])) -> usize {
    let before = LIVE.with(Cell::get);
    let saved_peak = PEAK.replace(before);
    let saved = MEASURED.replace(Some(Measured {
        before,
        input_len: data.len(),
        bound,
        connections: 0,
    }));
    check(data);
    MEASURED.set(saved);
    let peak = PEAK.replace(saved_peak.max(PEAK.get()));
    usize::try_from(peak - before).unwrap_or(0)
}

/// Tells the run [`bounded`] measures that `open` connections are open at once (the bound grows
/// with the most seen).
pub fn note_connections(open: usize) {
    MEASURED.with(|m| {
        if let Some(mut run) = m.get() {
            run.connections = run.connections.max(open);
            m.set(Some(run));
        }
    });
}

/// Runs `f` with its allocations left out of the peak and the bound of [`bounded`]: for work of a
/// check that the commands do not do (building a `serde_json::Value` of a message to check it, or
/// the second decoding it compares). What `f` returns still counts as live afterwards.
pub fn unmeasured<T>(f: impl FnOnce() -> T) -> T {
    let was = PAUSED.replace(true);
    let out = f();
    PAUSED.set(was);
    out
}
