//! A pretrained image backbone through the runner: the fetched DINOv2-S/14 ONNX file
//! (`datasets/fetch dinov2-s`; CI fetches it first) fine-tuned on a few bundled Fashion-MNIST
//! images, with the methods that start from the base model.

use std::path::Path;

use data::error_chain;
use experiment::{ExperimentConfig, RunOptions, run};

const CONFIG: &str = r#"
[experiment]
name = "dinov2"
seeds = [2]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.05
ood = ["mnist_small"]
train_limit = 40
test_limit = 20
eval_batch_size = 20

[backbone]
pretrained = "dinov2-s"
dropout = 0.1

[train]
epochs = 1
batch_size = 20
lr = 5e-5

[[method]]
kind = "single"

[[method]]
kind = "mc_dropout"
samples = 2

[[method]]
kind = "hydra"
members = 2
keep = 3
calibration_samples = 20
train = { epochs = 0 }

[[method]]
kind = "lora_ensemble"
members = 2
rank = 2
"#;

#[test]
fn dinov2_fine_tunes_through_the_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets");
    assert!(
        root.join("dinov2-s/vit_s_focus.onnx").is_file(),
        "run `datasets/fetch dinov2-s` first"
    );
    let config = ExperimentConfig::parse(CONFIG).unwrap();
    let out = tempfile::tempdir().unwrap();
    let run_out = run(
        &config,
        &RunOptions {
            data_root: root,
            results_root: out.path().join("results"),
            cache_root: out.path().join("cache"),
            quiet: true,
            workers: None,
            no_train: false,
        },
    )
    .unwrap();
    let results = &run_out.summary.methods;
    assert_eq!(results.len(), 4);
    let single = &results[0];
    // DINOv2-S: 12 blocks of width 384 (about 21.7 M parameters) and a 10-class head.
    assert!(
        (21_000_000..23_000_000).contains(&single.cost.params),
        "{}",
        single.cost.params
    );
    for result in results {
        assert!(
            result.id.nll.is_finite(),
            "{}: {:?}",
            result.name,
            result.id
        );
        assert!(result.ood.contains_key("mnist_small"));
    }
    // Hydra keeps 3 of 6 heads per block in each of its 2 members: fewer FLOPs than 2 models.
    assert!(results[2].cost.flops < 2 * single.cost.flops);
    // LoRA-Ensemble on the pretrained DINOv2 as loaded: its adapters are its only training.
    let lora = &results[3];
    assert!(matches!(
        &lora.extra.outputs,
        Some(report::MethodOutputs::LoraEnsemble(l)) if l.frozen == report::outputs::Frozen::Pretrained
    ));
    assert_eq!(lora.train_cost.unwrap().trainings, 1);
}

#[test]
fn a_pretrained_backbone_takes_no_preset_or_shape() {
    for extra in ["preset = \"vit_tiny_28\"", "d_model = 64"] {
        let text = CONFIG.replace("[backbone]", &format!("[backbone]\n{extra}"));
        let err = ExperimentConfig::parse(&text)
            .map_err(|e| error_chain(&e))
            .unwrap_err();
        assert!(err.contains("shape of its pretrained checkpoint"), "{err}");
    }
}
