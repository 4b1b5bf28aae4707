//! What making a zero-shot base model costs: its class prompts through CLIP's text tower, once
//! a seed (the base job), nothing trained.

use backbone::{BlockShape, ClipConfig, block_flops, head_flops};

use super::shape::block_params;

/// Bytes of one f32 value.
const F32: u64 = 4;

/// The class prompts of a zero-shot classifier: `classes` × `templates` texts through the text
/// tower of `clip` and its projection, each class's prompts one batch.
#[derive(Debug, Clone)]
pub struct Prompts {
    pub clip: ClipConfig,
    pub classes: usize,
    pub templates: usize,
}

impl Prompts {
    /// FLOPs of every prompt through the text tower and its projection to E, counted as
    /// [`backbone::block_flops`] does, each prompt at the tower's full context P: an upper
    /// bound, as a class's prompts are padded to its longest only.
    pub fn flops(&self) -> u64 {
        let t = &self.clip.text;
        let head_dim = t.d_model / t.n_heads.max(1);
        let block = block_flops(
            BlockShape::full(t.n_heads),
            t.max_positions,
            t.d_model,
            head_dim,
            t.d_mlp,
        );
        let prompt = t.n_layers as u64 * block + head_flops(t.d_model, self.clip.projection_dim);
        (self.classes * self.templates) as u64 * prompt
    }

    /// Peak bytes in f32: the text tower's weights (token and position tables, blocks, final
    /// norm, projection) beside the classifier's `classifier_params`, and one class's prompts
    /// through a block (as [`super::ModelShape::eval_activation_bytes`] counts one).
    pub fn memory_bytes(&self, classifier_params: u64) -> u64 {
        let t = &self.clip.text;
        let (d, f, h) = (t.d_model as u64, t.d_mlp as u64, t.n_heads as u64);
        let p = t.max_positions as u64;
        let block = block_params(d, d, f);
        let projection = d * self.clip.projection_dim as u64;
        let tower = (t.vocab_size as u64 + p) * d + t.n_layers as u64 * block + 2 * d + projection;
        let batch = self.templates as u64 * (p * (4 * d + f) + h * p * p);
        F32 * (classifier_params + tower + batch)
    }
}
