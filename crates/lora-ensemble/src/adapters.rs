//! The trainable part of the ensemble: N members' low-rank adapters and classifiers, kept in one
//! sub-module so they can be saved and loaded apart from the backbone.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;

/// One adapted projection's adapters for all N members: member n adds `s · (x A_n) B_n`.
#[derive(Module, Debug)]
pub struct LowRank {
    /// `[N, D_in, r]`.
    pub a: Param<Tensor<3>>,
    /// `[N, r, D_out]`.
    pub b: Param<Tensor<3>>,
}

impl LowRank {
    /// `x W0 + b0 + scale · (x A_n) B_n` for stacked member inputs `x` `[N, M, D_in]` ->
    /// `[N, M, D_out]`: the base weight is applied once to the whole stack and the adapter path
    /// is one batched matmul over members.
    pub fn project(&self, base: &Linear, x: Tensor<3>, scale: f64) -> Tensor<3> {
        let delta = x.clone().matmul(self.a.val()).matmul(self.b.val());
        base.forward(x) + delta.mul_scalar(scale)
    }
}

/// The adapters of one block's attention, named as its projections.
#[derive(Module, Debug)]
pub struct BlockAdapters {
    pub query: LowRank,
    pub key: LowRank,
    pub value: LowRank,
    pub output: LowRank,
}

/// One linear classifier per member.
#[derive(Module, Debug)]
pub struct MemberHeads {
    /// `[N, D, C]`.
    pub weight: Param<Tensor<3>>,
    /// `[N, C]`.
    pub bias: Param<Tensor<2>>,
}

impl MemberHeads {
    /// Member features `[N, B, D]` -> member logits `[N, B, C]`.
    pub fn forward(&self, features: Tensor<3>) -> Tensor<3> {
        features.matmul(self.weight.val()) + self.bias.val().unsqueeze_dim(1)
    }
}

/// Everything that differs between members; the file [`save_adapters`] writes.
///
/// [`save_adapters`]: crate::LoraEnsemble::save_adapters
#[derive(Module, Debug)]
pub struct Adapters {
    /// One entry per backbone block, input first.
    pub blocks: Vec<BlockAdapters>,
    pub heads: MemberHeads,
}
