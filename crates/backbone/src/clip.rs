//! CLIP ([`ClipModel`]): a vision tower (a [`crate::VisionTransformer`] with CLIP's extra
//! LayerNorm before its blocks), a causal text tower ([`ClipTextTransformer`], pooled where
//! [`TextPooling`] says) and their projections into one embedding space; [`ClipZeroShot`], the
//! zero-shot image classifier its prompts make, a [`crate::Backbone`].

mod model;
mod text;
mod zero_shot;

pub use model::{ClipConfig, ClipModel};
pub use text::{ClipTextConfig, ClipTextTransformer, TextPooling};
pub use zero_shot::{ClipZeroShot, Prompts};
