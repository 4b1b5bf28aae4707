//! `uqformer worker SPEC`: one training job of a run, started by `uqformer run --workers N`
//! with the job as `experiment::WorkerSpec` JSON.

use clap::Args;
use experiment::WorkerSpec;

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The job, as the main process serialised it (`experiment::WorkerSpec` as JSON).
    spec: String,
}

pub fn run(args: &WorkerArgs) -> crate::error::Result<()> {
    let spec = WorkerSpec::parse(&args.spec)?;
    // Stop cleanly at the first signal and at any later one (see `experiment::interrupt::install`).
    experiment::interrupt::install(false)
        .map_err(|e| crate::error::CliError::at("installing the signal handlers", e))?;
    // The main process's progress line owns the terminal: a worker prints whole epoch lines.
    experiment::epoch_lines(&format!("[worker {}] ", spec.job));
    Ok(experiment::run_worker(&spec)?)
}
