//! Training in parallel worker processes.
//!
//! A training run keeps about one CPU core busy (Burn's flex backend parallelises little at
//! these sizes), and its random draws come from a process-wide generator, so threads cannot
//! train side by side reproducibly. Separate processes can: each one re-runs the same seeded
//! training and leaves the result in the model cache, from which the main process then loads it.
//! Results are therefore bit-identical with and without workers.
//!
//! The main process walks its jobs in order and, for each, either claims it (still queued) or
//! waits for the worker that has it. Workers take queued jobs whose dependencies are done: base
//! models first, then the methods that train, from the last one backwards, so main and workers
//! meet in the middle. No job is ever run by two processes at once, which keeps the cache's
//! checkpoints consistent.
//!
//! What a worker is given to run is the caller's (`experiment::WorkerSpec`, passed to
//! [`command`] as JSON); this module knows only the jobs, their order and the processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Worker processes for a run: `exe worker ...` (the `uqformer` binary) and how many at once.
#[derive(Debug, Clone)]
pub struct Workers {
    pub exe: PathBuf,
    pub processes: usize,
    /// Workers print nothing but warnings (the run's `--quiet`); otherwise one line per epoch.
    pub quiet: bool,
}

/// One unit of training work of a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// Base model `k` of the seed (Deep Ensemble members after the first).
    Base(usize),
    /// Building method `i` of the config (its trainings land in the cache).
    Method(usize),
}

impl std::fmt::Display for Job {
    /// `base:K` or `method:I`, as progress lines and errors name the job.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Base(k) => write!(f, "base:{k}"),
            Job::Method(i) => write!(f, "method:{i}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Queued,
    /// Claimed by the main process.
    Main,
    /// Handed to a worker process.
    Running,
    Done,
}

struct State {
    /// Jobs with their status and the base models they need first.
    jobs: Vec<(Job, Status, usize)>,
    cancelled: bool,
    /// Workers start no new job (the main process is timing something).
    paused: bool,
}

/// Hands jobs to worker processes; the main process claims the rest.
pub struct Pool {
    shared: Arc<(Mutex<State>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
}

/// Whether this process has been asked to stop (a signal): workers then start no new job, and
/// a running one is asked to stop too.
pub type Stopping = fn() -> bool;

/// Builds the worker process for a job, run by worker thread `slot` (0-based: each slot runs
/// one job at a time, so a device given to one slot has one job at a time).
pub type Spawn = dyn Fn(Job, usize) -> std::io::Result<Child> + Send + Sync;

impl Pool {
    /// Starts `processes` worker threads over `jobs`, each with the number of base models it
    /// needs done before it can start; `claimed` jobs are the main process's from the outset.
    pub fn start(
        jobs: Vec<(Job, usize)>,
        claimed: &[Job],
        processes: usize,
        spawn: Arc<Spawn>,
        stopping: Stopping,
    ) -> Self {
        let state = State {
            jobs: jobs
                .into_iter()
                .map(|(job, needs)| {
                    let status = if claimed.contains(&job) {
                        Status::Main
                    } else {
                        Status::Queued
                    };
                    (job, status, needs)
                })
                .collect(),
            cancelled: false,
            paused: false,
        };
        let shared = Arc::new((Mutex::new(state), Condvar::new()));
        let threads = (0..processes)
            .map(|slot| {
                let shared = Arc::clone(&shared);
                let spawn = Arc::clone(&spawn);
                std::thread::spawn(move || worker_loop(&shared, spawn.as_ref(), slot, stopping))
            })
            .collect();
        Self { shared, threads }
    }

    /// Before the main process does `job` itself: claims it if still queued, waits for it if a
    /// worker has it. Either way the caller then runs it (a finished worker left it cached).
    pub fn claim(&self, job: Job) {
        let (lock, ready) = &*self.shared;
        let mut state = lock_state(lock);
        loop {
            match state.jobs.iter_mut().find(|(j, ..)| *j == job) {
                None | Some((_, Status::Done | Status::Main, _)) => return,
                Some((_, status @ Status::Queued, _)) => {
                    *status = Status::Main;
                    return;
                }
                Some((_, Status::Running, _)) => {
                    state = ready.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    /// Lets running worker jobs finish and starts no new one until [`Pool::resume`], so that
    /// the main process can time models on an otherwise idle CPU.
    pub fn pause(&self) {
        let (lock, ready) = &*self.shared;
        let mut state = lock_state(lock);
        state.paused = true;
        while state.jobs.iter().any(|(_, s, _)| *s == Status::Running) {
            state = ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn resume(&self) {
        let (lock, ready) = &*self.shared;
        lock_state(lock).paused = false;
        ready.notify_all();
    }

    /// The main process finished `job`.
    pub fn done(&self, job: Job) {
        let (lock, ready) = &*self.shared;
        let mut state = lock_state(lock);
        if let Some((_, status, _)) = state.jobs.iter_mut().find(|(j, ..)| *j == job) {
            *status = Status::Done;
        }
        ready.notify_all();
    }
}

impl Drop for Pool {
    /// Stops handing out jobs, ends running workers, and waits for the threads.
    fn drop(&mut self) {
        let (lock, ready) = &*self.shared;
        lock_state(lock).cancelled = true;
        ready.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn lock_state(lock: &Mutex<State>) -> MutexGuard<'_, State> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}

/// Base models first (in order), then methods from the last one backwards.
fn next_job(state: &State) -> Option<usize> {
    let base_done = |n: usize| {
        (0..n).all(|k| {
            state
                .jobs
                .iter()
                .any(|(j, s, _)| *j == Job::Base(k) && *s == Status::Done)
        })
    };
    let ready = |i: &usize| {
        let (_, status, needs) = state.jobs[*i];
        status == Status::Queued && base_done(needs)
    };
    let bases = (0..state.jobs.len()).filter(|&i| matches!(state.jobs[i].0, Job::Base(_)));
    let methods = (0..state.jobs.len())
        .rev()
        .filter(|&i| matches!(state.jobs[i].0, Job::Method(_)));
    bases.chain(methods).find(ready)
}

fn worker_loop(shared: &(Mutex<State>, Condvar), spawn: &Spawn, slot: usize, stopping: Stopping) {
    let (lock, ready) = shared;
    loop {
        let job = {
            let mut state = lock_state(lock);
            loop {
                if state.cancelled
                    || stopping()
                    || state.jobs.iter().all(|(_, s, _)| *s != Status::Queued)
                {
                    return;
                }
                if let Some(i) = next_job(&state).filter(|_| !state.paused) {
                    state.jobs[i].1 = Status::Running;
                    break state.jobs[i].0;
                }
                state = ready.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A failed worker is not an error here: the main process then runs the job itself and
        // reports whatever went wrong (or, for a killed one, resumes its checkpoint).
        if let Ok(child) = spawn(job, slot) {
            watch(child, || lock_state(lock).cancelled, stopping);
        }
        if let Some(entry) = lock_state(lock).jobs.iter_mut().find(|(j, ..)| *j == job) {
            entry.1 = Status::Done;
        }
        ready.notify_all();
    }
}

/// How long a worker asked to stop may take to reach its next training step.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Waits for a worker process to end. When this process is asked to stop (Ctrl-C, SIGTERM), so
/// is the worker, with SIGTERM, and it is given [`STOP_GRACE`] to stop at a training step with
/// its checkpoint whole; a run that ends otherwise (`cancelled`) kills it.
fn watch(mut child: Child, cancelled: impl Fn() -> bool, stopping: Stopping) {
    let mut asked: Option<std::time::Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => {}
        }
        let overdue = asked.is_some_and(|t| t.elapsed() > STOP_GRACE);
        if asked.is_none() && stopping() {
            // SAFETY: kill(2) on the pid of a child not yet reaped, so not reused.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            asked = Some(std::time::Instant::now());
        } else if overdue || (asked.is_none() && cancelled()) {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command that runs `spec` in a worker process: `exe worker <spec as JSON>`, so the
/// worker's command line is the spec type's, never a format the two sides each spell out.
pub fn command(exe: &Path, spec: &impl Serialize) -> Command {
    let mut command = Command::new(exe);
    let json = serde_json::to_string(spec).expect("a worker spec serialises");
    command
        .arg("worker")
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // A worker keeps its errors to itself (the main process re-runs a failed job and
        // reports them); what it prints is its epoch lines (unless quiet) and the notices that
        // are this run's too: a resumed training, a damaged checkpoint set aside.
        .stderr(Stdio::inherit());
    command
}

#[cfg(test)]
mod tests;
