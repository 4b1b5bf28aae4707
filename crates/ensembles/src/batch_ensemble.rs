//! BatchEnsemble (Wen et al., 2020) on the Vision Transformer: M members share every weight
//! matrix; each linear layer gives member m rank-1 fast weights, `y = ((x ∘ r_m) W) ∘ s_m + b_m`.

use backbone::{BackboneError, Dropout, Mode, ViTConfig, patchify, positive};
use burn::module::{Module, Param};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Device, Distribution, Tensor};
use serde::{Deserialize, Serialize};

use crate::block::{MemberBlock, Projection, tokens};
use crate::draw;
use seam::EnsembleModel;
use seam::MemberOutputs;

/// How the fast weights r and s start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FastInit {
    /// Independent random signs ±1 (Wen et al.): members differ from the first step.
    #[default]
    RandomSign,
    /// All ones: every member starts as the shared model.
    Ones,
}

/// BatchEnsemble's own settings; the network is the `ViTConfig` given to [`init`](Self::init).
/// Read from a table, `members` is required and unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchEnsembleConfig {
    /// Members M (4 by default).
    pub members: usize,
    #[serde(default)]
    pub fast_init: FastInit,
}

impl Default for BatchEnsembleConfig {
    fn default() -> Self {
        Self {
            members: 4,
            fast_init: FastInit::default(),
        }
    }
}

impl BatchEnsembleConfig {
    /// Seeds the device RNG with `seed`, then draws the shared weights as a plain ViT's (in
    /// field order) and the fast weights after them. Per-member biases start equal
    /// to the shared model's biases.
    pub fn init(
        &self,
        vit: &ViTConfig,
        seed: u64,
        device: &Device,
    ) -> Result<BatchEnsemble, BackboneError> {
        positive("BatchEnsembleConfig.members", self.members)?;
        device.seed(seed);
        let base = draw::now(vit.init(device)?);
        let m = self.members;
        let init = self.fast_init;
        let linear = |l: Linear| BeLinear::new(l.weight, l.bias.map(|b| b.val()), m, init);
        // The patch convolution is the linear map [C·p·p] -> D on each flattened patch.
        let conv = base.patch_embed;
        let [d, c, p, _] = conv.weight.dims();
        let patch_weight = conv.weight.val().reshape([d, c * p * p]).transpose();
        let patch_embed = BeLinear::new(
            Param::from_tensor(patch_weight.detach()),
            conv.bias.map(|b| b.val()),
            m,
            init,
        );
        let blocks = base
            .encoder
            .layer
            .into_iter()
            .map(|b| MemberBlock {
                query: linear(b.attention.query),
                key: linear(b.attention.key),
                value: linear(b.attention.value),
                output: linear(b.attention.output),
                norm1: b.norm1,
                fc1: linear(b.mlp.fc1),
                fc2: linear(b.mlp.fc2),
                norm2: b.norm2,
                dropout: b.dropout,
                attention_dropout: b.attention.dropout,
                n_heads: b.attention.n_heads,
            })
            .collect();
        Ok(BatchEnsemble {
            patch_embed,
            cls_token: base.cls_token,
            pos_embed: base.pos_embed,
            dropout: base.dropout,
            blocks,
            norm: base.norm,
            head: linear(base.head),
            patch_size: p,
            // Each member runs the whole network on its copy of the batch.
            flops: m as u64 * vit.flops_per_sample(),
        })
    }
}

/// A shared linear layer with per-member rank-1 fast weights and per-member biases, on inputs
/// `[M·B, T, in]` whose batch holds member 0's copy first, then member 1's, ...
#[derive(Module, Debug)]
pub struct BeLinear {
    /// Shared weight `[in, out]`.
    pub weight: Param<Tensor<2>>,
    /// Input-side fast weights `[M, in]`.
    pub r: Param<Tensor<2>>,
    /// Output-side fast weights `[M, out]`.
    pub s: Param<Tensor<2>>,
    /// Per-member bias `[M, out]`.
    pub bias: Param<Tensor<2>>,
}

impl BeLinear {
    /// Wraps a shared weight; every member's bias starts as `bias` (zero when absent).
    fn new(
        weight: Param<Tensor<2>>,
        bias: Option<Tensor<1>>,
        members: usize,
        init: FastInit,
    ) -> Self {
        let [d_in, d_out] = weight.dims();
        let device = weight.device();
        let bias = bias.unwrap_or_else(|| Tensor::zeros([d_out], &device));
        let fast = |n: usize| {
            Param::from_tensor(match init {
                FastInit::Ones => Tensor::ones([members, n], &device),
                FastInit::RandomSign => {
                    Tensor::random([members, n], Distribution::Bernoulli(0.5), &device)
                        .mul_scalar(2.0)
                        .sub_scalar(1.0)
                }
            })
        };
        Self {
            r: fast(d_in),
            s: fast(d_out),
            // Detached: a new parameter must be a leaf of the autodiff graph.
            bias: Param::from_tensor(bias.unsqueeze::<2>().repeat_dim(0, members).detach()),
            weight,
        }
    }

    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [members, d_in] = self.r.dims();
        let [_, d_out] = self.weight.dims();
        let [rows, tokens, _] = x.dims();
        let per_member = rows / members * tokens;
        // Scaling the input and output per member keeps one shared matmul for all members.
        let x = x.reshape([members, per_member, d_in]) * self.r.val().unsqueeze_dim(1);
        let y = x
            .reshape([members * per_member, d_in])
            .matmul(self.weight.val())
            .reshape([members, per_member, d_out]);
        let y = y * self.s.val().unsqueeze_dim(1) + self.bias.val().unsqueeze_dim(1);
        y.reshape([rows, tokens, d_out])
    }
}

impl Projection for BeLinear {
    fn project(&self, x: Tensor<3>) -> Tensor<3> {
        self.forward(x)
    }
}

/// The BatchEnsemble ViT: fast weights on the patch embedding (as a linear map on flattened
/// patches), on Q, K, V, O, fc1 and fc2 of every block and on the classifier; class token,
/// positions and LayerNorms shared.
#[derive(Module, Debug)]
pub struct BatchEnsemble {
    /// Flattened patch `[C·p·p]` -> D (the ViT's patch convolution, as a linear map).
    pub patch_embed: BeLinear,
    pub cls_token: Param<Tensor<3>>,
    pub pos_embed: Param<Tensor<3>>,
    pub dropout: Dropout,
    pub blocks: Vec<MemberBlock<BeLinear, LayerNorm>>,
    pub norm: LayerNorm,
    pub head: BeLinear,
    pub patch_size: usize,
    flops: u64,
}

impl BatchEnsemble {
    /// Member logits `[M, B, C]`: the batch is repeated M times and member m runs on copy m.
    pub fn forward(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        self.outputs(images, mode).logits
    }

    /// Member logits `[M, B, C]` and each member's class token after the final norm
    /// `[M, B, D]`.
    pub fn outputs(&self, images: Tensor<4>, mode: Mode) -> MemberOutputs {
        let members = self.members();
        let batch = images.dims()[0];
        let images = images.repeat_dim(0, members);
        let patches = self.patch_embed.forward(patchify(images, self.patch_size));
        let mut x = tokens(
            patches,
            &self.cls_token,
            &self.pos_embed,
            &self.dropout,
            mode,
        );
        for block in &self.blocks {
            x = block.forward(x, mode);
        }
        // LayerNorm acts per token: normalising the class token alone gives the same feature.
        let features = self.norm.forward(x.narrow(1, 0, 1));
        let logits = self.head.forward(features.clone());
        let (classes, width) = (logits.dims()[2], features.dims()[2]);
        MemberOutputs {
            logits: logits.reshape([members, batch, classes]),
            features: features.reshape([members, batch, width]),
        }
    }
}

image_ensemble!(BatchEnsemble, |m| m.head.r.dims()[0], trainable);
