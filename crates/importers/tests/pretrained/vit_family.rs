//! The ViT-family imports against `transformers` and `timm` themselves: the checkpoints of
//! scripts/vit_reference_fixtures.py (tiny, random, committed) give the references' logits or
//! pooled features to 1e-4, and checkpoints edited here are refused naming the key or field.

use std::path::{Path, PathBuf};

use backbone::{Gates, Mode, ViTConfig};
use burn::tensor::{Tensor, TensorData};
use importers::load_vit;
use serde_json::Value;

use crate::format::{Stored, f32_tensor};
use crate::refusals::{Edit, assert_settings_refused, edited_copy, keep, remove, unchanged};
use crate::{json, max_diff, numbers, test_device, values};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vit")
}

/// The fixtures' shared input `[2, 3, 16, 16]`.
fn input() -> Tensor<4> {
    let input = json(&fixtures().join("input.json"));
    let shape: Vec<usize> = (numbers(&input["shape"]).iter())
        .map(|&v| v as usize)
        .collect();
    let data: Vec<f32> = (numbers(&input["values"]).iter())
        .map(|&v| v as f32)
        .collect();
    Tensor::from_data(TensorData::new(data, shape), &test_device())
}

/// Imports fixture `name`, runs it on the input and returns the largest difference from the
/// reference, checking that the import has a classifier exactly when the reference is logits.
fn difference(name: &str, distilled: bool) -> f64 {
    let dir = fixtures().join(name);
    let checkpoint = load_vit(&dir, &test_device()).unwrap();
    let reference = json(&dir.join("reference.json"));
    let logits = reference["output"] == "logits";
    assert_eq!(checkpoint.classifier, logits, "{name}");
    assert_eq!(checkpoint.config.distilled, distilled, "{name}");
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let got = match logits {
        true => model.forward(input(), gates, Mode::Deterministic),
        false => model.features(input(), gates, Mode::Deterministic),
    };
    let shape: Vec<usize> = (numbers(&reference["shape"]).iter())
        .map(|&v| v as usize)
        .collect();
    assert_eq!(got.dims().to_vec(), shape, "{name}");
    max_diff(&values(&got), &numbers(&reference["values"]))
}

#[test]
fn every_family_matches_its_reference_library() {
    let cases = [
        ("hf_vit_classifier", false),
        ("hf_vit_model", false),
        ("hf_deit_teacher", true),
        ("hf_deit_model", true),
        ("timm_vit_classifier", false),
        ("timm_vit_features", false),
        ("timm_deit_distilled", true),
        ("timm_deit_features", true),
    ];
    for (name, distilled) in cases {
        let diff = difference(name, distilled);
        println!("{name}: max abs difference {diff:.2e}");
        assert!(diff <= 1e-4, "{name}: max abs difference {diff}");
    }
}

/// Image, patch, width, blocks, heads, MLP width, classes and LayerNorm epsilon.
fn architecture(c: &ViTConfig) -> ([usize; 7], f64) {
    let sizes = [
        c.image_size,
        c.patch_size,
        c.d_model,
        c.n_layers,
        c.n_heads,
        c.d_mlp,
    ];
    let [image, patch, d, l, h, f] = sizes;
    ([image, patch, d, l, h, f, c.num_classes], c.layer_norm_eps)
}

#[test]
fn configuration_is_read_from_config_and_shapes() {
    let hf = load_vit(&fixtures().join("hf_vit_model"), &test_device()).unwrap();
    // No classifier: a placeholder head of one class.
    assert_eq!(architecture(&hf.config), ([16, 4, 32, 3, 4, 64, 1], 1e-6));
    // timm: a file path with config.json beside it, the heads from model_args.
    let file = fixtures().join("timm_deit_distilled/model.safetensors");
    let timm = load_vit(&file, &test_device()).unwrap();
    assert_eq!(architecture(&timm.config), ([16, 4, 32, 2, 2, 64, 4], 1e-6));
}

/// Fixture `name` copied to scratch case `case`, edited; the import's error message.
fn refusal(name: &str, case: &str, edit: impl FnOnce(&mut Vec<Stored>), config: Edit) -> String {
    let dir = edited_copy(&fixtures().join(name), "vit_refusals", case, edit, config);
    let error: importers::ImportError = load_vit(&dir, &test_device()).unwrap_err();
    data::error_chain(&error)
}

#[test]
fn missing_unknown_and_mis_shaped_keys_are_named() {
    let missing = refusal(
        "hf_deit_teacher",
        "missing",
        remove("deit.embeddings.distillation_token"),
        keep,
    );
    assert!(
        missing.contains("missing (1): deit.embeddings.distillation_token"),
        "{missing}"
    );
    let missing = refusal(
        "timm_vit_classifier",
        "missing_qkv",
        remove("blocks.1.attn.qkv.weight"),
        keep,
    );
    assert!(
        missing.contains("missing (1): blocks.1.attn.qkv.weight"),
        "{missing}"
    );
    let extra = |tensors: &mut Vec<Stored>| {
        tensors.push(f32_tensor("blocks.0.ls1.gamma", &[32], &[1.0; 32]));
    };
    let unknown = refusal("timm_vit_features", "unknown", extra, keep);
    assert!(
        unknown.contains("unexpected (1): blocks.0.ls1.gamma"),
        "{unknown}"
    );
    // A config whose image size disagrees with the position table.
    let larger = |config: &mut Value| config["image_size"] = 32.into();
    let shape = refusal("hf_vit_classifier", "shape", unchanged, larger);
    assert!(
        shape.contains(
            "vit.embeddings.position_embeddings: expected shape [1, 65, 32], found [1, 17, 32]"
        ),
        "{shape}"
    );
    // qkv_bias = false while the checkpoint has the biases: each is unexpected.
    let no_bias = |config: &mut Value| config["qkv_bias"] = false.into();
    let bias = refusal("hf_vit_classifier", "bias", unchanged, no_bias);
    assert!(
        bias.contains("vit.encoder.layer.0.attention.attention.query.bias"),
        "{bias}"
    );
}

#[test]
fn unsupported_settings_are_named() {
    let cases: [(&str, Edit, &str); 5] = [
        (
            "hf_vit_model",
            |c| c["hidden_act"] = "relu".into(),
            "hidden_act: = \"relu\": only \"gelu\"",
        ),
        (
            "hf_vit_model",
            |c| c["model_type"] = "beit".into(),
            "model_type: = \"beit\"",
        ),
        (
            "timm_vit_classifier",
            |c| c["model_args"]["init_values"] = 1e-5.into(),
            "expected null",
        ),
        (
            "timm_vit_classifier",
            |c| c["model_args"]["embed_dim"] = 48.into(),
            "model_args.embed_dim = 48: expected 32",
        ),
        (
            "timm_vit_classifier",
            |c| drop(c["model_args"].as_object_mut().unwrap().remove("num_heads")),
            "model_args.num_heads: missing",
        ),
    ];
    assert_settings_refused(&cases, |name, case, edit| {
        refusal(name, case, unchanged, edit)
    });
}

#[test]
fn missing_files_are_named() {
    let error = load_vit(&fixtures().join("no_such_checkpoint"), &test_device()).unwrap_err();
    let message = data::error_chain(&error);
    assert!(message.contains("no_such_checkpoint"), "{message}");
    assert!(
        message.contains("expected a folder with config.json"),
        "{message}"
    );
}
