//! FLOP counts: 2 × multiply-accumulates of every matmul (patch embedding, Q/K/V, attention
//! scores and context, output projection, MLP, classifier). Not counted: biases, LayerNorms,
//! softmax, GELU, residual adds, dropout and embedding lookups (all O(T·D), small beside the
//! matmuls).

use crate::bert::BertConfig;
use crate::vit::ViTConfig;

/// What one block still computes: its number of heads, whether its attention branch is
/// present, and whether its GELU is (absent = fc2∘fc1 merged into one D×D map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShape {
    /// Heads kept.
    pub heads: usize,
    /// Attention branch present.
    pub attention: bool,
    /// GELU present (else the MLP is one merged D×D linear map).
    pub activation: bool,
}

impl BlockShape {
    /// An unpruned block.
    pub fn full(heads: usize) -> Self {
        Self {
            heads,
            attention: true,
            activation: true,
        }
    }
}

/// FLOPs of one block on `tokens` tokens.
pub fn block_flops(
    block: BlockShape,
    tokens: usize,
    d_model: usize,
    head_dim: usize,
    d_mlp: usize,
) -> u64 {
    let (t, d, f) = (tokens as u64, d_model as u64, d_mlp as u64);
    let inner = (block.heads * head_dim) as u64;
    let attention = if block.attention {
        // Q, K, V and output projections, then scores (T×T per head) and context.
        4 * t * d * inner + 2 * t * t * inner
    } else {
        0
    };
    let mlp = if block.activation {
        2 * t * d * f
    } else {
        t * d * d
    };
    2 * (attention + mlp)
}

/// FLOPs of a ViT's patch embedding: `patches` patches of `channels × patch²` pixels to
/// `d_model`.
pub fn patch_embed_flops(patches: usize, channels: usize, patch: usize, d_model: usize) -> u64 {
    2 * (patches * channels * patch * patch * d_model) as u64
}

/// FLOPs of a classifier from `d_model` features to `classes` logits.
pub fn head_flops(d_model: usize, classes: usize) -> u64 {
    2 * (d_model * classes) as u64
}

/// FLOPs per image of a ViT whose blocks are described by `blocks` (one entry per block).
pub fn vit_flops(config: &ViTConfig, blocks: &[BlockShape]) -> u64 {
    let head_dim = config.d_model / config.n_heads;
    let stem = patch_embed_flops(
        config.num_patches(),
        config.channels,
        config.patch_size,
        config.d_model,
    );
    let encoder: u64 = blocks
        .iter()
        .map(|&b| {
            block_flops(
                b,
                config.num_tokens(),
                config.d_model,
                head_dim,
                config.d_mlp,
            )
        })
        .sum();
    stem + encoder + head_flops(config.d_model, config.num_classes)
}

/// FLOPs per image of the unpruned ViT.
pub fn flops_per_sample(config: &ViTConfig) -> u64 {
    vit_flops(
        config,
        &vec![BlockShape::full(config.n_heads); config.n_layers],
    )
}

/// FLOPs per sequence of `tokens` tokens for the BERT classifier with `num_classes` classes and
/// blocks described by `blocks`.
pub fn bert_flops(
    config: &BertConfig,
    tokens: usize,
    num_classes: usize,
    blocks: &[BlockShape],
) -> u64 {
    let head_dim = config.d_model / config.n_heads;
    let encoder: u64 = blocks
        .iter()
        .map(|&b| block_flops(b, tokens, config.d_model, head_dim, config.d_mlp))
        .sum();
    encoder + head_flops(config.d_model, num_classes)
}
