//! `uqformer run`: one experiment file, end to end.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::CliError;
use clap::Args;
use experiment::plan::Stage;
use experiment::{ExperimentConfig, Overrides, RunOptions};
use report::render_terminal;
use runtime::Backend;
use runtime::{Shard, Workers};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The experiment file (TOML).
    file: PathBuf,
    /// Override `[experiment] backend`: flex, ndarray, wgpu, cuda, tch or tch-cuda (as compiled
    /// in).
    #[arg(long)]
    backend: Option<Backend>,
    /// Override `[experiment] seeds`, comma-separated (e.g. 0,1,2).
    #[arg(long, value_delimiter = ',')]
    seeds: Option<Vec<u64>>,
    /// Override `[experiment] devices`, comma-separated GPU numbers (e.g. 0,1): the main process
    /// trains on the first, one worker on each other one.
    #[arg(long, value_delimiter = ',')]
    devices: Option<Vec<usize>>,
    /// Results folder; runs go to <OUT>/<experiment>/<run-id>/.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Where the data sets are [default: `datasets/` in the working directory, else beside the
    /// experiment file or in a folder above it, else in the checkout uqformer was built from].
    #[arg(long)]
    data: Option<PathBuf>,
    /// Trained-model cache and checkpoints [default: <OUT>/.cache].
    #[arg(long)]
    cache: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Worker processes that train independent models (Deep Ensemble members, methods that
    /// train) beside the main one; results are identical with any number. With 0 the one
    /// training process keeps its idle threads spinning between ops, not sleeping (faster on
    /// several threads) [default: CPU cores - 1]
    #[arg(long)]
    workers: Option<usize>,
    /// Train only shard K of N of the run's jobs (`uqformer plan` lists them) into the cache and
    /// evaluate nothing; `auto` takes K and N from a Slurm array task or a Kubernetes Indexed
    /// Job. A plain run afterwards evaluates from the cache.
    #[arg(long, value_name = "K/N|auto")]
    shard: Option<String>,
    /// With --shard: only the jobs of this stage (`base` or `method`).
    #[arg(long, requires = "shard")]
    stage: Option<Stage>,
    /// Evaluate from the cache only: a training the cache does not hold is an error naming it
    /// (after shards, to check that they trained everything).
    #[arg(long, conflicts_with = "shard")]
    no_train: bool,
}

/// `given`, else the first `datasets/` folder holding the bundled subsets: in the working
/// directory, beside `file` or in a folder above it, in the checkout this binary was built from;
/// else `datasets` (whose absence the run then reports, naming what to fetch).
pub fn data_root(given: Option<&Path>, file: &Path) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_path_buf();
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file_dir = std::path::absolute(file).ok();
    let above_file = file_dir.iter().flat_map(|f| f.ancestors().skip(1));
    (std::iter::once(Path::new("."))
        .chain(above_file)
        .chain([built_from.as_path()]))
    .map(|dir| dir.join("datasets"))
    .find(|d| d.join("bundled").is_dir())
    .unwrap_or_else(|| PathBuf::from("datasets"))
}

pub fn run(args: &RunArgs) -> crate::error::Result<()> {
    let started = Instant::now();
    // Ctrl-C / SIGTERM: stop at the next training step or stage, checkpoints whole; a second
    // signal ends the process at once.
    experiment::interrupt::install(true)
        .map_err(|e| CliError::at("installing the signal handlers", e))?;
    let overrides = Overrides {
        backend: args.backend,
        seeds: args.seeds.clone(),
        devices: args.devices.clone(),
    };
    let config = ExperimentConfig::load(&args.file, &overrides)?;
    let options = RunOptions {
        data_root: data_root(args.data.as_deref(), &args.file),
        results_root: args.out.clone(),
        cache_root: args
            .cache
            .clone()
            .unwrap_or_else(|| args.out.join(".cache")),
        quiet: args.quiet,
        workers: Some(Workers {
            quiet: args.quiet,
            exe: std::env::current_exe()
                .map_err(|e| CliError::at("locating the uqformer binary for workers", e))?,
            processes: args
                .workers
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()) - 1),
        }),
        no_train: args.no_train,
    };
    if let Some(shard) = &args.shard {
        let shard = match shard.as_str() {
            "auto" => Shard::from_env(|name| std::env::var(name).ok())?,
            k_of_n => k_of_n.parse()?,
        };
        let done = experiment::run_shard(&config, &options, shard, args.stage)?;
        println!(
            "shard {}/{}: {} job(s) trained or read back into the cache ({}); {:.0} s",
            shard.index,
            shard.count,
            done.len(),
            done.join(", "),
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let output = experiment::run(&config, &options)?;
    println!("{}", render_terminal(&output.summary));
    println!(
        "results: {} (report.md, report.html, figures, summary.json); {:.0} s in all",
        output.dir.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_folder_is_found_beside_the_file_or_in_the_checkout() {
        let given = Path::new("/somewhere/data");
        assert_eq!(data_root(Some(given), Path::new("x.toml")), given);
        // Tests run in crates/cli, which has no datasets/ folder.
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("study/experiments");
        std::fs::create_dir_all(&nested).unwrap();
        let file = nested.join("x.toml");
        // Nothing beside the file or above it: the checkout's own datasets/.
        let found = data_root(None, &file);
        assert!(
            found.join("bundled").is_dir() && found.ends_with("datasets"),
            "{found:?}"
        );
        assert!(!found.starts_with(dir.path()));
        // A datasets/ with the bundled subsets in a folder above the file wins over it.
        std::fs::create_dir_all(dir.path().join("study/datasets/bundled")).unwrap();
        assert_eq!(data_root(None, &file), dir.path().join("study/datasets"));
    }
}
