//! The in-use marks of a process: the cache folders it reads or trains, named in a file of the
//! cache (`in-use-<pid>.txt`) while it runs, so that `uqformer cache clean` leaves them alone.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file in the cache naming the folders process `pid` is using.
pub(crate) fn in_use_file(cache_root: &Path, pid: u32) -> PathBuf {
    cache_root.join(format!("in-use-{pid}.txt"))
}

/// The folders of the cache at `cache_root` this process has used so far, each marked in its
/// in-use file; the file is removed when this is dropped.
#[derive(Debug)]
pub struct InUse {
    cache_root: PathBuf,
    used: Mutex<BTreeSet<String>>,
}

impl InUse {
    pub fn new(cache_root: PathBuf) -> Self {
        Self {
            cache_root,
            used: Mutex::default(),
        }
    }

    /// Records `fingerprint` as used, in memory and in the in-use file (best effort: a cache
    /// that cannot take the file cannot be cleaned either).
    pub fn mark(&self, fingerprint: &str) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if used.insert(fingerprint.to_string()) {
            let _ = fs::create_dir_all(&self.cache_root).and_then(|()| {
                let mut file = fs::File::options()
                    .create(true)
                    .append(true)
                    .open(in_use_file(&self.cache_root, std::process::id()))?;
                writeln!(file, "{fingerprint}")
            });
        }
    }

    /// The fingerprints marked so far, in order.
    pub fn used(&self) -> Vec<String> {
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        used.iter().cloned().collect()
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let _ = fs::remove_file(in_use_file(&self.cache_root, std::process::id()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_written_once_each_and_removed_on_drop() {
        let root = tempfile::tempdir().unwrap();
        let file = in_use_file(root.path(), std::process::id());
        let marks = InUse::new(root.path().to_path_buf());
        for fingerprint in ["bb", "aa", "bb"] {
            marks.mark(fingerprint);
        }
        assert_eq!(marks.used(), ["aa", "bb"]);
        assert_eq!(fs::read_to_string(&file).unwrap(), "bb\naa\n");
        drop(marks);
        assert!(!file.exists());
    }
}
