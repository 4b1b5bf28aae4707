//! What the end-to-end tests share.

use std::path::Path;

use experiment::RunOptions;

/// A quiet run in this process reading `root` (the data root) and writing results and its cache
/// under `out`.
pub fn options(root: &Path, out: &Path) -> RunOptions {
    RunOptions {
        data_root: root.to_path_buf(),
        results_root: out.join("results"),
        cache_root: out.join("cache"),
        quiet: true,
        workers: None,
        no_train: false,
    }
}
