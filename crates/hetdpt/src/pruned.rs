//! The merged model: attention branches removed outright, MLPs without GELU folded into one
//! linear map.

use backbone::{
    Attention, BlockShape, Dropout, Gates, Input, Mlp, Mode, VisionTransformer, block_flops,
    head_flops, patch_embed_flops, residual,
};
use burn::module::{Module, Param};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::Tensor;
use seam::Trainable;
use seam::{EnsembleModel, MemberOutputs};
use serde::Serialize;

use crate::error::HetDptError;

/// Which layers are removed: per block, its attention branch and its GELU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removal {
    /// `attn[l]`: block l's attention branch (with LN1) is removed.
    pub attn: Vec<bool>,
    /// `act[l]`: block l's GELU is removed (fc2∘fc1 merged into one map).
    pub act: Vec<bool>,
}

impl Removal {
    /// Nothing removed from `layers` blocks.
    pub fn none(layers: usize) -> Self {
        Self {
            attn: vec![false; layers],
            act: vec![false; layers],
        }
    }

    /// The first `n_attn` blocks of `attn_order` lose their attention branch and the first
    /// `n_act` of `act_order` their GELU (the orders come from the removal rounds, so they are
    /// long enough and name blocks below `layers`).
    pub(crate) fn first(
        layers: usize,
        attn_order: &[usize],
        n_attn: usize,
        act_order: &[usize],
        n_act: usize,
    ) -> Self {
        let mut removal = Self::none(layers);
        for &l in &attn_order[..n_attn] {
            removal.attn[l] = true;
        }
        for &l in &act_order[..n_act] {
            removal.act[l] = true;
        }
        removal
    }

    /// The gates that give the same model inside the unmerged ViT: 0 where removed, 1 elsewhere.
    pub fn gates(&self, device: &burn::tensor::Device) -> Gates {
        let ones = |removed: &[bool]| {
            let g: Vec<f32> = removed.iter().map(|&r| if r { 0.0 } else { 1.0 }).collect();
            Tensor::<1>::from_floats(g.as_slice(), device)
        };
        Gates {
            attn: Some(ones(&self.attn)),
            act: Some(ones(&self.act)),
            ..Gates::none()
        }
    }
}

/// An attention branch, `x + Attn(LN1(x))`, with its norm.
#[derive(Module, Debug)]
pub struct AttentionBranch {
    pub norm: LayerNorm,
    /// May have fewer heads than the base (HetDPT+); its width is `heads·d_h`.
    pub attention: Attention,
}

/// A block's MLP: the original `fc2(GELU(fc1 x))`, or one linear map when the GELU is removed.
#[derive(Module, Debug)]
pub enum PrunedMlp {
    /// With GELU; its hidden width may be pruned (HetDPT+).
    Gelu(Mlp),
    /// GELU removed: `x·(W1·W2) + (b1·W2 + b2)`, D -> D.
    Merged(Linear),
}

/// A pre-norm block after pruning: `x = x + Attn(LN1 x)` (when kept); `x = x + MLP(LN2 x)`.
#[derive(Module, Debug)]
pub struct PrunedBlock {
    pub attention: Option<AttentionBranch>,
    pub norm2: LayerNorm,
    pub mlp: PrunedMlp,
    pub dropout: Dropout,
    /// Both norms' epsilon, the block's it came from ([`backbone::Block::layer_norm_eps`]).
    pub layer_norm_eps: f64,
}

/// A depth-pruned (and possibly width-pruned) Vision Transformer: genuinely smaller, run
/// without gates.
#[derive(Module, Debug)]
pub struct PrunedViT {
    /// The base ViT with an empty encoder: patch embedding, class token, positions, final norm
    /// and classifier (so embedding and read-out are the backbone's own code).
    pub shell: VisionTransformer,
    pub blocks: Vec<PrunedBlock>,
}

/// Builds the merged model of `base` with `removal` applied; an error unless both lists of
/// `removal` have one entry per block of `base`.
pub fn merge(base: &VisionTransformer, removal: &Removal) -> Result<PrunedViT, HetDptError> {
    let layers = base.encoder.layer.len();
    if removal.attn.len() != layers || removal.act.len() != layers {
        return Err(HetDptError::Invalid(format!(
            "a removal of {} attention and {} activation entries does not fit a model of \
             {layers} blocks",
            removal.attn.len(),
            removal.act.len()
        )));
    }
    let mut shell = base.clone();
    let layers = std::mem::take(&mut shell.encoder.layer);
    let blocks = layers
        .into_iter()
        .enumerate()
        .map(|(l, block)| PrunedBlock {
            attention: (!removal.attn[l]).then_some(AttentionBranch {
                norm: block.norm1,
                attention: block.attention,
            }),
            norm2: block.norm2,
            mlp: if removal.act[l] {
                PrunedMlp::Merged(fold(&block.mlp))
            } else {
                PrunedMlp::Gelu(block.mlp)
            },
            dropout: block.dropout,
            layer_norm_eps: block.layer_norm_eps,
        })
        .collect();
    Ok(PrunedViT { shell, blocks })
}

/// `fc2(fc1 x)` as one map: `x·W1·W2 + b1·W2 + b2` (Burn stores weights `[in, out]`).
fn fold(mlp: &Mlp) -> Linear {
    let w1 = mlp.fc1.weight.val();
    let w2 = mlp.fc2.weight.val();
    let mut bias = Tensor::<1>::zeros([w2.dims()[1]], &w2.device());
    if let Some(b1) = &mlp.fc1.bias {
        bias = bias
            + b1.val()
                .unsqueeze_dim::<2>(0)
                .matmul(w2.clone())
                .squeeze_dim(0);
    }
    if let Some(b2) = &mlp.fc2.bias {
        bias = bias + b2.val();
    }
    Linear {
        weight: Param::from_tensor(w1.matmul(w2)),
        bias: Some(Param::from_tensor(bias)),
    }
}

impl PrunedMlp {
    fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        match self {
            Self::Gelu(mlp) => mlp.forward(x, None),
            Self::Merged(layer) => kernels::linear(layer, x),
        }
    }
}

impl PrunedBlock {
    fn forward(&self, x: Tensor<3>, mode: Mode) -> Tensor<3> {
        let attention = self.attention.as_ref().map(|branch| {
            (
                |h| kernels::layer_norm(&branch.norm, self.layer_norm_eps, h),
                |h| (self.dropout).forward(branch.attention.forward(h, None, None, mode), mode),
            )
        });
        let mlp = |h| self.dropout.forward(self.mlp.forward(h), mode);
        residual(
            x,
            true,
            attention,
            (
                |h| kernels::layer_norm(&self.norm2, self.layer_norm_eps, h),
                mlp,
            ),
        )
    }

    /// FLOPs of this block on `tokens` tokens ([`block_flops`]), its shape read from the
    /// weights (width pruning narrows heads and MLPs).
    fn flops(&self, tokens: usize) -> u64 {
        let d_model = self.norm2.gamma.dims()[0];
        let (heads, head_dim) = self.attention.as_ref().map_or((0, 0), |b| {
            let heads = b.attention.n_heads;
            (heads, b.attention.query.weight.dims()[1] / heads.max(1))
        });
        let (activation, d_mlp) = match &self.mlp {
            PrunedMlp::Gelu(m) => (true, m.fc1.weight.dims()[1]),
            PrunedMlp::Merged(_) => (false, 0),
        };
        let shape = BlockShape {
            heads,
            attention: self.attention.is_some(),
            activation,
        };
        block_flops(shape, tokens, d_model, head_dim, d_mlp)
    }
}

impl PrunedViT {
    /// Logits `[B, num_classes]` for images `[B, C, H, W]`.
    pub fn forward(&self, images: Tensor<4>, mode: Mode) -> Tensor<2> {
        self.outputs(images, mode).0
    }

    /// Logits `[B, num_classes]` and the class token after the final norm `[B, D]`.
    pub fn outputs(&self, images: Tensor<4>, mode: Mode) -> (Tensor<2>, Tensor<2>) {
        let mut x = self.shell.embed(images, mode);
        for block in &self.blocks {
            x = block.forward(x, mode);
        }
        let cls = x.narrow(1, 0, 1).squeeze_dim::<2>(1);
        let features = self.shell.norm.forward(cls);
        (
            kernels::linear(&self.shell.head, features.clone()),
            features,
        )
    }

    /// Attention branches still present.
    pub fn attention_kept(&self) -> usize {
        self.blocks.iter().filter(|b| b.attention.is_some()).count()
    }

    /// GELUs still present.
    pub fn activations_kept(&self) -> usize {
        self.blocks
            .iter()
            .filter(|b| matches!(b.mlp, PrunedMlp::Gelu(_)))
            .count()
    }

    /// FLOPs per image, from the weight shapes (the cost model of `backbone::ViTConfig::flops`).
    pub fn flops(&self) -> u64 {
        let tokens = self.shell.pos_embed.dims()[1];
        let [d, c, p, _] = self.shell.patch_embed.weight.dims();
        let [_, classes] = self.shell.head.weight.dims();
        let blocks: u64 = self.blocks.iter().map(|b| b.flops(tokens)).sum();
        patch_embed_flops(tokens - 1, c, p, d) + blocks + head_flops(d, classes)
    }
}

impl EnsembleModel for PrunedViT {
    fn members(&self) -> usize {
        1
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        MemberOutputs::single(self.outputs(input.images(), Mode::Deterministic))
    }

    fn num_params(&self) -> usize {
        Module::num_params(self)
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops()
    }

    fn in_precision(&self, dtype: burn::tensor::FloatDType) -> Box<dyn EnsembleModel> {
        seam::precision::InPrecision::cast(self.clone(), dtype)
    }
}

impl Trainable for PrunedViT {
    fn train_logits(&self, input: Input) -> Tensor<3> {
        let images = input.images();
        self.forward(images, Mode::Stochastic).unsqueeze_dim(0)
    }

    fn eval_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input.images(), Mode::Deterministic)
            .unsqueeze_dim(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_rel_diff, serial, tiny_vit};
    use backbone::BlockShape;
    use burn::tensor::{Device, Distribution};

    fn images(device: &Device) -> Tensor<4> {
        Tensor::random([5, 1, 8, 8], Distribution::Normal(0.0, 1.0), device)
    }

    #[test]
    fn merged_model_equals_gated_model() {
        let _rng = serial();
        let device = Device::flex();
        let (cfg, base) = tiny_vit(&device, 11);
        let removal = Removal {
            attn: vec![false, true, false],
            act: vec![true, false, true],
        };
        let x = images(&device);
        let gated = base.forward(x.clone(), &removal.gates(&device), Mode::Deterministic);
        let merged = merge(&base, &removal).unwrap();
        assert_eq!(merged.blocks.len(), cfg.n_layers);
        assert_eq!(merged.attention_kept(), 2);
        assert_eq!(merged.activations_kept(), 1);
        let out = merged.forward(x, Mode::Deterministic);
        let diff = max_rel_diff(&out, &gated);
        assert!(diff < 1e-4, "relative difference {diff}");
    }

    #[test]
    fn removing_nothing_is_the_identity() {
        let _rng = serial();
        let device = Device::flex();
        let (cfg, base) = tiny_vit(&device, 12);
        let x = images(&device);
        let expected = base.forward(x.clone(), &Gates::none(), Mode::Deterministic);
        let merged = merge(&base, &Removal::none(cfg.n_layers)).unwrap();
        let out = merged.member_logits(x.into()).squeeze_dim::<2>(0);
        assert_eq!(max_rel_diff(&out, &expected), 0.0);
        assert_eq!(EnsembleModel::num_params(&merged), base.num_params());
    }

    #[test]
    fn params_and_flops_match_closed_forms() {
        let _rng = serial();
        let device = Device::flex();
        let (cfg, base) = tiny_vit(&device, 13);
        let removal = Removal {
            attn: vec![true, false, true],
            act: vec![false, true, false],
        };
        let merged = merge(&base, &removal).unwrap();
        let (d, f) = (cfg.d_model, cfg.d_mlp);
        // An attention branch: Q, K, V, O (weights and biases) and LN1 (gamma, beta).
        let attention = 4 * (d * d + d) + 2 * d;
        // A GELU removal turns D·F + F + F·D + D parameters into D·D + D.
        let folded = (2 * d * f + f + d) - (d * d + d);
        assert_eq!(
            EnsembleModel::num_params(&merged),
            base.num_params() - 2 * attention - folded
        );
        let shapes: Vec<BlockShape> = (0..cfg.n_layers)
            .map(|l| BlockShape {
                heads: cfg.n_heads,
                attention: !removal.attn[l],
                activation: !removal.act[l],
            })
            .collect();
        assert_eq!(merged.flops_per_sample(), cfg.flops(&shapes));
        let full = merge(&base, &Removal::none(cfg.n_layers)).unwrap();
        assert_eq!(full.flops(), cfg.flops_per_sample());
    }

    #[test]
    fn a_removal_of_the_wrong_length_is_an_error() {
        let _rng = serial();
        let (_, base) = tiny_vit(&Device::flex(), 14);
        let err = merge(&base, &Removal::none(2)).unwrap_err().to_string();
        assert!(err.contains("model of 3 blocks"), "{err}");
    }

    #[test]
    fn first_takes_prefixes_of_the_orders() {
        let r = Removal::first(4, &[2, 0, 3], 2, &[1, 3], 1);
        assert_eq!(r.attn, vec![true, false, true, false]);
        assert_eq!(r.act, vec![false, true, false, false]);
    }
}
