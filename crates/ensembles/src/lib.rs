//! The baseline ensembles, each a `seam::EnsembleModel` (member logits `[M, B, C]`):
//! - [`Single`] (M = 1), [`DeepEnsemble`] (M independently trained models) and [`McDropout`]
//!   (S stochastic passes of one model with dropout kept on), on any `backbone::Classifier`
//!   (ViT or BERT);
//! - on the Vision Transformer (images only):
//! - the efficient ensembles, each built from a `backbone::ViTConfig`, its own config and a
//!   seed, and trainable with `train::fit` (they implement `seam::Trainable`):
//!   - [`BatchEnsemble`] ([`BatchEnsembleConfig`]: M = 4, fast weights random signs): shared
//!     weights, per-member rank-1 fast weights and biases on every linear layer
//!     ([`BeLinear`]); the batch is repeated M times;
//!   - [`Mimo`] ([`MimoConfig`]: M = 3, ρ = 0): M images stacked along channels through one
//!     network with M classifiers; in training each member sees its own order of the batch;
//!   - [`PackedEnsemble`] ([`PackedConfig`]: M = 4, α = 2, γ = 1): M narrow members packed
//!     in one wide stream of `backbone::GroupedLinear` (read channel-packed) and
//!     [`PackedLayerNorm`] layers; the module
//!     doc of `packed` (and [`PackedConfig`]) says how the paper's CNN maps onto the ViT.

/// `seam::EnsembleModel` for an efficient ensemble on images: `outputs(images, mode)` gives
/// member logits `[M, B, C]` and features `[M, B, D]` (`forward` the logits alone), `$members` (a function of the model) counts them and the `flops`
/// field holds its FLOPs per sample; with `trainable`, also `seam::Trainable` (the same forward
/// with dropout on, and off for validation).
macro_rules! image_ensemble {
    ($model:ty, $members:expr $(, $trainable:ident)?) => {
        impl seam::EnsembleModel for $model {
            fn members(&self) -> usize {
                let members: fn(&Self) -> usize = $members;
                members(self)
            }

            fn member_outputs(&self, input: backbone::Input) -> seam::MemberOutputs {
                self.outputs(input.images(), backbone::Mode::Deterministic)
            }

            fn num_params(&self) -> usize {
                burn::module::Module::num_params(self)
            }

            fn flops_per_sample(&self) -> u64 {
                self.flops
            }

            fn in_precision(
                &self,
                dtype: burn::tensor::FloatDType,
            ) -> Box<dyn seam::EnsembleModel> {
                seam::precision::InPrecision::cast(self.clone(), dtype)
            }
        }

        $(image_ensemble!(@$trainable $model);)?
    };
    (@trainable $model:ty) => {
        impl seam::Trainable for $model {
            fn train_logits(&self, input: backbone::Input) -> burn::tensor::Tensor<3> {
                self.forward(input.images(), backbone::Mode::Stochastic)
            }

            fn eval_logits(&self, input: backbone::Input) -> burn::tensor::Tensor<3> {
                self.forward(input.images(), backbone::Mode::Deterministic)
            }
        }
    };
}

mod baselines;
mod batch_ensemble;
mod block;
mod draw;
mod grouped;
mod mimo;
mod packed;

pub use baselines::{DeepEnsemble, McDropout, Single};
pub use batch_ensemble::{BatchEnsemble, BatchEnsembleConfig, BeLinear, FastInit};
pub use block::{MemberBlock, Norm, Projection};
pub use grouped::PackedLayerNorm;
pub use mimo::{Mimo, MimoConfig};
pub use packed::{PackedConfig, PackedEnsemble};
