//! The base model's architecture as numbers: FLOPs (the backbone crate's count), parameters and
//! the activation memory a training or evaluation step holds per sample.

use backbone::{BertConfig, BlockShape, ViTConfig, head_flops};

/// Bytes of one f32 value.
const F32: u64 = 4;

/// A base model's shape, read from the experiment's preset or checkpoint configuration.
#[derive(Debug, Clone)]
pub enum ModelShape {
    /// A Vision Transformer (presets, `transformers` / timm ViT and DeiT, DINOv2).
    Vit(ViTConfig),
    /// A BERT-family encoder with a linear classifier on its `[CLS]` feature (no pooler, as
    /// experiments build it).
    Bert {
        config: BertConfig,
        classes: usize,
        /// Tokens FLOPs are counted at: the mean tokenised length of the test set.
        tokens: usize,
        /// Tokens memory is counted at: `[data] max_tokens`, the longest a batch pads to.
        max_tokens: usize,
    },
    /// CLIP's zero-shot classifier: the vision tower, its image embedding projected to the
    /// joint width E (counted as the tower's head: `vision.num_classes` = E, no bias), then
    /// the E x C product with the class embeddings. CLIP's LayerNorm before the blocks adds
    /// parameters and, as every norm, no counted FLOPs.
    Clip { vision: ViTConfig, classes: usize },
}

impl ModelShape {
    /// Blocks L.
    pub fn layers(&self) -> usize {
        match self {
            Self::Vit(v) | Self::Clip { vision: v, .. } => v.n_layers,
            Self::Bert { config, .. } => config.n_layers,
        }
    }

    /// Heads per block H.
    pub fn heads(&self) -> usize {
        match self {
            Self::Vit(v) | Self::Clip { vision: v, .. } => v.n_heads,
            Self::Bert { config, .. } => config.n_heads,
        }
    }

    /// Tokens per sample FLOPs are counted at.
    pub fn tokens(&self) -> usize {
        match self {
            Self::Vit(v) | Self::Clip { vision: v, .. } => v.num_tokens(),
            Self::Bert { tokens, .. } => *tokens,
        }
    }

    /// Width D.
    pub fn d_model(&self) -> usize {
        self.widths().0 as usize
    }

    /// Width D, MLP width F and classes C.
    fn widths(&self) -> (u64, u64, u64) {
        match self {
            Self::Vit(v) => (v.d_model as u64, v.d_mlp as u64, v.num_classes as u64),
            Self::Bert {
                config, classes, ..
            } => (config.d_model as u64, config.d_mlp as u64, *classes as u64),
            Self::Clip { vision, classes } => {
                (vision.d_model as u64, vision.d_mlp as u64, *classes as u64)
            }
        }
    }

    /// FLOPs per sample with block l shaped `blocks[l]` ([`backbone::block_flops`]: 2 FLOPs a
    /// multiply-accumulate, matmuls only).
    pub fn flops(&self, blocks: &[BlockShape]) -> u64 {
        match self {
            Self::Vit(v) => v.flops(blocks),
            Self::Bert {
                config,
                classes,
                tokens,
                ..
            } => config.flops(*tokens, *classes, blocks),
            Self::Clip { vision, classes } => {
                vision.flops(blocks) + head_flops(vision.num_classes, *classes)
            }
        }
    }

    /// FLOPs per sample with `heads` heads kept in every block.
    pub fn flops_keeping(&self, heads: usize) -> u64 {
        self.flops(&vec![BlockShape::full(heads); self.layers()])
    }

    /// FLOPs per sample of the whole model.
    pub fn forward_flops(&self) -> u64 {
        self.flops_keeping(self.heads())
    }

    /// Parameters with `heads` heads kept in every block (weights and biases, norms, embeddings,
    /// the classifier).
    pub fn params_keeping(&self, heads: usize) -> u64 {
        let (d, f, c) = self.widths();
        let inner = (heads * (d as usize / self.heads().max(1))) as u64;
        let encoder = self.layers() as u64 * block_params(d, inner, f);
        let classifiers = match self {
            // The final norm, then the head (and the distillation head).
            Self::Vit(v) => 2 * d + (1 + u64::from(v.distilled)) * (d * c + c),
            Self::Bert { .. } => d * c + c,
            // The norms after and before the blocks, the projection and the class embeddings.
            Self::Clip { vision, .. } => 4 * d + (d + c) * vision.num_classes as u64,
        };
        self.embedding_params() + encoder + classifiers
    }

    /// Parameters of the input embedding (what fused Hydra members that keep their base
    /// model's store once): patches, class (and distillation) token and positions; BERT's
    /// token, position and segment tables and their norm.
    pub fn embedding_params(&self) -> u64 {
        let d = self.widths().0;
        match self {
            Self::Vit(v) | Self::Clip { vision: v, .. } => {
                // CLIP's patch embedding has no bias.
                let bias = u64::from(matches!(self, Self::Vit(_))) * d;
                let stem = (v.channels * v.patch_size * v.patch_size) as u64 * d + bias;
                let tokens = v.num_tokens() as u64;
                stem + (tokens - v.num_patches() as u64) * d + tokens * d
            }
            Self::Bert { config, .. } => {
                let table = config.vocab_size + config.max_position + config.type_vocab_size;
                table as u64 * d + 2 * d
            }
        }
    }

    /// Parameters of the whole model.
    pub fn params(&self) -> u64 {
        self.params_keeping(self.heads())
    }

    /// The parameters of every block's MLP (what Hydra's averaged merge stores once).
    pub fn mlp_params(&self) -> u64 {
        let (d, f, _) = self.widths();
        self.layers() as u64 * (2 * d * f + f + d)
    }

    /// The parameters of the classifier alone (what a head-only fine-tune trains).
    pub fn head_params(&self) -> u64 {
        let (d, _, c) = self.widths();
        match self {
            Self::Clip { vision, .. } => vision.num_classes as u64 * c,
            _ => d * c + c,
        }
    }

    /// Tokens per sample at which memory is counted.
    fn memory_tokens(&self) -> u64 {
        match self {
            Self::Vit(v) | Self::Clip { vision: v, .. } => v.num_tokens() as u64,
            Self::Bert { max_tokens, .. } => *max_tokens as u64,
        }
    }

    /// Bytes a training step keeps per sample for the backward pass, f32: per block the inputs
    /// of both norms, Q, K, V, the attention scores and probabilities, the context, the output
    /// projection and the residual (8·T·D + 2·H·T²), and the MLP's hidden layer before and after
    /// its activation (2·T·F). Dropout masks, softmax and norm statistics, workspaces and
    /// allocator slack are not counted.
    pub fn train_activation_bytes(&self) -> u64 {
        let (d, f, _) = self.widths();
        let (t, h) = (self.memory_tokens(), self.heads() as u64);
        F32 * self.layers() as u64 * (t * (8 * d + 2 * f) + 2 * h * t * t)
    }

    /// Bytes an evaluation step holds per sample, f32: the residual stream and the largest
    /// intermediates of one block (Q, K, V and the context, or the MLP's hidden layer, and the
    /// attention scores), T·(4·D + F) + H·T²; blocks run one after another.
    pub fn eval_activation_bytes(&self) -> u64 {
        let (d, f, _) = self.widths();
        let (t, h) = (self.memory_tokens(), self.heads() as u64);
        F32 * (t * (4 * d + f) + h * t * t)
    }
}

/// Parameters of one transformer block of width `d`, attention width `inner` (the kept heads'
/// share of Q/K/V/O) and MLP width `f`: the four projections with their biases, the MLP's two
/// layers with theirs, and two LayerNorms.
pub(super) fn block_params(d: u64, inner: u64, f: u64) -> u64 {
    4 * d * inner + 3 * inner + d + 2 * d * f + f + d + 4 * d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vit_b16() -> ModelShape {
        ModelShape::Vit(
            ViTConfig::new()
                .with_image_size(224)
                .with_channels(3)
                .with_patch_size(16)
                .with_d_model(768)
                .with_n_layers(12)
                .with_n_heads(12)
                .with_d_mlp(3072)
                .with_num_classes(1000),
        )
    }

    fn bert_base(tokens: usize) -> ModelShape {
        let config = BertConfig::new()
            .with_d_model(768)
            .with_n_layers(12)
            .with_n_heads(12)
            .with_d_mlp(3072);
        ModelShape::Bert {
            config,
            classes: 2,
            tokens,
            max_tokens: tokens,
        }
    }

    // Reference figures, 2 FLOPs a multiply-accumulate, counted by PyTorch 2.9's
    // `torch.utils.flop_counter.FlopCounterMode` on `transformers` models built from their
    // default configs (`ViTConfig(num_labels=1000)`, `BertConfig(num_labels=2)`, both with
    // `attn_implementation="eager"`: the SDPA kernel's matmuls go uncounted) at batch 1, with
    // their parameters summed over `model.parameters()`.
    #[test]
    fn vit_b16_matches_timm_and_pytorch_counts() {
        let vit = vit_b16();
        let flops = vit.forward_flops() as f64;
        // timm lists vit_base_patch16_224 at 17.58 GMACs (fvcore, which also counts norms).
        assert!((flops / 2.0 / 17.58e9 - 1.0).abs() < 2e-3, "{flops}");
        // FlopCounterMode: 35,127,656,448 FLOPs.
        assert!((flops / 35_127_656_448.0 - 1.0).abs() < 1e-5, "{flops}");
        assert_eq!(vit.params(), 86_567_656);
    }

    #[test]
    fn bert_base_matches_pytorch_but_for_the_pooler() {
        // Experiments classify BERT's [CLS] feature without the pooler (a D x D map), which
        // `BertForSequenceClassification` runs: 22,348,434,432 FLOPs and 109,483,778
        // parameters at 128 tokens.
        let bert = bert_base(128);
        let (d, pooler_params) = (768u64, 768 * 768 + 768);
        assert_eq!(bert.forward_flops() + 2 * d * d, 22_348_434_432);
        assert_eq!(bert.params() + pooler_params, 109_483_778);
        // About 11.2 GMACs a 128-token sequence, as usually quoted.
        assert!((bert.forward_flops() as f64 / 2e9 - 11.17).abs() < 0.01);
    }

    #[test]
    fn pruned_heads_cost_their_attention_share_and_no_more() {
        // Keeping h of H heads removes (H - h)/H of the attention FLOPs and parameters in
        // every block and leaves the stem, MLPs and head alone.
        let vit = vit_b16();
        let ViTConfig {
            n_layers: l,
            d_model: d,
            ..
        } = match &vit {
            ModelShape::Vit(v) => v.clone(),
            _ => unreachable!(),
        };
        let t = 197u64;
        let (l, d) = (l as u64, d as u64);
        let attention = l * 2 * (4 * t * d * d + 2 * t * t * d);
        assert_eq!(
            vit.forward_flops() - vit.flops_keeping(8),
            attention * 4 / 12
        );
        assert_eq!(vit.params() - vit.params_keeping(8), l * (4 * d + 3) * 256);
    }
}
