//! Importing pretrained checkpoints: the safetensors reader and BERT key mapping on small
//! files written here (`format`), all-MiniLM-L6-v2 against an independent numpy forward
//! (`minilm`, needs `datasets/fetch`), paraphrase-MiniLM-L3-v2 (a BERT in ONNX) against
//! onnxruntime running its graph (`paraphrase`, needs `datasets/fetch paraphrase-minilm-l3-v2`),
//! both through the checks of `bert_checks`, the ONNX reader on hand-encoded protobuf
//! (`onnx_format`), DINOv2-S/14 against onnxruntime running the ONNX graph itself
//! (`dinov2`, needs `datasets/fetch dinov2-s`), the checkpoints' shapes (`presets`), and the
//! ViT family (`transformers`' ViT and DeiT, timm's ViT and DeiT) against the libraries' own
//! outputs on the random checkpoints of scripts/vit_reference_fixtures.py (`vit_family`), and
//! `transformers`' BERT and RoBERTa, pooler and classifiers included, on those of
//! scripts/bert_reference_fixtures.py (`bert_family`), and `transformers`' CLIP (both towers,
//! projections, logits, the folder's tokenizer) on those of scripts/clip_reference_fixtures.py
//! (`clip_family`).

mod bert_checks;
mod bert_family;
mod clip_family;
mod dinov2;
mod format;
mod minilm;
mod onnx_format;
mod paraphrase;
mod presets;
mod refusals;
mod vit_family;

use burn::tensor::{Device, Tensor};

/// Tests run on the flex CPU device, chosen explicitly.
pub fn test_device() -> Device {
    Device::flex()
}

/// Flattened f32 values of a tensor.
pub fn values<const D: usize>(t: &Tensor<D>) -> Vec<f32> {
    t.to_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("f32 values")
}

/// A JSON file, read.
pub fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A JSON array of numbers (fixture values).
pub fn numbers(value: &serde_json::Value) -> Vec<f64> {
    value
        .as_array()
        .expect("a JSON array")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// Largest |got - want|, after checking the lengths agree.
pub fn max_diff(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&g, &w)| (f64::from(g) - w).abs())
        .fold(0.0, f64::max)
}
