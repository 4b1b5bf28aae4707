//! One seed of a run: its data and base models, then each method built, evaluated (with its
//! bf16 twin and sweeps) and costed, the timings taken with no worker process beside them.

use std::time::Instant;

use burn::tensor::FloatDType;
use seam::EnsembleModel;
use uq_metrics::OodScore;

use super::setup::{RunOptions, Setup, start_pool};
use crate::base::{Base, needed_base_models};
use crate::config::ExperimentConfig;
use crate::config::Precision;
use crate::error::{ErrorContext as _, ExperimentError, Result, check_stop};
use crate::eval::{Entry, Evaluator};
use crate::methods::{Built, MethodSpec, Sweep};
use crate::sets::SeedData;
use report::Extra;
use report::curves::{MethodCurves, PredictorGrid, SweepTable};
use report::summary::{MethodResult, TrainCost, Variant};
use report::{Identity, Measured};
use runtime::workers::{Job, Pool};

/// What one seed gives the run.
pub(super) struct SeedOutput {
    /// Built once the seed's models are timed, from `pending`.
    pub results: Vec<MethodResult>,
    pending: Vec<Pending>,
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
        results: Vec::new(),
        pending: Vec::with_capacity(config.methods.len()),
        curves: Vec::with_capacity(config.methods.len()),
        sweeps: Vec::new(),
        predictors: Vec::new(),
        files: Vec::new(),
    };
    let models = run.methods(&base, pool.as_ref(), &mut out)?;
    // Every job is done by now; timings must not share the CPU with a worker process.
    drop(pool);
    let refs: Vec<_> = models.iter().map(|(m, _)| m.as_ref()).collect();
    // Latency ratios are paired with the baseline's model, as the report's ratios are to it.
    let baseline = (config.methods.iter()).position(|m| m.name == config.eval.baseline());
    check_stop(format_args!("timing the methods of seed {seed}"))?;
    let costs = run.eval.costs(&refs, baseline)?;
    // A calibrated entry costs what its method does (one division per logit).
    let per_entry = (models.iter().zip(costs)).flat_map(|((_, n), c)| std::iter::repeat_n(c, *n));
    out.results = (std::mem::take(&mut out.pending).into_iter().zip(per_entry))
        .map(|(p, cost)| MethodResult::new(p.who, p.measured, cost, p.extra))
        .collect();
    Ok(out)
}

/// What each method of one seed is built and evaluated with.
struct SeedRun<'a> {
    setup: &'a Setup<'a>,
    quiet: bool,
    seed: u64,
    data: &'a SeedData,
    eval: Evaluator<'a>,
}

/// Models to time, each with the number of entries that share its cost.
type Timed = Vec<(Box<dyn EnsembleModel>, usize)>;

impl SeedRun<'_> {
    /// Every method in the file's order, each on the seed's `base` models or on the model of the
    /// method it names as its `base` (declared earlier); returns the models to time.
    fn methods(&self, base: &Base, pool: Option<&Pool>, out: &mut SeedOutput) -> Result<Timed> {
        let config = self.setup.config;
        let mut models = Vec::new();
        // What each method offers the methods built on it.
        let mut offered: Vec<Option<Base>> = Vec::with_capacity(config.methods.len());
        for (i, spec) in config.methods.iter().enumerate() {
            let on = match &spec.base {
                Some(name) => on_method(config, &offered, name, &spec.name)?,
                None => base,
            };
            let (own, offers) = self.method(i, spec, on, pool, out)?;
            models.extend(own);
            offered.push(offers);
        }
        Ok(models)
    }

    /// Method `i`: built, evaluated (and in bf16 when asked), its sweeps and files added to
    /// `out`; returns the models to time, each with the entries that share its cost.
    fn method(
        &self,
        i: usize,
        spec: &MethodSpec,
        on: &Base,
        pool: Option<&Pool>,
        out: &mut SeedOutput,
    ) -> Result<(Timed, Option<Base>)> {
        let (config, seed) = (self.setup.config, self.seed);
        let place = format!("method `{}`, seed {seed}", spec.name);
        check_stop(&place)?;
        let t = Instant::now();
        let (built, train_cost) = self.build(i, spec, on, pool, &place)?;
        let offers = (built.base.clone()).map(|model| on.of_method(spec, model, train_cost));
        let build_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut evaluated = (self.eval)
            .evaluate(built.model.as_ref(), None, config.calibrates(spec))
            .context(&place)?;
        let f32_entries = evaluated.entries.len();
        // The method again in bf16: one entry, its own model in the cost rounds.
        let low = (config.eval.precision == Precision::Bf16)
            .then(|| built.model.in_precision(FloatDType::BF16));
        if let Some(low) = &low {
            let bf16 = (self.eval.evaluate(low.as_ref(), Some(Variant::Bf16), false))
                .context(format!("{place}, in bf16"))?;
            evaluated.entries.extend(bf16.entries);
        }
        let Built {
            model,
            outputs,
            files: mut own,
            sweeps,
            predictor,
            base: _,
        } = built;
        own.extend(evaluated.files);
        own.extend(self.sweeps(spec, &sweeps, &place, out)?);
        if let Some(mut grid) = predictor {
            (grid.method, grid.seed) = (spec.name.clone(), seed);
            out.predictors.push(grid);
        }
        let extra = Extra {
            build_seconds: Some(build_seconds),
            eval_seconds: Some(t.elapsed().as_secs_f64()),
            outputs,
        };
        for Entry {
            variant,
            measured,
            mut curves,
        } in evaluated.entries
        {
            let who = Identity {
                method: spec.name.clone(),
                variant,
                kind: spec.kind.to_string(),
                members: model.members(),
                seed,
                train_cost: Some(train_cost),
            };
            curves.name = Variant::name(variant, &spec.name);
            self.say(&curves.name, &measured, &extra);
            out.pending.push(Pending {
                who,
                measured,
                extra: extra.clone(),
            });
            out.curves.push(curves);
        }
        out.files.extend(
            (own.into_iter())
                .map(|(file, bytes)| (format!("{}-seed{seed}-{file}", spec.name), bytes)),
        );
        let mut models = vec![(model, f32_entries)];
        models.extend(low.map(|low| (low, 1)));
        Ok((models, offers))
    }

    /// The tables of a method's sweeps, kept in `out`; returns their files.
    fn sweeps(
        &self,
        spec: &MethodSpec,
        sweeps: &[Sweep],
        place: &str,
        out: &mut SeedOutput,
    ) -> Result<Vec<(String, Vec<u8>)>> {
        let mut files = Vec::new();
        for sweep in sweeps {
            let mut table = self.eval.sweep(sweep).context(place)?;
            table.method = spec.name.clone();
            files.extend(table.files());
            out.sweeps.push(table);
        }
        Ok(files)
    }

    /// Builds method `i` on `on` (the worker pool told, and paused while the method times
    /// itself), with its training cost: what it trained and the base models it was trained from.
    fn build(
        &self,
        i: usize,
        spec: &MethodSpec,
        on: &Base,
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
        let ctx = self.setup.context(spec, self.data, on, self.seed);
        let built = spec.method.build(&ctx).context(place)?;
        let mut train_cost = ctx.trained.into_inner();
        let setting = self.setup.config.setting();
        for cost in &on.costs[..spec.method.base_models_trained_from(&setting)] {
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

    /// A line per entry evaluated, unless the run is quiet.
    fn say(&self, name: &str, m: &Measured, extra: &Extra) {
        if !self.quiet {
            let seconds = |s: Option<f64>| s.unwrap_or(f64::NAN);
            eprintln!(
                "  {:<16} acc {:.2}%  nll {:.4}  ece {:.4}  (build {:.1} s, eval {:.1} s)",
                name,
                100.0 * m.id.accuracy,
                m.id.nll,
                m.id.ece,
                seconds(extra.build_seconds),
                seconds(extra.eval_seconds)
            );
        }
    }
}

/// An entry evaluated, waiting for its cost: the seed's models are timed together once every
/// method is built.
struct Pending {
    who: Identity,
    measured: Measured,
    extra: Extra,
}

/// The base method `name` offers to `method`, built before it (the config checks the order and
/// that its kind can offer one).
fn on_method<'b>(
    config: &ExperimentConfig,
    offered: &'b [Option<Base>],
    name: &str,
    method: &str,
) -> Result<&'b Base> {
    let j = config.methods.iter().position(|m| m.name == name);
    match j.and_then(|j| offered.get(j)) {
        Some(Some(base)) => Ok(base),
        _ => Err(ExperimentError::invalid(format!(
            "method `{method}`: its base `{name}` built no model to build on (a plan that \
             empties a block of its units has no physical form: it is applied through gates)"
        ))),
    }
}
