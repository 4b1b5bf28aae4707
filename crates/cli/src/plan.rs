//! `uqformer plan`: a run's training jobs as JSON lines, the same on every machine.

use std::path::PathBuf;

use clap::Args;
use experiment::device::Backend;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The experiment file (TOML).
    file: PathBuf,
    /// Override `[experiment] seeds`, comma-separated (e.g. 0,1,2).
    #[arg(long, value_delimiter = ',')]
    seeds: Option<Vec<u64>>,
    /// Override `[experiment] backend` (the plan does not depend on it; the file must name one
    /// compiled in).
    #[arg(long)]
    backend: Option<Backend>,
}

/// One line per job: id, seed, job, stage, needs, what, cost (`experiment::plan::PlannedJob`).
pub fn run(args: &PlanArgs) -> crate::error::Result<()> {
    let config = crate::run::load(&args.file, args.backend, args.seeds.as_deref())?;
    for job in experiment::plan::plan(&config) {
        println!("{}", serde_json::to_string(&job)?);
    }
    Ok(())
}
