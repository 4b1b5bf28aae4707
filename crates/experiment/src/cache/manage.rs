//! The cache as a whole, for `uqformer cache`: what it holds.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::time::UNIX_EPOCH;

use train::CheckpointState;

use crate::error::{Context, ExperimentError, Result};

/// One folder of the model cache, as `uqformer cache list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// The folder's name: the training's fingerprint (`<fingerprint>.damaged` once set aside).
    pub name: String,
    /// Epochs done, from `state.json`; `None` without a readable one.
    pub epochs_done: Option<usize>,
    /// Bytes of the files in the folder.
    pub bytes: u64,
    /// Unix seconds of the folder's newest file (of the folder itself when empty).
    pub modified: Option<u64>,
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
    let place = cache_root.display();
    let entries = match fs::read_dir(cache_root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(ExperimentError::invalid(format!(
                "{place}: no model cache here (`uqformer run` makes one under <out>/.cache; see --cache)"
            )));
        }
        Err(e) => return Err(e).context(&place),
    };
    let mut found = Vec::new();
    for entry in entries {
        let dir = entry.context(&place)?.path();
        if !dir.is_dir() {
            continue;
        }
        let mut item = CacheEntry {
            name: (dir.file_name()).map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            epochs_done: fs::read(dir.join("state.json"))
                .ok()
                .and_then(|text| serde_json::from_slice::<CheckpointState>(&text).ok())
                .map(|state| state.epochs_done),
            bytes: 0,
            modified: unix_seconds(&fs::metadata(&dir).context(dir.display())?),
        };
        for file in fs::read_dir(&dir).context(dir.display())? {
            let meta = file
                .context(dir.display())?
                .metadata()
                .context(dir.display())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_checkpoint_folders_with_epochs_size_and_time() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, bytes: &[u8]| {
            let path = root.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, bytes).unwrap();
        };
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
}
