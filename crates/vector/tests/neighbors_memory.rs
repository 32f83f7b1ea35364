//! The heap a ground truth read to k takes, measured by a counting allocator (this test binary's):
//! `fixtures/search/neighbors_wide.parquet` lists 25,000,000 ids in each of its 20 rows (4 GB of
//! ids decoded whole); read to k = 10 it must stay within 64 MiB. The allocator aborts the process
//! past 512 MiB of live heap, so a reader that holds whole lists fails here without taking the
//! machine's memory.

use cqlwire_vector::input::read_neighbors_to;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Heap bytes allocated and not freed, and their peak.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Live heap past which the process aborts.
const ABORT_ABOVE: usize = 512 << 20;

/// The system allocator, counting live bytes and their peak, aborting past [`ABORT_ABOVE`].
struct Capping;

impl Capping {
    fn grew(by: usize) {
        let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        PEAK.fetch_max(live, Ordering::Relaxed);
        if live > ABORT_ABOVE {
            std::process::abort();
        }
    }
}

// SAFETY: every call is forwarded unchanged to `System`; only the counters are added.
unsafe impl GlobalAlloc for Capping {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Capping::grew(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Capping::grew(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            Capping::grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator, which is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as for `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Capping = Capping;

#[test]
fn a_parquet_ground_truth_of_25_million_ids_a_row_read_to_k_10_takes_under_64_mib() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/search/neighbors_wide.parquet");
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let lists = read_neighbors_to(&path, None, 10).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert_eq!((lists.rows(), lists.k()), (20, 10));
    assert!(
        peak <= 64 << 20,
        "reading to k = 10 took {peak} bytes of heap at its peak"
    );
    eprintln!("peak heap reading 20 x 25,000,000 ids to k = 10: {peak} bytes");
}
