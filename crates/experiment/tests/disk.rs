//! Data read from disk end to end: an image tree (PNG, written here) with an OOD tree beside it,
//! and a CSV of texts with a JSON-lines OOD set, each named in the experiment file by path.

mod common;

use common::{image_trees, options};
use std::path::Path;

use data::error_chain;
use experiment::{ExperimentConfig, run};

/// Runs `config` with data and results under `dir`: every method scores its test set and the
/// OOD set `ood`.
fn runs_with_ood(config: &ExperimentConfig, dir: &Path, ood: &str) {
    let out = run(config, &options(dir, dir)).unwrap();
    for result in &out.summary.methods {
        assert!(
            result.id.nll.is_finite(),
            "{}: {:?}",
            result.name,
            result.id
        );
        assert!(result.ood.contains_key(ood), "{:?}", result.ood.keys());
    }
}

const METHODS: &str = r#"
[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2
"#;

#[test]
fn an_image_folder_with_an_ood_folder_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let text = format!(
        r#"
[experiment]
name = "disk_images"
seeds = [1]

[data]
dataset = {{ path = "{}" }}
ood = [{{ path = "{}", name = "stripes" }}]
image_size = 8
val_fraction = 0.25
eval_batch_size = 16

[backbone]
preset = "vit_tiny_28"
patch_size = 4

[train]
epochs = 2
batch_size = 9
{METHODS}"#,
        shapes.display(),
        stripes.display()
    );
    let config = ExperimentConfig::parse(&text).unwrap();
    runs_with_ood(&config, dir.path(), "stripes");
    // Without an image size the tree cannot be read at one size: refused when the file is read.
    let e = ExperimentConfig::parse(&text.replace("image_size = 8\n", ""))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(e.contains("data.image_size") && e.contains("shapes"), "{e}");
}

#[test]
fn a_csv_of_texts_with_a_json_lines_ood_set_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let good = [
        "a wonderful, moving film",
        "great acting and a lovely story",
    ];
    let bad = ["a dull and tedious mess", "terrible acting, awful script"];
    let mut csv = String::from("id,sentence,label\n");
    for i in 0..32 {
        let (text, label) = match i % 2 {
            0 => (good[i / 2 % 2], "pos"),
            _ => (bad[i / 2 % 2], "neg"),
        };
        // Quoted: the texts hold commas.
        csv += &format!("{i},\"{text} #{i}\",{label}\n");
    }
    let csv_path = dir.path().join("reviews.csv");
    std::fs::write(&csv_path, csv).unwrap();
    let jsonl: String = (0..8)
        .map(|i| format!("{{\"sentence\": \"the weather on day {i}\", \"label\": \"pos\"}}\n"))
        .collect();
    let ood_path = dir.path().join("weather.jsonl");
    std::fs::write(&ood_path, jsonl).unwrap();
    let minilm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/all-minilm-l6-v2");
    assert!(
        minilm.join("model.safetensors").is_file(),
        "{} is missing: run `datasets/fetch all-minilm-l6-v2`",
        minilm.display()
    );
    std::os::unix::fs::symlink(&minilm, dir.path().join("all-minilm-l6-v2")).unwrap();
    let text = |column: &str| {
        format!(
            r#"
[experiment]
name = "disk_texts"
seeds = [2]

[data]
dataset = {{ path = "{}", text = "{column}" }}
ood = [{{ path = "{}", text = "sentence" }}]
test_fraction = 0.25
val_fraction = 0.25
max_tokens = 16
eval_batch_size = 16

[backbone]
pretrained = "all-minilm-l6-v2"

[train]
epochs = 1
batch_size = 8
lr = 1e-4
{METHODS}"#,
            csv_path.display(),
            ood_path.display()
        )
    };
    let config = ExperimentConfig::parse(&text("sentence")).unwrap();
    runs_with_ood(&config, dir.path(), "weather");
    // A column the file lacks is named with the file.
    let config = ExperimentConfig::parse(&text("review")).unwrap();
    let e = run(&config, &options(dir.path(), dir.path()))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(e.contains("reviews.csv") && e.contains("review"), "{e}");
}

/// `[backbone] checkpoint` names a checkpoint by path: a `transformers` ViT (the importers'
/// random fixture, 16x16 images) fine-tuned with a fresh head on an image tree, and the methods
/// built on it; data of another size are refused naming the size the checkpoint reads.
#[test]
fn a_checkpoint_named_by_path_is_fine_tuned_on_an_image_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let checkpoint = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../importers/tests/fixtures/vit/hf_vit_model")
        .canonicalize()
        .unwrap();
    let text = |side: usize| {
        format!(
            r#"
[experiment]
name = "disk_checkpoint"
seeds = [4]

[data]
dataset = {{ path = "{}" }}
ood = [{{ path = "{}", name = "stripes" }}]
image_size = {side}
val_fraction = 0.25

[backbone]
checkpoint = "{}"
dropout = 0.1

[train]
epochs = 1
batch_size = 9

[[method]]
kind = "single"

[[method]]
kind = "mc_dropout"
samples = 2

[[method]]
kind = "hydra"
members = 2
keep = 2
calibration_samples = 6
"#,
            shapes.display(),
            stripes.display(),
            checkpoint.display()
        )
    };
    let config = ExperimentConfig::parse(&text(16)).unwrap();
    runs_with_ood(&config, dir.path(), "stripes");
    let config = ExperimentConfig::parse(&text(8)).unwrap();
    let e = run(&config, &options(dir.path(), dir.path()))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(e.contains("image_size = 16"), "{e}");
}
