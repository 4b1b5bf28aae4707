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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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

/// Runs `work` (on a pool thread, see [`on_pool`]) while the pool's other threads wait for
/// work by spinning, taking any job split off in the meantime, instead of going to sleep.
///
/// Why: an idle rayon thread sleeps after about 32 rounds of yielding, and waking it again
/// costs more than a small parallel op saves: a product of 51x64x256 multiply-adds on two
/// threads took 9.2-9.7 µs back to back but 22.6-29.0 µs with 50-200 µs of single-threaded
/// work between calls, against 16.3 µs on one thread (docs/performance.md). OpenMP's threads
/// (PyTorch's on the CPU) likewise spin between parallel regions. The cost is the other
/// threads' cores, busy for the whole of `work`: used for timed evaluation passes, which run
/// alone on the machine, and for training in a run without worker processes
/// (`experiment`'s `Trainer::spin`), not beside them.
pub fn hot<R>(work: impl FnOnce() -> R) -> R {
    hot_counted(work, Arc::default())
}

/// [`hot`], with `live` counting the spinners running (so a test can see them start and stop).
fn hot_counted<R>(work: impl FnOnce() -> R, live: Arc<AtomicUsize>) -> R {
    let Some(caller) = rayon::current_thread_index() else {
        return work();
    };
    /// Stops the spinning however `work` ends, a panic included.
    struct Stop(Arc<AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let stop = Stop(Arc::new(AtomicBool::new(false)));
    let spinner = Spinner {
        stop: stop.0.clone(),
        live,
        caller,
    };
    // One spinner on every thread of the pool (a spawned job could be taken back by the caller
    // and lost); the caller's own returns at once, or `work` would never resume.
    rayon::spawn_broadcast(move |context| {
        if context.index() != caller {
            spinner.clone().spin();
        }
    });
    work()
}

/// How long a spinner spins before it lets its thread go back to what lies under it.
const SLICE: Duration = Duration::from_micros(200);

/// One thread's share of [`hot`]'s spinning, a job that requeues itself slice by slice.
///
/// Why slices: rayon lets a thread that waits inside a job (a `join` whose other half was
/// stolen) run queued work meanwhile, its spinner included. A spinner that spun until `work`
/// ended would then bury that job, and `work` may need it: a deadlock. A slice ends, the thread
/// resumes the job under it if it can, and the requeued spinner runs again when it is free.
#[derive(Clone)]
struct Spinner {
    stop: Arc<AtomicBool>,
    live: Arc<AtomicUsize>,
    caller: usize,
}

impl Spinner {
    fn spin(self) {
        if self.stop.load(Ordering::Acquire) {
            return;
        }
        // Stolen by the caller (which takes queued work while it waits): it must not spin over
        // `work`, so the spinner is queued again for another thread to take back.
        if rayon::current_thread_index() != Some(self.caller) {
            self.live.fetch_add(1, Ordering::AcqRel);
            let start = Instant::now();
            while !self.stop.load(Ordering::Acquire) && start.elapsed() < SLICE {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::hint::spin_loop();
                }
            }
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
        // Once `work` has ended there is nothing to requeue for.
        if !self.stop.load(Ordering::Acquire) {
            rayon::spawn(move || self.spin());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// Waits (a bounded while, so a failure fails rather than hangs) until `live` is `n`.
    fn reaches(live: &AtomicUsize, n: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while live.load(Ordering::Acquire) != n {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// Inside `hot` every other thread of the pool spins, and once it returns (normally or by
    /// a panic) none does; parallel work inside it runs to the same result on every pool size,
    /// a panic in it reaches the caller, and the pool works as before afterwards.
    #[test]
    fn hot_runs_parallel_work_and_lets_the_pool_go() {
        let sum = |n: u64| (0..n).into_par_iter().map(|i| i * i).sum::<u64>();
        let expected = (0..100_000u64).map(|i| i * i).sum::<u64>();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let live = Arc::new(AtomicUsize::new(0));
                let all_spin = hot_counted(|| reaches(&live, threads - 1), live.clone());
                assert!(all_spin, "{threads} threads: {live:?} spinning");
                assert!(
                    reaches(&live, 0),
                    "{threads} threads: {live:?} still spinning"
                );
                let after_panic = live.clone();
                let hit =
                    std::panic::catch_unwind(move || hot_counted(|| panic!("inside"), after_panic));
                assert!(hit.is_err());
                assert!(reaches(&live, 0), "after a panic: {live:?} still spinning");
                assert_eq!(super::hot(|| sum(100_000)), expected, "{threads} threads");
                assert_eq!(super::hot(|| super::hot(|| sum(100_000))), expected);
            });
            assert_eq!(pool.install(|| sum(100_000)), expected);
        }
        // Off the pool: the work runs as it is.
        assert_eq!(super::hot(|| 7), 7);
    }

    /// A thread that takes its spinner while it waits inside a job of its own must get back to
    /// that job: here a pool thread runs `b`, whose spawned half the caller stole inside `hot`,
    /// and `hot`'s work waits for `b` to end. A spinner that spun until the work ended would
    /// never let `b` end (checked: with the slice removed, this test fails at its deadline).
    #[test]
    fn a_thread_under_its_spinner_still_finishes_its_job() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let (b_started, half_taken, b_done): (AtomicBool, AtomicBool, AtomicBool) =
            Default::default();
        // Waits a bounded while for `f`; `helping` takes queued rayon work meanwhile (as a
        // waiting pool thread does), else the thread only spins and takes nothing.
        let wait = |f: &AtomicBool, helping: bool| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !f.load(Ordering::Acquire) && Instant::now() < deadline {
                if !helping || rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::hint::spin_loop();
                }
            }
            f.load(Ordering::Acquire)
        };
        let finished = pool.install(|| {
            rayon::join(
                || {
                    assert!(wait(&b_started, false), "the other thread never took b");
                    // The spinner is queued for the other thread now, while it is inside b;
                    // stealing b's spawned half sends it to wait, where it takes the spinner.
                    hot(|| wait(&b_done, true))
                },
                || {
                    b_started.store(true, Ordering::Release);
                    rayon::scope(|s| {
                        s.spawn(|_| {
                            half_taken.store(true, Ordering::Release);
                            std::thread::sleep(Duration::from_millis(50));
                        });
                        // Let the caller steal the half rather than running it here.
                        assert!(wait(&half_taken, false), "the caller never took b's half");
                    });
                    b_done.store(true, Ordering::Release);
                },
            )
            .0
        });
        assert!(finished, "hot's work waited for b in vain");
    }
}
