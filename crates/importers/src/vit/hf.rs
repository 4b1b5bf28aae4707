//! `transformers`' ViT and DeiT: `config.json` read into [`HfVitConfig`], `model.safetensors`
//! mapped by the names `save_pretrained` writes (`embeddings.*`, `encoder.layer.N.*`, under
//! `vit.` / `deit.` in the classification models; the heads `classifier` or `cls_classifier` and
//! `distillation_classifier` outside it).

use std::collections::BTreeMap;
use std::path::Path;

use backbone::ViTConfig;
use burn::tensor::Device;
use serde::Deserialize;

use super::checkpoint::{OuterNames, VitCheckpoint, init, load_outer};
use crate::config_json::{check_supported, read_json};
use crate::error::ImportError;
use crate::mapping::{Loader, Source};
use crate::safetensors::SafeTensors;

/// `ViTModel`'s and `DeiTModel`'s pooler (dense + tanh), which the pooled features (the class
/// token after the final norm) do not use.
const IGNORED: [&str; 2] = ["pooler.dense.weight", "pooler.dense.bias"];

/// The fields of a `transformers` ViT or DeiT `config.json` the import reads; the others are
/// ignored. The sizes are required; the rest default as in `transformers`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HfVitConfig {
    /// "vit" or "deit" (DeiT: a distillation token after the class token).
    pub model_type: String,
    /// Must be "gelu" (the exact, erf GELU) when given.
    pub hidden_act: Option<String>,
    /// Width D.
    pub hidden_size: usize,
    /// Blocks L.
    pub num_hidden_layers: usize,
    /// Heads per block H.
    pub num_attention_heads: usize,
    /// MLP hidden width F.
    pub intermediate_size: usize,
    /// Image side (default 224).
    #[serde(default = "image_size")]
    pub image_size: usize,
    /// Patch side (default 16).
    #[serde(default = "patch_size")]
    pub patch_size: usize,
    /// Input channels (default 3).
    #[serde(default = "channels")]
    pub num_channels: usize,
    /// LayerNorm epsilon (default 1e-12).
    #[serde(default = "layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// Whether the query, key and value projections have biases (default true).
    #[serde(default = "qkv_bias")]
    pub qkv_bias: bool,
    /// The classifier's labels, by index; their number is the classifier's width.
    pub id2label: Option<BTreeMap<String, String>>,
}

fn image_size() -> usize {
    224
}

fn patch_size() -> usize {
    16
}

fn channels() -> usize {
    3
}

fn layer_norm_eps() -> f64 {
    1e-12
}

fn qkv_bias() -> bool {
    true
}

impl HfVitConfig {
    /// Reads a `config.json`; an error names the file and the field (a missing or mistyped
    /// value, or a `model_type` or `hidden_act` this import does not support).
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let config: Self = read_json(path)?;
        check_supported(
            path,
            "model_type",
            Some(&config.model_type),
            &["vit", "deit"],
        )?;
        check_supported(path, "hidden_act", config.hidden_act.as_deref(), &["gelu"])?;
        Ok(config)
    }

    fn distilled(&self) -> bool {
        self.model_type == "deit"
    }

    /// The backbone's configuration, with a `num_classes` head.
    fn vit(&self, num_classes: usize) -> ViTConfig {
        ViTConfig::new()
            .with_image_size(self.image_size)
            .with_patch_size(self.patch_size)
            .with_channels(self.num_channels)
            .with_d_model(self.hidden_size)
            .with_n_layers(self.num_hidden_layers)
            .with_n_heads(self.num_attention_heads)
            .with_d_mlp(self.intermediate_size)
            .with_num_classes(num_classes)
            .with_layer_norm_eps(self.layer_norm_eps)
            .with_distilled(self.distilled())
    }
}

/// The names `transformers` gives ViT's and DeiT's outer parts (the heads: DeiT's).
const NAMES: OuterNames = OuterNames {
    patch: "embeddings.patch_embeddings.projection",
    cls_token: "embeddings.cls_token",
    distillation_token: "embeddings.distillation_token",
    positions: "embeddings.position_embeddings",
    norm: "layernorm",
    head: "cls_classifier",
    distillation_head: "distillation_classifier",
};

/// Imports a `transformers` checkpoint (`config` and `weights` located by `super::format::load_vit`).
pub(super) fn load(
    config: &Path,
    weights: &Path,
    device: &Device,
) -> Result<VitCheckpoint, ImportError> {
    let hf = HfVitConfig::read(config)?;
    let file = SafeTensors::read(weights)?;
    let names = match hf.distilled() {
        true => NAMES,
        false => OuterNames {
            head: "classifier",
            ..NAMES
        },
    };
    let head = file.shape(&format!("{}.weight", names.head));
    let classifier = head.is_some();
    // The labels are the config's word on the classifier's width; the tensor's shape is
    // checked against it by the mapping.
    let num_classes = (hf.id2label.as_ref().map(BTreeMap::len))
        .or(head.map(|shape| shape[0]))
        .filter(|_| classifier)
        .unwrap_or(1);
    let config = hf.vit(num_classes);
    let mut model = init(weights, &config, device)?;
    let prefix = (file.names().into_iter())
        .find_map(|name| name.strip_suffix(NAMES.cls_token))
        .unwrap_or("");
    let mut load = Loader::new(&file, prefix);
    load_outer(&mut load, &names, &mut model, classifier, "");
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        let name = |suffix: &str| format!("encoder.layer.{i}.{suffix}");
        let attention = &mut block.attention;
        let projections = [
            ("query", &mut attention.query),
            ("key", &mut attention.key),
            ("value", &mut attention.value),
        ];
        for (role, linear) in projections {
            load.linear_with(
                &name(&format!("attention.attention.{role}")),
                linear,
                hf.qkv_bias,
            );
        }
        load.linear(&name("attention.output.dense"), &mut attention.output);
        load.layer_norm(&name("layernorm_before"), &mut block.norm1);
        load.linear(&name("intermediate.dense"), &mut block.mlp.fc1);
        load.linear(&name("output.dense"), &mut block.mlp.fc2);
        load.layer_norm(&name("layernorm_after"), &mut block.norm2);
    }
    load.finish(&IGNORED)?;
    Ok(VitCheckpoint {
        config,
        model,
        classifier,
    })
}
