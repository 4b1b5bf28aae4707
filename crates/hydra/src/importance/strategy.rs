//! The head-importance seam: the [`HeadImportance`] trait and the registry entry a strategy
//! exports.

use std::marker::PhantomData;

use backbone::Classifier;
use registry::Entry;

use super::scores::HeadScores;
use super::shared::{NoParams, read_params};
use crate::calibration::Calibration;
use crate::error::HydraError;

/// What a strategy may vary on: the run's seed and which member it scores for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreContext {
    pub seed: u64,
    pub member: usize,
}

/// A head-importance strategy: maps (model, data) to a score per (block, head).
pub trait HeadImportance: Send + Sync {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// Scores every head of `model` (whose blocks must all have the same number of heads).
    fn scores(
        &self,
        model: &Classifier,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<HeadScores, HydraError>;

    /// Whether the scores depend on `ctx.member` (so [`crate::plan_members`] scores every
    /// member even without bootstrap); false unless a strategy says otherwise.
    fn varies_by_member(&self) -> bool {
        false
    }
}

/// Builds a strategy from its parameter table (each strategy parses its own).
pub type Build = fn(&toml::Table) -> Result<Box<dyn HeadImportance>, HydraError>;

/// A registry entry: the strategy's name, its line for `uqformer list` and its builder.
pub type Strategy = Entry<Build>;

/// The result of scoring a model's heads.
pub(super) type Scored = Result<HeadScores, HydraError>;

/// A strategy that takes no parameters: its name, its line for `uqformer list` and how it
/// scores. [`no_params`] makes its registry entry, so that a new one is only what it computes.
pub(super) trait Parameterless: 'static {
    /// The registry name.
    const NAME: &'static str;
    /// One line for `uqformer list` and error messages.
    const ABOUT: &'static str;
    /// As [`HeadImportance::varies_by_member`].
    const VARIES_BY_MEMBER: bool = false;

    /// As [`HeadImportance::scores`].
    fn scores(model: &Classifier, data: &Calibration, ctx: &ScoreContext) -> Scored;
}

/// The registry entry of a [`Parameterless`] strategy: it refuses every key of its table.
pub(super) const fn no_params<S: Parameterless>() -> Strategy {
    Entry {
        name: S::NAME,
        about: S::ABOUT,
        item: build_plain::<S>,
    }
}

fn build_plain<S: Parameterless>(
    params: &toml::Table,
) -> Result<Box<dyn HeadImportance>, HydraError> {
    read_params::<NoParams>(S::NAME, params)?;
    Ok(Box::new(Plain::<S>(PhantomData)))
}

/// A [`Parameterless`] strategy as a [`HeadImportance`]; `fn() -> S` keeps it `Send + Sync`
/// whatever `S` is.
struct Plain<S>(PhantomData<fn() -> S>);

impl<S: Parameterless> HeadImportance for Plain<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn scores(&self, model: &Classifier, data: &Calibration, ctx: &ScoreContext) -> Scored {
        S::scores(model, data, ctx)
    }

    fn varies_by_member(&self) -> bool {
        S::VARIES_BY_MEMBER
    }
}
