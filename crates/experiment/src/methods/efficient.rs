//! The efficient-ensemble baselines Hydra is compared with, each trained from scratch with
//! `[train]` (plus the method's `train = { ... }` overrides): `batch_ensemble` (shared weights
//! with per-member rank-1 fast weights, Wen et al. 2020), `mimo` (M inputs and M outputs
//! through one network, Havasi et al. 2021) and `packed_ensemble` (M narrow members packed in
//! one wide grouped network, Laurent et al. 2023). Each kind's keys are its `ensembles` config's
//! (`members` required).

use std::fmt::Debug;

use backbone::ViTConfig;
use burn::tensor::Device;
use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use seam::{EnsembleModel, Trainable};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs, at_least_two};
use crate::error::{ExperimentError, Result};

/// The library config of an ensemble trained from scratch on the base model's shape.
pub trait ScratchConfig:
    Serialize + DeserializeOwned + Debug + Clone + Send + Sync + 'static
{
    type Model: Trainable + EnsembleModel + 'static;
    fn members(&self) -> usize;
    /// Checks the parameters beyond the member count.
    fn check(&self) -> Result<()> {
        Ok(())
    }
    /// A freshly initialised model for the ViT `vit`.
    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model>;
}

/// A kind trained from scratch: the config `C` read from the method table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FromScratch<C>(pub C);

impl<C: ScratchConfig> Method for FromScratch<C> {
    fn members(&self) -> usize {
        self.0.members()
    }

    fn needs(&self) -> Needs {
        Needs::Vit
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self, _setting: &Setting) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.0.members())?;
        self.0.check()
    }

    /// Trains a freshly initialised model with the method's recipe (cached like every model).
    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = self
            .0
            .model(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        ctx.fit_method(model, "model")
    }
}

impl ScratchConfig for BatchEnsembleConfig {
    type Model = ensembles::BatchEnsemble;

    fn members(&self) -> usize {
        self.members
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}

impl ScratchConfig for MimoConfig {
    type Model = ensembles::Mimo;

    fn members(&self) -> usize {
        self.members
    }

    fn check(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.input_repetition) {
            return Err(ExperimentError::invalid(format!(
                "input_repetition = {} must be in [0, 1]",
                self.input_repetition
            )));
        }
        Ok(())
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}

impl ScratchConfig for PackedConfig {
    type Model = ensembles::PackedEnsemble;

    fn members(&self) -> usize {
        self.members
    }

    fn check(&self) -> Result<()> {
        if !(self.alpha > 0.0 && self.alpha.is_finite()) || self.gamma == 0 {
            return Err(ExperimentError::invalid(format!(
                "alpha = {} must be > 0 and gamma = {} at least 1",
                self.alpha, self.gamma
            )));
        }
        Ok(())
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}
