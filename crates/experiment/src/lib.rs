//! Experiments: the TOML schema ([`ExperimentConfig`]), the method kinds ([`MethodSpec`]), and the
//! runner that trains, builds every method, evaluates it and writes the results.

pub mod config;
pub mod device;
pub mod error;
pub mod eval;
pub mod memory;
pub mod methods;
pub mod npy;
pub mod report;
pub mod results;
pub mod runner;
pub mod workers;

pub use config::ExperimentConfig;
pub use error::ConfigError;
pub use methods::{Built, Context, KINDS, Method, MethodSpec};

pub use report::{render_markdown, render_terminal};
pub use results::{Cost, IdMetrics, MethodResult, OodMetrics, ShiftMetrics, Summary, write_run};
pub use runner::{RunOptions, RunOutput, run, run_job};
pub use train::atomic_write;
pub use workers::{Job, Workers};
