//! FLOP counts: 2 × multiply-accumulates of every matmul (patch embedding, Q/K/V, attention
//! scores and context, output projection, MLP, classifier). Not counted: biases, LayerNorms,
//! softmax, GELU, residual adds, dropout and embedding lookups (all O(T·D), small beside the
//! matmuls). Whole models count themselves from these: `ViTConfig::flops`, `BertConfig::flops`,
//! `Classifier::flops`.

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
