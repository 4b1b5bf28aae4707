//! A checkpoint an experiment names by its path (`[backbone] checkpoint`), rather than a
//! registered download: its family told by its `config.json` (never by a name), read and fitted
//! to a [`Target`] with a fresh classifier head like the registered backbones; or, for CLIP,
//! its zero-shot classifier for the target's classes ([`open_zero_shot`]).

use std::path::Path;

use backbone::{Architecture, Classifier};
use burn::nn::LinearConfig;
use burn::tensor::Device;
use serde::Deserialize;

use crate::clip::{class_prompts, clip_zero_shot, load_clip};
use crate::config_json::{locate, read_json};
use crate::error::ImportError;
use crate::pretrained::{Checkpoint, Target, hf_bert};
use crate::vit::load_vit;

/// The fields of `config.json` that tell the families apart.
#[derive(Deserialize)]
struct Family {
    /// `transformers`' model type.
    model_type: Option<String>,
    /// timm's architecture name (`save_for_hf`).
    architecture: Option<String>,
}

/// The family of the checkpoint at `path` (a folder, or a `.safetensors` file with
/// `config.json` beside it): a ViT for `transformers`' `vit` / `deit` and timm's `vit_*` /
/// `deit_*`, a BERT for `bert`, CLIP's zero-shot classifier for `clip`. Others are refused
/// naming the file and the field.
pub fn checkpoint_architecture(path: &Path) -> Result<Architecture, ImportError> {
    let (config, _) = locate(path)?;
    let family: Family = read_json(&config)?;
    match (family.model_type.as_deref(), family.architecture.as_deref()) {
        (Some("vit" | "deit"), _) | (None, Some(_)) => Ok(Architecture::Vit),
        (Some("bert"), _) => Ok(Architecture::Bert),
        (Some("clip"), _) => Ok(Architecture::ClipZeroShot),
        (Some("roberta"), _) => Err(ImportError::file(
            &config,
            "model_type \"roberta\": its byte-level BPE tokenizer is not read by experiments yet \
             (`uqformer predict` takes RoBERTa checkpoints); expected vit, deit, bert or clip",
        )),
        (Some(other), _) => Err(ImportError::file(
            &config,
            format!("model_type {other:?}; expected vit, deit, bert or clip"),
        )),
        (None, None) => Err(ImportError::file(
            &config,
            "neither model_type (transformers) nor architecture (timm) is set; expected the \
             config.json of a ViT, DeiT, BERT or CLIP checkpoint",
        )),
    }
}

/// Reads the checkpoint at `path` fitted to `target`: its weights with a fresh classifier head
/// for `target`'s classes and the target's dropouts.
pub fn open_checkpoint(path: &Path, target: &Target) -> Result<Checkpoint, ImportError> {
    match checkpoint_architecture(path)? {
        Architecture::Vit => vit(path, target),
        Architecture::Bert => {
            let (config, _) = locate(path)?;
            let dir = config.parent().unwrap_or(Path::new("."));
            hf_bert(dir, &path.display().to_string(), target)
        }
        // Its head is made of class prompts, which a target does not carry.
        Architecture::ClipZeroShot => Err(ImportError::file(
            path,
            "a CLIP checkpoint is a zero-shot classifier: it needs class names and prompt \
             templates (`open_zero_shot`)",
        )),
    }
}

/// A ViT-family checkpoint at its own image size, which the data must have (3 channels).
fn vit(path: &Path, target: &Target) -> Result<Checkpoint, ImportError> {
    let read = load_vit(path, &Device::flex())?;
    let mut config = read.config;
    check_images(path, [config.channels, config.image_size], target)?;
    config.num_classes = target.num_classes;
    config.dropout = target.dropout;
    config.attention_dropout = target.attention_dropout;
    let (path, shape) = (path.to_path_buf(), config.clone());
    let init = move |_: u64, device: &Device| {
        let mut model = load_vit(&path, device)?.model;
        // Fresh heads for the target's classes, drawn from the device's (seeded) generator.
        let head = LinearConfig::new(shape.d_model, shape.num_classes);
        model.head = head.init(device);
        if let Some(distillation) = &mut model.distillation {
            distillation.head = head.init(device);
        }
        Ok(Classifier::from(model).with_dropout(shape.dropout, shape.attention_dropout))
    };
    Ok(Checkpoint {
        config: serde_json::to_value(&config).expect("a ViTConfig serialises"),
        vit: Some(config),
        vocab: None,
        init: Box::new(init),
    })
}

/// The images `target` holds are those the checkpoint reads (`[channels, side]`).
fn check_images(path: &Path, expected: [usize; 2], target: &Target) -> Result<(), ImportError> {
    if target.images == Some(expected) {
        return Ok(());
    }
    let [c, side] = expected;
    let found = target
        .images
        .map_or("texts".into(), |[c, s]| format!("{c}x{s}x{s} images"));
    Err(ImportError::file(
        path,
        format!(
            "the checkpoint reads {c}x{side}x{side} images, the data are {found}; set \
             [data] image_size = {side} (colour images)"
        ),
    ))
}

/// The zero-shot classifier of the CLIP checkpoint at `path` (a folder with its tokenizer) for
/// `target`'s images: class c named `classes[c]` in each of `templates` (`{}` where the name
/// goes), through its text tower; the target's dropouts on its vision tower. How its images are
/// preprocessed is [`checkpoint_preprocess`](crate::checkpoint_preprocess)'s to say.
pub fn open_zero_shot(
    path: &Path,
    target: &Target,
    classes: &[String],
    templates: &[String],
) -> Result<Checkpoint, ImportError> {
    let read = load_clip(path, &Device::flex())?;
    let vision = &read.config.vision;
    check_images(path, [vision.channels, vision.image_size], target)?;
    if classes.len() != target.num_classes {
        let message = format!(
            "{} class names for data of {} classes",
            classes.len(),
            target.num_classes
        );
        return Err(ImportError::file(path, message));
    }
    // Refused prompts fail here, not per seed; the text tower runs per seed only.
    class_prompts(&read, classes, templates)?;
    let config = serde_json::json!({
        "clip": read.config,
        "classes": classes,
        "templates": templates,
        "dropout": [target.dropout, target.attention_dropout],
    });
    let (path, classes, templates) = (path.to_path_buf(), classes.to_vec(), templates.to_vec());
    let (dropout, attention_dropout) = (target.dropout, target.attention_dropout);
    let init = move |_: u64, device: &Device| {
        let model = clip_zero_shot(&load_clip(&path, device)?, &classes, &templates)?;
        Ok(Classifier::from(model).with_dropout(dropout, attention_dropout))
    };
    Ok(Checkpoint {
        config,
        vit: None,
        vocab: None,
        init: Box::new(init),
    })
}
