//! Experiments: the TOML schema ([`ExperimentConfig`]), the method kinds ([`MethodSpec`]), and
//! the runner, a one-way pipeline of stages run for every seed:
//!
//! ```text
//! data (load, split, limit) -> base (train or load base models) -> methods (build)
//!   -> eval (predict once per set: metrics, sweeps, cost) -> store (run directory) <- report
//! ```
//!
//! A method is given what it needs to build (base models, training and validation data), never
//! the evaluation sets. The run's results schema, the paired comparisons, the store and the
//! report are the `report` crate's: the report is rendered from the stored summary and computes
//! nothing.
//! Errors are [`ExperimentError`]s that name the file, field, method or seed.
//!
//! Services of the pipeline for the command line: what an experiment file can name
//! ([`catalog`]), a checkpoint run on given inputs ([`predict`], [`embed`]).
//!
//! What runs the work without knowing models or methods (the thread pool, devices, worker
//! processes, shards, the cache's folders) is the `runtime` crate's, below this one.

mod base;
mod cache;
pub mod catalog;
pub mod config;
pub mod embed;
pub mod error;
pub mod estimate;
pub mod eval;
pub mod eval_set;
pub mod methods;
pub mod pixels;
pub mod plan;
pub mod predict;
pub mod prep;
mod provenance;
pub mod runner;
pub mod sets;
mod sources;
mod worker_spec;
pub mod workload;
mod zero_shot;

pub use base::{PRETRAINED, Pretrained};
pub use config::{ExperimentConfig, Overrides};
pub use error::{ConfigError, ExperimentError};
pub use methods::{
    Built, Context, KINDS, Method, MethodSpec, Needs, Recalibration, Setting, Sweep,
};
pub use runner::{RunOptions, RunOutput, run, run_jobs, run_shard, run_worker};
pub use worker_spec::WorkerSpec;

/// For the command line: the stop request that training honours (Ctrl-C, SIGTERM), a worker's
/// epoch lines, an error's whole chain in one line, and files written whole (as the runs are).
pub use data::{atomic_write, error_chain};
pub use train::{epoch_lines, interrupt};
