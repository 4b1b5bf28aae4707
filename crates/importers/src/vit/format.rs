//! Which of the two formats a checkpoint is in, told by its `config.json`, and where its files
//! are.

use std::path::Path;

use burn::tensor::Device;
use serde::Deserialize;

use super::checkpoint::VitCheckpoint;
use super::{hf, timm};
use crate::config_json::{locate, read_json};
use crate::error::ImportError;

/// The two fields that tell the formats apart.
#[derive(Deserialize)]
struct Format {
    model_type: Option<String>,
    architecture: Option<String>,
}

/// Reads a ViT-family checkpoint: a folder with `config.json` and `model.safetensors`, or a
/// `.safetensors` file with `config.json` beside it; `transformers`' `ViTModel`,
/// `ViTForImageClassification`, `DeiTModel`, `DeiTForImageClassificationWithTeacher`, or a
/// timm `vit_*` / `deit_*` state dict. Every failure names the file and, for tensors, every
/// missing, unexpected or mis-shaped key.
pub fn load_vit(path: &Path, device: &Device) -> Result<VitCheckpoint, ImportError> {
    let (config, weights) = locate(path)?;
    let format: Format = read_json(&config)?;
    match format {
        Format {
            model_type: Some(_),
            ..
        } => hf::load(&config, &weights, device),
        Format {
            architecture: Some(_),
            ..
        } => timm::load(&config, &weights, device),
        _ => Err(ImportError::file(
            &config,
            "neither model_type (transformers) nor architecture (timm's save_for_hf) is set; \
             expected the config.json of a ViT or DeiT checkpoint",
        )),
    }
}
