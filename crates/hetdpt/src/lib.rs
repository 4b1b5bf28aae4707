//! HetDPT: heterogeneity-aware depth pruning of a Vision Transformer.
//!
//! [`compress`] runs the whole method on a trained `backbone::VisionTransformer` (a [`Task`]):
//! 1. **Which layers**: every attention branch and every GELU gets a real score, binarised in
//!    the forward pass (`b = [θ > 0]`, straight-through gradient) and trained by SGD with the
//!    task loss plus a sparsity pressure `λ·Σ b`, the model's weights frozen. Each round trains
//!    one kind's scores (restarted from `importance_init` with a seeded jitter) and removes its
//!    lowest-scoring candidate; kinds alternate (attention first) and are never compared.
//!    Or, with `order = { criterion = "..." }` ([`OrderConfig`]), any criterion of the pruning
//!    seam that scores attention branches and GELUs (`pruning::CRITERIA`: `taylor`,
//!    `learnable`, `magnitude`, ...) ranks each kind once, lowest removed first ([`Ranked`]).
//! 2. **How many** (the Model Accuracy Predictor): every (n_a, n_g) of the grid is merged,
//!    fine-tuned briefly and its validation accuracy measured; a least-squares polynomial in
//!    (n_a / L, n_g / L) predicts accuracy (in-sample and leave-one-out R² reported) over the
//!    whole range 0..=L of each kind, and the [`Budget`] picks a point of that range, timing
//!    only the candidates it considers (speed by measured latency or FLOPs).
//! 3. **Merge and recover**: the chosen model is merged into a [`PrunedViT`] (removed
//!    attention branches lose their parameters and LN1; an MLP without GELU becomes one linear
//!    map `x·W1·W2 + b1·W2 + b2`), optionally width-pruned (HetDPT+, [`WidthConfig`]: heads
//!    by a head criterion of the pruning seam scored on the unpruned model, MLP channels by magnitude),
//!    and fine-tuned with distillation from the unpruned model.
//!
//! [`merge`] with a [`Removal`] gives the merged model directly; it equals the unmerged model
//! run with those gates at 0 ([`Removal::gates`]). [`PrunedViT`] implements
//! `seam::EnsembleModel` (M = 1) and `seam::Trainable`. The [`HetDptReport`] holds the
//! scores, orders, MAP points, fit, choice and before/after measurements (Serialize).
//!
//! ```no_run
//! # fn demo(base: &backbone::VisionTransformer, vit: &backbone::ViTConfig,
//! #         train: train::ImageData<'_>, val: train::ImageData<'_>) -> Result<(), hetdpt::HetDptError> {
//! let device = burn::tensor::Device::flex();
//! let cfg: hetdpt::HetDptConfig = toml::from_str("budget = { min_speedup = 1.2 }").unwrap();
//! let task = hetdpt::Task { base, vit, train, val, device: &device, seed: 3 };
//! let outcome = hetdpt::compress(&task, &cfg)?;
//! println!("chose {:?}, R² {:.3}", outcome.report.choice, outcome.report.fit.r_squared);
//! # Ok(()) }
//! ```

mod calibration;
mod config;
mod error;
mod finetune;
mod importance;
mod map;
mod measure;
mod order;
mod pipeline;
mod pruned;
mod ranked;
mod search;
mod width;

#[cfg(test)]
mod testutil;

pub use config::{
    Budget, DEFAULT_LATENCY_BATCH, HeadWidth, HetDptConfig, OrderConfig, Speed, WidthConfig,
};
pub use error::HetDptError;
pub use map::{Candidate, Choice, MapFit, MapPoint, Polynomial};
pub use order::{Kind, Ranked, RemovalOrder, Round};
pub use pipeline::{HetDptReport, ModelSummary, Outcome, Task, Timing, Training, compress};
pub use pruned::{AttentionBranch, PrunedBlock, PrunedMlp, PrunedViT, Removal, merge};
pub use width::WidthReport;
