//! The efficient-ensemble baselines Hydra is compared with, each trained from scratch with
//! `[train]` (plus the method's `train = { ... }` overrides): `batch_ensemble`, `mimo` and
//! `packed_ensemble`.

use ensembles::{BatchEnsembleConfig, EnsembleModel, FastInit, MimoConfig, PackedConfig};
use serde::{Deserialize, Serialize};
use train::Trainable;

use super::{Built, Context, Method, Setting, at_least_two};
use crate::error::{ExperimentError, Result};

/// Trains a freshly initialised model with the method's recipe (cached like every model).
fn train_from_scratch<M>(ctx: &Context<'_>, model: M) -> Result<Built>
where
    M: Trainable + EnsembleModel + 'static,
{
    let trained = ctx.fit(
        model,
        ctx.train,
        &ctx.train_config()?,
        "model",
        ctx.seed_for("fit"),
        None,
    )?;
    Ok(Built::new(trained.valid()))
}

/// `batch_ensemble`: shared weights with per-member rank-1 fast weights (Wen et al. 2020).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchEnsemble {
    pub members: usize,
    /// `random_sign` (members differ from the first step) or `ones`.
    #[serde(default = "random_sign")]
    pub fast_init: FastInit,
}

fn random_sign() -> FastInit {
    FastInit::RandomSign
}

impl Method for BatchEnsemble {
    fn members(&self) -> usize {
        self.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.members)
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = BatchEnsembleConfig::new()
            .with_members(self.members)
            .with_fast_init(self.fast_init)
            .init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}

/// `mimo`: M inputs and M outputs through one network (Havasi et al. 2021).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mimo {
    pub members: usize,
    /// Input repetition ρ: share of each batch shown to all members in the same order.
    #[serde(default)]
    pub input_repetition: f64,
}

impl Method for Mimo {
    fn members(&self) -> usize {
        self.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.members)?;
        if !(0.0..=1.0).contains(&self.input_repetition) {
            return Err(ExperimentError::invalid(format!(
                "input_repetition = {} must be in [0, 1]",
                self.input_repetition
            )));
        }
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = MimoConfig::new()
            .with_members(self.members)
            .with_input_repetition(self.input_repetition)
            .init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}

/// `packed_ensemble`: M narrow members packed in one wide grouped network (Laurent et al. 2023).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackedEnsemble {
    pub members: usize,
    /// Width multiplier α.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Groups per member γ.
    #[serde(default = "one")]
    pub gamma: usize,
}

fn default_alpha() -> f64 {
    2.0
}
fn one() -> usize {
    1
}

impl Method for PackedEnsemble {
    fn members(&self) -> usize {
        self.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.members)?;
        if !(self.alpha > 0.0 && self.alpha.is_finite()) || self.gamma == 0 {
            return Err(ExperimentError::invalid(format!(
                "alpha = {} must be > 0 and gamma = {} at least 1",
                self.alpha, self.gamma
            )));
        }
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = PackedConfig::new()
            .with_members(self.members)
            .with_alpha(self.alpha)
            .with_gamma(self.gamma)
            .init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}
