//! `uqformer embed` end to end on the fetched all-MiniLM-L6-v2: ids and embeddings equal the
//! numpy reference of scripts/minilm_reference.py, and bad paths fail naming the path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn weights() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/all-minilm-l6-v2");
    assert!(
        dir.join("model.safetensors").exists() && dir.join("vocab.txt").exists(),
        "{} is incomplete: run `datasets/fetch all-minilm-l6-v2` first (CI fetches it)",
        dir.display()
    );
    dir
}

fn uqformer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_uqformer"))
        .args(args)
        .output()
        .expect("binary runs")
}

#[test]
fn json_matches_the_numpy_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../importers/tests/fixtures/minilm_reference.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sentences = fixture["sentences"].as_array().unwrap();
    let weights = weights().display().to_string();
    let mut args = vec!["embed", "--weights", &weights, "--json"];
    args.extend(sentences.iter().map(|s| s["text"].as_str().unwrap()));
    let out = uqformer(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), sentences.len());
    for (row, want) in got.iter().zip(sentences) {
        let mut keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["embedding", "ids", "text"]);
        assert_eq!(row["text"], want["text"]);
        assert_eq!(row["ids"], want["ids"], "{}", want["text"]);
        let embedding: Vec<f64> = row["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(embedding.len(), 384);
        let norm = embedding.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
        for (i, w) in want["embedding"].as_array().unwrap().iter().enumerate() {
            let w = w.as_f64().unwrap();
            assert!(
                (embedding[i] - w).abs() < 1e-4,
                "{}: value {i} {} vs numpy {w}",
                want["text"],
                embedding[i]
            );
        }
    }
}

#[test]
fn summary_shows_tokens_and_the_first_values() {
    let weights = weights().display().to_string();
    let out = uqformer(&["embed", "--weights", &weights, "Café naïve résumé!"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("tokens (6): [CLS] cafe naive resume ! [SEP]")
            && text.contains("embedding (384 values, L2-normalised)"),
        "{text}"
    );
}

#[test]
fn missing_paths_are_named() {
    let absent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-weights");
    let absent = absent.display().to_string();
    let out = uqformer(&["embed", "--weights", &absent, "hello"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success() && err.contains(&absent), "{err}");

    // A folder with the vocabulary and config but no weights names the weights file.
    let partial = Path::new(env!("CARGO_TARGET_TMPDIR")).join("embed-partial");
    std::fs::create_dir_all(&partial).unwrap();
    for file in ["vocab.txt", "config.json"] {
        std::fs::copy(weights().join(file), partial.join(file)).unwrap();
    }
    let out = uqformer(&["embed", "--weights", partial.to_str().unwrap(), "hello"]);
    let err = String::from_utf8(out.stderr).unwrap();
    let expected = partial.join("model.safetensors").display().to_string();
    assert!(
        !out.status.success() && err.contains(&expected) && err.contains("cannot read"),
        "{err}"
    );
}
