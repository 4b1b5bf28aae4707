//! Running a checkpoint folder on inputs given as arrays, to check an import against another
//! implementation (`uqformer predict`): a ViT-family checkpoint on pixel values ([`vision`]), a
//! BERT or RoBERTa one on token ids ([`text`]), a CLIP one on pixel values against texts
//! ([`clip`]). The caller reads the arrays (a .npy) and writes the [`Outputs`]; the shapes and
//! ids are checked here, against the checkpoint.

mod arrays;
mod clip;
mod pixels;
mod tokens;

use std::path::Path;

pub use arrays::{Input, Outputs};
pub use clip::clip;
pub use pixels::vision;
pub use tokens::text;

use crate::error::Result;

/// The checkpoint's `model_type` (its config.json's; `None` for a timm state dict), which tells
/// which of [`vision`], [`text`] and [`clip`] runs it.
pub fn model_type(checkpoint: &Path) -> Result<Option<String>> {
    Ok(importers::model_type(checkpoint)?)
}
