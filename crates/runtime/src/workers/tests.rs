use super::*;

/// No signal in these tests.
fn never() -> bool {
    false
}

/// A fake worker: records the job and "runs" a trivial process.
fn pool_with(jobs: Vec<(Job, usize)>, claimed: &[Job], log: Arc<Mutex<Vec<Job>>>) -> Pool {
    let spawn: Arc<Spawn> = Arc::new(move |job, _slot| {
        log.lock().unwrap().push(job);
        Command::new("true").spawn()
    });
    Pool::start(jobs, claimed, 1, spawn, never)
}

#[test]
fn every_job_runs_exactly_once_by_main_or_a_worker() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let jobs = vec![
        (Job::Base(0), 0),
        (Job::Base(1), 0),
        (Job::Base(2), 0),
        (Job::Method(3), 1),
        (Job::Method(5), 3),
        (Job::Method(6), 1),
    ];
    let pool = pool_with(jobs.clone(), &[Job::Base(0)], Arc::clone(&log));
    let mut main = vec![];
    for (job, _) in &jobs {
        let before = log.lock().unwrap().clone();
        pool.claim(*job);
        if !before.contains(job) && !log.lock().unwrap().contains(job) {
            main.push(*job);
        }
        pool.done(*job);
    }
    drop(pool);
    let workers = log.lock().unwrap().clone();
    for (job, _) in &jobs {
        let n = main.iter().filter(|j| *j == job).count()
            + workers.iter().filter(|j| *j == job).count();
        assert_eq!(
            n, 1,
            "{job:?} ran {n} times (main {main:?}, workers {workers:?})"
        );
    }
}

#[test]
fn workers_take_base_models_first_then_methods_from_the_back_once_ready() {
    let state = |statuses: &[Status]| State {
        jobs: [
            (Job::Base(0), 0),
            (Job::Base(1), 0),
            (Job::Method(2), 1),
            (Job::Method(3), 2),
            (Job::Method(4), 1),
        ]
        .iter()
        .zip(statuses)
        .map(|(&(job, needs), &s)| (job, s, needs))
        .collect(),
        cancelled: false,
        paused: false,
    };
    use Status::{Done, Main, Queued, Running};
    // Base 0 is being trained: the queued base model comes first, no method is ready.
    let s = state(&[Main, Queued, Queued, Queued, Queued]);
    assert_eq!(next_job(&s), Some(1));
    let s = state(&[Main, Running, Queued, Queued, Queued]);
    assert_eq!(next_job(&s), None, "methods need base 0 done");
    // Base 0 done: the last method needing only it; one needing base 1 waits for it.
    let s = state(&[Done, Running, Queued, Queued, Queued]);
    assert_eq!(next_job(&s), Some(4));
    let s = state(&[Done, Running, Queued, Queued, Running]);
    assert_eq!(next_job(&s), Some(2));
    let s = state(&[Done, Done, Done, Queued, Done]);
    assert_eq!(next_job(&s), Some(3));
}

#[test]
fn a_paused_pool_starts_no_job_until_resumed() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let spawn_log = Arc::clone(&log);
    let spawn: Arc<Spawn> = Arc::new(move |job, _slot| {
        spawn_log.lock().unwrap().push(job);
        Command::new("sleep").arg("0.2").spawn()
    });
    let jobs = vec![(Job::Base(0), 0), (Job::Base(1), 0), (Job::Base(2), 0)];
    let pool = Pool::start(jobs, &[Job::Base(0)], 1, spawn, never);
    pool.pause();
    let started = log.lock().unwrap().len();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        log.lock().unwrap().len(),
        started,
        "a job started while paused"
    );
    pool.resume();
    for k in 0..3 {
        pool.claim(Job::Base(k));
        pool.done(Job::Base(k));
    }
    drop(pool);
    let mut all = log.lock().unwrap().clone();
    all.sort_by_key(|j| j.to_string());
    all.dedup();
    assert_eq!(all.len(), log.lock().unwrap().len(), "a job ran twice");
}

/// Each worker thread is one slot, and a slot (one device, with `[experiment] devices`) starts its
/// next process only once its last one has ended: one job a device at a time.
#[test]
fn a_slot_runs_one_job_at_a_time() {
    let last: Arc<Mutex<Vec<Option<u32>>>> = Arc::new(Mutex::new(vec![None; 2]));
    let overlaps = Arc::new(Mutex::new(Vec::new()));
    let spawned = Arc::new(Mutex::new(0usize));
    let (spawn_last, spawn_overlaps, spawn_count) = (
        Arc::clone(&last),
        Arc::clone(&overlaps),
        Arc::clone(&spawned),
    );
    let spawn: Arc<Spawn> = Arc::new(move |job, slot| {
        *spawn_count.lock().unwrap() += 1;
        let mut last = spawn_last.lock().unwrap();
        // The slot's previous process was waited for (reaped) before this one starts.
        if let Some(pid) = last[slot]
            && std::path::Path::new(&format!("/proc/{pid}")).exists()
        {
            spawn_overlaps.lock().unwrap().push((slot, job));
        }
        let child = Command::new("sleep").arg("0.05").spawn()?;
        last[slot] = Some(child.id());
        Ok(child)
    });
    let jobs: Vec<(Job, usize)> = (0..6).map(|k| (Job::Base(k), 0)).collect();
    let pool = Pool::start(jobs, &[], 2, spawn, never);
    // The main process takes nothing until the workers have had every job (or 10 s passed).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while *spawned.lock().unwrap() < 6 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for k in 0..6 {
        pool.claim(Job::Base(k));
        pool.done(Job::Base(k));
    }
    drop(pool);
    let overlaps = overlaps.lock().unwrap();
    assert!(overlaps.is_empty(), "{overlaps:?}");
    let used = last.lock().unwrap().iter().filter(|p| p.is_some()).count();
    assert_eq!(used, 2, "both slots ran jobs");
}
