//! Experiments: the TOML schema ([`ExperimentConfig`]), the method kinds ([`MethodSpec`]), and the
//! runner that trains, builds every method, evaluates it and writes the results.

pub mod config;
pub mod error;
pub mod methods;

pub use config::ExperimentConfig;
pub use error::ConfigError;
pub use methods::{MethodKind, MethodSpec};
