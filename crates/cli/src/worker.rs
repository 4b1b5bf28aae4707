//! `uqformer worker`: one training job of a run, started by `uqformer run --workers N`.

use std::path::PathBuf;

use clap::Args;
use experiment::{ExperimentConfig, Job, RunOptions};

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The run's resolved config (written by the main process).
    config: PathBuf,
    #[arg(long)]
    seed: u64,
    /// `base:K` (base model K of the seed) or `method:I` (method I of the config).
    #[arg(long)]
    job: String,
    #[arg(long)]
    data: PathBuf,
    #[arg(long)]
    cache: PathBuf,
    /// No epoch lines.
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: &WorkerArgs) -> crate::error::Result<()> {
    let config = ExperimentConfig::load(&args.config)?;
    let job = Job::parse(&args.job)?;
    // Stop cleanly at the first signal and at any later one (see `train::interrupt::install`).
    train::interrupt::install(false).map_err(|e| format!("installing the signal handlers: {e}"))?;
    // The main process's progress line owns the terminal: a worker prints whole epoch lines.
    train::epoch_lines(&format!("[worker {}] ", args.job));
    let options = RunOptions {
        data_root: args.data.clone(),
        // A worker writes only to the model cache.
        results_root: args.cache.clone(),
        cache_root: args.cache.clone(),
        quiet: args.quiet,
        workers: None,
    };
    Ok(experiment::run_job(&config, &options, args.seed, job)?)
}
