//! What a method kind is: the [`Method`] trait its parameters implement, what it needs of the
//! backbone, and the post-hoc calibration a method may ask for.

use std::fmt::Debug;

use serde::{Deserialize, Serialize};
use train::TrainConfig;

use super::context::{Built, Context, Setting};
use crate::error::{ExperimentError, Result};
use crate::workload::{Sizing, Work};

/// Post-hoc calibration of a method's predictions (`calibration` of a method or of `[eval]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recalibration {
    #[default]
    None,
    /// One temperature for every member, fitted on the validation split.
    Temperature,
}

/// What a method kind needs of the backbone, checked against the experiment's before anything
/// runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any backbone (a ViT or a BERT): it uses only what [`backbone::Classifier`] offers.
    AnyClassifier,
    /// A Vision Transformer: its shape, patch stem or blocks are part of the method.
    Vit,
}

impl Needs {
    /// Whether a backbone of `architecture` serves.
    pub fn met_by(self, architecture: backbone::Architecture) -> bool {
        self == Self::AnyClassifier || architecture == backbone::Architecture::Vit
    }
}

/// A method kind's parameters and how to build it.
pub trait Method: Debug + Send + Sync {
    /// How many members its predictions have (samples, for MC Dropout).
    fn members(&self) -> usize;

    /// How many independently trained base models of the seed it needs (Deep Ensemble: M).
    fn base_models(&self) -> usize {
        1
    }

    /// How many of those base models its result is trained from, so that their training counts
    /// in its `train_cost`: all of them, unless it borrows only the base model's shape (the
    /// ensembles trained from scratch, LoRA-Ensemble on the pretrained weights).
    fn base_models_trained_from(&self, _setting: &Setting) -> usize {
        self.base_models()
    }

    /// Whether building it trains models (into the cache), so that a worker process can do it
    /// in parallel with the rest of the run.
    fn trains(&self) -> bool {
        false
    }

    /// What it needs of the backbone.
    fn needs(&self) -> Needs;

    /// What it runs, for `uqformer plan`'s estimates: by default the base model once a sample,
    /// training nothing of its own.
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        Work::passes(sizing.base, 1, 1)
    }

    /// Whether building it times models, so that no worker process may share the CPU meanwhile.
    fn measures_latency(&self) -> bool {
        false
    }

    /// Whether it runs on a zero-shot classifier (`[backbone] zero_shot`), which is used as it
    /// is, never trained; `recipe` is its `[train]` with its overrides. `Err` says why not.
    fn on_zero_shot(&self, _recipe: &TrainConfig) -> std::result::Result<(), String> {
        Err(
            "it trains models on the task's labels, and a zero-shot classifier is used as it \
             is, never trained"
                .into(),
        )
    }

    /// Whether its model can be the base of another method (`base = "<this method>"`): one
    /// plain classifier, handed over as [`Built::base`]. `Err` says why not.
    fn offers_model(&self) -> std::result::Result<(), String> {
        Err("it gives no single classifier to build on".into())
    }

    /// Whether it can be built on another method's model instead of the seed's base model, in
    /// an experiment with `setting`. `Err` says why not.
    fn builds_on_models(&self, _setting: &Setting) -> std::result::Result<(), String> {
        Err("it is built on the seed's base models only".into())
    }

    /// Checks the parameters, alone and against the rest of the experiment.
    fn check(&self, _setting: &Setting) -> Result<()> {
        Ok(())
    }

    /// Builds the method for one seed.
    fn build(&self, ctx: &Context<'_>) -> Result<Built>;
}

/// An ensemble needs at least two members.
pub(super) fn at_least_two(members: usize) -> Result<()> {
    if members < 2 {
        return Err(ExperimentError::invalid(format!(
            "members = {members} must be at least 2"
        )));
    }
    Ok(())
}
