//! `transformers`' `CLIPModel` mapped by the names `save_pretrained` writes: `vision_model.*`
//! and `text_model.*` (their blocks `encoder.layers.N.*`), `visual_projection`,
//! `text_projection` and `logit_scale`.

use std::path::{Path, PathBuf};

use backbone::{Block, ClipConfig, ClipModel, ClipTextTransformer, VisionTransformer};
use burn::module::Param;
use burn::tensor::{Device, Tensor};
use data::ClipBpe;

use super::config::HfClipConfig;
use crate::config_json::locate;
use crate::error::ImportError;
use crate::mapping::{Loader, set};
use crate::safetensors::SafeTensors;

/// The position-id buffers older `transformers` saved with the weights: `arange(P)`, which the
/// towers compute themselves.
const IGNORED: [&str; 2] = [
    "text_model.embeddings.position_ids",
    "vision_model.embeddings.position_ids",
];

/// A CLIP checkpoint imported.
#[derive(Debug)]
pub struct ClipCheckpoint {
    /// Its `config.json`, as read.
    pub hf: HfClipConfig,
    /// The architecture read from it.
    pub config: ClipConfig,
    /// The model holding the checkpoint's weights.
    pub model: ClipModel,
    /// The folder's tokenizer, when it has one (`tokenizer.json`, or `vocab.json` and
    /// `merges.txt`).
    pub tokenizer: Option<ClipBpe>,
    /// The folder it was read from, for messages.
    pub folder: PathBuf,
}

/// Reads a `transformers` `CLIPModel` checkpoint: a folder with `config.json` (with
/// `text_config` and `vision_config`) and `model.safetensors`, or a `.safetensors` file with
/// `config.json` beside it; and the tokenizer in that folder, when there is one. The
/// architecture comes from `config.json` alone; every failure names the file and, for tensors,
/// every missing, unexpected or mis-shaped key.
pub fn load_clip(path: &Path, device: &Device) -> Result<ClipCheckpoint, ImportError> {
    let (config_path, weights) = locate(path)?;
    let hf = HfClipConfig::read(&config_path)?;
    let config = hf.clip();
    let mut model = config.init(device).map_err(|error| ImportError::Config {
        path: config_path.clone(),
        error,
    })?;
    let file = SafeTensors::read(&weights)?;
    let mut load = Loader::new(&file, "vision_model.");
    load_vision(&mut load, &mut model.vision);
    load.prefix = "text_model.";
    load_text(&mut load, &mut model.text);
    load.prefix = "";
    load.linear("visual_projection", &mut model.visual_projection);
    load.linear("text_projection", &mut model.text_projection);
    reshaped(&mut load, "logit_scale", &[], &mut model.logit_scale);
    load.finish(&IGNORED)?;
    let folder = config_path.parent().unwrap_or(Path::new("."));
    Ok(ClipCheckpoint {
        hf,
        config,
        model,
        tokenizer: tokenizer(folder)?,
        folder: folder.to_path_buf(),
    })
}

/// The vision tower under `vision_model.`: CLIP's class embedding is stored `[D]` and its
/// position table `[N + 1, D]`, the model's `[1, 1, D]` and `[1, N + 1, D]`.
fn load_vision(load: &mut Loader, vision: &mut VisionTransformer) {
    load.conv("embeddings.patch_embedding", &mut vision.patch_embed);
    let [_, tokens, d] = vision.pos_embed.dims();
    reshaped(
        load,
        "embeddings.class_embedding",
        &[d],
        &mut vision.cls_token,
    );
    let positions = "embeddings.position_embedding.weight";
    reshaped(load, positions, &[tokens, d], &mut vision.pos_embed);
    if let Some(norm) = &mut vision.pre_norm {
        load.layer_norm("pre_layrnorm", norm);
    }
    load_blocks(load, &mut vision.encoder.layer);
    load.layer_norm("post_layernorm", &mut vision.norm);
}

/// The text tower under `text_model.`.
fn load_text(load: &mut Loader, text: &mut ClipTextTransformer) {
    let tokens = "embeddings.token_embedding.weight";
    load.param(tokens, &mut text.token_embedding.weight, false);
    let positions = "embeddings.position_embedding.weight";
    load.param(positions, &mut text.position_embedding, false);
    load_blocks(load, &mut text.encoder.layer);
    load.layer_norm("final_layer_norm", &mut text.final_layer_norm);
}

/// `encoder.layers.N.*`: both towers' blocks have the same names.
fn load_blocks(load: &mut Loader, blocks: &mut [Block]) {
    for (i, block) in blocks.iter_mut().enumerate() {
        let name = |suffix: &str| format!("encoder.layers.{i}.{suffix}");
        let attention = &mut block.attention;
        load.linear(&name("self_attn.q_proj"), &mut attention.query);
        load.linear(&name("self_attn.k_proj"), &mut attention.key);
        load.linear(&name("self_attn.v_proj"), &mut attention.value);
        load.linear(&name("self_attn.out_proj"), &mut attention.output);
        load.layer_norm(&name("layer_norm1"), &mut block.norm1);
        load.linear(&name("mlp.fc1"), &mut block.mlp.fc1);
        load.linear(&name("mlp.fc2"), &mut block.mlp.fc2);
        load.layer_norm(&name("layer_norm2"), &mut block.norm2);
    }
}

/// Loads `name`, stored with shape `stored`, into `param` of the same number of values.
fn reshaped<const D: usize>(
    load: &mut Loader,
    name: &str,
    stored: &[usize],
    param: &mut Param<Tensor<D>>,
) {
    if let Some(values) = load.take(name, stored) {
        set(param, values);
    }
}

/// The CLIP tokenizer of `folder`, when it has one.
fn tokenizer(folder: &Path) -> Result<Option<ClipBpe>, ImportError> {
    let files = ["tokenizer.json", "vocab.json"];
    if !files.iter().any(|f| folder.join(f).is_file()) {
        return Ok(None);
    }
    ClipBpe::from_dir(folder)
        .map(Some)
        .map_err(|error| ImportError::Tokenizer {
            path: folder.to_path_buf(),
            error,
        })
}
