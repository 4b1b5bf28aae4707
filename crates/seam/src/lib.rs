//! The two seams every uqformer method meets, in one small crate that the method crates
//! (`ensembles`, `hydra`, `lora-ensemble`, `hetdpt`) and the training loop depend on:
//!
//! - [`EnsembleModel`]: a built method gives member logits `[M, B, C]` and the features
//!   `[M, B, D]` its heads read ([`MemberOutputs`]), so one evaluation path, one metrics crate
//!   and one report serve every method; [`mean_probs`] is the ensemble's prediction;
//! - [`Trainable`]: a model `train::fit` can train (member logits with dropout on, and without
//!   for the validation pass). The Vision
//!   Transformer and the backbone [`Classifier`](backbone::Classifier) are trainable as they are.
//!
//! [`timing`] times models side by side (interleaved rounds, quartiles), for every cost figure;
//! [`precision`] evaluates a model in bf16 ([`EnsembleModel::in_precision`]).

mod ensemble;
pub mod precision;
pub mod timing;
mod trainable;

pub use ensemble::{EnsembleModel, MemberOutputs, mean_probs};
pub use trainable::Trainable;
