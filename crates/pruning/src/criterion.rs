//! The criterion seam: the [`Criterion`] trait, the registry entry a criterion exports, and
//! [`score`], through which every caller scores (it checks the kind and the scores' shape).

use std::marker::PhantomData;

use backbone::Classifier;
use registry::Entry;

use crate::calibration::Calibration;
use crate::error::PruningError;
use crate::params::{NoParams, read_params};
use crate::scores::Scores;
use crate::units::{UnitKind, listed};

/// What a criterion may vary on: the run's seed and which member it scores for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreContext {
    pub seed: u64,
    pub member: usize,
}

/// A pruning criterion: maps (model, data) to a score per unit of a kind it supports, higher =
/// more important. Deterministic given the model, the data and the context.
pub trait Criterion: Send + Sync {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// The unit kinds it scores.
    fn kinds(&self) -> &'static [UnitKind];

    /// Scores every unit of `kind` in `model` (called through [`score`], which has checked
    /// that `kind` is one of [`Criterion::kinds`]).
    fn scores(
        &self,
        model: &Classifier,
        kind: UnitKind,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<Scores, PruningError>;

    /// Whether the scores depend on `ctx.member` (so an ensemble scores every member); false
    /// unless a criterion says otherwise.
    fn varies_by_member(&self) -> bool {
        false
    }

    /// Whether the scores are drawn at random (a baseline) rather than read from the model and
    /// the data; false unless a criterion says otherwise.
    fn random(&self) -> bool {
        false
    }
}

/// Scores the `kind` units of `model` by `criterion`: refuses a kind it does not support, and
/// checks that it gave one finite score per unit.
pub fn score(
    criterion: &dyn Criterion,
    model: &Classifier,
    kind: UnitKind,
    data: &Calibration,
    ctx: &ScoreContext,
) -> Result<Scores, PruningError> {
    supports(criterion.name(), criterion.kinds(), kind)?;
    let scores = criterion.scores(model, kind, data, ctx)?;
    let counts = kind.per_block(model);
    let shape: Vec<usize> = scores.0.iter().map(Vec::len).collect();
    if shape != counts {
        return Err(PruningError::invalid(
            format!("{} scores of {kind} units", criterion.name()),
            format!("{shape:?} per block"),
            format!("{counts:?}, one per unit of the model"),
        ));
    }
    if let Some((l, u)) = scores.position_not_finite() {
        return Err(PruningError::invalid(
            format!("{} score of {kind} {u} in block {l}", criterion.name()),
            scores.0[l][u],
            "a finite number",
        ));
    }
    Ok(scores)
}

/// Refuses `kind` unless it is one of `kinds`, naming the criterion and what it scores.
pub(crate) fn supports(
    criterion: &'static str,
    kinds: &[UnitKind],
    kind: UnitKind,
) -> Result<(), PruningError> {
    if kinds.contains(&kind) {
        return Ok(());
    }
    Err(PruningError::Unsupported {
        criterion,
        kind,
        supported: listed(kinds),
    })
}

/// Builds a criterion from its parameter table (each criterion parses its own).
pub type Build = fn(&toml::Table) -> Result<Box<dyn Criterion>, PruningError>;

/// What the registry holds of a criterion: the unit kinds it scores (for `uqformer list` and
/// validation before anything is built) and its builder.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    pub kinds: &'static [UnitKind],
    pub build: Build,
}

/// A registry entry: the criterion's name, its line for `uqformer list` and what it is.
pub type CriterionEntry = Entry<Registered>;

/// The result of scoring a model's units.
pub(crate) type Scored = Result<Scores, PruningError>;

/// A criterion that takes no parameters: its name, its line for `uqformer list`, the kinds it
/// scores and how. [`no_params`] makes its registry entry, so that a new one is only what it
/// computes.
pub(crate) trait Parameterless: 'static {
    /// The registry name.
    const NAME: &'static str;
    /// One line for `uqformer list` and error messages.
    const ABOUT: &'static str;
    /// The unit kinds it scores.
    const KINDS: &'static [UnitKind];
    /// As [`Criterion::varies_by_member`].
    const VARIES_BY_MEMBER: bool = false;
    /// As [`Criterion::random`].
    const RANDOM: bool = false;

    /// As [`Criterion::scores`].
    fn scores(model: &Classifier, kind: UnitKind, data: &Calibration, ctx: &ScoreContext)
    -> Scored;
}

/// The registry entry of a [`Parameterless`] criterion: it refuses every key of its table.
pub(crate) const fn no_params<S: Parameterless>() -> CriterionEntry {
    Entry {
        name: S::NAME,
        about: S::ABOUT,
        item: Registered {
            kinds: S::KINDS,
            build: build_plain::<S>,
        },
    }
}

fn build_plain<S: Parameterless>(params: &toml::Table) -> Result<Box<dyn Criterion>, PruningError> {
    read_params::<NoParams>(S::NAME, params)?;
    Ok(Box::new(Plain::<S>(PhantomData)))
}

/// A [`Parameterless`] criterion as a [`Criterion`]; `fn() -> S` keeps it `Send + Sync`
/// whatever `S` is.
struct Plain<S>(PhantomData<fn() -> S>);

impl<S: Parameterless> Criterion for Plain<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn kinds(&self) -> &'static [UnitKind] {
        S::KINDS
    }

    fn scores(
        &self,
        model: &Classifier,
        kind: UnitKind,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Scored {
        S::scores(model, kind, data, ctx)
    }

    fn varies_by_member(&self) -> bool {
        S::VARIES_BY_MEMBER
    }

    fn random(&self) -> bool {
        S::RANDOM
    }
}
