//! The registry TOML names resolve through.

use registry::Registry;

use super::strategy::{Build, HeadImportance};
use super::{activation, circuit, confidence, magnitude, random, taylor};
use crate::error::HydraError;

/// Every registered strategy, in the order `uqformer list` shows them. A new one is a file in
/// `src/importance/` exporting `STRATEGY`, its `mod` line in `importance/mod.rs` and its entry
/// here.
pub const STRATEGIES: Registry<Build> = Registry::new(
    "head-importance strategy",
    &[
        taylor::STRATEGY,
        circuit::STRATEGY,
        magnitude::STRATEGY,
        random::STRATEGY,
        activation::STRATEGY,
        confidence::STRATEGY,
    ],
);

/// Builds the strategy called `name` with its parameters `params`.
pub fn strategy(name: &str, params: &toml::Table) -> Result<Box<dyn HeadImportance>, HydraError> {
    (STRATEGIES.get(name)?.item)(params)
}
