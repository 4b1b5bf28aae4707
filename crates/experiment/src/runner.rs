//! The runner: the seed loop over the stages, in order —
//! [`data`](crate::data) (load, split, limit) → [`base`](crate::base) (train or load the base
//! models) → [`methods`](crate::methods) (build) → [`eval`](crate::eval) (predict, metrics, cost)
//! → [`store`](crate::store) (the run directory) with the [`report`](crate::report) rendered from
//! the summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use burn::tensor::{Device, FloatDType};
use uq_metrics::OodScore;

use crate::base::{Base, BaseSpec, base_models, needed_base_models, train_base};
use crate::cache::{Trainer, fingerprint};
use crate::compare::compare;
use crate::config::{ExperimentConfig, Precision};
use crate::curves::{CURVES_FILE, RunCurves};
use crate::data::{Loaded, SeedData, load};
use crate::device::device;
use crate::error::{Context as _, ExperimentError, Result, check_stop};
use crate::eval::Evaluator;
use crate::methods::{Context, MethodSpec};
use crate::report::render;
use crate::results::{MethodResult, Summary, Variant};
use crate::store::write_run;
use crate::workers::{Job, Pool, Spawn, Workers, command};

/// Where a run reads and writes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The `datasets/` folder.
    pub data_root: PathBuf,
    /// Results go to `<results_root>/<experiment>/<run-id>/`.
    pub results_root: PathBuf,
    /// Trained models and their checkpoints, keyed by a fingerprint of what produced them.
    pub cache_root: PathBuf,
    pub quiet: bool,
    /// Train independent models in worker processes beside the main one (results unchanged).
    pub workers: Option<Workers>,
}

/// A finished run: its folder and what was written to `summary.json`.
#[derive(Debug)]
pub struct RunOutput {
    pub dir: PathBuf,
    pub summary: Summary,
}

/// What every seed of a run shares: the device, the loaded sets, the base-model recipe.
struct Setup<'a> {
    config: &'a ExperimentConfig,
    device: Device,
    loaded: Loaded,
    spec: BaseSpec,
    trainer: Trainer,
}

impl<'a> Setup<'a> {
    fn new(config: &'a ExperimentConfig, opts: &RunOptions) -> Result<Self> {
        let device = device(&config.experiment.backend)?;
        let loaded = load(config, &opts.data_root)?;
        let spec = BaseSpec::new(config, &opts.data_root, &loaded.train_full)?;
        let trainer = Trainer::new(
            opts.cache_root.clone(),
            opts.quiet,
            config.experiment.name.clone(),
        );
        Ok(Self {
            config,
            device,
            loaded,
            spec,
            trainer,
        })
    }

    fn seed_data(&self, seed: u64) -> Result<SeedData> {
        SeedData::new(self.config, &self.loaded, seed, self.spec.tokenizer())
    }

    fn base(&self, data: &SeedData, seed: u64, n: usize, pool: Option<&Pool>) -> Result<Base> {
        let (config, spec, train) = (self.config, &self.spec, data.train());
        base_models(
            config,
            spec,
            train,
            &self.trainer,
            seed,
            n,
            &self.device,
            pool,
        )
    }

    /// What method `spec` sees while it is built.
    fn context<'s>(
        &'s self,
        spec: &'s MethodSpec,
        data: &'s SeedData,
        base: &'s Base,
        seed: u64,
    ) -> Context<'s> {
        Context {
            spec,
            setting: self.config.setting(),
            recipe: &self.config.train,
            eval_batch: self.config.data.eval_batch_size,
            vit: self.spec.vit(),
            base: &base.models,
            train: data.train(),
            val: data.prep.data(&data.val),
            text_tokens: data.text_tokens,
            prep: &data.prep,
            seed,
            device: &self.device,
            trainer: &self.trainer,
            base_fingerprint: &base.fingerprint,
            pretrained: self.spec.pretrained_init(),
            trained: Default::default(),
        }
    }
}

/// Runs one job of one seed, as a worker process does: its trained models land in the cache.
pub fn run_job(config: &ExperimentConfig, opts: &RunOptions, seed: u64, job: Job) -> Result<()> {
    let setup = Setup::new(config, opts)?;
    let data = setup.seed_data(seed)?;
    match job {
        Job::Base(k) => {
            let (trainer, device) = (&setup.trainer, &setup.device);
            train_base(config, trainer, &setup.spec, data.train(), seed, k, device)?;
        }
        Job::Method(i) => {
            let spec = config.methods.get(i).ok_or_else(|| {
                ExperimentError::invalid(format!(
                    "job method:{i}: the config has {} methods",
                    config.methods.len()
                ))
            })?;
            let base = setup.base(&data, seed, spec.method.base_models(), None)?;
            spec.method
                .build(&setup.context(spec, &data, &base, seed))?;
        }
    }
    Ok(())
}

/// Runs the whole experiment and writes its results.
pub fn run(config: &ExperimentConfig, opts: &RunOptions) -> Result<RunOutput> {
    let setup = Setup::new(config, opts)?;
    let scores = config.ood_scores()?;
    let mut methods = Vec::new();
    let mut curves = RunCurves::default();
    let mut files = Vec::new();
    for &seed in &config.experiment.seeds {
        let seed_out = run_seed(&setup, opts, &scores, seed)?;
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
    files.push((crate::cache::CACHE_KEYS.to_string(), keys.into_bytes()));
    let summary = Summary {
        experiment: config.experiment.name.clone(),
        seeds: config.experiment.seeds.clone(),
        comparisons: compare(&methods, &config.eval.reference, &config.eval.margins),
        methods,
        ood_scores: scores.iter().map(|s| s.name().to_string()).collect(),
    };
    check_stop("writing the results")?;
    let rendered = render(&summary, &curves, config.data.ood_score.primary()).context("figures")?;
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

/// What one seed gives the run.
struct SeedOutput {
    results: Vec<MethodResult>,
    curves: Vec<crate::curves::MethodCurves>,
    sweeps: Vec<crate::curves::SweepTable>,
    predictors: Vec<crate::curves::PredictorGrid>,
    files: Vec<(String, Vec<u8>)>,
}

/// One seed: its data, its base models, then every method built, evaluated and costed.
fn run_seed(
    setup: &Setup<'_>,
    opts: &RunOptions,
    scores: &[OodScore],
    seed: u64,
) -> Result<SeedOutput> {
    let config = setup.config;
    let started = Instant::now();
    let data = setup.seed_data(seed)?;
    let pool = match &opts.workers {
        Some(w) if w.processes > 0 => {
            if !opts.quiet {
                eprintln!(
                    "seed {seed}: training in {} worker process(es) beside this one",
                    w.processes
                );
            }
            Some(start_pool(config, opts, w, seed)?)
        }
        _ => None,
    };
    let base = setup.base(&data, seed, needed_base_models(config), pool.as_ref())?;
    if !opts.quiet {
        eprintln!(
            "seed {seed}: {} model(s) ready after {:.0} s; building and evaluating methods",
            base.models.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let eval = Evaluator {
        sets: &data.sets,
        val: &data.val,
        train: &data.train,
        prep: &data.prep,
        batch: config.data.eval_batch_size,
        scores: scores.to_vec(),
        groups: &config.data.ood_groups,
        conformal: (config.eval.conformal_score, config.eval.conformal_alpha),
        timing_rounds: config.eval.timing_rounds,
        seed,
        device: &setup.device,
    };
    let mut results = Vec::with_capacity(config.methods.len());
    let mut curves = Vec::with_capacity(config.methods.len());
    let mut sweeps = Vec::new();
    let mut predictors = Vec::new();
    let mut models = Vec::with_capacity(config.methods.len());
    let mut files = Vec::new();
    for (i, spec) in config.methods.iter().enumerate() {
        let place = format!("method `{}`, seed {seed}", spec.name);
        check_stop(&place)?;
        let t = Instant::now();
        let timing = spec.method.measures_latency();
        if let Some(pool) = &pool {
            pool.claim(Job::Method(i));
            if timing {
                pool.pause();
            }
        }
        let ctx = setup.context(spec, &data, &base, seed);
        let built = spec.method.build(&ctx).context(&place)?;
        // The base models the method uses, and what it trained itself.
        let mut train_cost = ctx.trained.into_inner();
        for cost in &base.costs[..spec.method.base_models_trained_from(&config.setting())] {
            train_cost += *cost;
        }
        if let Some(pool) = &pool {
            pool.done(Job::Method(i));
            if timing {
                pool.resume();
            }
        }
        let build_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let calibrate = config.calibrates(spec);
        let mut entries = (eval.evaluate(built.model.as_ref(), calibrate)).context(&place)?;
        let f32_entries = entries.len();
        // The method again in bf16: one entry, its own model in the cost rounds.
        let low = (config.eval.precision == Precision::Bf16)
            .then(|| built.model.in_precision(FloatDType::BF16));
        if let Some(low) = &low {
            let (mut result, curves) = (eval.evaluate(low.as_ref(), false))
                .context(format!("{place}, in bf16"))?
                .remove(0);
            result.precision = Some("bf16".into());
            result.variant = Some(Variant::Bf16);
            entries.push((result, curves));
        }
        let mut own = built.files;
        for sweep in &built.sweeps {
            let mut table = eval.sweep(sweep).context(&place)?;
            table.method = spec.name.clone();
            own.extend(table.files());
            sweeps.push(table);
        }
        if let Some(mut grid) = built.predictor {
            (grid.method, grid.seed) = (spec.name.clone(), seed);
            predictors.push(grid);
        }
        let eval_seconds = t.elapsed().as_secs_f64();
        for (result, entry_curves) in &mut entries {
            result.name_for(&spec.name);
            entry_curves.name = result.name.clone();
            result.kind = spec.kind.to_string();
            result.train_cost = Some(train_cost);
            result.extra = built.extra.clone();
            result
                .extra
                .insert("build_seconds".into(), build_seconds.into());
            result
                .extra
                .insert("eval_seconds".into(), eval_seconds.into());
            if !opts.quiet {
                eprintln!(
                    "  {:<16} acc {:.2}%  nll {:.4}  ece {:.4}  (build {:.1} s, eval {:.1} s)",
                    result.name,
                    100.0 * result.id.accuracy,
                    result.id.nll,
                    result.id.ece,
                    build_seconds,
                    eval_seconds
                );
            }
        }
        files.extend(
            (own.into_iter())
                .map(|(file, bytes)| (format!("{}-seed{seed}-{file}", spec.name), bytes)),
        );
        models.push((built.model, f32_entries));
        models.extend(low.map(|low| (low, 1)));
        for (result, entry_curves) in entries {
            results.push(result);
            curves.push(entry_curves);
        }
    }
    // Every job is done by now; timings must not share the CPU with a worker process.
    drop(pool);
    let refs: Vec<_> = models.iter().map(|(m, _)| m.as_ref()).collect();
    // The report's ratios are to the first `single` method (`report`'s baseline).
    let single = (config.methods.iter()).position(|m| m.kind == crate::report::BASELINE_KIND);
    check_stop(format_args!("timing the methods of seed {seed}"))?;
    let costs = eval.costs(&refs, single)?;
    // A calibrated entry costs what its method does (one division per logit).
    let per_entry = (models.iter().zip(costs)).flat_map(|((_, n), c)| std::iter::repeat_n(c, *n));
    for (result, cost) in results.iter_mut().zip(per_entry) {
        result.cost = cost;
    }
    Ok(SeedOutput {
        results,
        curves,
        sweeps,
        predictors,
        files,
    })
}

/// The resolved config as TOML (what `config.toml` and the workers get).
fn resolved_toml(config: &ExperimentConfig) -> Result<String> {
    toml::to_string_pretty(config)
        .map_err(|e| ExperimentError::invalid(format!("serialising the resolved config: {e}")))
}

/// Starts worker processes for the seed's independent trainings (base models after the first,
/// and every method that trains); the main process keeps base model 0.
fn start_pool(
    config: &ExperimentConfig,
    opts: &RunOptions,
    workers: &Workers,
    seed: u64,
) -> Result<Pool> {
    let text = resolved_toml(config)?;
    let file = opts.cache_root.join(format!(
        "worker-config-{}.toml",
        fingerprint(&serde_json::Value::String(text.clone()))
    ));
    std::fs::create_dir_all(&opts.cache_root).context(opts.cache_root.display())?;
    data::atomic_write(&file, text.as_bytes())?;
    let mut jobs: Vec<(Job, usize)> = (0..needed_base_models(config))
        .map(|k| (Job::Base(k), 0))
        .collect();
    for (i, spec) in config.methods.iter().enumerate() {
        if spec.method.trains() {
            jobs.push((Job::Method(i), spec.method.base_models()));
        }
    }
    let processes = workers.processes;
    let (workers, data, cache) = (
        workers.clone(),
        opts.data_root.clone(),
        opts.cache_root.clone(),
    );
    let spawn: Arc<Spawn> =
        Arc::new(move |job| command(&workers, &file, seed, job, &data, &cache).spawn());
    Ok(Pool::start(jobs, &[Job::Base(0)], processes, spawn))
}
