//! `uqformer plan`: a run's training jobs as JSON lines, the same on every machine.

use std::path::PathBuf;

use clap::Args;
use experiment::device::Backend;
use experiment::{ExperimentConfig, Overrides};

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The experiment file (TOML).
    file: PathBuf,
    /// Override `[experiment] seeds`, comma-separated (e.g. 0,1,2).
    #[arg(long, value_delimiter = ',')]
    seeds: Option<Vec<u64>>,
    /// Override `[experiment] backend` (the file must name one compiled in).
    #[arg(long)]
    backend: Option<Backend>,
    /// With the base models' cache folders and whether this cache holds each (reads the data).
    #[arg(long, value_name = "CACHE")]
    cache: Option<PathBuf>,
    /// Where the data sets are, for --cache [default: as `run` finds them].
    #[arg(long)]
    data: Option<PathBuf>,
}

/// One line per job: id, seed, job, stage, needs, what, cost, and with `--cache` a base model's
/// fingerprint and whether it is cached (`experiment::plan::PlannedJob`).
pub fn run(args: &PlanArgs) -> crate::error::Result<()> {
    let overrides = Overrides {
        backend: args.backend,
        seeds: args.seeds.clone(),
        devices: None,
    };
    let config = ExperimentConfig::load(&args.file, &overrides)?;
    let jobs = match &args.cache {
        Some(cache) => {
            let data = crate::run::data_root(args.data.as_deref(), &args.file);
            experiment::plan::with_cache(&config, &data, cache)?
        }
        None => experiment::plan::plan(&config),
    };
    for job in jobs {
        println!("{}", serde_json::to_string(&job)?);
    }
    Ok(())
}
