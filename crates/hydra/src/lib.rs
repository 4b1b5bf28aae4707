//! Hydra Ensembles: one pretrained encoder classifier — a Vision Transformer
//! or a BERT sequence classifier, as a [`backbone::Classifier`] — gives M members by pruning
//! different attention heads, and the members are fused into one network that runs them all in
//! a single forward pass.
//!
//! [`HydraConfig`] holds the whole recipe (the keys of an experiment's `hydra` method table).
//!
//! 1. **Head importance**: a criterion of the pruning seam ([`pruning::CRITERIA`], any that
//!    scores `head` units; `uqformer list` shows them) scores every (block, head), higher =
//!    more important. A new one is one file in `crates/pruning/src/criteria/` plus its
//!    registry line (`docs/extending.md`).
//! 2. **Members** ([`plan_members`]): each member keeps heads per block or by a global budget
//!    ([`Keep`]), chosen by [`select_heads`]: top-k on its scores, or with a temperature
//!    Gumbel-top-k on the scores' normalised ranks (per block, or over the model for a global
//!    budget), optionally recomputed on a bootstrap of the [`pruning::Calibration`] data (image
//!    batches, or padded token batches with their masks); everything from one seed.
//!    [`topk_share`] (and [`mean_topk_share`] over members) reports how closely a member
//!    follows its scores: the share of its kept heads in its blocks' top-k; [`share_in_top`]
//!    the same against any other ranking, [`head_jaccard`] the members' pairwise overlap.
//!    [`pruning::prune_heads`] builds the smaller model, [`prune_ratio`] the global ranking of
//!    the pruning analysis (used through head gates).
//! 3. **Fusion** ([`fuse`]): grouped Q/K/V and output projections, one batched attention over
//!    all members' heads (the padding mask repeated per member), MLPs averaged or kept per
//!    member ([`Merge`]), one classifier per member. The members' backbone gives what differs by
//!    backbone ([`backbone::MemberStems`]): for ViT members a grouped patch embedding, class
//!    tokens, positions and the class-token readout after the final norm (pre-norm blocks); for
//!    BERT members each member's embedding tables and the masked mean-pool readout (post-norm
//!    blocks). An input
//!    embedding that is bit for bit the same in every member (members fine-tuned with
//!    [`backbone::Classifier::freeze_embeddings`], or not at all) is stored and computed once.
//!    The [`HydraModel`] is an [`seam::EnsembleModel`] (logits `[M, B, C]`).
//!
//! ```no_run
//! use backbone::{BertConfig, Classifier, Input};
//! use burn::tensor::{Device, Int, Tensor};
//! use hydra::{Keep, Merge, SelectConfig, fuse, plan_members};
//! use pruning::{Calibration, criterion, prune_heads};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let device = Device::flex();
//! // A ViT works the same way, with `Input::Images` batches.
//! let model = Classifier::from(BertConfig::new().init_classifier(2, &device)?);
//! let batch = || Input::Tokens {
//!     ids: Tensor::<2, Int>::ones([8, 16], &device),
//!     mask: Tensor::<2, Int>::ones([8, 16], &device),
//! };
//! let data = Calibration {
//!     batches: vec![(batch(), Tensor::<1, Int>::zeros([8], &device))],
//!     ood: vec![],
//! };
//! let taylor = criterion("taylor", &toml::Table::new())?;
//! let cfg = SelectConfig { members: 3, keep: Keep::PerBlock(6), temperature: 0.1, bootstrap: true };
//! let plans = plan_members(&model, taylor.as_ref(), &data, &cfg, 7)?;
//! let members = plans.iter().map(|p| prune_heads(&model, &p.kept.0)).collect::<Result<Vec<_>, _>>()?;
//! let hydra = fuse(&members, Merge::None, 16)?; // FLOPs counted on 16-token sequences
//! let logits = hydra.forward(batch()); // [3, 8, 2]
//! # Ok(()) }
//! ```

mod config;
mod error;
mod fused;
mod layout;
mod select;

pub use config::{Finetune, HydraConfig};
pub use error::HydraError;
pub use fused::{FusedBlock, HydraModel, Merge, fuse};
pub use select::{
    HeadSet, Keep, MemberPlan, SelectConfig, head_jaccard, mean_topk_share, plan_members,
    prune_ratio, select_heads, share_in_top, topk_share,
};
