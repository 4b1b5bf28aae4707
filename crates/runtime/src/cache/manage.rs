//! The cache as a whole, for `uqformer cache`: what it holds, and removing what is no longer
//! used.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::cache::lock::{LOCK_TIMES, abandoned};
use crate::error::{IoContext as _, Result, RuntimeError};
use serde::{Deserialize, Serialize};

/// One folder of the model cache, as `uqformer cache list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// The folder's name: the training's fingerprint (`<fingerprint>.damaged` once set aside).
    pub name: String,
    /// Epochs done, from `state.json`; `None` without a readable one.
    pub epochs_done: Option<usize>,
    /// Bytes of the files in the folder.
    pub bytes: u64,
    /// Unix seconds of the folder's newest file (of the folder itself when empty): when it was
    /// last used, since a training that reads the checkpoint back touches its `state.json`.
    pub modified: Option<u64>,
    /// Who first trained it; `None` for folders made before this was recorded.
    pub made_by: Option<MadeBy>,
}

/// The experiment and training that created a cache folder (`made-by.json` in it). Another
/// experiment with the same recipe reuses the folder and leaves this as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MadeBy {
    pub experiment: String,
    /// The training's label: `seed 0 model 2` (a base model) or `seed 0 <method> <what>`.
    pub training: String,
}

impl MadeBy {
    pub const FILE: &str = "made-by.json";

    fn read(dir: &Path) -> Option<Self> {
        serde_json::from_slice(&fs::read(dir.join(Self::FILE)).ok()?).ok()
    }
}

/// The part of a checkpoint's `state.json` the listing reads: its epochs (a state without a
/// fingerprint is not a checkpoint's, as for the trainer's own reading).
#[derive(Deserialize)]
struct StateEpochs {
    epochs_done: usize,
    #[serde(rename = "fingerprint")]
    _fingerprint: String,
}

impl CacheEntry {
    /// Whether this is a damaged checkpoint set aside (`<fingerprint>.damaged`, `.damaged-N`).
    pub fn set_aside(&self) -> bool {
        self.name.contains(".damaged")
    }
}

/// The checkpoint folders under `cache_root`, by name; other files there (the workers'
/// configs) are left out. Reads only: nothing is checked, moved or removed.
pub fn list_cache(cache_root: &Path) -> Result<Vec<CacheEntry>> {
    let entries = match fs::read_dir(cache_root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(RuntimeError::invalid(format!(
                "{}: no model cache here (`uqformer run` makes one under <out>/.cache; see --cache)",
                cache_root.display()
            )));
        }
        Err(e) => return Err(e).at(cache_root),
    };
    let mut found = Vec::new();
    for entry in entries {
        let dir = entry.at(cache_root)?.path();
        if !dir.is_dir() {
            continue;
        }
        let mut item = CacheEntry {
            name: (dir.file_name()).map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            epochs_done: fs::read(dir.join("state.json"))
                .ok()
                .and_then(|text| serde_json::from_slice::<StateEpochs>(&text).ok())
                .map(|state| state.epochs_done),
            bytes: 0,
            modified: unix_seconds(&fs::metadata(&dir).at(&dir)?),
            made_by: MadeBy::read(&dir),
        };
        for file in fs::read_dir(&dir).at(&dir)? {
            let meta = file.at(&dir)?.metadata().at(&dir)?;
            if meta.is_file() {
                item.bytes += meta.len();
                item.modified = item.modified.max(unix_seconds(&meta));
            }
        }
        found.push(item);
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

fn unix_seconds(meta: &fs::Metadata) -> Option<u64> {
    let modified = meta.modified().ok()?;
    Some(modified.duration_since(UNIX_EPOCH).ok()?.as_secs())
}

/// The file of a run folder naming the cache folders the run used, one fingerprint a line.
pub const CACHE_KEYS: &str = "cache_keys.txt";

/// The fingerprints the newest run of `experiment` under `results_root` used (its
/// [`CACHE_KEYS`] file).
pub fn used_by_latest_run(results_root: &Path, experiment: &str) -> Result<BTreeSet<String>> {
    let exp_dir = results_root.join(experiment);
    let latest = exp_dir.join("LATEST");
    let run_id = match fs::read_to_string(&latest) {
        Ok(id) => id.trim().to_string(),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(RuntimeError::invalid(format!(
                "{}: no run of experiment `{experiment}` here (run it first, or see --out)",
                exp_dir.display()
            )));
        }
        Err(e) => return Err(e).at(&latest),
    };
    let keys = exp_dir.join(run_id).join(CACHE_KEYS);
    match fs::read_to_string(&keys) {
        Ok(text) => Ok(text.lines().map(str::to_string).collect()),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(RuntimeError::invalid(format!(
            "{}: missing (the run is older than {CACHE_KEYS}); run `{experiment}` again to \
             record what it uses",
            keys.display()
        ))),
        Err(e) => Err(e).at(&keys),
    }
}

/// What [`clean_cache`] removes: the checkpoint folders that meet every condition given.
#[derive(Debug, Clone, Default)]
pub struct Clean {
    /// Remove the folders whose fingerprint is not among these (a damaged checkpoint set aside
    /// never is).
    pub unused_by: Option<BTreeSet<String>>,
    /// Remove the folders last used (written or read back) before this Unix time.
    pub last_used_before: Option<u64>,
    /// Say what would go; remove nothing.
    pub dry_run: bool,
}

/// Removes the checkpoint folders `clean` selects and returns them (removes nothing on a dry
/// run). Refuses, removing nothing: no condition given; a folder that is not a model cache (an
/// entry neither a checkpoint folder nor a file the runs leave there); a selected folder in use
/// by a running process, or locked by a training under way (here or on a machine sharing the
/// cache).
pub fn clean_cache(cache_root: &Path, clean: &Clean) -> Result<Vec<CacheEntry>> {
    if clean.unused_by.is_none() && clean.last_used_before.is_none() {
        return Err(RuntimeError::invalid(
            "say what to remove: --unused-by FILES, --older-than DAYS, or both",
        ));
    }
    let entries = list_cache(cache_root)?;
    let in_use = in_use(cache_root)?;
    let doomed: Vec<CacheEntry> = (entries.into_iter())
        .filter(|e| {
            let unused = (clean.unused_by.as_ref())
                .is_none_or(|keep| e.set_aside() || !keep.contains(&e.name));
            let old = (clean.last_used_before).is_none_or(|t| e.modified.is_some_and(|m| m < t));
            unused && old
        })
        .collect();
    if let Some((e, marker)) = (doomed.iter()).find_map(|e| {
        in_use
            .iter()
            .find(|(_, keys)| keys.contains(&e.name))
            .map(|(m, _)| (e, m))
    }) {
        return Err(RuntimeError::invalid(format!(
            "{}: in use by a running process ({}); nothing removed (if no run is going on, \
             remove that file)",
            cache_root.join(&e.name).display(),
            marker.display()
        )));
    }
    if !clean.dry_run {
        for e in &doomed {
            let dir = cache_root.join(&e.name);
            fs::remove_dir_all(&dir).at(&dir)?;
        }
    }
    Ok(doomed)
}

/// The in-use files of the cache with the fingerprints they name; an error for an entry that
/// does not belong in a model cache.
fn in_use(cache_root: &Path) -> Result<Vec<(PathBuf, BTreeSet<String>)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(cache_root).at(cache_root)? {
        let entry = entry.at(cache_root)?;
        let path = entry.path();
        let kind = entry.file_type().at(&path)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() && is_checkpoint_folder(&name) {
            continue;
        }
        if kind.is_file() && name.starts_with("worker-config-") {
            continue;
        }
        // A training under way here or on another machine sharing the cache (`lock.rs`).
        if kind.is_file()
            && let Some(fingerprint) = name
                .strip_suffix(".lock")
                .or(name.strip_suffix(".lock.steal"))
            && is_checkpoint_folder(fingerprint)
        {
            if name.ends_with(".lock") && !abandoned(&path, LOCK_TIMES.stale) {
                found.push((path, BTreeSet::from([fingerprint.to_string()])));
            }
            continue;
        }
        if kind.is_file()
            && let Some(pid) = (name.strip_prefix("in-use-"))
                .and_then(|rest| rest.strip_suffix(".txt"))
                .and_then(|pid| pid.parse::<u32>().ok())
        {
            if running(pid) {
                let text = fs::read_to_string(&path).at(&path)?;
                found.push((path, text.lines().map(str::to_string).collect()));
            }
            continue;
        }
        return Err(RuntimeError::invalid(format!(
            "{}: not a model cache (`{name}` is not a checkpoint folder, named by a 16-digit hex \
             fingerprint); refusing to remove anything from it",
            cache_root.display()
        )));
    }
    Ok(found)
}

/// `<16 hex digits>`, or that set aside: `.damaged`, `.damaged-N`.
fn is_checkpoint_folder(name: &str) -> bool {
    let fingerprint = match name.split_once(".damaged") {
        None => name,
        Some((fingerprint, "")) => fingerprint,
        Some((fingerprint, n))
            if n.strip_prefix('-')
                .is_some_and(|n| n.parse::<u32>().is_ok()) =>
        {
            fingerprint
        }
        Some(_) => return false,
    };
    fingerprint.len() == 16
        && fingerprint
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether process `pid` is running; where that cannot be told (no `/proc`), it is assumed to.
fn running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::lock::lock_file;
    use crate::cache::marks::in_use_file;

    /// Writes `bytes` to `root/path`, making the folders on the way.
    fn write_in(root: &Path, path: &str, bytes: &[u8]) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    #[test]
    fn lists_checkpoint_folders_with_epochs_size_and_time() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, bytes: &[u8]| write_in(root.path(), path, bytes);
        // An old-style state (no checksums) still tells its epochs.
        let state = br#"{"epochs_done": 3, "fingerprint": "aaa"}"#;
        write("aaa/state.json", state);
        write("aaa/model-3.bpk", &[1; 10]);
        write("aaa/optim-3.bpk", &[2; 5]);
        write("aaa.damaged/state.json", b"garbage");
        write("worker-config-x.toml", b"[experiment]");
        fs::create_dir(root.path().join("empty")).unwrap();
        let listed = list_cache(root.path()).unwrap();
        let rows: Vec<_> = (listed.iter())
            .map(|e| (e.name.as_str(), e.epochs_done, e.bytes, e.set_aside()))
            .collect();
        assert_eq!(
            rows,
            [
                ("aaa", Some(3), state.len() as u64 + 15, false),
                ("aaa.damaged", None, 7, true),
                ("empty", None, 0, false),
            ]
        );
        assert!(listed.iter().all(|e| e.modified.is_some()));

        let e = list_cache(&root.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("no model cache"), "{e}");
    }

    /// Sets the time of `dir` and its files `days` back.
    fn age(dir: &Path, days: u64) {
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
        for file in fs::read_dir(dir).unwrap() {
            fs::File::open(file.unwrap().path())
                .unwrap()
                .set_modified(then)
                .unwrap();
        }
        fs::File::open(dir).unwrap().set_modified(then).unwrap();
    }

    #[test]
    fn cleans_what_is_unused_or_old_and_only_in_a_cache() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, bytes: &[u8]| write_in(root.path(), path, bytes);
        let (a, b) = ("00000000000000aa", "00000000000000bb");
        let damaged = format!("{a}.damaged");
        write(&format!("{a}/state.json"), b"{}");
        write(&format!("{b}/state.json"), b"{}");
        write(&format!("{damaged}/state.json"), b"garbage");
        write("worker-config-x.toml", b"[experiment]");
        age(&root.path().join(b), 10);
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let names = |r: Result<Vec<CacheEntry>>| -> Vec<String> {
            r.unwrap().into_iter().map(|e| e.name).collect()
        };
        let exists = |name: &str| root.path().join(name).exists();
        let used_a = Some(BTreeSet::from([a.to_string()]));

        // Unused by a run that used `a`: `b` and the damaged copy of `a`.
        let unused = Clean {
            unused_by: used_a.clone(),
            dry_run: true,
            ..Clean::default()
        };
        assert_eq!(names(clean_cache(root.path(), &unused)), [&damaged, b]);
        assert!(exists(a) && exists(b) && exists(&damaged), "a dry run");
        let old = Clean {
            last_used_before: Some(now - 5 * 86_400),
            dry_run: true,
            ..Clean::default()
        };
        assert_eq!(names(clean_cache(root.path(), &old)), [b]);
        let both = Clean {
            unused_by: used_a.clone(),
            ..old.clone()
        };
        assert_eq!(names(clean_cache(root.path(), &both)), [b]);

        // A running process (this one) uses `b`: refused, nothing removed.
        let unused = Clean {
            dry_run: false,
            ..unused
        };
        let marker = in_use_file(root.path(), std::process::id());
        fs::write(&marker, format!("{a}\n{b}\n")).unwrap();
        let e = clean_cache(root.path(), &unused).unwrap_err().to_string();
        assert!(e.contains(b) && e.contains("in use"), "{e}");
        assert!(exists(b) && exists(&damaged));
        // A marker of a process that is gone does not count.
        fs::rename(&marker, in_use_file(root.path(), u32::MAX)).unwrap();
        assert_eq!(names(clean_cache(root.path(), &unused)), [&damaged, b]);
        assert!(exists(a) && !exists(b) && !exists(&damaged));
        assert!(exists("worker-config-x.toml"));

        let e = clean_cache(root.path(), &Clean::default()).unwrap_err();
        assert!(e.to_string().contains("say what to remove"), "{e}");
        // Not a cache (here: the results folder above it): refused, nothing removed.
        let results = tempfile::tempdir().unwrap();
        fs::create_dir(results.path().join(".cache")).unwrap();
        fs::create_dir(results.path().join("quickstart")).unwrap();
        let e = clean_cache(results.path(), &old).unwrap_err().to_string();
        assert!(e.contains("not a model cache"), "{e}");
        assert!(results.path().join("quickstart").exists());
    }

    #[test]
    fn a_folder_locked_by_a_training_under_way_is_not_cleaned() {
        let root = tempfile::tempdir().unwrap();
        let a = "00000000000000aa";
        write_in(root.path(), &format!("{a}/state.json"), b"{}");
        let lock = lock_file(&root.path().join(a));
        fs::write(&lock, "elsewhere 12\n").unwrap();
        let unused = Clean {
            unused_by: Some(BTreeSet::new()),
            ..Clean::default()
        };
        let e = clean_cache(root.path(), &unused).unwrap_err().to_string();
        assert!(e.contains(a) && e.contains("in use"), "{e}");
        assert!(root.path().join(a).exists());
        // A lock not renewed for longer than the stale time: its holder is gone.
        let then = std::time::SystemTime::now() - 2 * LOCK_TIMES.stale;
        fs::File::open(&lock).unwrap().set_modified(then).unwrap();
        let removed = clean_cache(root.path(), &unused).unwrap();
        assert_eq!(removed.len(), 1);
        assert!(!root.path().join(a).exists());
    }
}
