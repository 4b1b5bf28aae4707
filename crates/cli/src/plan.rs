//! `uqformer plan`: a run's training jobs as JSON lines, the same on every machine; with
//! `--device NAME`, a table of each job's and each method's evaluation's estimated FLOPs,
//! memory and time on that device (`--json`: the same as one JSON document).

use std::path::PathBuf;

use clap::Args;
use experiment::estimate::{DeviceSpec, Precision, estimate};
use experiment::{ExperimentConfig, Overrides};
use runtime::Backend;

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
    /// Where the data sets are, for --cache and --device [default: as `run` finds them].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Estimate FLOPs, peak memory and time on this device: h100, h200, a100, l4 or cpu
    /// (reads the data's sizes and the backbone's configuration; docs/running.md).
    #[arg(long, value_name = "NAME", conflicts_with = "cache")]
    device: Option<String>,
    /// The precision matmuls run in, for --device: f32, tf32 or bf16.
    #[arg(long, default_value = "f32", requires = "device")]
    precision: Precision,
    /// With --device: the estimate as one JSON document instead of a table.
    #[arg(long, requires = "device")]
    json: bool,
}

/// One line per job: id, seed, job, stage, needs, what, cost, and with `--cache` a base model's
/// fingerprint and whether it is cached (`experiment::plan::PlannedJob`); with `--device`, the
/// estimate.
pub fn run(args: &PlanArgs) -> crate::error::Result<()> {
    let overrides = Overrides {
        backend: args.backend,
        seeds: args.seeds.clone(),
        devices: None,
    };
    let config = ExperimentConfig::load(&args.file, &overrides)?;
    let data = || crate::run::data_root(args.data.as_deref(), &args.file);
    if let Some(name) = &args.device {
        let device = DeviceSpec::named(name)?;
        let estimate = estimate(&config, &data(), device, args.precision)?;
        match args.json {
            true => println!("{}", serde_json::to_string_pretty(&estimate)?),
            false => print!("{}", crate::estimate::table(&estimate)),
        }
        return Ok(());
    }
    let jobs = match &args.cache {
        Some(cache) => experiment::plan::with_cache(&config, &data(), cache)?,
        None => experiment::plan::plan(&config),
    };
    for job in jobs {
        println!("{}", serde_json::to_string(&job)?);
    }
    Ok(())
}
