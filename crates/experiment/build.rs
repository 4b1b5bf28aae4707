//! Records the commit the binary is built from, and whether the checkout's tracked files were
//! unchanged then, for a run's provenance. Read at build time: read when a run ends, as it was,
//! it named whatever the checkout held by then (a study runs for hours while commits land).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // Set only when git answers, so the code reads their absence (`option_env!`) as unknown.
    let commit = git(&["rev-parse", "HEAD"]);
    let clean = (commit.as_ref())
        .and_then(|_| git(&["--no-optional-locks", "status", "--porcelain", "-uno"]))
        .map(|changes| changes.is_empty());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=UQFORMER_BUILD_COMMIT={commit}");
    }
    if let Some(clean) = clean {
        println!("cargo:rustc-env=UQFORMER_BUILD_TREE_CLEAN={clean}");
    }
    // Again when HEAD or its branch moves or a source or manifest of the workspace changes: what
    // the binary is built from. Not on the index, which git may rewrite at any status (a missing
    // path would rerun every build too).
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let git_paths = ["HEAD", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref())
        .filter_map(|p| git(&["rev-parse", "--git-path", p]));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sources = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|crate_dir| crate_dir.path().join("src"));
    let manifests = ["Cargo.toml", "Cargo.lock"].map(|f| root.join(f));
    let paths = git_paths.map(Into::into).chain(sources).chain(manifests);
    for path in paths.filter(|p: &PathBuf| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
