//! Runs a program's tensor work on a thread of rayon's pool.
//!
//! Why: burn-flex splits its ops over rayon's global pool. Called from a thread outside the
//! pool (a program's main thread), every parallel op is handed to a pool thread and the caller
//! sleeps until it is done: a futex wake-up and two context switches per op, even with one
//! thread (`RAYON_NUM_THREADS=1`), where the op then runs on the one pool thread while the main
//! thread waits. A training step of the quick-start model makes hundreds of such ops; a
//! profile of it on one thread put these hand-offs at about 15% of the samples
//! (docs/performance.md). Run from a pool thread, an op runs in place and only the split-off
//! halves travel, by work stealing.

/// Stack of the pool's threads: the size of a main thread's, since the whole program body runs
/// on one of them (rayon's default is 2 MiB).
const STACK_BYTES: usize = 8 << 20;

/// Runs `work` on a thread of rayon's global pool and returns its result. The first call builds
/// the pool (threads from `RAYON_NUM_THREADS`, else one per core); call it before anything else
/// uses rayon, or the pool keeps rayon's default stack size.
pub fn on_pool<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    // Err only when the pool exists already: then it is used as it is.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build_global();
    rayon::scope(|_| work())
}
