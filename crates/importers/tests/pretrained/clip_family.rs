//! The CLIP import against `transformers` itself: the checkpoints of
//! scripts/clip_reference_fixtures.py (two tiny random `CLIPModel`s, committed) give its image
//! and text embeddings and `logits_per_image` to 1e-4, the folder's tokenizer gives the
//! reference's ids, the zero-shot classifier follows CLIP's recipe on the reference's embeddings,
//! and checkpoints edited here are refused naming the key, field and file.

use std::path::{Path, PathBuf};

use backbone::{Classifier, ClipZeroShot, Gates, Input, Mode, TextPooling};
use burn::tensor::{Int, Tensor, TensorData};
use importers::{ClipCheckpoint, clip_zero_shot, load_clip};
use serde_json::Value;

use crate::format::{Stored, f32_tensor};
use crate::refusals::{Edit, assert_settings_refused, edited_copy, keep, remove, unchanged};
use crate::{json, max_diff, numbers, test_device, values};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clip")
}

fn shape(value: &Value) -> Vec<usize> {
    numbers(&value["shape"])
        .iter()
        .map(|&v| v as usize)
        .collect()
}

fn floats<const D: usize>(value: &Value) -> Tensor<D> {
    let data: Vec<f32> = numbers(&value["values"])
        .iter()
        .map(|&v| v as f32)
        .collect();
    Tensor::from_data(TensorData::new(data, shape(value)), &test_device())
}

fn ints(value: &Value) -> Tensor<2, Int> {
    let data: Vec<i64> = numbers(&value["values"])
        .iter()
        .map(|&v| v as i64)
        .collect();
    Tensor::from_data(TensorData::new(data, shape(value)), &test_device())
}

/// The largest difference of `got` from the reference's `name`, shapes checked.
fn diff(reference: &Value, name: &str, got: &Tensor<2>) -> f64 {
    assert_eq!(got.dims().to_vec(), shape(&reference[name]), "{name}");
    max_diff(&values(got), &numbers(&reference[name]["values"]))
}

/// Fixture `name`'s image embeddings, text embeddings and logits against the reference.
fn differences(name: &str, checkpoint: &ClipCheckpoint) -> [f64; 3] {
    let reference = json(&fixtures().join(name).join("reference.json"));
    let model = &checkpoint.model;
    let pixels = floats::<4>(&reference["pixel_values"]);
    let (ids, mask) = (
        ints(&reference["input_ids"]),
        ints(&reference["attention_mask"]),
    );
    let images = model.image_embeds(pixels.clone());
    let texts = model.text_embeds(ids.clone(), mask.clone());
    let logits = model.logits_per_image(pixels, ids, mask);
    [
        diff(&reference, "image_embeds", &images),
        diff(&reference, "text_embeds", &texts),
        diff(&reference, "logits_per_image", &logits),
    ]
}

#[test]
fn both_configurations_match_transformers() {
    let cases = [
        ("clip_tokenized", TextPooling::FirstOf(2013), true),
        ("clip_argmax", TextPooling::LargestId, false),
    ];
    for (name, pooling, tokenizer) in cases {
        let checkpoint = load_clip(&fixtures().join(name), &test_device()).unwrap();
        assert_eq!(checkpoint.model.text.pooling, pooling, "{name}");
        assert_eq!(checkpoint.tokenizer.is_some(), tokenizer, "{name}");
        let [images, texts, logits] = differences(name, &checkpoint);
        println!(
            "{name}: max abs difference image {images:.2e}, text {texts:.2e}, logits {logits:.2e}"
        );
        for (what, d) in [("image", images), ("text", texts), ("logits", logits)] {
            assert!(d <= 1e-4, "{name} {what}: max abs difference {d}");
        }
    }
}

/// The comparison sees the activation: the vision tower run with quick-GELU where the checkpoint
/// says GELU misses the image embeddings, the text tower still matching.
#[test]
fn each_towers_activation_comes_from_config() {
    let quick: Edit = |c| c["vision_config"]["hidden_act"] = "quick_gelu".into();
    let source = fixtures().join("clip_argmax");
    let dir = edited_copy(&source, "clip_edits", "quick_gelu", unchanged, quick);
    let checkpoint = load_clip(&dir, &test_device()).unwrap();
    let [images, texts, _] = differences("clip_argmax", &checkpoint);
    assert!(images > 1e-3, "image embeddings {images}");
    assert!(texts <= 1e-4, "text embeddings {texts}");
}

#[test]
fn the_folders_tokenizer_gives_the_reference_ids() {
    let dir = fixtures().join("clip_tokenized");
    let checkpoint = load_clip(&dir.join("model.safetensors"), &test_device()).unwrap();
    let reference = json(&dir.join("reference.json"));
    let texts: Vec<&str> = (reference["texts"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap())
        .collect();
    let batch = (checkpoint.tokenizer.as_ref().unwrap())
        .encode_batch(&texts, 16)
        .unwrap();
    let ids: Vec<f64> = (batch.rows.iter().flat_map(|r| &r.ids))
        .map(|&id| f64::from(id))
        .collect();
    let mask: Vec<f64> = (batch.rows.iter().flat_map(|r| &r.attention_mask))
        .map(|&m| f64::from(m))
        .collect();
    assert_eq!(ids, numbers(&reference["input_ids"]["values"]));
    assert_eq!(mask, numbers(&reference["attention_mask"]["values"]));
}

/// transformers' pooling: the first largest id (the end id 63 pads those rows too), or the first
/// end token, position 0 when a row has none.
#[test]
fn text_pooling_follows_transformers_rule() {
    let reference = json(&fixtures().join("clip_argmax/reference.json"));
    let ids = ints(&reference["input_ids"]);
    let positions = |p: TextPooling| {
        (p.positions(ids.clone()).into_data())
            .convert::<i64>()
            .try_to_vec::<i64>()
            .unwrap()
    };
    assert_eq!(positions(TextPooling::LargestId), [5, 3, 7, 2]);
    assert_eq!(positions(TextPooling::FirstOf(2)), [0, 2, 0, 0]);
    assert_eq!(TextPooling::of_eos(2), TextPooling::LargestId);
    assert_eq!(TextPooling::of_eos(49407), TextPooling::FirstOf(49407));
}

/// Each row of `values` (rows of `width`) divided by its Euclidean norm.
fn unit_rows(values: &[f64], width: usize) -> Vec<Vec<f64>> {
    (values.chunks(width))
        .map(|row| {
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            row.iter().map(|v| v / norm).collect()
        })
        .collect()
}

/// CLIP's zero-shot recipe, computed here from transformers' embeddings: class c's embedding is
/// the mean of its prompts' normalised text embeddings, renormalised, and the logits are
/// `exp(logit_scale) · normalize(image) · classesᵀ`. Classes: prompts {0, 1} and {2, 3}.
#[test]
fn zero_shot_classifier_follows_clips_recipe() {
    let dir = fixtures().join("clip_argmax");
    let checkpoint = load_clip(&dir, &test_device()).unwrap();
    let reference = json(&dir.join("reference.json"));
    let (ids, mask) = (
        ints(&reference["input_ids"]),
        ints(&reference["attention_mask"]),
    );
    let prompts: Vec<_> = [0, 2]
        .map(|at| (ids.clone().narrow(0, at, 2), mask.clone().narrow(0, at, 2)))
        .into();
    let classifier = Classifier::from(ClipZeroShot::new(&checkpoint.model, &prompts).unwrap());
    let pixels = Input::Images(floats::<4>(&reference["pixel_values"]));
    let got = classifier.forward(pixels.clone(), &Gates::none(), Mode::Deterministic);
    let e = shape(&reference["text_embeds"])[1];
    let texts = unit_rows(&numbers(&reference["text_embeds"]["values"]), e);
    let classes: Vec<f64> = [[0, 1], [2, 3]]
        .iter()
        .flat_map(|rows| (0..e).map(|j| (texts[rows[0]][j] + texts[rows[1]][j]) / 2.0))
        .collect();
    let classes = unit_rows(&classes, e);
    let scale = f64::from(values(&checkpoint.model.logit_scale.val())[0]).exp();
    let images = unit_rows(&numbers(&reference["image_embeds"]["values"]), e);
    let want: Vec<f64> = (images.iter())
        .flat_map(|image| {
            let dot = |c: &Vec<f64>| image.iter().zip(c).map(|(a, b)| a * b).sum::<f64>();
            classes.iter().map(move |c| scale * dot(c))
        })
        .collect();
    assert_eq!(got.dims(), [2, 2]);
    let diff = max_diff(&values(&got), &want);
    println!("zero-shot logits: max abs difference {diff:.2e}");
    assert!(diff <= 1e-4, "max abs difference {diff}");
    // A base model like the others: dropout reaches its blocks (MC Dropout).
    let dropped = classifier.with_dropout(0.5, 0.0);
    let noisy = dropped.forward(pixels, &Gates::none(), Mode::Stochastic);
    assert!(max_diff(&values(&noisy), &want) > 1e-3);
}

/// Class names in templates through the folder's tokenizer and the text tower give
/// transformers' zero-shot logits; a template without `{}` and a folder without a tokenizer are
/// refused naming the folder.
#[test]
fn class_names_and_templates_give_transformers_zero_shot_logits() {
    let dir = fixtures().join("clip_tokenized");
    let checkpoint = load_clip(&dir, &test_device()).unwrap();
    let reference = json(&dir.join("reference.json"));
    let strings = |key: &str| -> Vec<String> {
        (reference[key].as_array().unwrap().iter())
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    let (classes, templates) = (strings("classes"), strings("templates"));
    let zero_shot = clip_zero_shot(&checkpoint, &classes, &templates).unwrap();
    let pixels = Input::Images(floats::<4>(&reference["pixel_values"]));
    let got = Classifier::from(zero_shot).forward(pixels, &Gates::none(), Mode::Deterministic);
    let d = diff(&reference, "zero_shot_logits", &got);
    println!("zero-shot from class names: max abs difference {d:.2e}");
    assert!(d <= 1e-4, "max abs difference {d}");
    let no_slot = clip_zero_shot(&checkpoint, &classes, &["a photo".to_string()]);
    let message = no_slot.map_err(|e| data::error_chain(&e)).unwrap_err();
    assert!(
        message.contains("clip_tokenized") && message.contains("{}"),
        "{message}"
    );
    let bare = load_clip(&fixtures().join("clip_argmax"), &test_device()).unwrap();
    let message = clip_zero_shot(&bare, &classes, &templates)
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(message.contains("clip_argmax: no tokenizer"), "{message}");
}

/// Fixture `name` copied to scratch case `case`, edited; the import's error message.
fn refusal(name: &str, case: &str, edit: impl FnOnce(&mut Vec<Stored>), config: Edit) -> String {
    let dir = edited_copy(&fixtures().join(name), "clip_refusals", case, edit, config);
    load_clip(&dir, &test_device())
        .map_err(|e| data::error_chain(&e))
        .unwrap_err()
}

#[test]
fn missing_unknown_and_mis_shaped_keys_are_named() {
    let missing = refusal(
        "clip_argmax",
        "missing",
        remove("vision_model.pre_layrnorm.weight"),
        keep,
    );
    assert!(
        missing.contains("missing (1): vision_model.pre_layrnorm.weight"),
        "{missing}"
    );
    assert!(missing.contains("model.safetensors"), "{missing}");
    let extra = |tensors: &mut Vec<Stored>| {
        tensors.push(f32_tensor("text_model.pooler.weight", &[2], &[1.0; 2]));
        // Older transformers saved the position ids: ignored.
        let ids: Vec<f32> = (0..12).map(|i| i as f32).collect();
        tensors.push(f32_tensor(
            "text_model.embeddings.position_ids",
            &[1, 12],
            &ids,
        ));
    };
    let unknown = refusal("clip_argmax", "unknown", extra, keep);
    assert!(
        unknown.contains("unexpected (1): text_model.pooler.weight"),
        "{unknown}"
    );
    let larger = |c: &mut Value| c["vision_config"]["image_size"] = 32.into();
    let shape = refusal("clip_tokenized", "shape", unchanged, larger);
    let expected = "vision_model.embeddings.position_embedding.weight: expected shape [65, 32], \
                    found [17, 32]";
    assert!(shape.contains(expected), "{shape}");
}

#[test]
fn unsupported_settings_are_named() {
    let cases: [(&str, Edit, &str); 4] = [
        (
            "clip_argmax",
            |c| c["text_config"]["hidden_act"] = "relu".into(),
            "text_config.hidden_act: = \"relu\": only \"quick_gelu\" or \"gelu\"",
        ),
        (
            "clip_argmax",
            |c| c["vision_config"]["hidden_act"] = "gelu_new".into(),
            "vision_config.hidden_act: = \"gelu_new\"",
        ),
        (
            "clip_argmax",
            |c| c["model_type"] = "siglip".into(),
            "model_type: = \"siglip\": only \"clip\"",
        ),
        (
            "clip_argmax",
            |c| drop(c.as_object_mut().unwrap().remove("vision_config")),
            "missing field `vision_config`",
        ),
    ];
    assert_settings_refused(&cases, |name, case, edit| {
        refusal(name, case, unchanged, edit)
    });
}

#[test]
fn a_broken_tokenizer_is_named() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("clip_refusals/tokenizer");
    std::fs::create_dir_all(&dir).unwrap();
    let source = fixtures().join("clip_tokenized");
    for file in ["config.json", "model.safetensors", "vocab.json"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    let _ = std::fs::remove_file(dir.join("merges.txt"));
    let message = load_clip(&dir, &test_device())
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(message.contains("the tokenizer"), "{message}");
    assert!(message.contains("merges.txt"), "{message}");
}
