//! CLIP ([`ClipModel`]): a vision tower (a [`crate::VisionTransformer`] with CLIP's extra
//! LayerNorm before its blocks), a causal text tower ([`ClipTextTransformer`], pooled where
//! [`TextPooling`] says) and their projections into one embedding space.

mod model;
mod text;

pub use model::{ClipConfig, ClipModel, normalize};
pub use text::{ClipTextConfig, ClipTextTransformer, TextPooling};
