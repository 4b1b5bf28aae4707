//! What both formats build: the imported checkpoint, the model to load into and the parts of a
//! ViT outside its blocks, under each format's names.

use std::path::Path;

use backbone::{ViTConfig, VisionTransformer};
use burn::tensor::Device;

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

/// A model of `config` (validated), its parameters to be overwritten by the checkpoint's.
pub(super) fn init(
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
pub(super) struct OuterNames {
    pub(super) patch: &'static str,
    pub(super) cls_token: &'static str,
    pub(super) distillation_token: &'static str,
    pub(super) positions: &'static str,
    pub(super) norm: &'static str,
    pub(super) head: &'static str,
    pub(super) distillation_head: &'static str,
}

/// Loads the patch embedding, tokens, positions and final norm under the loader's prefix and,
/// when `classifier`, the heads under `head_prefix`.
pub(super) fn load_outer<'a>(
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
