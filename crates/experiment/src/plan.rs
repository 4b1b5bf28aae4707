//! A run as a plan of training jobs (`uqformer plan`), and a shard's share of it (`uqformer run
//! --shard K/N`, trained by `runner::run_shard`): on a cluster, N array tasks each train their
//! share into one shared model cache (its folder locks keep two tasks off one training), then a
//! plain run evaluates from the cache.
//!
//! The jobs are those the worker processes run: per seed, each base model (`base:K`) and each
//! method that trains (`method:I`, which needs the seed's first `base_models()` base models).
//! The plan depends on the config alone, so every machine computes the same one.

use std::path::Path;
use std::str::FromStr;

use runtime::shard::{Shard, deal};
use runtime::workers::Job;
use serde::Serialize;
use train::Checkpoint;

use crate::base::{BaseSpec, base_identity, needed_base_models};
use crate::cache::{epochs_done, fingerprint};
use crate::config::ExperimentConfig;
use crate::error::{ExperimentError, Result};
use crate::sets::load;

/// Which jobs wait for which: base models first, then the methods built on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Base,
    Method,
}

impl FromStr for Stage {
    type Err = ExperimentError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "base" => Ok(Self::Base),
            "method" => Ok(Self::Method),
            other => Err(ExperimentError::invalid(format!(
                "--stage {other}: expected `base` or `method`"
            ))),
        }
    }
}

/// One training job of the plan: a line of `uqformer plan`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedJob {
    /// `seed<S>/base:<K>` or `seed<S>/method:<I>`.
    pub id: String,
    pub seed: u64,
    pub job: Job,
    pub stage: Stage,
    /// The ids of the jobs whose models it reads (it trains them itself if they are missing).
    pub needs: Vec<String>,
    /// In words, as progress lines name it.
    pub what: String,
    /// A rough cost in trainings of the base recipe: 1 for a base model (0 for a zero-shot
    /// classifier, never trained), a method's member count for a method (each member is one
    /// fine-tune or training; HetDPT's searches are not counted).
    pub cost: f64,
    /// A base model's cache folder ([`with_cache`]); none for a method, whose trainings' names
    /// depend on the models they start from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Whether the cache holds the base model whole ([`with_cache`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
}

/// A seed's training jobs, base models before methods, each with how many of the seed's base
/// models it needs first (the same list for every seed: what the worker pool hands out).
pub(crate) fn seed_jobs(config: &ExperimentConfig) -> Vec<(Job, usize)> {
    let bases = (0..needed_base_models(config)).map(|k| (Job::Base(k), 0));
    let methods = (config.methods.iter().enumerate())
        // A method built on another method's model is built by the main process, in order.
        .filter(|(_, spec)| spec.method.trains() && spec.base.is_none())
        .map(|(i, spec)| (Job::Method(i), spec.method.base_models()));
    bases.chain(methods).collect()
}

/// A job's id in the plan: `seed<S>/base:<K>` or `seed<S>/method:<I>`.
pub(crate) fn job_id(seed: u64, job: Job) -> String {
    format!("seed{seed}/{job}")
}

/// The run's jobs, seed by seed, base models before methods.
pub fn plan(config: &ExperimentConfig) -> Vec<PlannedJob> {
    let mut jobs = Vec::new();
    for &seed in &config.experiment.seeds {
        for (job, needs) in seed_jobs(config) {
            let (stage, what, cost) = match job {
                // A zero-shot classifier is made from its prompts, nothing trained.
                Job::Base(k) if config.backbone.zero_shot.is_some() => {
                    let what = format!("seed {seed} model {} (zero-shot, not trained)", k + 1);
                    (Stage::Base, what, 0.0)
                }
                Job::Base(k) => (Stage::Base, format!("seed {seed} model {}", k + 1), 1.0),
                Job::Method(i) => {
                    let spec = &config.methods[i];
                    let what = format!("seed {seed} method {} ({})", spec.name, spec.kind);
                    (Stage::Method, what, spec.method.members() as f64)
                }
            };
            jobs.push(PlannedJob {
                id: job_id(seed, job),
                seed,
                job,
                stage,
                needs: (0..needs).map(|k| job_id(seed, Job::Base(k))).collect(),
                what,
                cost,
                fingerprint: None,
                cached: None,
            });
        }
    }
    jobs
}

/// The plan with each base model's cache folder and whether `cache_root` holds it whole: the
/// data are loaded (a base model's name depends on them), nothing is trained.
pub fn with_cache(
    config: &ExperimentConfig,
    data_root: &Path,
    cache_root: &Path,
) -> Result<Vec<PlannedJob>> {
    let loaded = load(config, data_root)?;
    let spec = BaseSpec::new(config, data_root, &loaded.train_full)?;
    let mut jobs = plan(config);
    mark_cached(&mut jobs, config, &spec, cache_root);
    Ok(jobs)
}

/// Fills each base job's `fingerprint` and `cached` for the base recipe `spec`.
pub(crate) fn mark_cached(
    jobs: &mut [PlannedJob],
    config: &ExperimentConfig,
    spec: &BaseSpec,
    cache_root: &Path,
) {
    for job in jobs {
        if let Job::Base(k) = job.job {
            let name = fingerprint(&base_identity(config, spec, job.seed, k).0);
            let checkpoint = Checkpoint::new(cache_root.join(&name), name.clone());
            // A zero-shot classifier is never trained, so never missing.
            job.cached =
                Some(spec.is_zero_shot() || epochs_done(&checkpoint) >= config.train.epochs);
            job.fingerprint = Some(name);
        }
    }
}

/// The jobs of `plan` that shard `shard` runs, in plan order. Each stage is dealt out on its own
/// (stages run one after the other, as arrays of their own on a cluster): its jobs by cost, the
/// dearest first, each to the shard with the least cost of the stage so far (ties: the lower
/// shard, the earlier job), so the shards' totals in a stage differ by at most one job's cost and
/// every machine deals alike.
pub fn share(plan: &[PlannedJob], shard: Shard) -> Vec<&PlannedJob> {
    let mut mine = Vec::new();
    for stage in [Stage::Base, Stage::Method] {
        let jobs: Vec<usize> = (0..plan.len())
            .filter(|&i| plan[i].stage == stage)
            .collect();
        let costs: Vec<f64> = jobs.iter().map(|&i| plan[i].cost).collect();
        mine.extend(deal(&costs, shard).into_iter().map(|k| jobs[k]));
    }
    mine.sort_unstable();
    mine.into_iter().map(|i| &plan[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, cost: f64, stage: Stage) -> PlannedJob {
        PlannedJob {
            id: id.into(),
            seed: 0,
            job: Job::Base(0),
            stage,
            needs: Vec::new(),
            what: String::new(),
            cost,
            fingerprint: None,
            cached: None,
        }
    }

    #[test]
    fn shares_cover_every_job_once_and_balance_each_stage() {
        // Three base models of cost 1, then methods of costs 4, 3, 3, 3, 3, 3 (the quick start).
        let costs = [1.0, 1.0, 1.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0];
        let plan: Vec<PlannedJob> = (costs.iter().enumerate())
            .map(|(i, &c)| {
                let stage = if i < 3 { Stage::Base } else { Stage::Method };
                job(&format!("j{i}"), c, stage)
            })
            .collect();
        for count in 1..=4 {
            let shares: Vec<Vec<&PlannedJob>> = (0..count)
                .map(|index| share(&plan, Shard { index, count }))
                .collect();
            let mut all: Vec<&str> = shares.iter().flatten().map(|j| j.id.as_str()).collect();
            all.sort_unstable();
            let want: Vec<String> = (0..costs.len()).map(|i| format!("j{i}")).collect();
            assert_eq!(all, want, "{count} shards");
            for (stage, dearest) in [(Stage::Base, 1.0), (Stage::Method, 4.0)] {
                let loads: Vec<f64> = (shares.iter())
                    .map(|s| s.iter().filter(|j| j.stage == stage).map(|j| j.cost).sum())
                    .collect();
                let spread = loads.iter().cloned().fold(f64::MIN, f64::max)
                    - loads.iter().cloned().fold(f64::MAX, f64::min);
                assert!(spread <= dearest, "{count} shards, {stage:?}: {loads:?}");
            }
            for s in &shares {
                assert!(s.windows(2).all(|w| w[0].id < w[1].id), "plan order");
            }
        }
        // Two shards: base models 2 and 1 (not 1 and 2 after the methods were dealt), methods
        // 4 + 3 + 3 against 3 + 3 + 3.
        let two: Vec<Vec<&str>> = (0..2)
            .map(|index| {
                let mine = share(&plan, Shard { index, count: 2 });
                mine.iter().map(|j| j.id.as_str()).collect()
            })
            .collect();
        assert_eq!(two[0], ["j0", "j2", "j3", "j6", "j8"]);
        assert_eq!(two[1], ["j1", "j4", "j5", "j7"]);
    }
}
