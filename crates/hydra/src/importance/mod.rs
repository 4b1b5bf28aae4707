//! The head-importance seam: the [`HeadImportance`] trait, the registry TOML names resolve
//! through, and the helpers strategies share. One file per strategy.

mod registry;
mod scores;
mod shared;
mod strategy;

mod activation;
mod circuit;
mod confidence;
mod magnitude;
mod random;
mod taylor;

pub use registry::{STRATEGIES, strategy};
pub use scores::HeadScores;
pub use strategy::{HeadImportance, ScoreContext, Strategy};
