//! The first baselines: the base model alone, a Deep Ensemble and MC Dropout.

use serde::{Deserialize, Serialize};
use train::TrainConfig;

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs, at_least_two};
use crate::error::{ExperimentError, Result};
use crate::workload::{Sizing, Work};

/// `single`: the base model alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Single {}

impl Method for Single {
    fn members(&self) -> usize {
        1
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    fn on_zero_shot(&self, _recipe: &TrainConfig) -> std::result::Result<(), String> {
        Ok(())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        Ok(Built::new(ensembles::Single::new(
            ctx.base[0].clone(),
            ctx.base_flops(),
        )))
    }
}

/// `deep_ensemble`: M independently seeded models (member 0 is the seed's base model).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeepEnsemble {
    pub members: usize,
}

impl Method for DeepEnsemble {
    fn members(&self) -> usize {
        self.members
    }

    fn base_models(&self) -> usize {
        self.members
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.members)
    }

    /// M models, one forward each (the base jobs train them).
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let m = self.members as u64;
        Work::passes(sizing.base, m, m)
    }

    fn on_zero_shot(&self, _recipe: &TrainConfig) -> std::result::Result<(), String> {
        Err(
            "its members are independently trained base models, and a zero-shot classifier \
             is one checkpoint, never trained"
                .into(),
        )
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        Ok(Built::new(ensembles::DeepEnsemble::new(
            ctx.base[..self.members].to_vec(),
            ctx.base_flops(),
        )))
    }
}

/// `mc_dropout`: the base model with dropout kept on at test time, S stochastic passes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McDropout {
    /// Stochastic passes S; dropout is the backbone's (`[backbone] dropout`).
    #[serde(default = "default_samples")]
    pub samples: usize,
}

fn default_samples() -> usize {
    10
}

impl Method for McDropout {
    fn members(&self) -> usize {
        self.samples
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    /// The samples differ by the dropout `[backbone] dropout` sets on the vision tower.
    fn on_zero_shot(&self, _recipe: &TrainConfig) -> std::result::Result<(), String> {
        Ok(())
    }

    fn check(&self, setting: &Setting) -> Result<()> {
        if self.samples < 2 {
            return Err(ExperimentError::invalid(format!(
                "samples = {} must be at least 2",
                self.samples
            )));
        }
        if setting.dropout == 0.0 {
            return Err(ExperimentError::invalid(
                "backbone.dropout: mc_dropout samples with the backbone's dropout, which is 0: set it above 0",
            ));
        }
        Ok(())
    }

    /// S stochastic forwards of the one base model.
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        Work::passes(sizing.base, self.samples as u64, 1)
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        Ok(Built::new(ensembles::McDropout::new(
            ctx.base[0].clone(),
            self.samples,
            ctx.base_flops(),
        )))
    }
}
