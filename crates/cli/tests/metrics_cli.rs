//! `uqformer metrics` end to end: scikit-learn's values from .npy files, and clear failures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn uqformer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn fixture(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

#[test]
fn json_matches_scikit_learn() {
    let out = uqformer(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("labels.npy"),
        "--ood-probs",
        &fixture("ood_probs.npy"),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap())
            .unwrap();
    let expected = expected.as_object().unwrap();
    assert_eq!(
        got.as_object().unwrap().len(),
        expected.len(),
        "exactly the documented keys: {got}"
    );
    for (key, want) in expected {
        let value = got[key]
            .as_f64()
            .unwrap_or_else(|| panic!("missing {key} in {got}"));
        assert!(
            (value - want.as_f64().unwrap()).abs() < 1e-9,
            "{key}: {value} vs scikit-learn {want}"
        );
    }
}

#[test]
fn table_without_ood_lists_the_id_metrics() {
    let out = uqformer(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("labels.npy"),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("accuracy (%)") && text.contains("95.5000") && !text.contains("AUROC"),
        "{text}"
    );
}

fn failure(args: &[&str]) -> String {
    let out = uqformer(args);
    assert!(!out.status.success(), "should fail: {args:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn bad_inputs_fail_with_the_file_named() {
    let dir = std::env::temp_dir().join(format!("uqformer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let truncated = dir.join("truncated.npy");
    let bytes = std::fs::read(fixtures().join("probs.npy")).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 7]).unwrap();
    let truncated = truncated.display().to_string();

    let e = failure(&[
        "metrics",
        "--probs",
        &truncated,
        "--labels",
        &fixture("labels.npy"),
    ]);
    assert!(
        e.contains("truncated.npy") && e.contains("truncated"),
        "{e}"
    );
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("nope.npy"),
    ]);
    assert!(e.contains("nope.npy"), "{e}");
    // Labels given as probabilities: a float array where integers are expected.
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("ood_probs.npy"),
    ]);
    assert!(e.contains("ood_probs.npy") && e.contains("integer"), "{e}");
    // OOD predictions as labels: the count does not match the probabilities.
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("ood_probs.npy"),
        "--labels",
        &fixture("labels.npy"),
    ]);
    assert!(e.contains("labels.npy") && e.contains("[150]"), "{e}");
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("labels.npy"),
        "--ood-probs",
        &fixture("ood_probs.npy"),
        "--score",
        "max_logit",
    ]);
    assert!(e.contains("logits"), "{e}");
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &fixture("labels.npy"),
        "--score",
        "nope",
    ]);
    assert!(e.contains("--score"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The saved-features arguments of `scripts/cli_metrics_fixture.py`'s detector fixture.
fn feature_args() -> Vec<String> {
    let mut args = vec!["metrics".to_string()];
    for name in [
        "train_features",
        "train_labels",
        "features",
        "ood_features",
        "train_logits",
        "test_logits",
        "ood_feature_logits",
    ] {
        args.push(format!("--{}", name.replace('_', "-")));
        args.push(fixture(&format!("{name}.npy")));
    }
    args
}

#[test]
fn saved_features_score_as_the_numpy_references_do() {
    let mut args = feature_args();
    args.push("--json".into());
    let out = uqformer(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("expected_features.json")).unwrap(),
    )
    .unwrap();
    let detectors = got["detectors"].as_object().unwrap();
    assert_eq!(
        detectors.len(),
        4,
        "every detector, ViM too (logits given): {got}"
    );
    for (detector, metrics) in expected.as_object().unwrap() {
        for (key, want) in metrics.as_object().unwrap() {
            let value = detectors[detector][key].as_f64().unwrap();
            assert!(
                (value - want.as_f64().unwrap()).abs() < 1e-9,
                "{detector} {key}: {value} vs {want}"
            );
        }
    }
}

#[test]
fn saved_features_without_logits_skip_vim_and_bad_fits_name_the_detector() {
    let base: Vec<String> = feature_args().into_iter().take(9).collect();
    let out = uqformer(&base.iter().map(String::as_str).collect::<Vec<_>>());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("mahalanobis") && text.contains("knn") && !text.contains("vim"),
        "{text}"
    );
    let mut too_many = base.clone();
    too_many.extend(["--knn-k".into(), "301".into()]);
    let e = failure(&too_many.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("knn detector") && e.contains("k = 301"), "{e}");
    let mut vim = base;
    vim.extend(["--detectors".into(), "vim".into()]);
    let e = failure(&vim.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(e.contains("vim") && e.contains("logits"), "{e}");
}

/// The last line is the whole chain once: the file (named once), what failed, and the
/// operating system's error beneath it.
#[test]
fn a_missing_file_prints_the_chain_once() {
    let missing = fixture("nope.npy");
    let e = failure(&[
        "metrics",
        "--probs",
        &fixture("probs.npy"),
        "--labels",
        &missing,
    ]);
    let line = e.trim_end();
    assert!(!line.contains('\n'), "{e}");
    assert!(
        line.starts_with(&format!("error: {missing}: cannot read the file: ")),
        "{e}"
    );
    assert_eq!(line.matches("nope.npy").count(), 1, "{e}");
    // The OS's own message for a missing file (`No such file or directory (os error 2)`).
    let os = std::fs::read(&missing).unwrap_err().to_string();
    assert!(line.ends_with(&os), "{e} (expected to end with {os})");
}
