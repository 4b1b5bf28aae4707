//! One seed of a run: its data and base models, then each method built, evaluated (with its
//! bf16 twin and sweeps) and costed, the timings taken with no worker process beside them.

use std::time::Instant;

use burn::tensor::FloatDType;
use seam::EnsembleModel;
use uq_metrics::OodScore;

use super::setup::{RunOptions, Setup, start_pool};
use crate::base::{Base, needed_base_models};
use crate::config::Precision;
use crate::error::{ErrorContext as _, Result, check_stop};
use crate::eval::Evaluator;
use crate::methods::{Built, MethodSpec};
use crate::sets::SeedData;
use crate::workers::{Job, Pool};
use report::curves::{MethodCurves, PredictorGrid, SweepTable};
use report::summary::{MethodResult, TrainCost, Variant};

/// What one seed gives the run.
pub(super) struct SeedOutput {
    pub results: Vec<MethodResult>,
    pub curves: Vec<MethodCurves>,
    pub sweeps: Vec<SweepTable>,
    pub predictors: Vec<PredictorGrid>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// One seed: its data, its base models, then every method built, evaluated and costed.
pub(super) fn run_seed(
    setup: &Setup<'_>,
    opts: &RunOptions,
    scores: &[OodScore],
    seed: u64,
) -> Result<SeedOutput> {
    let config = setup.config;
    let started = Instant::now();
    let data = setup.seed_data(seed)?;
    // With --no-train there is nothing to hand out (a worker would train what is missing).
    let pool = match &opts.workers {
        Some(w) if w.processes > 0 && !opts.no_train => {
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
    let run = SeedRun {
        setup,
        quiet: opts.quiet,
        seed,
        data: &data,
        base: &base,
        eval: Evaluator {
            sets: &data.sets,
            val: &data.val,
            train: &data.train,
            prep: &data.prep,
            batch: config.data.eval_batch_size,
            scores: scores.to_vec(),
            groups: &config.data.ood_groups,
            conformal: (config.eval.conformal_score, config.eval.conformal_alpha),
            timing_rounds: config.eval.timing_rounds,
            save_predictions: config.eval.save_predictions,
            seed,
            device: &setup.device,
        },
    };
    let mut out = SeedOutput {
        results: Vec::with_capacity(config.methods.len()),
        curves: Vec::with_capacity(config.methods.len()),
        sweeps: Vec::new(),
        predictors: Vec::new(),
        files: Vec::new(),
    };
    // Each model to time, with the number of entries that share its cost.
    let mut models: Vec<(Box<dyn EnsembleModel>, usize)> = Vec::new();
    for (i, spec) in config.methods.iter().enumerate() {
        models.extend(run.method(i, spec, pool.as_ref(), &mut out)?);
    }
    // Every job is done by now; timings must not share the CPU with a worker process.
    drop(pool);
    let refs: Vec<_> = models.iter().map(|(m, _)| m.as_ref()).collect();
    // The report's ratios are to the first `single` method (`report`'s baseline).
    let single = (config.methods.iter()).position(|m| m.kind == report::BASELINE_KIND);
    check_stop(format_args!("timing the methods of seed {seed}"))?;
    let costs = run.eval.costs(&refs, single)?;
    // A calibrated entry costs what its method does (one division per logit).
    let per_entry = (models.iter().zip(costs)).flat_map(|((_, n), c)| std::iter::repeat_n(c, *n));
    for (result, cost) in out.results.iter_mut().zip(per_entry) {
        result.cost = cost;
    }
    Ok(out)
}

/// What each method of one seed is built and evaluated with.
struct SeedRun<'a> {
    setup: &'a Setup<'a>,
    quiet: bool,
    seed: u64,
    data: &'a SeedData,
    base: &'a Base,
    eval: Evaluator<'a>,
}

impl SeedRun<'_> {
    /// Method `i`: built, evaluated (and in bf16 when asked), its sweeps and files added to
    /// `out`; returns the models to time, each with the entries that share its cost.
    fn method(
        &self,
        i: usize,
        spec: &MethodSpec,
        pool: Option<&Pool>,
        out: &mut SeedOutput,
    ) -> Result<Vec<(Box<dyn EnsembleModel>, usize)>> {
        let (config, seed) = (self.setup.config, self.seed);
        let place = format!("method `{}`, seed {seed}", spec.name);
        check_stop(&place)?;
        let t = Instant::now();
        let (mut built, train_cost) = self.build(i, spec, pool, &place)?;
        let build_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let evaluated = (self.eval)
            .evaluate(built.model.as_ref(), config.calibrates(spec))
            .context(&place)?;
        let mut entries = evaluated.entries;
        let f32_entries = entries.len();
        // The method again in bf16: one entry, its own model in the cost rounds.
        let low = (config.eval.precision == Precision::Bf16)
            .then(|| built.model.in_precision(FloatDType::BF16));
        if let Some(low) = &low {
            let (mut result, curves) = (self.eval.evaluate(low.as_ref(), false))
                .context(format!("{place}, in bf16"))?
                .entries
                .remove(0);
            result.precision = Some("bf16".into());
            result.variant = Some(Variant::Bf16);
            entries.push((result, curves));
        }
        let mut own = std::mem::take(&mut built.files);
        own.extend(evaluated.files);
        for sweep in &built.sweeps {
            let mut table = self.eval.sweep(sweep).context(&place)?;
            table.method = spec.name.clone();
            own.extend(table.files());
            out.sweeps.push(table);
        }
        if let Some(mut grid) = built.predictor.take() {
            (grid.method, grid.seed) = (spec.name.clone(), seed);
            out.predictors.push(grid);
        }
        let seconds = (build_seconds, t.elapsed().as_secs_f64());
        for (result, entry_curves) in &mut entries {
            self.label(result, spec, &built, train_cost, seconds);
            entry_curves.name = result.name.clone();
        }
        out.files.extend(
            (own.into_iter())
                .map(|(file, bytes)| (format!("{}-seed{seed}-{file}", spec.name), bytes)),
        );
        for (result, entry_curves) in entries {
            out.results.push(result);
            out.curves.push(entry_curves);
        }
        let mut models = vec![(built.model, f32_entries)];
        models.extend(low.map(|low| (low, 1)));
        Ok(models)
    }

    /// Builds method `i` (the worker pool told, and paused while the method times itself), with
    /// its training cost: what it trained and the base models it was trained from.
    fn build(
        &self,
        i: usize,
        spec: &MethodSpec,
        pool: Option<&Pool>,
        place: &str,
    ) -> Result<(Built, TrainCost)> {
        let timing = spec.method.measures_latency();
        if let Some(pool) = pool {
            pool.claim(Job::Method(i));
            if timing {
                pool.pause();
            }
        }
        let ctx = self.setup.context(spec, self.data, self.base, self.seed);
        let built = spec.method.build(&ctx).context(place)?;
        let mut train_cost = ctx.trained.into_inner();
        let setting = self.setup.config.setting();
        for cost in &self.base.costs[..spec.method.base_models_trained_from(&setting)] {
            train_cost += *cost;
        }
        if let Some(pool) = pool {
            pool.done(Job::Method(i));
            if timing {
                pool.resume();
            }
        }
        Ok((built, train_cost))
    }

    /// Names an entry (method and variant) and fills what the runner knows of it: kind,
    /// training cost, the method's extras and its build and evaluation seconds.
    fn label(
        &self,
        result: &mut MethodResult,
        spec: &MethodSpec,
        built: &Built,
        train_cost: TrainCost,
        (build_seconds, eval_seconds): (f64, f64),
    ) {
        result.name_for(&spec.name);
        result.kind = spec.kind.to_string();
        result.train_cost = Some(train_cost);
        result.extra = built.extra.clone();
        (result.extra).insert("build_seconds".into(), build_seconds.into());
        (result.extra).insert("eval_seconds".into(), eval_seconds.into());
        if !self.quiet {
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
}
