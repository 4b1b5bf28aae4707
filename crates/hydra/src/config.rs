//! The whole Hydra recipe in one config, as an experiment's method table gives it.

use data::Corruption;
use serde::{Deserialize, Serialize};

use crate::error::HydraError;
use crate::fused::Merge;
use crate::select::{Keep, SelectConfig};

/// What fine-tuning trains in each pruned member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finetune {
    /// All its parameters.
    #[default]
    All,
    /// All but its input embedding (frozen, so the fused members store the base model's once).
    Encoder,
    /// Its classifier only (the rest frozen).
    Head,
}

/// A Hydra ensemble from head scores to the fused model; every field but `members` has a
/// default. Unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HydraConfig {
    /// Members M (at least 1).
    pub members: usize,
    /// A criterion of [`pruning::CRITERIA`] that scores heads (default `taylor`).
    #[serde(default = "default_importance")]
    pub importance: String,
    /// The criterion's own parameters (e.g. `{ objective = "avg" }` for `circuit`).
    #[serde(default)]
    pub importance_params: toml::Table,
    /// Heads each member keeps per block (default: half of them, rounded up).
    #[serde(default)]
    pub keep: Option<usize>,
    /// Or: heads each member keeps in all, spread by score (at least one per block).
    #[serde(default)]
    pub keep_total: Option<usize>,
    /// Gumbel-top-k temperature on the scores' ranks (0 = plain top-k; see
    /// [`SelectConfig::temperature`]).
    #[serde(default)]
    pub temperature: f64,
    /// Score each member on its own bootstrap resample of the calibration data.
    #[serde(default = "yes")]
    pub bootstrap: bool,
    /// One MLP per block, the members' mean (`average`), or one per member (`none`).
    #[serde(default = "default_merge")]
    pub merge: Merge,
    /// Validation samples the heads are scored on.
    #[serde(default = "default_calibration")]
    pub calibration_samples: usize,
    /// The corruption (severity 5) that turns the calibration images into the OOD data of
    /// `circuit`'s `ood`/`avg` objectives, so that no test OOD set is seen while pruning
    /// (images only: text has no OOD calibration data).
    #[serde(default = "default_ood_calibration")]
    pub ood_calibration: Corruption,
    /// What fine-tuning trains in each member.
    #[serde(default)]
    pub finetune: Finetune,
    /// Also run the pruning analysis (prune ratios 0 to 0.9 of the base model's heads).
    #[serde(default)]
    pub analysis: bool,
}

fn default_importance() -> String {
    "taylor".into()
}
fn yes() -> bool {
    true
}
fn default_merge() -> Merge {
    Merge::Average
}
fn default_calibration() -> usize {
    512
}
fn default_ood_calibration() -> Corruption {
    Corruption::ShotNoise
}

impl HydraConfig {
    /// Checks every field that has a constraint, and that the criterion exists, scores heads
    /// and takes its parameters.
    pub fn check(&self) -> Result<(), HydraError> {
        if self.members == 0 {
            return Err(HydraError::invalid("members", 0, "at least 1"));
        }
        if let (Some(k), Some(t)) = (self.keep, self.keep_total) {
            return Err(HydraError::invalid(
                "keep, keep_total",
                format!("{k}, {t}"),
                "one of them (`keep` per block or `keep_total` in all), not both",
            ));
        }
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(HydraError::invalid(
                "temperature",
                self.temperature,
                "a finite value >= 0",
            ));
        }
        if self.calibration_samples == 0 {
            return Err(HydraError::invalid("calibration_samples", 0, "at least 1"));
        }
        self.criterion().map(|_| ())
    }

    /// The head criterion `importance` names, built with `importance_params`.
    pub fn criterion(&self) -> Result<Box<dyn pruning::Criterion>, HydraError> {
        let head = pruning::UnitKind::Head;
        Ok(pruning::criterion_for(
            &self.importance,
            &self.importance_params,
            head,
        )?)
    }

    /// How many heads each member keeps, for a model with `heads` heads per block.
    pub fn keep(&self, heads: usize) -> Keep {
        match (self.keep, self.keep_total) {
            (_, Some(total)) => Keep::Global(total),
            (Some(k), None) => Keep::PerBlock(k),
            (None, None) => Keep::PerBlock(heads.div_ceil(2)),
        }
    }

    /// The member selection, for a model with `heads` heads per block.
    pub fn select(&self, heads: usize) -> SelectConfig {
        SelectConfig {
            members: self.members,
            keep: self.keep(heads),
            temperature: self.temperature,
            bootstrap: self.bootstrap,
        }
    }
}
