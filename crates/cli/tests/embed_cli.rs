//! `uqformer embed` end to end on the fetched all-MiniLM-L6-v2 and paraphrase-MiniLM-L3-v2 (an
//! ONNX graph): ids and embeddings equal the references of scripts/minilm_reference.py and
//! scripts/paraphrase_reference.py, and bad paths fail naming the path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const MINILM: &str = "all-minilm-l6-v2";

fn weights(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets")
        .join(name);
    assert!(
        dir.join("vocab.txt").exists(),
        "{} is incomplete: run `datasets/fetch {name}` first (CI fetches it)",
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
    json_matches(MINILM, "minilm_reference.json");
}

#[test]
fn json_of_an_onnx_checkpoint_matches_onnx_runtime() {
    json_matches("paraphrase-minilm-l3-v2", "paraphrase_reference.json");
}

/// `--json` on checkpoint `datasets/NAME` gives the ids and embeddings of the importers'
/// fixture `FIXTURE`.
fn json_matches(name: &str, fixture: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../importers/tests/fixtures")
        .join(fixture);
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sentences = fixture["sentences"].as_array().unwrap();
    let weights = weights(name).display().to_string();
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
                "{}: value {i} {} vs reference {w}",
                want["text"],
                embedding[i]
            );
        }
    }
}

#[test]
fn summary_shows_tokens_and_the_first_values() {
    let weights = weights(MINILM).display().to_string();
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

    // A folder with the vocabulary and config but no weights names the folder and the layouts
    // expected.
    let partial = Path::new(env!("CARGO_TARGET_TMPDIR")).join("embed-partial");
    std::fs::create_dir_all(&partial).unwrap();
    for file in ["vocab.txt", "config.json"] {
        std::fs::copy(weights(MINILM).join(file), partial.join(file)).unwrap();
    }
    let out = uqformer(&["embed", "--weights", partial.to_str().unwrap(), "hello"]);
    let err = String::from_utf8(out.stderr).unwrap();
    let expected = format!(
        "{}: expected config.json with model.safetensors, or one *.onnx graph; found no \
         model.safetensors and 0 *.onnx files",
        partial.display()
    );
    assert!(!out.status.success() && err.contains(&expected), "{err}");
}
