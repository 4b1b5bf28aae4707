//! A run whose cached model was damaged heals: the damaged checkpoint is set aside, the model
//! trained again from scratch to the same metrics, and the summary counts the recovery (and
//! resumes). The warning it prints: `crates/cli/tests/heal.rs`.

#[macro_use]
mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{bundled, serial};
use experiment::{ExperimentConfig, run};
use report::Summary;

const TINY: &str = concat!(
    r#"
[experiment]
name = "heal"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
train_limit = 200
test_limit = 100
eval_batch_size = 64

"#,
    tiny_vit!(1),
    r#"
[train]
epochs = 2
batch_size = 50

[[method]]
kind = "single"

[[method]]
kind = "mc_dropout"
samples = 2
"#
);

/// Everything of a summary that must not depend on timing.
fn metrics(s: &Summary) -> String {
    let rows: Vec<_> = (s.methods.iter())
        .map(|m| serde_json::json!([m.name, m.seed, m.id, m.ood]))
        .collect();
    serde_json::to_string(&rows).unwrap()
}

fn recovered(s: &Summary) -> Vec<usize> {
    (s.methods.iter())
        .map(|m| m.train_cost.unwrap().recovered)
        .collect()
}

fn resumed(s: &Summary) -> Vec<usize> {
    (s.methods.iter())
        .map(|m| m.train_cost.unwrap().resumed)
        .collect()
}

/// The one training of the run (the base model both methods use): its checkpoint folder.
fn the_checkpoint(root: &Path) -> PathBuf {
    let folders: Vec<_> = (fs::read_dir(root.join("cache")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    let [folder] = folders.as_slice() else {
        panic!("expected one checkpoint folder, found {folders:?}");
    };
    folder.clone()
}

#[test]
fn a_damaged_cached_model_is_retrained_to_the_same_metrics() {
    let _guard = serial();
    let config = ExperimentConfig::parse(TINY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = run(&config, &bundled(dir.path())).unwrap().summary;
    let folder = the_checkpoint(dir.path());
    assert_eq!(recovered(&first), [0, 0]);
    let cost = serde_json::to_value(first.methods[0].train_cost).unwrap();
    assert!(
        cost.get("recovered").is_none() && cost.get("resumed").is_none(),
        "omitted when 0: {cost}"
    );

    // Same length, 64 bytes flipped in the middle: it would decode, to other weights.
    let model = folder.join("model-2.bpk");
    let mut bytes = fs::read(&model).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid - 32..mid + 32]
        .iter_mut()
        .for_each(|b| *b ^= 0xA5);
    fs::write(&model, &bytes).unwrap();

    let healed = run(&config, &bundled(dir.path())).unwrap().summary;
    assert_eq!(metrics(&healed), metrics(&first));
    assert_eq!(
        recovered(&healed),
        [1, 1],
        "both methods stand on the healed model"
    );
    let aside = folder.with_file_name(format!(
        "{}.damaged",
        folder.file_name().unwrap().to_string_lossy()
    ));
    assert_eq!(fs::read(aside.join("model-2.bpk")).unwrap(), bytes);
    assert!(folder.join("state.json").is_file(), "a fresh checkpoint");
    assert_eq!(resumed(&healed), [0, 0]);

    // Read back from the cache: the same, and the recovery stays on the record.
    let cached = run(&config, &bundled(dir.path())).unwrap().summary;
    assert_eq!(metrics(&cached), metrics(&first));
    assert_eq!(recovered(&cached), [1, 1]);
}

/// A resume on a checkpoint's record (as an interrupted training leaves it; `train`'s tests
/// interrupt one) is counted in the summary of every method standing on the model.
#[test]
fn a_resume_on_the_checkpoints_record_is_counted_in_the_summary() {
    let _guard = serial();
    let config = ExperimentConfig::parse(TINY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = run(&config, &bundled(dir.path())).unwrap().summary;
    assert_eq!(resumed(&first), [0, 0]);
    let state = the_checkpoint(dir.path()).join("state.json");
    let mut json: serde_json::Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    json["history"] = serde_json::json!({ "resumed_from": [1] });
    fs::write(&state, serde_json::to_vec(&json).unwrap()).unwrap();

    let cached = run(&config, &bundled(dir.path())).unwrap().summary;
    assert_eq!(metrics(&cached), metrics(&first));
    assert_eq!(resumed(&cached), [1, 1]);
    assert_eq!(recovered(&cached), [0, 0]);
}
