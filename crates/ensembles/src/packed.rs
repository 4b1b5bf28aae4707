//! Packed-Ensembles (Laurent et al., 2023) on the Vision Transformer.
//!
//! The paper widens a CNN by α, splits every convolution into M·γ groups (member m owns the
//! m-th slice of α·width channels, γ groups within it) and keeps members apart end to end.
//! On the ViT the channels are the token features: the stream is `W = M·d_m` wide with
//! `d_m ≈ α·D/M`, and
//! - Q, K, V, O, fc1 and fc2 are grouped linears with M·γ groups (the MLP hidden width is
//!   `M·f_m`, `f_m ≈ α·F/M`);
//! - attention runs per member on its own channels with H heads of size `d_m/H`: as the
//!   backbone's attention splits the width into contiguous heads, that is attention with M·H
//!   heads over the stream;
//! - LayerNorms are grouped per member (M groups), so a member's statistics are its own;
//! - the patch embedding is one dense convolution C -> W, as in the paper's first layer (each
//!   output channel belongs to one member, so it equals M separate embeddings of the same image);
//!   class token and positions are per channel, hence per member;
//! - the classifier is per member (M groups of `d_m` -> C).
//!
//! Widths are rounded up so that they divide evenly: `d_m` to a multiple of H and γ, `f_m` to a
//! multiple of γ.

use backbone::{BackboneError, Dropout, GroupedLinear, Mode, ViTConfig, positive};
use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::{Device, Distribution, Tensor};
use seam::MemberOutputs;
use serde::{Deserialize, Serialize};

use crate::block::{MemberBlock, tokens};
use crate::draw;
use crate::grouped::PackedLayerNorm;

/// Packed-Ensembles' own settings; the base network is the `ViTConfig` given to
/// [`init`](Self::init). Read from a table, `members` is required and unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackedConfig {
    /// Members M (4 by default).
    pub members: usize,
    /// Width multiplier α: the stream is about α·D wide in all.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Groups per member γ in every encoder linear layer.
    #[serde(default = "default_gamma")]
    pub gamma: usize,
}

fn default_alpha() -> f64 {
    2.0
}
fn default_gamma() -> usize {
    1
}

impl Default for PackedConfig {
    fn default() -> Self {
        Self {
            members: 4,
            alpha: default_alpha(),
            gamma: default_gamma(),
        }
    }
}

/// Smallest multiple of `step` at least `alpha·width/members`.
fn member_share(alpha: f64, width: usize, members: usize, step: usize) -> usize {
    // The small slack keeps exact quotients (e.g. 2·64/4) from rounding up on float noise.
    let share = ((alpha * width as f64 / members as f64) - 1e-9)
        .ceil()
        .max(1.0) as usize;
    share.div_ceil(step) * step
}

impl PackedConfig {
    /// Each member's token width `d_m`.
    pub fn member_width(&self, vit: &ViTConfig) -> usize {
        let step = lcm(vit.n_heads.max(1), self.gamma.max(1));
        member_share(self.alpha, vit.d_model, self.members.max(1), step)
    }

    /// Each member's MLP hidden width `f_m`.
    pub fn member_mlp_width(&self, vit: &ViTConfig) -> usize {
        member_share(
            self.alpha,
            vit.d_mlp,
            self.members.max(1),
            self.gamma.max(1),
        )
    }

    /// FLOPs per image, with the backbone's conventions (2 × multiply-accumulates of every
    /// matmul; a grouped linear costs its block-diagonal part only).
    pub fn flops(&self, vit: &ViTConfig) -> u64 {
        let w = (self.members * self.member_width(vit)) as u64;
        let f = (self.members * self.member_mlp_width(vit)) as u64;
        let g = (self.members * self.gamma) as u64;
        let t = vit.num_tokens() as u64;
        let patch = vit.num_patches() as u64 * (vit.channels * vit.patch_size.pow(2)) as u64 * w;
        // Q, K, V, O and the MLP per token, then scores and context over all members' heads.
        let block = t * (4 * w * w + 2 * w * f) / g + 2 * t * t * w;
        let classifier = w * vit.num_classes as u64;
        2 * (patch + vit.n_layers as u64 * block + classifier)
    }

    /// Seeds the device RNG with `seed` and draws every weight from it, or says which field
    /// is invalid.
    pub fn init(
        &self,
        vit: &ViTConfig,
        seed: u64,
        device: &Device,
    ) -> Result<PackedEnsemble, BackboneError> {
        vit.check()?;
        positive("PackedConfig.members", self.members)?;
        positive("PackedConfig.gamma", self.gamma)?;
        if !self.alpha.is_finite() || self.alpha <= 0.0 {
            return Err(BackboneError::invalid(
                "PackedConfig.alpha",
                self.alpha,
                "a finite number > 0",
            ));
        }
        device.seed(seed);
        let m = self.members;
        let (d_m, f_m) = (self.member_width(vit), self.member_mlp_width(vit));
        let (w, groups) = (m * d_m, m * self.gamma);
        let eps = vit.layer_norm_eps;
        let p = vit.patch_size;
        let embedding = Distribution::Normal(0.0, 0.02);
        let block = || MemberBlock {
            query: GroupedLinear::init(groups, w / groups, w / groups, device),
            key: GroupedLinear::init(groups, w / groups, w / groups, device),
            value: GroupedLinear::init(groups, w / groups, w / groups, device),
            output: GroupedLinear::init(groups, w / groups, w / groups, device),
            norm1: PackedLayerNorm::init(m, d_m, eps, device),
            fc1: GroupedLinear::init(groups, w / groups, m * f_m / groups, device),
            fc2: GroupedLinear::init(groups, m * f_m / groups, w / groups, device),
            norm2: PackedLayerNorm::init(m, d_m, eps, device),
            dropout: Dropout { prob: vit.dropout },
            attention_dropout: Dropout {
                prob: vit.attention_dropout,
            },
            n_heads: m * vit.n_heads,
        };
        Ok(draw::now(PackedEnsemble {
            patch_embed: Conv2dConfig::new([vit.channels, w], [p, p])
                .with_stride([p, p])
                .init(device),
            cls_token: Param::from_tensor(Tensor::random([1, 1, w], embedding, device)),
            pos_embed: Param::from_tensor(Tensor::random(
                [1, vit.num_tokens(), w],
                embedding,
                device,
            )),
            dropout: Dropout { prob: vit.dropout },
            blocks: (0..vit.n_layers).map(|_| block()).collect(),
            norm: PackedLayerNorm::init(m, d_m, eps, device),
            head: GroupedLinear::init(m, d_m, vit.num_classes, device),
            flops: self.flops(vit),
        }))
    }
}

fn lcm(a: usize, b: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    a / gcd(a, b) * b
}

/// The Packed-Ensembles ViT: M members packed side by side in one stream `[B, T, M·d_m]`.
#[derive(Module, Debug)]
pub struct PackedEnsemble {
    /// Dense patch embedding C -> M·d_m (output channels `m·d_m..` are member m's).
    pub patch_embed: Conv2d,
    pub cls_token: Param<Tensor<3>>,
    pub pos_embed: Param<Tensor<3>>,
    pub dropout: Dropout,
    pub blocks: Vec<MemberBlock<GroupedLinear, PackedLayerNorm>>,
    /// Final LayerNorm, one per member.
    pub norm: PackedLayerNorm,
    /// One classifier per member: M groups of `d_m` -> C.
    pub head: GroupedLinear,
    flops: u64,
}

impl PackedEnsemble {
    /// Member logits `[M, B, C]`.
    pub fn forward(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        self.outputs(images, mode).logits
    }

    /// Member logits `[M, B, C]` and each member's class token after its final norm
    /// `[M, B, D/M·α]` (its own channels of the packed stream).
    pub fn outputs(&self, images: Tensor<4>, mode: Mode) -> MemberOutputs {
        let patches = self
            .patch_embed
            .forward(images)
            .flatten::<3>(2, 3)
            .swap_dims(1, 2);
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
        let features = self.norm.forward(x.narrow(1, 0, 1)); // [B, 1, M·d_m]
        let logits = self.head.forward_packed(features.clone()); // [B, 1, M·C]
        let [members, width, classes] = self.head.weight.dims();
        let batch = logits.dims()[0];
        MemberOutputs {
            logits: logits.reshape([batch, members, classes]).swap_dims(0, 1),
            features: features.reshape([batch, members, width]).swap_dims(0, 1),
        }
    }
}

image_ensemble!(PackedEnsemble, |m| m.head.weight.dims()[0], trainable);
