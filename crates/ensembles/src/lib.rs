//! The one seam every method ends in: [`EnsembleModel::member_logits`] gives member logits
//! `[M, B, C]`, so one evaluation path, one metrics crate and one report serve all methods.
//!
//! Baselines here: [`Single`] (M = 1), [`DeepEnsemble`] (M independently trained models) and
//! [`McDropout`] (S stochastic passes of one model with dropout kept on). Prediction is the mean
//! of the members' softmax ([`mean_probs`]).

mod baselines;

pub use baselines::{DeepEnsemble, McDropout, Single};

use burn::tensor::Tensor;
use burn::tensor::activation::softmax;

/// A model whose prediction is an ensemble of members.
pub trait EnsembleModel {
    /// Number of members M (samples, for MC Dropout).
    fn members(&self) -> usize;

    /// Member logits `[M, B, C]` for images `[B, C, H, W]`.
    fn member_logits(&self, images: Tensor<4>) -> Tensor<3>;

    /// Stored parameters (shared parameters counted once).
    fn num_params(&self) -> usize;

    /// Floating-point operations for one sample through the whole ensemble.
    fn flops_per_sample(&self) -> u64;
}

/// Member probabilities `[M, B, C]` averaged over members: the ensemble's prediction `[B, C]`.
pub fn mean_probs(member_logits: Tensor<3>) -> Tensor<2> {
    softmax(member_logits, 2).mean_dim(0).squeeze_dim(0)
}
