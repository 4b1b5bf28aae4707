//! The text path end to end: a synthetic VADER-format sentiment set (written here) on the fetched
//! all-MiniLM-L6-v2 checkpoint (`datasets/fetch all-minilm-l6-v2`; CI fetches it first), every
//! kind that takes text, and the refusals of kinds and settings that do not.

mod common;

use common::options;
use std::path::Path;

use data::error_chain;
use experiment::{ExperimentConfig, run};

const POSITIVE: [&str; 6] = [
    "a wonderful, moving film",
    "great acting and a lovely story",
    "i loved every minute of it",
    "funny, warm and beautifully shot",
    "one of the best movies this year",
    "a delight from start to finish",
];
const NEGATIVE: [&str; 6] = [
    "a dull and tedious mess",
    "terrible acting, awful script",
    "i hated every minute of it",
    "boring, lifeless and far too long",
    "one of the worst movies this year",
    "a waste of time and money",
];

/// A data root with VADER-format movie and tweet files and a link to the fetched checkpoint.
fn data_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let vader = root.path().join("vader");
    std::fs::create_dir_all(&vader).unwrap();
    let lines = |n: usize, prefix: &str| -> String {
        (0..n)
            .map(|i| {
                let (text, rating) = if i % 2 == 0 {
                    (POSITIVE[i / 2 % 6], 2.5)
                } else {
                    (NEGATIVE[i / 2 % 6], -2.5)
                };
                // A neutral row now and then: dropped by the loader.
                let extra = if i % 7 == 3 {
                    format!("{i}_n\t0\tso so\n")
                } else {
                    String::new()
                };
                format!("{i}\t{rating}\t{prefix}{text}\n{extra}")
            })
            .collect()
    };
    std::fs::write(
        vader.join("movieReviewSnippets_GroundTruth.txt"),
        lines(48, ""),
    )
    .unwrap();
    std::fs::write(vader.join("tweets_GroundTruth.txt"), lines(16, "@someone ")).unwrap();
    let minilm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/all-minilm-l6-v2");
    assert!(
        minilm.join("model.safetensors").is_file(),
        "{} is missing: run `datasets/fetch all-minilm-l6-v2`",
        minilm.display()
    );
    std::os::unix::fs::symlink(&minilm, root.path().join("all-minilm-l6-v2")).unwrap();
    root
}

const BASE: &str = r#"
[experiment]
name = "text"
seeds = [3]

[data]
dataset = "sentiment_movies"
test_fraction = 0.25
val_fraction = 0.2
ood = ["sentiment_tweets"]
max_tokens = 16
eval_batch_size = 16

[backbone]
pretrained = "all-minilm-l6-v2"
dropout = 0.1

[train]
epochs = 1
batch_size = 8
lr = 1e-4
"#;

const METHODS: &str = r#"
[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2

[[method]]
kind = "mc_dropout"
samples = 2

[[method]]
name = "hydra_taylor"
kind = "hydra"
members = 2
keep = 6
calibration_samples = 8
finetune = "encoder"
train = { epochs = 1 }

[[method]]
name = "hydra_circuit"
kind = "hydra"
members = 2
importance = "circuit"
importance_params = { objective = "loss", samples = 4, n = 2 }
keep = 6
calibration_samples = 4
bootstrap = false
temperature = 0.5
finetune = "head"
analysis = true

[[method]]
kind = "lora_ensemble"
members = 2
rank = 2

[[method]]
name = "lora_base"
kind = "lora_ensemble"
members = 2
rank = 2
backbone = "base"

[[method]]
name = "pruned_blocks"
kind = "pruned"
unit = "block"
ratio = 0.34
calibration_samples = 8

[[method]]
name = "hydra_on_blocks"
kind = "hydra"
base = "pruned_blocks"
members = 2
keep = 6
calibration_samples = 8
train = { epochs = 0 }
"#;

#[test]
fn every_text_kind_runs_on_a_pretrained_bert() {
    let root = data_root();
    let out = tempfile::tempdir().unwrap();
    let config = ExperimentConfig::parse(&format!("{BASE}{METHODS}")).unwrap();
    let run_out = run(&config, &options(root.path(), out.path())).unwrap();
    let results = &run_out.summary.methods;
    assert_eq!(results.len(), 9);
    let single = &results[0];
    for (result, spec) in results.iter().zip(&config.methods) {
        assert_eq!(result.members, spec.members(), "{}", spec.name);
        assert!(
            result.id.nll.is_finite() && (0.0..=1.0).contains(&result.id.accuracy),
            "{}: {:?}",
            spec.name,
            result.id
        );
        assert!(result.ood.contains_key("sentiment_tweets"), "{}", spec.name);
        assert!(result.shift.is_empty());
    }
    let flops = |i: usize| results[i].cost.flops;
    assert_eq!(
        flops(1),
        2 * flops(0),
        "Deep Ensemble of 2 = twice the single model"
    );
    // Hydra members keep half the heads: cheaper than the ensemble of full models.
    assert!(flops(3) < flops(1), "{} vs {}", flops(3), flops(1));
    assert!(single.cost.params > 22_000_000, "MiniLM and a head");
    // Members that never trained their token embeddings share one table: with half the heads
    // and averaged MLPs, two members store about as much as the single model.
    for hydra in &results[3..5] {
        assert!(
            hydra.cost.params < single.cost.params * 6 / 5,
            "{}: {} vs {}",
            hydra.name,
            hydra.cost.params,
            single.cost.params
        );
    }
    // LoRA-Ensemble freezes the pretrained weights by default on a pretrained backbone: its
    // training is the adapters' alone; on the seed's base model it also pays that model's.
    let (lora, lora_base) = (&results[5], &results[6]);
    let frozen = |r: &report::MethodResult| match &r.extra.outputs {
        Some(report::MethodOutputs::LoraEnsemble(l)) => Some(l.frozen),
        _ => None,
    };
    assert_eq!(frozen(lora), Some(report::outputs::Frozen::Pretrained));
    assert_eq!(frozen(lora_base), Some(report::outputs::Frozen::Base));
    let trainings = |r: &report::MethodResult| r.train_cost.unwrap().trainings;
    assert_eq!(trainings(lora), 1);
    assert_eq!(trainings(lora_base), 1 + trainings(single));
    assert_eq!(lora.cost.params, lora_base.cost.params);
    assert_ne!(
        lora.id.nll, lora_base.id.nll,
        "two different frozen backbones"
    );
    // Two of MiniLM's six blocks pruned by Taylor importance, dropped whole; Hydra's members are
    // drawn from the four left.
    let (pruned, on_pruned) = (&results[7], &results[8]);
    let plan = std::fs::read_to_string(run_out.dir.join("pruned_blocks-seed3-plan.json")).unwrap();
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let kept = plan["kept"].as_array().unwrap();
    assert_eq!(
        kept.iter()
            .filter(|b| !b.as_array().unwrap().is_empty())
            .count(),
        4
    );
    assert!(flops(7) < flops(0) && pruned.cost.params < single.cost.params);
    assert!(flops(8) < flops(3), "{} vs {}", flops(8), flops(3));
    assert_eq!(trainings(on_pruned), trainings(single));
    let analysis = run_out.dir.join("hydra_circuit-seed3-pruning.csv");
    assert_eq!(
        std::fs::read_to_string(analysis).unwrap().lines().count(),
        11
    );
}

#[test]
fn text_refuses_image_only_kinds_and_settings() {
    let refuse = |methods: &str, needle: &str| {
        let err = ExperimentConfig::parse(&format!("{BASE}{methods}"))
            .map_err(|e| error_chain(&e))
            .unwrap_err();
        assert!(err.contains(needle), "{err}");
    };
    let single = "\n[[method]]\nkind = \"single\"\n";
    let resized = BASE.replace("[data]", "[data]\nimage_size = 56");
    let err = ExperimentConfig::parse(&format!("{resized}{single}"))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("data.image_size") && err.contains("texts"),
        "{err}"
    );
    let needs_vit = "needs a Vision Transformer; the backbone is a BERT classifier";
    refuse("\n[[method]]\nkind = \"mimo\"\nmembers = 2\n", needs_vit);
    refuse("\n[[method]]\nkind = \"hetdpt\"\n", needs_vit);
    let vit_on_text = BASE.replace("\"all-minilm-l6-v2\"", "\"dinov2-s\"");
    let err = ExperimentConfig::parse(&format!("{vit_on_text}{single}"))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("backbone.pretrained") && err.contains("reads images"),
        "{err}"
    );
    let with_preset = BASE.replace("[backbone]", "[backbone]\npreset = \"vit_tiny_28\"");
    let err = ExperimentConfig::parse(&format!("{with_preset}{single}"))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(err.contains("shape of its pretrained checkpoint"), "{err}");
    let no_weights = BASE.replace("pretrained = \"all-minilm-l6-v2\"", "");
    let err = ExperimentConfig::parse(&format!("{no_weights}{single}"))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("backbone.pretrained") && err.contains("needs a BERT"),
        "{err}"
    );
    let image_ood = BASE.replace("ood = [\"sentiment_tweets\"]", "ood = [\"mnist_small\"]");
    let err = ExperimentConfig::parse(&format!("{image_ood}{single}"))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("data.ood") && err.contains("mnist_small"),
        "{err}"
    );
}

#[test]
fn a_missing_checkpoint_is_named() {
    let root = data_root();
    std::fs::remove_file(root.path().join("all-minilm-l6-v2")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let config =
        ExperimentConfig::parse(&format!("{BASE}\n[[method]]\nkind = \"single\"\n")).unwrap();
    let err = run(&config, &options(root.path(), out.path()))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("backbone.pretrained") && err.contains("vocab.txt"),
        "{err}"
    );
}
