//! A `transformers` CLIP `config.json` read into [`HfClipConfig`]: the two towers' sections
//! (`text_config`, `vision_config`), each field defaulting as in transformers' `CLIPTextConfig` /
//! `CLIPVisionConfig` when absent.

use std::path::Path;

use backbone::{Activation, ClipConfig, ClipTextConfig, ViTConfig};
use serde::Deserialize;

use crate::config_json::{check_supported, read_json};
use crate::error::ImportError;

/// The activations the towers may name (`hidden_act`).
const ACTIVATIONS: [&str; 2] = ["quick_gelu", "gelu"];

/// The fields of a `transformers` `CLIPModel` `config.json` the import reads; the others are
/// ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HfClipConfig {
    /// Must be "clip".
    pub model_type: String,
    /// The shared embedding width E (default 512).
    #[serde(default = "projection_dim")]
    pub projection_dim: usize,
    /// The text tower.
    pub text_config: HfClipTextConfig,
    /// The vision tower.
    pub vision_config: HfClipVisionConfig,
}

fn projection_dim() -> usize {
    512
}

/// `text_config`: transformers' `CLIPTextConfig` fields, with its defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct HfClipTextConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    /// Positions P: the longest sequence.
    pub max_position_embeddings: usize,
    /// "quick_gelu" or "gelu".
    pub hidden_act: String,
    pub layer_norm_eps: f64,
    /// 2 in old configs: pooling at the largest id ([`backbone::TextPooling::of_eos`]).
    pub eos_token_id: usize,
}

impl Default for HfClipTextConfig {
    fn default() -> Self {
        Self {
            vocab_size: 49408,
            hidden_size: 512,
            intermediate_size: 2048,
            num_hidden_layers: 12,
            num_attention_heads: 8,
            max_position_embeddings: 77,
            hidden_act: "quick_gelu".into(),
            layer_norm_eps: 1e-5,
            eos_token_id: 49407,
        }
    }
}

/// `vision_config`: transformers' `CLIPVisionConfig` fields, with its defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct HfClipVisionConfig {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_channels: usize,
    pub image_size: usize,
    pub patch_size: usize,
    /// "quick_gelu" or "gelu".
    pub hidden_act: String,
    pub layer_norm_eps: f64,
}

impl Default for HfClipVisionConfig {
    fn default() -> Self {
        Self {
            hidden_size: 768,
            intermediate_size: 3072,
            num_hidden_layers: 12,
            num_attention_heads: 12,
            num_channels: 3,
            image_size: 224,
            patch_size: 32,
            hidden_act: "quick_gelu".into(),
            layer_norm_eps: 1e-5,
        }
    }
}

impl HfClipConfig {
    /// Reads a `config.json`; an error names the file and the field (a missing or mistyped
    /// value, a `model_type` other than "clip" or a `hidden_act` other than "quick_gelu" or
    /// "gelu").
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let config: Self = read_json(path)?;
        check_supported(path, "model_type", Some(&config.model_type), &["clip"])?;
        let acts = [
            ("text_config.hidden_act", &config.text_config.hidden_act),
            ("vision_config.hidden_act", &config.vision_config.hidden_act),
        ];
        for (field, act) in acts {
            check_supported(path, field, Some(act), &ACTIVATIONS)?;
        }
        Ok(config)
    }

    /// The model's configuration.
    pub fn clip(&self) -> ClipConfig {
        let (t, v) = (&self.text_config, &self.vision_config);
        let text = ClipTextConfig::new(
            t.vocab_size,
            t.max_position_embeddings,
            t.hidden_size,
            t.num_hidden_layers,
            t.num_attention_heads,
            t.intermediate_size,
            t.eos_token_id,
        )
        .with_layer_norm_eps(t.layer_norm_eps)
        .with_activation(activation(&t.hidden_act));
        let vision = ViTConfig::new()
            .with_image_size(v.image_size)
            .with_patch_size(v.patch_size)
            .with_channels(v.num_channels)
            .with_d_model(v.hidden_size)
            .with_n_layers(v.num_hidden_layers)
            .with_n_heads(v.num_attention_heads)
            .with_d_mlp(v.intermediate_size)
            .with_num_classes(1)
            .with_layer_norm_eps(v.layer_norm_eps);
        ClipConfig::new(vision, text, self.projection_dim)
            .with_vision_activation(activation(&v.hidden_act))
    }
}

/// A `hidden_act` already checked by [`HfClipConfig::read`].
fn activation(hidden_act: &str) -> Activation {
    match hidden_act {
        "gelu" => Activation::Gelu,
        _ => Activation::QuickGelu,
    }
}
