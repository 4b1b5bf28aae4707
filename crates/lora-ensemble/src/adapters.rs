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
        kernels::linear(base, x) + delta.mul_scalar(scale)
    }

    /// Members `start..start + n` with their adapters merged into the base weight: `x W_n + b0`
    /// with `W_n = W0 + scale · A_n B_n`, for `x` `[n, M, D_in]` -> `[n, M, D_out]`. One
    /// batched matmul instead of the base, the two adapter matmuls and two element-wise
    /// passes; the merge itself costs `D_in·r·D_out` per member, independent of the batch.
    pub fn project_merged(
        &self,
        base: &Linear,
        x: Tensor<3>,
        scale: f64,
        start: usize,
        n: usize,
    ) -> Tensor<3> {
        let a = self.a.val().narrow(0, start, n);
        let b = self.b.val().narrow(0, start, n);
        let weight = a.matmul(b).mul_scalar(scale) + base.weight.val().unsqueeze_dim(0);
        match &base.bias {
            Some(bias) => kernels::matmul_add(x, weight, bias.val().unsqueeze_dims(&[0, 1])),
            None => x.matmul(weight),
        }
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
        self.forward_members(features, 0)
    }

    /// Features `[n, B, D]` of members `start..start + n` -> their logits `[n, B, C]`.
    pub fn forward_members(&self, features: Tensor<3>, start: usize) -> Tensor<3> {
        let n = features.dims()[0];
        let weight = self.weight.val().narrow(0, start, n);
        let bias = self.bias.val().narrow(0, start, n);
        features.matmul(weight) + bias.unsqueeze_dim(1)
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
