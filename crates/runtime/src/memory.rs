//! Peak heap memory of the process, counted by a global allocator wrapper.
//!
//! The `uqformer` binary installs [`PeakAlloc`] as its global allocator; the runner resets the
//! peak before a measured forward pass and reads it after. On Burn's CPU backends (flex,
//! ndarray) tensors live on this heap, so this is the real peak; LibTorch and GPU devices
//! allocate elsewhere, and the cost table leaves their peak out
//! ([`crate::device::on_rust_heap`]). Without the allocator installed (library users, tests)
//! [`peak_bytes`] returns `None`.
//!
//! [`keep_freed_memory`] tunes the system allocator for tensor work; binaries call it first.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting live bytes and their peak.
pub struct PeakAlloc;

unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as GlobalAlloc::realloc, forwarded.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
            grow(new_size);
        }
        new
    }
}

fn grow(size: usize) {
    INSTALLED.store(true, Ordering::Relaxed);
    let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Starts a measurement: the peak becomes the current live size, which is returned.
pub fn reset_peak() -> usize {
    let now = CURRENT.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// Bytes above `baseline` at the peak since [`reset_peak`], if the allocator is installed.
pub fn peak_bytes(baseline: usize) -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| PEAK.load(Ordering::Relaxed).saturating_sub(baseline) as u64)
}

/// Makes glibc's allocator keep freed memory for reuse instead of returning it to the kernel.
///
/// Why: every tensor op allocates its output, and above glibc's mmap threshold (128 KiB, or
/// its adaptive value) each such block is a fresh mapping whose pages fault in on first touch
/// and are unmapped on free. On the quick-start model that page-fault and zeroing traffic cost
/// 25-45% of training and evaluation time (docs/performance.md). Serving blocks up to 32 MiB from
/// the heap and never trimming it makes freed tensors' pages reusable at once. Peak memory as
/// counted by [`PeakAlloc`] is unchanged (it counts live bytes); the process's resident size
/// stays at its high-water mark.
///
/// All threads also share glibc's main arena: the tensor work runs on rayon's threads
/// ([`crate::pool`]), and in the per-thread arenas glibc would give them these settings bought
/// less (MiniLM's training step on one thread 14 -> 17.5 samples/s with one arena,
/// docs/performance.md). A no-op where the allocator is not glibc's.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before threads allocate.
    unsafe {
        // 32 MiB is the largest threshold glibc accepts on 64-bit systems.
        let mapped = libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        let trimmed = libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        let one_arena = libc::mallopt(libc::M_ARENA_MAX, 1);
        debug_assert!(
            mapped == 1 && trimmed == 1 && one_arena == 1,
            "mallopt refused"
        );
    }
}
