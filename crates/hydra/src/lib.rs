//! Hydra Ensembles (METHODS.md §1): one pretrained Vision Transformer gives M members by
//! pruning different attention heads, and the members are fused into one network that runs
//! them all in a single forward pass.
//!
//! 1. **Head importance** ([`HeadImportance`]): a strategy scores every (block, head), higher =
//!    more important. Registered strategies ([`STRATEGIES`], built by name with [`strategy`]
//!    from a TOML table of their parameters): `taylor`, `circuit`, `magnitude`, `random`,
//!    `activation`. A new one is one file in `src/importance/` plus one registry line
//!    (`docs/extending.md`).
//! 2. **Members** ([`plan_members`]): each member keeps heads per block or by a global budget
//!    ([`Keep`]), chosen by (Gumbel-)top-k on its scores, optionally recomputed on a bootstrap
//!    of the [`Calibration`] data; everything from one seed. [`prune`] builds the smaller model,
//!    [`prune_ratio`] the global ranking of the pruning analysis (used through head gates).
//! 3. **Fusion** ([`fuse`]): grouped Q/K/V and output projections, one batched attention over
//!    all members' heads, MLPs averaged or kept per member ([`Merge`]), one classifier per
//!    member; the [`HydraModel`] is an [`ensembles::EnsembleModel`] (logits `[M, B, C]`).
//!
//! ```no_run
//! use backbone::ViTConfig;
//! use burn::tensor::{Device, Int, Tensor};
//! use hydra::{Calibration, Keep, Merge, SelectConfig, fuse, plan_members, prune, strategy};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let device = Device::flex();
//! let model = ViTConfig::new().init(&device)?;
//! let data = Calibration {
//!     batches: vec![(Tensor::zeros([8, 1, 28, 28], &device), Tensor::<1, Int>::zeros([8], &device))],
//!     ood: vec![],
//! };
//! let taylor = strategy("taylor", &toml::Table::new())?;
//! let cfg = SelectConfig { members: 3, keep: Keep::PerBlock(2), temperature: 0.1, bootstrap: true };
//! let plans = plan_members(&model, taylor.as_ref(), &data, &cfg, 7)?;
//! let members = plans.iter().map(|p| prune(&model, &p.kept)).collect::<Result<Vec<_>, _>>()?;
//! let hydra = fuse(&members, Merge::None)?;
//! let logits = hydra.forward(Tensor::zeros([2, 1, 28, 28], &device)); // [3, 2, 10]
//! # Ok(()) }
//! ```

mod calibration;
mod error;
mod fused;
mod grouped;
mod importance;
mod prune;
mod select;

pub use calibration::Calibration;
pub use error::HydraError;
pub use fused::{FusedBlock, HydraModel, Merge, fuse};
pub use grouped::{GroupedLayerNorm, GroupedLinear};
pub use importance::{HeadImportance, HeadScores, STRATEGIES, ScoreContext, Strategy, strategy};
pub use prune::prune;
pub use select::{HeadSet, Keep, MemberPlan, SelectConfig, plan_members, prune_ratio};
