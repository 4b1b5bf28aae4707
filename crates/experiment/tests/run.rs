//! The runner end to end on the bundled data, with a very small model: the output contract,
//! identical metrics for the same seed, and a clear error for a data set that is not fetched.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use experiment::{ExperimentConfig, RunOptions, Summary, run};

/// Burn's CPU RNG is process-global: runs must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

const TINY: &str = r#"
[experiment]
name = "tiny"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
shift = [{ corruption = "gaussian_noise", severities = [2] }]
train_limit = 300
test_limit = 100
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
crop_padding = 1

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2

[[method]]
kind = "mc_dropout"
samples = 3
"#;

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets")
}

fn options(root: &Path) -> RunOptions {
    RunOptions {
        data_root: datasets(),
        results_root: root.join("results"),
        cache_root: root.join("cache"),
        quiet: true,
        workers: None,
    }
}

/// Everything of a summary that must not depend on timing.
fn metrics(s: &Summary) -> String {
    let rows: Vec<_> = s
        .methods
        .iter()
        .map(|m| serde_json::json!([m.name, m.members, m.seed, m.id, m.ood, m.shift]))
        .collect();
    serde_json::to_string(&rows).unwrap()
}

#[test]
fn writes_the_output_contract_and_repeats_exactly() {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let config = ExperimentConfig::parse(TINY).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = run(&config, &options(a.path())).unwrap();
    for file in ["config.toml", "summary.json", "report.md"] {
        assert!(
            first.dir.join(file).is_file(),
            "{file} missing in {}",
            first.dir.display()
        );
    }
    let latest = a.path().join("results/tiny/latest");
    assert_eq!(
        std::fs::canonicalize(latest).unwrap(),
        std::fs::canonicalize(&first.dir).unwrap()
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.dir.join("summary.json")).unwrap())
            .unwrap();
    let methods = json["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 3);
    assert_eq!(methods[1]["kind"], "deep_ensemble");
    assert_eq!(methods[1]["members"], 2);
    assert!(methods[0]["ood"]["mnist_small"]["auroc"].is_f64());
    assert!(methods[0]["shift"]["gaussian_noise-2"]["accuracy"].is_f64());
    assert!(
        methods[2]["cost"]["flops"].as_u64().unwrap()
            == 3 * methods[0]["cost"]["flops"].as_u64().unwrap()
    );
    // The resolved config is itself a valid experiment file.
    ExperimentConfig::parse(&std::fs::read_to_string(first.dir.join("config.toml")).unwrap())
        .unwrap();

    // Same seed, fresh cache (so everything is trained again): identical metrics.
    let second = run(&config, &options(b.path())).unwrap();
    assert_eq!(metrics(&first.summary), metrics(&second.summary));
    // Reusing the first cache skips training and still gives the same metrics.
    let cached = run(&config, &options(a.path())).unwrap();
    assert_eq!(metrics(&first.summary), metrics(&cached.summary));
    assert_ne!(cached.dir, first.dir, "each run gets its own folder");
}

#[test]
fn a_missing_dataset_says_to_run_fetch() {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let config =
        ExperimentConfig::parse(&TINY.replace("\"fashion_mnist_small\"", "\"fashion_mnist\""))
            .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        data_root: empty.path().to_path_buf(),
        ..options(empty.path())
    };
    let e = run(&config, &opts).unwrap_err().to_string();
    assert!(e.contains("datasets/fetch") && e.contains("fashion"), "{e}");
}

#[test]
fn unknown_backend_or_preset_is_rejected_when_parsed() {
    let e = ExperimentConfig::parse(&TINY.replace("seeds = [3]", "seeds = [3]\nbackend = \"tpu\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("experiment.backend") && e.contains("flex"),
        "{e}"
    );
    let e = ExperimentConfig::parse(&TINY.replace("\"vit_tiny_28\"", "\"vit_huge\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("backbone.preset") && e.contains("vit_tiny_28"),
        "{e}"
    );
    let e = ExperimentConfig::parse(&TINY.replace("\"gaussian_noise\"", "\"fog\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("data.shift.corruption") && e.contains("contrast"),
        "{e}"
    );
}
