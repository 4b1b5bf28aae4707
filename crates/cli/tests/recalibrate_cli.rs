//! A run's saved predictions through `uqformer metrics` with a validation split: the same
//! temperature, conformal thresholds, coverage, set sizes and metrics as the run itself; its
//! saved features give the same feature-space detector scores.

mod common;

use std::path::Path;
use std::process::Command;

const CONFIG: &str = r#"
[experiment]
name = "recalibrate"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.2
ood = ["mnist_small"]
train_limit = 200
test_limit = 80
eval_batch_size = 40
ood_score = ["msp", "mahalanobis", "relative_mahalanobis", "knn"]

[backbone]
preset = "vit_tiny_28"
patch_size = 7
d_model = 16
n_layers = 1
n_heads = 2
d_mlp = 32

[train]
epochs = 1
batch_size = 50

[eval]
calibration = "temperature"
conformal_score = "raps(penalty=0.05, k_reg=2)"
conformal_alpha = 0.2
save_predictions = true

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2
"#;

/// `uqformer metrics --json` on method `name`'s saved files: each flag given the file of a set
/// and what it holds, then the `extra` arguments.
fn metrics_json(
    run: &Path,
    name: &str,
    files: &[(&str, &str, &str)],
    extra: &[&str],
) -> serde_json::Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_uqformer"));
    command.arg("metrics");
    for (flag, set, what) in files {
        command
            .arg(flag)
            .arg(run.join(format!("{name}-seed3-{set}-{what}.npy")));
    }
    let out = command.args(extra).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The test split's predictions.
const TEST: [(&str, &str, &str); 3] = [
    ("--probs", "test", "probs"),
    ("--labels", "test", "labels"),
    ("--logits", "test", "logits"),
];

/// Method `name`'s saved predictions, calibrated on its validation split with the run's
/// conformal score and level.
fn metrics(run: &Path, name: &str) -> serde_json::Value {
    let val = [
        ("--val-probs", "val", "probs"),
        ("--val-logits", "val", "logits"),
        ("--val-labels", "val", "labels"),
    ];
    let extra = [
        "--conformal",
        "raps",
        "--raps-penalty",
        "0.05",
        "--raps-k-reg",
        "2",
        "--alpha",
        "0.2",
    ];
    metrics_json(run, name, &[&TEST[..], &val[..]].concat(), &extra)
}

/// Method `name`'s saved features: the detectors fitted on its training split's features, test
/// against OOD.
fn detectors(run: &Path, name: &str) -> serde_json::Value {
    let features = [
        ("--train-features", "train", "features"),
        ("--train-labels", "train", "labels"),
        ("--features", "test", "features"),
        ("--ood-features", "ood-mnist_small", "features"),
    ];
    let extra = ["--detectors", "mahalanobis,relative_mahalanobis,knn"];
    metrics_json(run, name, &[&TEST[..2], &features[..]].concat(), &extra)["detectors"].clone()
}

#[test]
fn saved_predictions_give_the_runs_temperature_sets_and_detector_scores() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_command(dir.path(), "recalibrate", CONFIG, 0)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = common::summary(dir.path(), "recalibrate");
    // Each method and its temperature-scaled twin.
    assert_eq!(common::metrics(&summary).len(), 4);
    let run = dir.path().join("results/recalibrate/latest");
    let entry = |name: &str| {
        (summary["methods"].as_array().unwrap().iter())
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no entry {name}"))
            .clone()
    };
    for name in ["single", "deep_ensemble"] {
        let (raw, scaled) = (entry(name), entry(&format!("{name}+ts")));
        let cli = metrics(&run, name);
        // The same f32 predictions, widened and reduced by the same functions: equal bits.
        assert_eq!(cli["temperature"], scaled["temperature"], "{name}");
        for key in [
            "accuracy",
            "nll",
            "brier",
            "ece",
            "aece",
            "classwise_ece",
            "aurc",
            "augrc",
        ] {
            assert_eq!(cli[key], raw["id"][key], "{name} {key}");
            assert_eq!(cli["calibrated"][key], scaled["id"][key], "{name}+ts {key}");
        }
        let scored = detectors(&run, name);
        for detector in ["mahalanobis", "relative_mahalanobis", "knn"] {
            // The features the run scored, as f32 as they were computed: the same fit.
            let ran = &raw["ood_scores"][detector]["mnist_small"];
            for key in ["auroc", "aupr_in", "aupr_out", "fpr95"] {
                assert_eq!(scored[detector][key], ran[key], "{name} {detector} {key}");
            }
        }
        let sets = cli["conformal"].as_array().unwrap();
        assert_eq!(sets.len(), 2, "{name}: raw and temperature-scaled");
        for (set, result) in sets.iter().zip([&raw, &scaled]) {
            for key in ["score", "alpha", "threshold", "coverage", "set_size"] {
                assert_eq!(
                    set[key], result["conformal"][key],
                    "{name} {key} ({})",
                    set["predictions"]
                );
            }
        }
    }
}

#[test]
fn a_validation_split_that_does_not_fit_is_refused_by_name() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let arg = |name: &str| fixtures.join(name).display().to_string();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_uqformer"))
            .args([
                "metrics",
                "--probs",
                &arg("probs.npy"),
                "--labels",
                &arg("labels.npy"),
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success(), "should fail: {extra:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let (probs, ood, labels) = (arg("probs.npy"), arg("ood_probs.npy"), arg("labels.npy"));
    // (validation probabilities, the conformal score, alpha, what the error must say)
    let cases = [
        // Validation labels of another length than the validation predictions.
        (&ood, "aps", "0.1", vec!["labels.npy", "validation"]),
        // An unknown conformal score lists the known ones.
        (&probs, "lac", "0.1", vec!["--conformal", "thr, aps, raps"]),
        // A miscoverage level outside (0, 1).
        (&probs, "thr", "1.5", vec!["alpha = 1.5"]),
    ];
    for (val, score, alpha, says) in cases {
        let err = run(&[
            "--val-probs",
            val,
            "--val-labels",
            &labels,
            "--conformal",
            score,
            "--alpha",
            alpha,
        ]);
        assert!(says.iter().all(|s| err.contains(s)), "{err}");
    }
    // RAPS's penalty below 0.
    let err = run(&[
        "--val-probs",
        &probs,
        "--val-labels",
        &labels,
        "--conformal",
        "raps",
        "--raps-penalty=-0.5",
    ]);
    assert!(
        err.contains("--raps-penalty") && err.contains("penalty = -0.5"),
        "{err}"
    );
}
