//! `uqformer run` over a cache with damaged checkpoints: each damaged file is named in exactly
//! one warning (also when a worker process found it, and under `--quiet`), its folder is set
//! aside, and the metrics are those of the undamaged run. `uqformer cache list` shows both;
//! `uqformer cache clean --unused-by` removes the damaged ones and keeps what the run used.

#[macro_use]
mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = concat!(
    r#"
[experiment]
name = "heal"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
train_limit = 200
test_limit = 60
eval_batch_size = 64

"#,
    tiny_vit!(1),
    r#"
[train]
epochs = 1
batch_size = 50

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 3
"#
);

/// `uqformer cache ARGS --cache CACHE`: its stdout, or its stderr when it fails.
fn cache(cache: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .arg("cache")
        .args(args)
        .arg("--cache")
        .arg(cache)
        .output()
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    match out.status.success() {
        true => Ok(text(out.stdout)),
        false => Err(text(out.stderr)),
    }
}

/// Runs the experiment (quiet, one worker); returns its stderr, the methods' metrics and
/// `train_cost`.
fn run(dir: &Path) -> (String, Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let out = common::run_command(dir, "heal", CONFIG, 1)
        .arg("--quiet")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    let summary = common::summary(dir, "heal");
    let costs = (summary["methods"].as_array().unwrap().iter())
        .map(|m| m["train_cost"].clone())
        .collect();
    (stderr, common::metrics(&summary), costs)
}

fn recovered(costs: &[serde_json::Value]) -> Vec<u64> {
    (costs.iter())
        .map(|c| c["recovered"].as_u64().unwrap_or(0))
        .collect()
}

fn checkpoints(cache: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<_> = (fs::read_dir(cache).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
}

#[test]
fn each_damaged_checkpoint_is_named_once_set_aside_and_retrained() {
    let dir = tempfile::tempdir().unwrap();
    let (stderr, first, costs) = run(dir.path());
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(recovered(&costs), [0, 0]);
    let cache_dir = dir.path().join("results/.cache");
    let folders = checkpoints(&cache_dir);
    assert_eq!(folders.len(), 3, "three members, the first also `single`'s");

    // Three kinds of damage: truncated, same length with bytes flipped, removed.
    let files: Vec<PathBuf> = folders.iter().map(|f| f.join("model-1.bpk")).collect();
    let bytes = fs::read(&files[0]).unwrap();
    fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    let mut bytes = fs::read(&files[1]).unwrap();
    let mid = bytes.len() / 2;
    (bytes[mid - 32..mid + 32].iter_mut()).for_each(|b| *b ^= 0xA5);
    fs::write(&files[1], &bytes).unwrap();
    fs::remove_file(&files[2]).unwrap();

    let (stderr, healed, healed_costs) = run(dir.path());
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 3, "one warning per damaged file:\n{stderr}");
    for (file, why) in files
        .iter()
        .zip(["truncated", "checksum mismatch", "missing"])
    {
        let named: Vec<_> = (warnings.iter())
            .filter(|w| w.contains(&format!("{} ({why}", file.display())))
            .collect();
        assert_eq!(named.len(), 1, "{} ({why}) in\n{stderr}", file.display());
    }
    assert_eq!(healed, first, "retrained to the undamaged run's metrics");
    assert_eq!(
        recovered(&healed_costs),
        [1, 3],
        "single stands on one member"
    );
    let aside = |folder: &Path| PathBuf::from(format!("{}.damaged", folder.display()));
    for folder in &folders {
        assert!(
            aside(folder).join("state.json").is_file(),
            "{}",
            folder.display()
        );
        assert!(folder.join("state.json").is_file(), "retrained");
    }
    assert_eq!(
        fs::read(aside(&folders[1]).join("model-1.bpk")).unwrap(),
        bytes,
        "the damaged file is kept as it was"
    );

    let listed = cache(&cache_dir, &["list"]).unwrap();
    assert_eq!(
        listed.lines().filter(|l| l.contains(".damaged")).count(),
        3,
        "{listed}"
    );
    assert!(
        listed.contains("3 training(s) and 3 damaged checkpoint(s) set aside"),
        "{listed}"
    );
    // Each folder names what made it: the damaged one and its replacement alike.
    for k in 1..=3 {
        let maker = format!("  heal: seed 3 model {k}");
        let n = listed.lines().filter(|l| l.ends_with(&maker)).count();
        assert_eq!(n, 2, "{maker} in\n{listed}");
    }

    // What the healed run did not use: the damaged checkpoints set aside.
    let file = dir.path().join("heal.toml");
    let results = dir.path().join("results");
    let unused = [
        "--unused-by",
        file.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
    ];
    let dry = cache(&cache_dir, &[&["clean", "--dry-run"], &unused[..]].concat()).unwrap();
    assert!(dry.contains("would remove 3 folder(s)"), "{dry}");
    assert_eq!(dry.lines().filter(|l| l.contains(".damaged")).count(), 3);
    assert_eq!(
        checkpoints(&cache_dir).len(),
        6,
        "a dry run removes nothing"
    );
    // Refused: no condition, a folder that is not the cache.
    let e = cache(&cache_dir, &["clean"]).unwrap_err();
    assert!(e.contains("say what to remove"), "{e}");
    let e = cache(&results, &["clean", "--older-than", "0"]).unwrap_err();
    assert!(e.contains("not a model cache"), "{e}");
    let e = cache(&cache_dir, &["clean", "--unused-by", "nope.toml"]).unwrap_err();
    assert!(e.contains("nope.toml"), "{e}");
    assert_eq!(checkpoints(&cache_dir).len(), 6);
    let cleaned = cache(&cache_dir, &[&["clean"], &unused[..]].concat()).unwrap();
    assert!(cleaned.contains("removed 3 folder(s)"), "{cleaned}");
    assert_eq!(
        checkpoints(&cache_dir),
        folders,
        "the healed checkpoints stay"
    );

    // Healed and cleaned: read back from the cache without a word (not retrained: the same
    // recorded costs, wall seconds included).
    let (stderr, again, costs) = run(dir.path());
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(again, first);
    assert_eq!(costs, healed_costs);
}
