//! The cache folder lock across processes: processes racing for one fingerprint hold it one at a
//! time, a live holder's lock is never taken, a killed holder's is taken over at once, and
//! another machine's only once it is stale. The other
//! processes are this test binary run again as `lock_child` with `LOCK_CHILD` set.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use runtime::cache::lock::{Attempt, FolderLock, LockTimes, lock_file, try_lock};

/// Short times so the test runs in seconds; the heartbeat renews 15 times within `stale`.
const TIMES: LockTimes = LockTimes {
    heartbeat: Duration::from_millis(100),
    stale: Duration::from_millis(1500),
    poll: Duration::from_millis(20),
};

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uqformer-lock-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits for the lock of `folder`, at most `limit`.
fn wait_for(folder: &Path, limit: Duration) -> FolderLock {
    let start = Instant::now();
    loop {
        match try_lock(folder, TIMES).unwrap() {
            Attempt::Held(lock) => return lock,
            Attempt::Busy(_) if start.elapsed() < limit => std::thread::sleep(TIMES.poll),
            Attempt::Busy(holder) => panic!("still held by {holder} after {limit:?}"),
        }
    }
}

fn append(path: &Path, line: &str) {
    let mut f = fs::File::options()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

/// This binary as a child process doing `job` (`race LOG` or `hold FLAG`) on `folder`.
fn child(folder: &Path, job: &str, file: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["lock_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(
            "LOCK_CHILD",
            format!("{job}\n{}\n{}", folder.display(), file.display()),
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Not a test of its own: the body of the child processes (does nothing without `LOCK_CHILD`).
#[test]
fn lock_child() {
    let Ok(spec) = std::env::var("LOCK_CHILD") else {
        return;
    };
    let [job, folder, file]: [&str; 3] = spec.lines().collect::<Vec<_>>().try_into().unwrap();
    let (folder, file) = (Path::new(folder), Path::new(file));
    let me = std::process::id();
    match job {
        // Hold the lock for a while, saying when it began and ended.
        "race" => {
            let _lock = wait_for(folder, Duration::from_secs(60));
            append(file, &format!("in {me}"));
            std::thread::sleep(Duration::from_millis(150));
            append(file, &format!("out {me}"));
        }
        // Hold the lock until killed.
        "hold" => {
            let _lock = wait_for(folder, Duration::from_secs(60));
            append(file, "held");
            std::thread::sleep(Duration::from_secs(120));
        }
        other => panic!("unknown child job {other}"),
    }
}

#[test]
fn racing_processes_hold_one_fingerprint_one_at_a_time() {
    let dir = temp_dir("race");
    let (folder, log) = (dir.join("00112233445566aa"), dir.join("log.txt"));
    let children: Vec<Child> = (0..4).map(|_| child(&folder, "race", &log)).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    // Each holder's `in` is followed by its own `out` before anyone else's `in`.
    let mut pids = std::collections::BTreeSet::new();
    for pair in lines.chunks(2) {
        let pid = pair[0].strip_prefix("in ").expect(&text);
        assert_eq!(pair[1], format!("out {pid}"), "{text}");
        pids.insert(pid);
    }
    assert_eq!(pids.len(), 4, "{text}");
    assert!(
        !lock_file(&folder).exists(),
        "the last holder removed the lock"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_live_holder_keeps_its_lock_and_a_killed_one_is_taken_over() {
    let dir = temp_dir("kill");
    let (folder, flag) = (dir.join("00112233445566bb"), dir.join("held.txt"));
    let mut holder = child(&folder, "hold", &flag);
    let start = Instant::now();
    while !flag.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child never took the lock"
        );
        std::thread::sleep(TIMES.poll);
    }
    // Twice the stale time: the heartbeat keeps the lock fresh, so it is never taken.
    let start = Instant::now();
    while start.elapsed() < 2 * TIMES.stale {
        match try_lock(&folder, TIMES).unwrap() {
            Attempt::Held(_) => panic!("took a live holder's lock"),
            Attempt::Busy(who) => assert!(who.ends_with(&format!(" {}", holder.id())), "{who}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
    // Its lock file stays behind; its holder has ended on this machine, so it is taken over at
    // once, without waiting for it to go stale.
    assert!(lock_file(&folder).exists());
    let Attempt::Held(lock) = try_lock(&folder, TIMES).unwrap() else {
        panic!("the lock of a process that ended was not taken over");
    };
    let text = fs::read_to_string(lock_file(&folder)).unwrap();
    assert!(
        text.trim().ends_with(&format!(" {}", std::process::id())),
        "{text}"
    );
    drop(lock);
    assert!(!lock_file(&folder).exists());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_lock_of_another_machine_is_taken_over_only_once_stale() {
    let dir = temp_dir("remote");
    let folder = dir.join("00112233445566cc");
    let lock = lock_file(&folder);
    fs::write(&lock, "another-machine 12\n").unwrap();
    match try_lock(&folder, TIMES).unwrap() {
        Attempt::Busy(who) => assert_eq!(who, "process another-machine 12"),
        Attempt::Held(_) => panic!("took a fresh lock of another machine"),
    }
    // Unrenewed for longer than the stale time: its holder is presumed dead.
    let then = std::time::SystemTime::now() - 2 * TIMES.stale;
    fs::File::open(&lock).unwrap().set_modified(then).unwrap();
    let Attempt::Held(held) = try_lock(&folder, TIMES).unwrap() else {
        panic!("a stale lock was not taken over");
    };
    drop(held);
    assert!(!lock.exists());
    let _ = fs::remove_dir_all(&dir);
}
