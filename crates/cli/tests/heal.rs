//! `uqformer run` over a cache with damaged checkpoints: each damaged file is named in exactly
//! one warning (also when a worker process found it, and under `--quiet`), its folder is set
//! aside, and the metrics are those of the undamaged run. `uqformer cache list` shows both.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CONFIG: &str = r#"
[experiment]
name = "heal"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
train_limit = 200
test_limit = 60
eval_batch_size = 64

[backbone]
preset = "vit_tiny_28"
patch_size = 7
d_model = 16
n_layers = 1
n_heads = 2
d_mlp = 32
dropout = 0.1

[train]
epochs = 1
batch_size = 50

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 3
"#;

fn uqformer(args: &[&std::ffi::OsStr]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs the experiment (quiet, one worker); returns its stderr and the methods' metrics and
/// `train_cost.recovered`.
fn run(dir: &Path) -> (String, serde_json::Value, Vec<u64>) {
    let file = dir.join("heal.toml");
    fs::write(&file, CONFIG).unwrap();
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets");
    let results = dir.join("results");
    let out = uqformer(&[
        "run".as_ref(),
        file.as_ref(),
        "--out".as_ref(),
        results.as_ref(),
        "--data".as_ref(),
        datasets.as_ref(),
        "--quiet".as_ref(),
        "--workers".as_ref(),
        "1".as_ref(),
    ]);
    let summary = results.join("heal/latest/summary.json");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(summary).unwrap()).unwrap();
    let methods = summary["methods"].as_array().unwrap();
    let metrics = (methods.iter())
        .map(|m| serde_json::json!([m["name"], m["id"], m["ood"]]))
        .collect();
    let recovered = (methods.iter())
        .map(|m| m["train_cost"]["recovered"].as_u64().unwrap_or(0))
        .collect();
    (String::from_utf8(out.stderr).unwrap(), metrics, recovered)
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
    let (stderr, first, recovered) = run(dir.path());
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(recovered, [0, 0]);
    let cache = dir.path().join("results/.cache");
    let folders = checkpoints(&cache);
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

    let (stderr, healed, recovered) = run(dir.path());
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
    assert_eq!(recovered, [1, 3], "single stands on one member");
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

    let listed = uqformer(&[
        "cache".as_ref(),
        "list".as_ref(),
        "--cache".as_ref(),
        cache.as_ref(),
    ]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(
        listed.lines().filter(|l| l.contains(".damaged")).count(),
        3,
        "{listed}"
    );
    assert!(
        listed.contains("3 training(s) and 3 damaged checkpoint(s) set aside"),
        "{listed}"
    );

    // Healed: read back from the cache without a word.
    let (stderr, again, _) = run(dir.path());
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(again, first);
}
