//! The runner: the seed loop over the stages, in order —
//! [`sets`](crate::sets) (load, split, limit) → `base` (train or load the base
//! models) → [`methods`](crate::methods) (build) → [`eval`](crate::eval) (predict, metrics, cost)
//! → [`store`](report::write_run) (the run directory) with the [`report`](report::render) rendered from
//! the summary.

use std::path::PathBuf;

use crate::config::{ExperimentConfig, Overrides};
use crate::error::{ErrorContext as _, Result, check_stop};
use crate::plan::{PlannedJob, Stage, job_id, plan, share};
use crate::worker_spec::WorkerSpec;
use report::compare::compare;
use report::curves::{CURVES_FILE, RunCurves};
use report::render;
use report::summary::Summary;
use report::write_run;
use runtime::{Job, Shard};

mod seed;
mod setup;

use seed::run_seed;
pub use setup::RunOptions;
use setup::{Setup, resolved_toml};

/// A finished run: its folder and what was written to `summary.json`.
#[derive(Debug)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub summary: Summary,
}

/// Runs jobs of a run, one after the other, as a worker process or a shard does: their trained
/// models land in the cache. The data are loaded once for all of them.
pub fn run_jobs(config: &ExperimentConfig, opts: &RunOptions, jobs: &[(u64, Job)]) -> Result<()> {
    let setup = Setup::new(config, opts)?;
    for &(seed, job) in jobs {
        setup
            .run_job(seed, job)
            .context(format!("job {}", job_id(seed, job)))?;
    }
    Ok(())
}

/// Trains shard `shard`'s jobs (of `stage` alone, if given) into the cache, base models first;
/// evaluates nothing. Returns the ids of the jobs run.
pub fn run_shard(
    config: &ExperimentConfig,
    opts: &RunOptions,
    shard: Shard,
    stage: Option<Stage>,
) -> Result<Vec<String>> {
    let jobs = plan(config);
    let mut mine: Vec<&PlannedJob> = (share(&jobs, shard).into_iter())
        .filter(|j| stage.is_none_or(|s| j.stage == s))
        .collect();
    mine.sort_by_key(|j| j.stage);
    let jobs: Vec<(u64, Job)> = mine.iter().map(|j| (j.seed, j.job)).collect();
    run_jobs(config, opts, &jobs)?;
    Ok(mine.into_iter().map(|j| j.id.clone()).collect())
}

/// What a worker process does with its spec: loads the config and trains the job into the
/// cache.
pub fn run_worker(spec: &WorkerSpec) -> Result<()> {
    let overrides = Overrides {
        devices: spec.device.map(|device| vec![device]),
        ..Overrides::default()
    };
    let config = ExperimentConfig::load(&spec.config, &overrides)?;
    let options = RunOptions {
        data_root: spec.data_root.clone(),
        results_root: spec.cache_root.clone(),
        cache_root: spec.cache_root.clone(),
        quiet: spec.quiet,
        workers: None,
        no_train: false,
    };
    run_jobs(&config, &options, &[(spec.seed, spec.job)])
}

/// Runs the whole experiment and writes its results.
pub fn run(config: &ExperimentConfig, opts: &RunOptions) -> Result<RunOutput> {
    let started = std::time::Instant::now();
    let setup = Setup::new(config, opts)?;
    if opts.no_train {
        setup.check_base_models_cached(&opts.cache_root)?;
    }
    let scores = config.data.ood_score.scores();
    let mut methods = Vec::new();
    let mut curves = RunCurves::default();
    let mut files = Vec::new();
    for &seed in &config.experiment.seeds {
        let seed_out = run_seed(&setup, opts, scores, seed)?;
        methods.extend(seed_out.results);
        curves.methods.extend(seed_out.curves);
        curves.sweeps.extend(seed_out.sweeps);
        curves.predictors.extend(seed_out.predictors);
        files.extend(seed_out.files);
    }
    curves.training = setup.trainer.logs();
    // What `uqformer cache clean --unused-by` keeps for this experiment.
    let keys: String = (setup.trainer.used().iter())
        .map(|k| format!("{k}\n"))
        .collect();
    files.push((runtime::CACHE_KEYS.to_string(), keys.into_bytes()));
    let mut summary = Summary {
        experiment: config.experiment.name.clone(),
        seeds: config.experiment.seeds.clone(),
        comparisons: compare(&methods, &config.eval.reference, &config.eval.margins),
        retained: Vec::new(),
        claims: Vec::new(),
        methods,
        ood_scores: scores.iter().map(|s| s.name().to_string()).collect(),
        provenance: Some(crate::provenance::gather(config, started)),
        baseline: Some(config.eval.baseline().to_string()),
        reference: Some(config.eval.reference.clone()),
    };
    report::conclude(&mut summary, &config.claims);
    check_stop("writing the results")?;
    let rendered =
        render(&summary, &curves, config.data.ood_score.primary().name()).context("figures")?;
    files.push((CURVES_FILE.to_string(), curves.to_json()?));
    files.push(("report.html".to_string(), rendered.html.into_bytes()));
    files.extend((rendered.figures.into_iter()).map(|f| (f.file, f.svg.into_bytes())));
    let dir = write_run(
        &opts.results_root,
        &resolved_toml(config)?,
        &summary,
        &rendered.markdown,
        &files,
    )
    .context("writing results")?;
    Ok(RunOutput { dir, summary })
}
