//! Ctrl-C and `kill`: a stop request that training honours between optimiser steps.
//!
//! A signal handler may do almost nothing safely, so it only records the signal; the training
//! loop looks at it before each step and returns [`TrainError::Interrupted`]. The checkpoint of
//! the last finished epoch is then intact (checkpoints are written whole, never in place), and a
//! rerun resumes from it. A second signal ends the process at once, for a user who will not wait.
//!
//! [`TrainError::Interrupted`]: crate::TrainError::Interrupted

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{LazyLock, Once};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// The signal that asked this process to stop; 0 while none has.
static REQUESTED: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Arc::default);

/// Handles SIGINT and SIGTERM from now on: the first asks training to stop at its next step;
/// with `second_exits`, a second ends the process at once with 128 + the signal's number.
/// A worker process passes `false`: Ctrl-C reaches it from the terminal and again from the main
/// process, and it must still stop cleanly. Idempotent.
pub fn install(second_exits: bool) -> io::Result<()> {
    static INSTALLED: Once = Once::new();
    let mut result = Ok(());
    INSTALLED.call_once(|| result = register(second_exits));
    result
}

fn register(second_exits: bool) -> io::Result<()> {
    let seen = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        if second_exits {
            // Registered before the flag is set, so it acts from the second signal on.
            flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&seen))?;
            flag::register(signal, Arc::clone(&seen))?;
        }
        flag::register_usize(signal, Arc::clone(&REQUESTED), signal as usize)?;
    }
    Ok(())
}

/// The signal that asked this process to stop, if one has.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal as i32),
    }
}

/// Asks this process to stop as `signal` would (for tests, and for code that stops a run
/// without a signal).
pub fn request(signal: i32) {
    REQUESTED.store(signal as usize, Ordering::SeqCst);
}

/// `SIGINT`, `SIGTERM`, or `signal N` for another number.
pub fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}
