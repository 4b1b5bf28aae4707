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

mod base;
mod cache;
pub mod config;
pub mod device;
pub mod error;
pub mod estimate;
pub mod eval;
pub mod eval_set;
pub mod memory;
pub mod methods;
pub mod pixels;
pub mod plan;
pub mod pool;
pub mod prep;
mod provenance;
pub mod runner;
pub mod sets;
mod sources;
pub mod workers;
pub mod workload;
mod zero_shot;

pub use base::{PRETRAINED, Pretrained};
pub use cache::lock as cache_lock;
pub use cache::{
    CACHE_KEYS, CacheEntry, Clean, MadeBy, clean_cache, list_cache, used_by_latest_run,
};
pub use config::{ExperimentConfig, Overrides};
pub use error::{ConfigError, ExperimentError};
pub use methods::{
    Built, Context, KINDS, Method, MethodSpec, Needs, Recalibration, Setting, Sweep,
};
pub use runner::{RunOptions, RunOutput, run, run_jobs, run_shard, run_worker};
pub use workers::{Job, WorkerSpec, Workers};
