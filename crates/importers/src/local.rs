//! A checkpoint an experiment names by its path (`[backbone] checkpoint`), rather than a
//! registered download: its family told by its `config.json` (never by a name), read and fitted
//! to a [`Target`] with a fresh classifier head like the registered backbones.

use std::path::Path;

use backbone::{Architecture, Classifier};
use burn::nn::LinearConfig;
use burn::tensor::Device;
use serde::Deserialize;

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
/// `deit_*`, a BERT for `bert`. Others are refused naming the file and the field.
pub fn checkpoint_architecture(path: &Path) -> Result<Architecture, ImportError> {
    let (config, _) = locate(path)?;
    let family: Family = read_json(&config)?;
    match (family.model_type.as_deref(), family.architecture.as_deref()) {
        (Some("vit" | "deit"), _) | (None, Some(_)) => Ok(Architecture::Vit),
        (Some("bert"), _) => Ok(Architecture::Bert),
        (Some("roberta"), _) => Err(ImportError::file(
            &config,
            "model_type \"roberta\": its byte-level BPE tokenizer is not read by experiments yet \
             (`uqformer predict` takes RoBERTa checkpoints); expected vit, deit or bert",
        )),
        (Some(other), _) => Err(ImportError::file(
            &config,
            format!("model_type {other:?}; expected vit, deit or bert"),
        )),
        (None, None) => Err(ImportError::file(
            &config,
            "neither model_type (transformers) nor architecture (timm) is set; expected the \
             config.json of a ViT, DeiT or BERT checkpoint",
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
        // `checkpoint_architecture` refuses CLIP folders (model_type "clip") for now.
        Architecture::ClipZeroShot => Err(ImportError::file(
            path,
            "a CLIP zero-shot classifier is not read from an experiment file yet",
        )),
    }
}

/// A ViT-family checkpoint at its own image size, which the data must have (3 channels).
fn vit(path: &Path, target: &Target) -> Result<Checkpoint, ImportError> {
    let read = load_vit(path, &Device::flex())?;
    let mut config = read.config;
    let expected = [config.channels, config.image_size];
    if target.images != Some(expected) {
        let [c, side] = expected;
        let found = target
            .images
            .map_or("texts".into(), |[c, s]| format!("{c}x{s}x{s} images"));
        return Err(ImportError::file(
            path,
            format!(
                "the checkpoint reads {c}x{side}x{side} images, the data are {found}; set \
                 [data] image_size = {side} (colour images)"
            ),
        ));
    }
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
