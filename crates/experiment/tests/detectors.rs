//! Several OOD scores in one run: every listed score (output scores and feature-space detectors)
//! for every method and OOD set, near/far group means, the headline score's metrics unchanged by
//! the detectors beside it, and a detector that cannot be fitted named with its method.

#[macro_use]
mod common;

use common::{bundled, serial};
use data::error_chain;
use experiment::{ExperimentConfig, run};

const TINY: &str = concat!(
    r#"
[experiment]
name = "detectors"
seeds = [5]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
ood_score = SCORES
train_limit = 300
test_limit = 100
eval_batch_size = 64

"#,
    tiny_vit!(1),
    r#"
[train]
epochs = 1
batch_size = 50

[[method]]
kind = "single"
calibration = "temperature"

[[method]]
kind = "deep_ensemble"
members = 2

[[method]]
kind = "mc_dropout"
samples = 3
"#
);

const LISTED: [&str; 6] = [
    "energy",
    "msp",
    "mahalanobis",
    "relative_mahalanobis",
    "vim",
    "knn",
];

fn config(scores: &str, extra_data: &str) -> ExperimentConfig {
    let text = TINY.replace("SCORES", scores).replace(
        "eval_batch_size = 64",
        &format!("eval_batch_size = 64\n{extra_data}"),
    );
    ExperimentConfig::parse(&text).unwrap()
}

#[test]
fn every_listed_score_is_reported_per_set_and_group_and_leaves_the_rest_unchanged() {
    let _guard = serial();
    let dir = tempfile::tempdir().unwrap();
    let list = format!("{LISTED:?}");
    let listed = run(
        &config(&list, "ood_groups = { far = [\"mnist_small\"] }"),
        &bundled(dir.path()),
    )
    .unwrap();
    // The same models (from the cache) with the headline score alone.
    let alone = run(&config("\"energy\"", ""), &bundled(dir.path())).unwrap();

    let s = &listed.summary;
    assert_eq!(s.ood_scores, LISTED);
    assert_eq!(
        s.methods.len(),
        4,
        "single, single+ts, deep_ensemble, mc_dropout"
    );
    for (m, plain) in s.methods.iter().zip(&alone.summary.methods) {
        assert_eq!(m.name, plain.name);
        for score in LISTED {
            let o = &m.ood_scores[score]["mnist_small"];
            assert!((0.0..=1.0).contains(&o.auroc), "{} {score}: {o:?}", m.name);
            // One set in the group: its mean is that set's.
            let far = &m.ood_groups[score]["far"];
            assert_eq!((far.auroc, far.fpr95), (o.auroc, o.fpr95));
            assert_eq!(far.sets, ["mnist_small"]);
        }
        // The headline score fills `ood`; predicting the training split for the detectors
        // moves nothing else, MC Dropout's masks included.
        assert_eq!(m.ood, m.ood_scores["energy"]);
        assert_eq!(
            (&m.ood, &m.id, &m.shift),
            (&plain.ood, &plain.id, &plain.shift)
        );
        // (As JSON: OOD sets have no labels, so their ensemble gain is NaN.)
        let json = |d| serde_json::to_string(d).unwrap();
        assert_eq!(json(&m.diversity), json(&plain.diversity), "{}", m.name);
        assert!(plain.ood_scores.len() == 1 && plain.ood_groups.is_empty());
    }
    // Temperature scaling moves no feature, so only ViM (which reads logits) can differ.
    let (single, ts) = (&s.methods[0], &s.methods[1]);
    for score in ["mahalanobis", "relative_mahalanobis", "knn"] {
        assert_eq!(single.ood_scores[score], ts.ood_scores[score], "{score}");
    }

    let report = std::fs::read_to_string(listed.dir.join("report.md")).unwrap();
    for score in LISTED {
        assert!(
            report.contains(&format!("### `{score}`")),
            "{score}:\n{report}"
        );
    }
    // The far group is mnist_small alone: its columns would repeat the set's, so there are none.
    assert!(
        report.contains("mnist_small AUROC (%) ↑") && !report.contains("far AUROC (%) ↑"),
        "{report}"
    );
    assert!(listed.dir.join("fig-ood-scores.svg").exists());
}

#[test]
fn a_detector_that_cannot_be_fitted_names_the_method_and_the_detector() {
    let _guard = serial();
    let dir = tempfile::tempdir().unwrap();
    // 40 training images: KNN's k = 50 has too few neighbours.
    let text = TINY
        .replace("SCORES", "[\"msp\", \"knn\"]")
        .replace("train_limit = 300", "train_limit = 40");
    let config = ExperimentConfig::parse(&text).unwrap();
    let err = run(&config, &bundled(dir.path()))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("method `single`") && err.contains("knn detector") && err.contains("k = 50"),
        "{err}"
    );
}

#[test]
fn bad_score_lists_and_groups_are_refused_naming_the_field() {
    let refused = |scores: &str, extra: &str| {
        let text = TINY.replace("SCORES", scores).replace(
            "eval_batch_size = 64",
            &format!("eval_batch_size = 64\n{extra}"),
        );
        ExperimentConfig::parse(&text)
            .map_err(|e| error_chain(&e))
            .unwrap_err()
    };
    let err = refused("[\"msp\", \"mahalanobiss\"]", "");
    assert!(
        err.contains("data.ood_score") && err.contains("mahalanobiss"),
        "{err}"
    );
    assert!(
        err.contains("knn") && err.contains("energy"),
        "the valid names: {err}"
    );
    let err = refused("[\"knn\", \"knn\"]", "");
    assert!(err.contains("`knn` is listed twice"), "{err}");
    let err = refused("[]", "");
    assert!(
        err.contains("data.ood_score") && err.contains("empty"),
        "{err}"
    );
    let err = refused("\"msp\"", "ood_groups = { near = [\"animal_mnist\"] }");
    assert!(
        err.contains("data.ood_groups.near") && err.contains("animal_mnist"),
        "{err}"
    );
    let err = refused("\"msp\"", "ood_groups = { middle = [\"mnist_small\"] }");
    assert!(err.contains("middle"), "{err}");
}
