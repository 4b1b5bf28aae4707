//! The BERT family against `transformers` itself: the checkpoints of
//! scripts/bert_reference_fixtures.py (tiny, random, committed; `BertModel`,
//! `BertForSequenceClassification`, `RobertaModel`, `RobertaForSequenceClassification`) give the
//! reference's pooler outputs or logits to 1e-4, on unpadded ids and on right-padded ids with
//! their mask, and checkpoints edited here are refused naming the key or field.

use std::path::{Path, PathBuf};

use backbone::{Gates, Mode, Pooling};
use burn::tensor::{Int, Tensor, TensorData};
use importers::{load_bert, load_hf_bert};
use serde_json::Value;

use crate::format::{Stored, f32_tensor};
use crate::refusals::{Edit, assert_settings_refused, edited_copy, keep, remove, unchanged};
use crate::{json, max_diff, numbers, test_device, values};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bert")
}

/// The input's `key` (`ids`, `padded_ids`, `padded_mask`) as an int tensor `[N, L]`.
fn ids(key: &str) -> Tensor<2, Int> {
    let input = json(&fixtures().join("input.json"));
    let shape: Vec<usize> = (numbers(&input["shape"]).iter())
        .map(|&v| v as usize)
        .collect();
    let data: Vec<i64> = (numbers(&input[key]).iter()).map(|&v| v as i64).collect();
    Tensor::from_data(TensorData::new(data, shape), &test_device())
}

/// Imports fixture `name`, runs it on the unpadded and the padded input and returns the largest
/// differences from the reference, checking that the import has a classifier exactly when the
/// reference is logits, and the pooler.
fn differences(name: &str) -> (f64, f64) {
    let dir = fixtures().join(name);
    let checkpoint = load_bert(&dir, &test_device()).unwrap_or_else(|e| panic!("{e}"));
    let reference = json(&dir.join("reference.json"));
    let logits = reference["output"] == "logits";
    assert_eq!(checkpoint.classifier, logits, "{name}");
    assert_eq!(checkpoint.model.pooling(), Pooling::Cls, "{name}");
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let run = |ids: Tensor<2, Int>, mask: Tensor<2, Int>| match logits {
        true => model.forward(ids, mask, gates, Mode::Deterministic),
        false => model.features(ids, mask, gates, Mode::Deterministic),
    };
    let unpadded = ids("ids");
    let got = run(unpadded.clone(), unpadded.ones_like());
    let padded = run(ids("padded_ids"), ids("padded_mask"));
    let shape: Vec<usize> = (numbers(&reference["shape"]).iter())
        .map(|&v| v as usize)
        .collect();
    assert_eq!(got.dims().to_vec(), shape, "{name}");
    (
        max_diff(&values(&got), &numbers(&reference["values"])),
        max_diff(&values(&padded), &numbers(&reference["padded_values"])),
    )
}

#[test]
fn every_model_matches_transformers() {
    for name in [
        "bert_model",
        "bert_model_small",
        "bert_classifier",
        "bert_classifier_wide",
        "roberta_model",
        "roberta_model_small",
        "roberta_classifier",
        "roberta_classifier_two",
    ] {
        let (diff, padded) = differences(name);
        println!("{name}: max abs difference {diff:.2e}, padded {padded:.2e}");
        assert!(diff <= 1e-4, "{name}: max abs difference {diff}");
        assert!(
            padded <= 1e-4,
            "{name}: padded, max abs difference {padded}"
        );
    }
}

#[test]
fn configuration_is_read_from_config_json() {
    let bert = load_bert(&fixtures().join("bert_classifier_wide"), &test_device()).unwrap();
    let c = &bert.config;
    let sizes = [c.vocab_size, c.d_model, c.n_layers, c.n_heads, c.d_mlp];
    assert_eq!(sizes, [100, 32, 1, 4, 64]);
    assert_eq!(
        (c.max_position, c.type_vocab_size, c.layer_norm_eps),
        (40, 2, 1e-5)
    );
    assert_eq!(bert.model.classifier.weight.dims(), [32, 5]);
    // RoBERTa: the position table without its first pad_token_id + 1 = 2 rows, one token type;
    // given as the .safetensors file with config.json beside it.
    let file = fixtures().join("roberta_classifier/model.safetensors");
    let roberta = load_bert(&file, &test_device()).unwrap();
    let c = &roberta.config;
    assert_eq!((c.max_position, c.type_vocab_size, c.n_layers), (40, 1, 2));
    assert_eq!(roberta.hf.roberta_padding(), Some(1));
    assert_eq!(roberta.model.classifier.weight.dims(), [32, 4]);
    // The encoder alone, as the sentence-embedding route reads it: the same hidden states.
    let (_, encoder) = load_hf_bert(&fixtures().join("roberta_model"), &test_device()).unwrap();
    let full = load_bert(&fixtures().join("roberta_model"), &test_device()).unwrap();
    let x = ids("ids");
    let hidden = |m: &backbone::BertModel| {
        values(&m.forward(
            x.clone(),
            x.ones_like(),
            &Gates::none(),
            Mode::Deterministic,
        ))
    };
    let alone = hidden(&encoder);
    let within: Vec<f64> = hidden(&full.model.bert)
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    assert_eq!(max_diff(&alone, &within), 0.0);
}

#[test]
fn pretraining_heads_are_left_unused() {
    let heads = |t: &mut Vec<Stored>| {
        t.push(f32_tensor("cls.predictions.bias", &[100], &[0.5; 100]));
        t.push(f32_tensor("lm_head.dense.weight", &[4], &[0.5; 4]));
    };
    let source = fixtures().join("bert_model");
    let dir = edited_copy(&source, "bert_heads", "pretraining", heads, keep);
    let with_heads = load_bert(&dir, &test_device()).unwrap_or_else(|e| panic!("{e}"));
    let plain = load_bert(&source, &test_device()).unwrap();
    let x = ids("ids");
    let pooled = |c: &importers::BertCheckpoint| {
        let mode = Mode::Deterministic;
        values(&(c.model).features(x.clone(), x.ones_like(), &Gates::none(), mode))
    };
    let plain: Vec<f64> = pooled(&plain).iter().map(|&v| f64::from(v)).collect();
    assert_eq!(max_diff(&pooled(&with_heads), &plain), 0.0);
}

/// Fixture `name` copied to scratch case `case`, edited; the import's error message.
fn refusal(name: &str, case: &str, edit: impl FnOnce(&mut Vec<Stored>), config: Edit) -> String {
    let dir = edited_copy(&fixtures().join(name), "bert_refusals", case, edit, config);
    let error: importers::ImportError = load_bert(&dir, &test_device()).unwrap_err();
    data::error_chain(&error)
}

#[test]
fn missing_unknown_and_mis_shaped_keys_are_named() {
    let key = "roberta.encoder.layer.1.attention.self.key.bias";
    let missing = refusal("roberta_classifier", "missing", remove(key), keep);
    assert!(
        missing.contains(&format!("missing (1): {key}")),
        "{missing}"
    );
    assert!(missing.contains("model.safetensors"), "{missing}");
    let extra = |t: &mut Vec<Stored>| t.push(f32_tensor("bert.pooler.extra", &[2], &[1.0; 2]));
    let unknown = refusal("bert_classifier", "unknown", extra, keep);
    assert!(
        unknown.contains("unexpected (1): bert.pooler.extra"),
        "{unknown}"
    );
    // A pooler of the wrong width.
    let narrow = |t: &mut Vec<Stored>| {
        t.retain(|t| t.name != "pooler.dense.weight");
        t.push(f32_tensor("pooler.dense.weight", &[16, 32], &[0.0; 512]));
    };
    let shape = refusal("bert_model", "shape", narrow, keep);
    assert!(
        shape.contains("pooler.dense.weight: expected shape [32, 32], found [16, 32]"),
        "{shape}"
    );
    // id2label gives 4 labels where the classifier has 2.
    let labels = |c: &mut Value| {
        c["id2label"] = serde_json::json!({"0": "a", "1": "b", "2": "c", "3": "d"});
    };
    let classes = refusal("roberta_classifier_two", "labels", unchanged, labels);
    assert!(
        classes.contains("classifier.out_proj.weight: expected shape [4, 32], found [2, 32]"),
        "{classes}"
    );
}

#[test]
fn unsupported_settings_are_named() {
    let cases: [(&str, Edit, &str); 5] = [
        (
            "bert_model",
            |c| c["model_type"] = "distilbert".into(),
            "model_type: = \"distilbert\": only \"bert\" or \"roberta\"",
        ),
        (
            "roberta_model",
            |c| c["hidden_act"] = "gelu_new".into(),
            "hidden_act: = \"gelu_new\": only \"gelu\"",
        ),
        (
            "bert_classifier",
            |c| c["position_embedding_type"] = "relative_key".into(),
            "position_embedding_type: = \"relative_key\"",
        ),
        (
            "roberta_model_small",
            |c| c["max_position_embeddings"] = 2.into(),
            "max_position_embeddings = 2: expected more than pad_token_id + 1 = 2",
        ),
        (
            "bert_model_small",
            |c| drop(c.as_object_mut().unwrap().remove("hidden_size")),
            "missing field `hidden_size`",
        ),
    ];
    assert_settings_refused(&cases, |name, case, edit| {
        refusal(name, case, unchanged, edit)
    });
}
