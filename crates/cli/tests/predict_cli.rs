//! `uqformer predict` on the importers' ViT-family fixtures (scripts/vit_reference_fixtures.py)
//! and BERT-family fixtures (scripts/bert_reference_fixtures.py): its .npy output equals
//! `transformers`' and timm's outputs to 1e-4, logits with a classifier and pooled features (BERT,
//! RoBERTa: the pooler output) without; a wrong input or checkpoint fails naming the file and what
//! was expected.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ndarray::{Array2, Array3, Array4};
use ndarray_npy::{read_npy, write_npy};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures/vit")
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(value: &Value) -> Vec<f64> {
    (value.as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn uqformer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// The fixtures' input `[2, 3, 16, 16]` as a float32 .npy in `dir`.
fn input(dir: &Path) -> PathBuf {
    let input = json(&fixtures().join("input.json"));
    let values: Vec<f32> = numbers(&input["values"])
        .iter()
        .map(|&v| v as f32)
        .collect();
    let path = dir.join("x.npy");
    write_npy(
        &path,
        &Array4::from_shape_vec((2, 3, 16, 16), values).unwrap(),
    )
    .unwrap();
    path
}

fn predict(checkpoint: &Path, input: &Path, out: &Path) -> Output {
    let path = |p: &Path| p.display().to_string();
    let (checkpoint, input, out) = (path(checkpoint), path(input), path(out));
    uqformer(&[
        "predict",
        "--checkpoint",
        &checkpoint,
        "--input",
        &input,
        "--out",
        &out,
        "--batch-size",
        "1",
    ])
}

#[test]
fn outputs_match_the_reference_libraries() {
    let dir = tempfile::tempdir().unwrap();
    let x = input(dir.path());
    let names = [
        "hf_deit_teacher",
        "hf_vit_model",
        "timm_vit_classifier",
        "timm_deit_features",
    ];
    assert_matches(&fixtures(), &names, &x, dir.path());
}

#[test]
fn wrong_inputs_and_checkpoints_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("wrong.npy");
    write_npy(&wrong, &Array4::<f32>::zeros((2, 3, 8, 8))).unwrap();
    let run = predict(
        &fixtures().join("hf_vit_model"),
        &wrong,
        &dir.path().join("y.npy"),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("wrong.npy: shape [2, 3, 8, 8]"), "{stderr}");
    assert!(
        stderr.contains("expected pixel values [N, 3, 16, 16]"),
        "{stderr}"
    );
    let x = input(dir.path());
    let missing = dir.path().join("no_checkpoint");
    let run = predict(&missing, &x, &dir.path().join("y.npy"));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("no_checkpoint"), "{stderr}");
    assert!(stderr.contains("config.json"), "{stderr}");
}

fn bert_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures/bert")
}

/// The BERT fixtures' unpadded token ids `[3, 9]` as an int64 .npy in `dir`.
fn token_ids(dir: &Path) -> PathBuf {
    let input = json(&bert_fixtures().join("input.json"));
    let ids: Vec<i64> = numbers(&input["ids"]).iter().map(|&v| v as i64).collect();
    let path = dir.join("ids.npy");
    write_npy(&path, &Array2::from_shape_vec((3, 9), ids).unwrap()).unwrap();
    path
}

/// `predict` on each fixture `names` of `fixtures` gives its reference to 1e-4.
fn assert_matches(fixtures: &Path, names: &[&str], x: &Path, scratch: &Path) {
    for name in names {
        let diff = difference(fixtures, name, x, scratch);
        println!("{name}: max abs difference {diff:.2e}");
        assert!(diff <= 1e-4, "{name}: max abs difference {diff}");
    }
}

/// Runs `predict` on fixture `fixtures/name` and returns the largest difference from its
/// reference.
fn difference(fixtures: &Path, name: &str, x: &Path, scratch: &Path) -> f64 {
    let out = scratch.join(format!("{name}.npy"));
    let run = predict(&fixtures.join(name), x, &out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{name}: {stderr}");
    let got: Array2<f32> = read_npy(&out).unwrap();
    let reference = json(&fixtures.join(name).join("reference.json"));
    let shape: Vec<usize> = numbers(&reference["shape"])
        .iter()
        .map(|&v| v as usize)
        .collect();
    assert_eq!(got.shape(), shape.as_slice(), "{name}");
    (got.iter().zip(numbers(&reference["values"])))
        .map(|(&g, w)| (f64::from(g) - w).abs())
        .fold(0.0, f64::max)
}

#[test]
fn token_outputs_match_transformers() {
    let dir = tempfile::tempdir().unwrap();
    let x = token_ids(dir.path());
    let names = [
        "bert_classifier",
        "bert_model",
        "roberta_classifier",
        "roberta_model_small",
    ];
    assert_matches(&bert_fixtures(), &names, &x, dir.path());
}

#[test]
fn wrong_token_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let floats = dir.path().join("floats.npy");
    write_npy(&floats, &Array2::<f32>::zeros((2, 4))).unwrap();
    let cube = dir.path().join("cube.npy");
    write_npy(&cube, &Array3::<i64>::zeros((2, 4, 1))).unwrap();
    let large = dir.path().join("large.npy");
    write_npy(&large, &Array2::<i64>::from_elem((2, 4), 100)).unwrap();
    let padding = dir.path().join("padding.npy");
    write_npy(&padding, &Array2::<i64>::from_elem((1, 3), 1)).unwrap();
    let cases = [
        (
            "bert_model",
            &floats,
            "floats.npy: '<f4' array, expected int64 token ids",
        ),
        (
            "bert_model",
            &cube,
            "cube.npy: shape [2, 4, 1], expected token ids [N, L]",
        ),
        (
            "roberta_model",
            &large,
            "large.npy: token id 100, expected ids in 0..100",
        ),
        (
            "roberta_classifier",
            &padding,
            "padding.npy: token id 1 is RoBERTa's padding id",
        ),
    ];
    for (name, input, expected) in cases {
        let run = predict(
            &bert_fixtures().join(name),
            input,
            &dir.path().join("y.npy"),
        );
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{name}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}
