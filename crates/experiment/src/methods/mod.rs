//! `[[method]]` entries. Each method kind lives in its own file: it parses its own parameters
//! (unknown keys are errors listing the valid ones) and builds an [`EnsembleModel`] from the
//! seed's trained base model(s) through a [`Context`]. Adding a kind is one file plus one line in
//! [`KINDS`].
//!
//! Every method may also carry `train = { ... }`: overrides of `[train]` for whatever the method
//! trains itself (fine-tuning, adapters, a from-scratch variant), e.g. LoRA's lower learning rate.
//!
//! A method is given what it needs to build (a [`Context`]: base models, training and
//! validation data), never the evaluation sets; models it wants evaluated beside itself go back
//! as a [`Sweep`].
//!
//! [`EnsembleModel`]: seam::EnsembleModel

mod baselines;
mod calibration;
pub(crate) mod context;
mod efficient;
mod gated;
mod hetdpt;
mod hydra;
mod kinds;
mod lora;
mod method;
mod pruned;

pub use context::{Built, Context, ModelInit, Setting, Sweep};
pub use kinds::{KINDS, MethodSpec, ParseParams};
pub use method::{Method, Needs, Recalibration};
