//! `transformers`' CLIP (`CLIPModel`: `config.json` with `text_config` and `vision_config`, and
//! `model.safetensors`) into a [`backbone::ClipModel`]: both towers, their projections and
//! `logit_scale`, quick-GELU or GELU as each tower's `hidden_act` says; with the folder's
//! tokenizer ([`data::ClipBpe`]) when it has one; [`clip_zero_shot`] makes its zero-shot
//! classifier from class names and prompt templates.

mod config;
mod load;
mod zero_shot;

pub use config::{HfClipConfig, HfClipTextConfig, HfClipVisionConfig};
pub use load::{ClipCheckpoint, load_clip};
pub(crate) use zero_shot::class_prompts;
pub use zero_shot::{clip_zero_shot, token_batch};
