//! Every registered method kind runs end to end through the runner on a very small model, and
//! the resolved config it writes parses back to the same methods.

use std::path::Path;

use experiment::{ExperimentConfig, KINDS, RunOptions, run};

const BASE: &str = r#"
[experiment]
name = "kinds"
seeds = [1]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.05
ood = ["mnist_small"]
shift = [{ corruption = "contrast", severities = [3] }]
train_limit = 200
test_limit = 60
eval_batch_size = 32

[backbone]
preset = "vit_tiny_28"
patch_size = 7
d_model = 16
n_layers = 2
n_heads = 2
d_mlp = 32
dropout = 0.1

[train]
epochs = 1
batch_size = 50
"#;

/// The parameters each kind gets here; a new kind must be added (the test checks coverage).
const METHODS: &[(&str, &str)] = &[
    ("single", ""),
    ("deep_ensemble", "members = 2"),
    ("mc_dropout", "samples = 2"),
    ("lora_ensemble", "members = 2\nrank = 2"),
    ("batch_ensemble", "members = 2"),
    ("mimo", "members = 2"),
    ("packed_ensemble", "members = 2"),
];

#[test]
fn every_kind_runs_and_its_resolved_config_parses_back() {
    let mut text = BASE.to_string();
    for kind in KINDS {
        let Some((_, params)) = METHODS.iter().find(|(k, _)| *k == kind.name) else {
            panic!(
                "kind `{}` is not exercised by this test: add it to METHODS",
                kind.name
            );
        };
        text += &format!("\n[[method]]\nkind = \"{}\"\n{params}\n", kind.name);
    }
    let config = ExperimentConfig::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &config,
        &RunOptions {
            data_root: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets"),
            results_root: dir.path().join("results"),
            cache_root: dir.path().join("cache"),
            quiet: true,
        },
    )
    .unwrap();
    assert_eq!(out.summary.methods.len(), KINDS.len());
    for (result, spec) in out.summary.methods.iter().zip(&config.methods) {
        assert_eq!(result.kind, spec.kind);
        assert_eq!(result.members, spec.members(), "{}", spec.name);
        let id = &result.id;
        assert!(
            (0.0..=1.0).contains(&id.accuracy) && id.nll.is_finite() && id.ece.is_finite(),
            "{}: {id:?}",
            spec.name
        );
        assert!(
            result.cost.params > 0 && result.cost.flops > 0,
            "{}",
            spec.name
        );
    }
    let written = std::fs::read_to_string(out.dir.join("config.toml")).unwrap();
    let again = ExperimentConfig::parse(&written).unwrap();
    let names = |c: &ExperimentConfig| {
        c.methods
            .iter()
            .map(|m| (m.name.clone(), m.kind, m.params.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&again), names(&config));
}
