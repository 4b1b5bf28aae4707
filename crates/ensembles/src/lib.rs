//! The one seam every method ends in: [`EnsembleModel::member_logits`] gives member logits
//! `[M, B, C]`, so one evaluation path, one metrics crate and one report serve all methods.
//!
//! Baselines here:
//! - [`Single`] (M = 1), [`DeepEnsemble`] (M independently trained models) and [`McDropout`]
//!   (S stochastic passes of one model with dropout kept on), on any `backbone::Classifier`
//!   (ViT or BERT);
//! - on the Vision Transformer (images only):
//! - the efficient ensembles, each built from a `backbone::ViTConfig`, its own config and a
//!   seed, and trainable with `train::fit` (they implement `train::Trainable`):
//!   - [`BatchEnsemble`] ([`BatchEnsembleConfig`]: M = 4, fast weights random signs): shared
//!     weights, per-member rank-1 fast weights and biases on every linear layer
//!     ([`BeLinear`]); the batch is repeated M times;
//!   - [`Mimo`] ([`MimoConfig`]: M = 3, ρ = 0): M images stacked along channels through one
//!     network with M classifiers; in training each member sees its own order of the batch;
//!   - [`PackedEnsemble`] ([`PackedConfig`]: M = 4, α = 2, γ = 1): M narrow members packed
//!     in one wide stream of [`GroupedLinear`] and [`GroupedLayerNorm`] layers; the module
//!     doc of `packed` (and [`PackedConfig`]) says how the paper's CNN maps onto the ViT.
//!
//! Prediction is the mean of the members' softmax ([`mean_probs`]).

mod baselines;
mod batch_ensemble;
mod block;
mod check;
mod draw;
mod grouped;
mod mimo;
mod packed;

pub use baselines::{DeepEnsemble, McDropout, Single};
pub use batch_ensemble::{BatchEnsemble, BatchEnsembleConfig, BeLinear, FastInit};
pub use block::{MemberBlock, Norm, Projection};
pub use grouped::{GroupedLayerNorm, GroupedLinear};
pub use mimo::{Mimo, MimoConfig};
pub use packed::{PackedConfig, PackedEnsemble};

use backbone::Input;
use burn::tensor::Tensor;
use burn::tensor::activation::softmax;

/// A model whose prediction is an ensemble of members.
pub trait EnsembleModel {
    /// Number of members M (samples, for MC Dropout).
    fn members(&self) -> usize;

    /// Member logits `[M, B, C]` for a batch of input (images, or tokens for text models).
    fn member_logits(&self, input: Input) -> Tensor<3>;

    /// Stored parameters (shared parameters counted once).
    fn num_params(&self) -> usize;

    /// Floating-point operations for one sample through the whole ensemble.
    fn flops_per_sample(&self) -> u64;
}

/// Member probabilities `[M, B, C]` averaged over members: the ensemble's prediction `[B, C]`.
pub fn mean_probs(member_logits: Tensor<3>) -> Tensor<2> {
    softmax(member_logits, 2).mean_dim(0).squeeze_dim(0)
}
