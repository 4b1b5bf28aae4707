//! The experiment TOML schema and its validation.
//!
//! Every section rejects unknown keys (serde lists the valid ones in the message), and
//! [`ExperimentConfig::load`], the one loader (the CLI's commands and the workers use it),
//! prefixes each error with the file name.

mod experiment;
mod sections;
mod source;
mod validate;
mod validate_bases;
mod validate_claims;
mod validate_data;
mod validate_zero_shot;
mod zero_shot;

pub use experiment::{ExperimentConfig, Overrides};
pub use sections::{
    BackboneSection, DataSection, EvalSection, ExperimentSection, OodGroups, Precision,
    PreprocessSection, ScoreList, ShiftSpec,
};
pub use source::{DataSource, DiskFormat, DiskSet};
pub use zero_shot::{DEFAULT_TEMPLATE, ZeroShotSection};
