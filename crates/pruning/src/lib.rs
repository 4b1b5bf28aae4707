//! The pruning seam: every method that removes parts of a transformer (Hydra's members, HetDPT's
//! depth pruning, the `pruned` method kind) meets here.
//!
//! - **Units** ([`UnitKind`]): a head, a block's attention branch, its MLP branch, its GELU, one
//!   hidden neuron of its MLP, a whole block. A model lists how many of each kind every block
//!   has ([`UnitKind::per_block`]); [`UnitKind::gates`] switches them through the backbone's
//!   [`backbone::Gates`].
//! - **Criteria** ([`Criterion`]): score every unit of a kind they support, higher = more
//!   important, from the model, the [`Calibration`] data and a [`ScoreContext`] (seed, member);
//!   deterministic given those. Registered in [`CRITERIA`] (each entry lists the kinds it
//!   scores), built by name with [`criterion`], always called through [`score`], which refuses
//!   an unsupported kind and checks the scores' shape. A new criterion is one file in
//!   `src/criteria/` and its line in the registry (docs/extending.md). [`straight_through`] is
//!   the binary gate with a straight-through gradient that `learnable` and HetDPT's removal
//!   rounds train.
//! - **Selection** ([`select`]), apart from scoring: remove a share of the units per block or
//!   over the whole model, or as many as a budget in parameters or FLOPs needs
//!   ([`Selection`], [`Measure`], [`unit_costs`]), giving a [`Plan`]; or as many as a budget
//!   in measured latency needs ([`select_by_latency`]).
//! - **Plans** ([`Plan::apply`]): made physical where the removal has a smaller model here
//!   ([`prune_heads`], [`prune_neurons`], [`drop_blocks`]), applied through the gates otherwise
//!   ([`Applied`]); [`Plan::mask`] gives the gate values.
//!
//! ```no_run
//! use backbone::{Classifier, Input, ViTConfig};
//! use burn::tensor::{Device, Int, Tensor};
//! use pruning::{Calibration, ScoreContext, Selection, UnitKind, criterion, score, select};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let device = Device::flex();
//! let model = Classifier::from(ViTConfig::preset("vit_tiny_28").unwrap().init(&device)?);
//! let data = Calibration {
//!     batches: vec![(Input::Images(Tensor::zeros([8, 1, 28, 28], &device)),
//!                    Tensor::<1, Int>::zeros([8], &device))],
//!     ood: vec![],
//! };
//! let taylor = criterion("taylor", &toml::Table::new())?;
//! let ctx = ScoreContext { seed: 7, member: 0 };
//! let scores = score(taylor.as_ref(), &model, UnitKind::Neuron, &data, &ctx)?;
//! let plan = select(&model, UnitKind::Neuron, &scores, Selection::Global(0.3), 0)?;
//! let pruned = plan.apply(&model, &device)?; // physical: 30% fewer MLP neurons
//! # Ok(()) }
//! ```

mod calibration;
mod cost;
mod criteria;
mod criterion;
mod error;
mod kept;
mod latency;
mod params;
mod physical;
mod plan;
mod registry;
mod scores;
mod select;
mod units;

pub use calibration::Calibration;
pub use cost::{Measure, unit_costs};
pub use criteria::learnable::straight_through;
pub use criterion::{Build, Criterion, CriterionEntry, Registered, ScoreContext, score};
pub use error::PruningError;
pub use kept::{check_kept, kept_mask};
pub use latency::{check_latency_budget, select_by_latency};
pub use physical::{drop_blocks, prune_heads, prune_neurons};
pub use plan::{Applied, Plan};
pub use registry::{CRITERIA, criterion, criterion_for};
pub use scores::Scores;
pub use select::{Selection, keep_top, key_order, select};
pub use units::{UnitKind, listed};
