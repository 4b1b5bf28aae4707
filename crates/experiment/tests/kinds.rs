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

/// The methods run here, as (kind, parameters); every registered kind must appear (the test
/// checks coverage).
const METHODS: &[(&str, &str)] = &[
    ("single", ""),
    ("deep_ensemble", "members = 2"),
    ("mc_dropout", "samples = 2"),
    ("lora_ensemble", "members = 2\nrank = 2"),
    ("batch_ensemble", "members = 2"),
    ("mimo", "members = 2"),
    ("packed_ensemble", "members = 2"),
    (
        "hydra",
        "name = \"hydra_taylor\"\nmembers = 2\nkeep = 1\nanalysis = true\ntrain = { epochs = 1 }",
    ),
    (
        "hydra",
        "name = \"hydra_circuit\"\nmembers = 2\nimportance = \"circuit\"\nimportance_params = { objective = \"avg\", samples = 8 }\ncalibration_samples = 8\ntrain = { epochs = 0 }",
    ),
    // The worked example of docs/extending.md, used from TOML by its registry name.
    (
        "hydra",
        "name = \"hydra_activation\"\nmembers = 2\nimportance = \"activation\"\ntrain = { epochs = 0 }",
    ),
    (
        "hetdpt",
        "importance_steps = 2\nimportance_images = 50\nmap_images = 50\ndegree = 1\nspeed = \"flops\"\nbudget = { min_speedup = 1.1 }\nfinetune_epochs = 1\nfinetune_images = 50",
    ),
];

#[test]
fn every_kind_runs_and_its_resolved_config_parses_back() {
    for kind in KINDS {
        assert!(
            METHODS.iter().any(|(k, _)| *k == kind.name),
            "kind `{}` is not exercised by this test: add it to METHODS",
            kind.name
        );
    }
    let mut text = BASE.to_string();
    for (kind, params) in METHODS {
        text += &format!("\n[[method]]\nkind = \"{kind}\"\n{params}\n");
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
            workers: None,
        },
    )
    .unwrap();
    let names: Vec<_> = out
        .summary
        .methods
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(names.len(), METHODS.len(), "{names:?}");
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
    // Training cost: the ensembles trained from scratch stand on their own training alone (one,
    // of the base recipe's 4 steps here); Hydra on the base model and its members' fine-tunes.
    let cost = |name: &str| {
        (out.summary.methods.iter())
            .find(|m| m.name == name)
            .and_then(|m| m.train_cost)
            .unwrap()
    };
    let single = cost("single");
    for name in ["batch_ensemble", "mimo", "packed_ensemble"] {
        let c = cost(name);
        assert_eq!((c.trainings, c.steps), (1, single.steps), "{name}: {c:?}");
    }
    assert_eq!(
        cost("hydra_taylor").trainings,
        1 + 2,
        "base model and two members"
    );
    // Method-specific results: head scores, the pruning analysis, the HetDPT report.
    let hydra = &out.summary.methods[7];
    assert!(hydra.extra.contains_key("head_scores") && hydra.extra.contains_key("kept_heads"));
    // Temperature 0 (the default) keeps each block's top heads: a top-k share of exactly 1.
    assert_eq!(hydra.extra["topk_share"], 1.0);
    let analysis = std::fs::read_to_string(out.dir.join("hydra_taylor-seed1-pruning.csv")).unwrap();
    assert_eq!(
        analysis.lines().count(),
        11,
        "a header and ratios 0.0 to 0.9"
    );
    assert!(out.dir.join("hetdpt-seed1-hetdpt.json").is_file());
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
