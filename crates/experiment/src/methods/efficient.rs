//! The efficient-ensemble baselines Hydra is compared with, each trained from scratch with
//! `[train]` (plus the method's `train = { ... }` overrides): `batch_ensemble`, `mimo` and
//! `packed_ensemble`.

use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use seam::{EnsembleModel, Trainable};

use super::params::LibraryParams;
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

/// `batch_ensemble`: shared weights with per-member rank-1 fast weights (Wen et al. 2020);
/// the keys of `ensembles::BatchEnsembleConfig` (`members` required).
#[derive(Debug, Clone)]
pub struct BatchEnsemble(pub BatchEnsembleConfig);

impl LibraryParams for BatchEnsemble {
    type Config = BatchEnsembleConfig;

    fn defaults() -> BatchEnsembleConfig {
        BatchEnsembleConfig::new()
    }

    fn new(config: BatchEnsembleConfig) -> Self {
        Self(config)
    }
}

impl Method for BatchEnsemble {
    fn members(&self) -> usize {
        self.0.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.0.members)
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = (self.0).init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}

/// `mimo`: M inputs and M outputs through one network (Havasi et al. 2021); the keys of
/// `ensembles::MimoConfig` (`members` required).
#[derive(Debug, Clone)]
pub struct Mimo(pub MimoConfig);

impl LibraryParams for Mimo {
    type Config = MimoConfig;

    fn defaults() -> MimoConfig {
        MimoConfig::new()
    }

    fn new(config: MimoConfig) -> Self {
        Self(config)
    }
}

impl Method for Mimo {
    fn members(&self) -> usize {
        self.0.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.0.members)?;
        if !(0.0..=1.0).contains(&self.0.input_repetition) {
            return Err(ExperimentError::invalid(format!(
                "input_repetition = {} must be in [0, 1]",
                self.0.input_repetition
            )));
        }
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = (self.0).init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}

/// `packed_ensemble`: M narrow members packed in one wide grouped network (Laurent et al.
/// 2023); the keys of `ensembles::PackedConfig` (`members` required).
#[derive(Debug, Clone)]
pub struct PackedEnsemble(pub PackedConfig);

impl LibraryParams for PackedEnsemble {
    type Config = PackedConfig;

    fn defaults() -> PackedConfig {
        PackedConfig::new()
    }

    fn new(config: PackedConfig) -> Self {
        Self(config)
    }
}

impl Method for PackedEnsemble {
    fn members(&self) -> usize {
        self.0.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.0.members)?;
        if !(self.0.alpha > 0.0 && self.0.alpha.is_finite()) || self.0.gamma == 0 {
            return Err(ExperimentError::invalid(format!(
                "alpha = {} must be > 0 and gamma = {} at least 1",
                self.0.alpha, self.0.gamma
            )));
        }
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = (self.0).init(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        train_from_scratch(ctx, model)
    }
}
