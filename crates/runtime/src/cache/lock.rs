//! One lock per cache folder, for processes and machines that share a model cache (one
//! filesystem, NFS included), so that two of them never train one fingerprint at once: the one
//! that comes second waits (`Trainer::fit`), then reads the model back.
//!
//! The lock is the file `<fingerprint>.lock` beside the folder, created with `O_EXCL` (atomic on
//! local filesystems and NFS v3 and later), naming its holder (`host pid`). While it is held, a
//! thread renews the file's modification time every [`LockTimes::heartbeat`]; a lock not renewed
//! for [`LockTimes::stale`] belongs to a holder that died (killed, its machine lost) and is taken
//! over; so, at once, is the lock of a process of this machine that has ended. Taking over goes through a second `O_EXCL` file (`<fingerprint>.lock.steal`), so two
//! waiters never both take one lock; a steal file is itself given up after `stale`. Ages are
//! read against this machine's clock: machines sharing a cache need clocks that agree to well
//! within `stale` (NTP does).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::error::{Result, RuntimeError};

/// How often a holder renews its lock, after how long without renewal a lock is taken over, and
/// how often a waiter looks again.
#[derive(Debug, Clone, Copy)]
pub struct LockTimes {
    pub heartbeat: Duration,
    pub stale: Duration,
    pub poll: Duration,
}

/// A holder renews every 10 s and is presumed dead after 2 minutes without (twelve missed
/// renewals: a loaded machine or a slow NFS server delays a renewal, it does not skip twelve).
pub const LOCK_TIMES: LockTimes = LockTimes {
    heartbeat: Duration::from_secs(10),
    stale: Duration::from_secs(120),
    poll: Duration::from_secs(1),
};

/// The lock file of the cache folder `folder`.
pub fn lock_file(folder: &Path) -> PathBuf {
    let mut name = folder.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    folder.with_file_name(name)
}

/// A held lock: renewed until dropped, then removed.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
    /// What the file says (`host pid`): a lock taken over from this holder is not removed.
    holder: String,
    stop: Arc<AtomicBool>,
    heartbeat: Option<JoinHandle<()>>,
}

/// What [`try_lock`] found.
#[derive(Debug)]
pub enum Attempt {
    Held(FolderLock),
    /// Another holder's live lock, with what its file says (`host pid`).
    Busy(String),
}

/// One attempt at the lock of `folder`: held, or busy with a live holder. A stale lock is taken
/// over on the way.
pub fn try_lock(folder: &Path, times: LockTimes) -> Result<Attempt> {
    let path = lock_file(folder);
    for _ in 0..2 {
        match File::options().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                let holder = format!("{} {}", host(), std::process::id());
                writeln!(file, "{holder}")
                    .and_then(|()| file.sync_all())
                    .map_err(|e| RuntimeError::io(&path, e))?;
                return Ok(Attempt::Held(FolderLock::hold(
                    path,
                    holder,
                    times.heartbeat,
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if !abandoned(&path, times.stale) || !take_over(&path, times.stale)? {
                    return Ok(Attempt::Busy(holder(&path)));
                }
            }
            Err(e) => return Err(RuntimeError::io(&path, e)),
        }
    }
    Ok(Attempt::Busy(holder(&path)))
}

/// Whether the lock `path` is abandoned: not renewed for `stale`, or held by a process of this
/// machine that has ended (a killed worker's lock is taken over at once, not after `stale`).
pub fn abandoned(path: &Path, stale: Duration) -> bool {
    is_stale(path, stale) || ended_here(path)
}

/// Whether `path` exists and has not been renewed for `stale`.
fn is_stale(path: &Path, stale: Duration) -> bool {
    let modified = fs::metadata(path).and_then(|m| m.modified());
    modified.is_ok_and(|m| SystemTime::now().duration_since(m).unwrap_or_default() > stale)
}

/// Removes the stale lock `path` under the steal file; false when another waiter is taking it
/// over (or it was renewed meanwhile).
fn take_over(path: &Path, stale: Duration) -> Result<bool> {
    let mut steal = path.as_os_str().to_os_string();
    steal.push(".steal");
    let steal = PathBuf::from(steal);
    match File::options().write(true).create_new(true).open(&steal) {
        Ok(_) => {
            // Only the steal file's holder gets here: look again, then remove.
            let taken = abandoned(path, stale);
            if taken {
                remove_if_there(path)?;
            }
            remove_if_there(&steal)?;
            Ok(taken)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            // A taker that died between its two files leaves the steal file behind.
            if is_stale(&steal, stale) {
                remove_if_there(&steal)?;
            }
            Ok(false)
        }
        Err(e) => Err(RuntimeError::io(&steal, e)),
    }
}

fn remove_if_there(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(RuntimeError::io(path, e)),
        _ => Ok(()),
    }
}

/// What the lock file says of its holder (`host pid`).
fn holder(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    match text.trim() {
        "" => "a holder that has not written its name yet".into(),
        holder => format!("process {holder}"),
    }
}

/// Whether the lock's holder is a process of this machine that is no longer running (where
/// `/proc` tells; elsewhere only the lock's age counts).
fn ended_here(path: &Path) -> bool {
    let text = fs::read_to_string(path).unwrap_or_default();
    let Some((holder_host, pid)) = text.trim().rsplit_once(' ') else {
        return false;
    };
    let proc = Path::new("/proc");
    holder_host == host() && pid.parse::<u32>().is_ok() && proc.is_dir() && !proc.join(pid).exists()
}

/// This machine's name (`/proc/sys/kernel/hostname`; `localhost` where there is none).
fn host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl FolderLock {
    fn hold(path: PathBuf, holder: String, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (renewed, stopped) = (path.clone(), stop.clone());
        let heartbeat = std::thread::spawn(move || {
            let tick = every.min(Duration::from_millis(50));
            let mut last = SystemTime::now();
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                if last.elapsed().unwrap_or_default() >= every {
                    // Best effort: a renewal that fails is retried at the next beat.
                    if let Ok(file) = File::options().write(true).open(&renewed) {
                        let _ = file.set_modified(SystemTime::now());
                    }
                    last = SystemTime::now();
                }
            }
        });
        Self {
            path,
            holder,
            stop,
            heartbeat: Some(heartbeat),
        }
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(beat) = self.heartbeat.take() {
            let _ = beat.join();
        }
        if fs::read_to_string(&self.path).is_ok_and(|t| t.trim() == self.holder) {
            let _ = fs::remove_file(&self.path);
        }
    }
}
