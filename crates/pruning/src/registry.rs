//! The registry experiment files name criteria through.

use registry::Registry;

use crate::criteria::{
    activation, circuit, confidence, learnable, magnitude, random, taylor, wanda,
};
use crate::criterion::{Criterion, Registered, supports};
use crate::error::PruningError;
use crate::units::UnitKind;

/// Every registered criterion, in the order `uqformer list` shows them. A new one is a file in
/// `src/criteria/` exporting `CRITERION`, its `mod` line in `criteria.rs` and its entry here.
pub const CRITERIA: Registry<Registered> = Registry::new(
    "pruning criterion",
    &[
        taylor::CRITERION,
        circuit::CRITERION,
        magnitude::CRITERION,
        random::CRITERION,
        activation::CRITERION,
        confidence::CRITERION,
        wanda::CRITERION,
        learnable::CRITERION,
    ],
);

/// Builds the criterion called `name` with its parameters `params`.
pub fn criterion(name: &str, params: &toml::Table) -> Result<Box<dyn Criterion>, PruningError> {
    (CRITERIA.get(name)?.item.build)(params)
}

/// Builds the criterion called `name` for scoring `kind` units: refuses a criterion that does
/// not score that kind, naming the kinds it does.
pub fn criterion_for(
    name: &str,
    params: &toml::Table,
    kind: UnitKind,
) -> Result<Box<dyn Criterion>, PruningError> {
    let entry = CRITERIA.get(name)?;
    supports(entry.name, entry.item.kinds, kind)?;
    (entry.item.build)(params)
}
