//! What every fetched BERT checkpoint is checked for against its fixture (written by
//! scripts/minilm_reference.py's `bert_fixture`: ids, hidden states and embeddings per sentence,
//! and paraphrase pairs with their cosines), to 1e-4.

use std::path::Path;

use backbone::{BertConfig, BertModel, Gates, Mode};
use burn::tensor::{Int, Tensor, TensorData};
use importers::load_hf_bert;
use serde_json::Value;

use crate::{max_diff, numbers, test_device, values};

const TOLERANCE: f64 = 1e-4;

/// The checkpoint `datasets/NAME`; missing weights fail the test, since CI fetches them.
pub fn fetched(name: &str) -> (BertConfig, BertModel) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets")
        .join(name);
    assert!(
        dir.join("vocab.txt").exists(),
        "{} has no vocab.txt: run `datasets/fetch {name}` first (CI fetches it)",
        dir.display()
    );
    load_hf_bert(&dir, &test_device()).unwrap_or_else(|e| panic!("{e}"))
}

/// `tests/fixtures/FILE`.
pub fn fixture(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

/// The fixture's sentences, run as one padded batch (so that the padding mask is exercised
/// against unpadded references): the hidden states at tokens 0 and 1 and the embeddings match,
/// and every embedding has norm 1.
pub fn hidden_states_and_embeddings_match(model: &BertModel, fixture: &Value) {
    let sentences = fixture["sentences"].as_array().unwrap();
    let batch: Vec<Vec<u32>> = sentences.iter().map(|s| ids(&s["ids"])).collect();
    let tokens = batch.iter().map(Vec::len).max().unwrap();
    let (mut flat, mut mask) = (Vec::new(), Vec::new());
    for s in &batch {
        for t in 0..tokens {
            flat.push(s.get(t).map_or(0, |&id| i64::from(id)));
            mask.push(i64::from(t < s.len()));
        }
    }
    let device = test_device();
    let shape = [batch.len(), tokens];
    let hidden = model.forward(
        Tensor::<2, Int>::from_data(TensorData::new(flat, shape), &device),
        Tensor::<2, Int>::from_data(TensorData::new(mask, shape), &device),
        &Gates::none(),
        Mode::Deterministic,
    );
    let embeddings = model.sentence_embeddings(&batch).unwrap();
    let mut worst = 0.0f64;
    for (b, sentence) in sentences.iter().enumerate() {
        for (token, key) in [(0, "hidden_token0"), (1, "hidden_token1")] {
            let got = values(&hidden.clone().slice([b..b + 1, token..token + 1, 0..8]));
            worst = worst.max(max_diff(&got, &numbers(&sentence[key])));
        }
        worst = worst.max(max_diff(
            &embeddings[b][..16],
            &numbers(&sentence["embedding"]),
        ));
        let norm: f32 = embeddings[b].iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "embedding {b} has norm {norm}");
    }
    eprintln!("max |Burn - reference| over hidden states and embeddings: {worst:.2e}");
    assert!(
        worst < TOLERANCE,
        "max difference {worst:.2e} >= {TOLERANCE:.0e}"
    );
}

/// The paraphrase pairs' cosines match, and each pair is closer than any two unrelated texts.
pub fn paraphrases_are_closer_than_unrelated_sentences(model: &BertModel, fixture: &Value) {
    let pairs = &fixture["paraphrases"];
    let batch: Vec<Vec<u32>> = pairs["ids"].as_array().unwrap().iter().map(ids).collect();
    let emb = model.sentence_embeddings(&batch).unwrap();
    let cosine =
        |a: usize, b: usize| -> f32 { emb[a].iter().zip(&emb[b]).map(|(x, y)| x * y).sum() };
    let reference = pairs["cosine"].as_array().unwrap();
    let (mut paired, mut unrelated) = (Vec::new(), Vec::new());
    for (a, row) in reference.iter().enumerate() {
        for (b, want) in numbers(row).into_iter().enumerate().skip(a + 1) {
            let c = cosine(a, b);
            assert!(
                (f64::from(c) - want).abs() < TOLERANCE,
                "cosine({a}, {b}) = {c} vs reference {want}"
            );
            // Texts 2i and 2i + 1 are paraphrases of each other.
            if a / 2 == b / 2 {
                paired.push(c);
            } else {
                unrelated.push(c);
            }
        }
    }
    let closest_unrelated = unrelated.iter().copied().fold(f32::MIN, f32::max);
    for (i, &c) in paired.iter().enumerate() {
        assert!(
            c > closest_unrelated,
            "pair {i}: cosine {c} not above the closest unrelated pair {closest_unrelated}"
        );
    }
}
