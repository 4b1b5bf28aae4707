//! `uqformer predict` on the importers' CLIP fixtures (scripts/clip_reference_fixtures.py): pixel
//! values and a texts file give transformers' `logits_per_image` to 1e-4, the texts tokenized by
//! the tokenizer in the checkpoint folder; a missing or misplaced `--texts`, a folder without a
//! tokenizer and wrong pixels fail naming the file and what was expected.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ndarray::{Array2, Array4};
use ndarray_npy::{read_npy, write_npy};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures")
}

fn reference() -> Value {
    let path = fixtures().join("clip/clip_tokenized/reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(value: &Value) -> Vec<f64> {
    (value.as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// The reference's pixel values `[2, 3, 16, 16]` (x.npy) and texts (texts.txt) in `dir`.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let reference = reference();
    let values: Vec<f32> = (numbers(&reference["pixel_values"]["values"]).iter())
        .map(|&v| v as f32)
        .collect();
    let x = dir.join("x.npy");
    write_npy(&x, &Array4::from_shape_vec((2, 3, 16, 16), values).unwrap()).unwrap();
    let texts: Vec<&str> = (reference["texts"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap())
        .collect();
    let file = dir.join("texts.txt");
    std::fs::write(&file, texts.join("\n") + "\n").unwrap();
    (x, file)
}

/// `uqformer predict` on `checkpoint` with `--input x`, `--out dir/y.npy` and `extra`.
fn predict(checkpoint: &str, x: &Path, dir: &Path, extra: &[&str]) -> Output {
    let (checkpoint, x) = (fixtures().join(checkpoint), x.display().to_string());
    let out = dir.join("y.npy").display().to_string();
    let checkpoint = checkpoint.display().to_string();
    let args = [
        "predict",
        "--checkpoint",
        &checkpoint,
        "--input",
        &x,
        "--out",
        &out,
    ];
    Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .args(args.iter().chain(extra))
        .output()
        .expect("binary runs")
}

#[test]
fn logits_per_image_match_transformers() {
    let dir = tempfile::tempdir().unwrap();
    let (x, texts) = inputs(dir.path());
    let texts = texts.display().to_string();
    let want = numbers(&reference()["logits_per_image"]["values"]);
    // One batch, and one image and text at a time (each text then padded alone).
    for batch in ["64", "1"] {
        let extra = ["--texts", &texts, "--batch-size", batch];
        let run = predict("clip/clip_tokenized", &x, dir.path(), &extra);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let got: Array2<f32> = read_npy(dir.path().join("y.npy")).unwrap();
        assert_eq!(got.shape(), [2, 3]);
        let diff = (got.iter().zip(&want))
            .map(|(&g, w)| (f64::from(g) - w).abs())
            .fold(0.0, f64::max);
        println!("clip_tokenized, batch {batch}: max abs difference {diff:.2e}");
        assert!(diff <= 1e-4, "batch {batch}: max abs difference {diff}");
    }
}

#[test]
fn texts_are_required_for_clip_and_refused_for_others() {
    let dir = tempfile::tempdir().unwrap();
    let (x, texts) = inputs(dir.path());
    let texts = texts.display().to_string();
    let wrong = dir.path().join("wrong.npy");
    write_npy(&wrong, &Array4::<f32>::zeros((1, 3, 24, 24))).unwrap();
    let cases: [(&str, &Path, &[&str], &str); 4] = [
        ("clip/clip_tokenized", &x, &[], "--texts FILE is required"),
        (
            "vit/hf_vit_model",
            &x,
            &["--texts", &texts],
            "texts.txt: only for a CLIP checkpoint",
        ),
        (
            "clip/clip_argmax",
            &x,
            &["--texts", &texts],
            "clip_argmax: no tokenizer, expected CLIP's tokenizer files",
        ),
        (
            "clip/clip_tokenized",
            &wrong,
            &["--texts", &texts],
            "wrong.npy: shape [1, 3, 24, 24], expected pixel values [N, 3, 16, 16]",
        ),
    ];
    for (checkpoint, input, extra, expected) in cases {
        let run = predict(checkpoint, input, dir.path(), extra);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{checkpoint}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}
