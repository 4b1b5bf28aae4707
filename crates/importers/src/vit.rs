//! The ViT family from a local checkpoint into a [`VisionTransformer`]: Hugging Face
//! `transformers`' ViT and DeiT ([`hf`]: `config.json` + `model.safetensors`) and `timm`'s
//! `vit_*` / `deit_*` state dicts saved as safetensors ([`timm`]: qkv fused, timm's names, the
//! architecture read from the tensors' shapes and the `config.json` timm's `save_for_hf` writes
//! beside them). The format is told by that `config.json` (`model_type` for `transformers`,
//! `architecture` for timm), the architecture by its fields and the tensors, never by a name.
//!
//! DeiT's distillation token (always there in `transformers`' DeiT, in timm's `*_distilled_*`)
//! becomes [`backbone::Distillation`]: the logits average the two heads', the pooled feature the
//! two tokens after the final norm, as both libraries compute at inference.

mod hf;
mod timm;

pub use hf::HfVitConfig;

use std::path::Path;

use backbone::{ViTConfig, VisionTransformer};
use burn::tensor::Device;
use serde::Deserialize;

use crate::config_json::{locate, read_json};
use crate::error::ImportError;
use crate::mapping::Loader;

/// A ViT-family checkpoint imported: its configuration, the model and whether the checkpoint
/// had a classifier.
#[derive(Debug)]
pub struct VitCheckpoint {
    /// The architecture read from the checkpoint.
    pub config: ViTConfig,
    /// The model holding the checkpoint's weights.
    pub model: VisionTransformer,
    /// Whether the checkpoint had a classifier (its logits are then `model.forward`). Without
    /// one, `model.head` (and the distillation head) is a fresh placeholder `D -> 1` and only
    /// `model.features` (the pooled features) belongs to the checkpoint.
    pub classifier: bool,
}

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

/// A model of `config` (validated), its parameters to be overwritten by the checkpoint's.
fn init(
    path: &Path,
    config: &ViTConfig,
    device: &Device,
) -> Result<VisionTransformer, ImportError> {
    config.init(device).map_err(|error| ImportError::Config {
        path: path.to_path_buf(),
        error,
    })
}

/// The names one format gives the parts of a ViT outside its blocks.
struct OuterNames {
    patch: &'static str,
    cls_token: &'static str,
    distillation_token: &'static str,
    positions: &'static str,
    norm: &'static str,
    head: &'static str,
    distillation_head: &'static str,
}

/// Loads the patch embedding, tokens, positions and final norm under the loader's prefix and,
/// when `classifier`, the heads under `head_prefix`.
fn load_outer<'a>(
    load: &mut Loader<'a>,
    names: &OuterNames,
    model: &mut VisionTransformer,
    classifier: bool,
    head_prefix: &'a str,
) {
    load.conv(names.patch, &mut model.patch_embed);
    load.param(names.cls_token, &mut model.cls_token, false);
    load.param(names.positions, &mut model.pos_embed, false);
    load.layer_norm(names.norm, &mut model.norm);
    if let Some(distillation) = &mut model.distillation {
        load.param(names.distillation_token, &mut distillation.token, false);
    }
    if !classifier {
        return;
    }
    let body = std::mem::replace(&mut load.prefix, head_prefix);
    load.linear(names.head, &mut model.head);
    if let Some(distillation) = &mut model.distillation {
        load.linear(names.distillation_head, &mut distillation.head);
    }
    load.prefix = body;
}
