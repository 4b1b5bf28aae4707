//! `transformers`' CLIP (`CLIPModel`: `config.json` with `text_config` and `vision_config`, and
//! `model.safetensors`) into a [`backbone::ClipModel`]: both towers, their projections and
//! `logit_scale`, quick-GELU or GELU as each tower's `hidden_act` says; with the folder's
//! tokenizer ([`data::ClipBpe`]) when it has one.

mod config;
mod load;

pub use config::{HfClipConfig, HfClipTextConfig, HfClipVisionConfig};
pub use load::{ClipCheckpoint, load_clip};
