//! What every seed of a run shares ([`Setup`]: the device, the loaded sets, the base-model
//! recipe), where a run reads and writes ([`RunOptions`]), and the worker processes a seed starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::tensor::Device;

use crate::base::{Base, BaseSpec, base_models, train_base};
use crate::cache::{Trainer, fingerprint};
use crate::config::ExperimentConfig;
use crate::error::{ErrorContext as _, ExperimentError, Result, stop_requested};
use crate::methods::{Context, MethodSpec};
use crate::plan::{mark_cached, plan, seed_jobs};
use crate::sets::{Loaded, SeedData, load};
use crate::worker_spec::WorkerSpec;
use runtime::workers::{Job, Pool, Spawn, Workers, command};

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
    /// Train nothing: a training the cache does not hold (whole) is an error naming it.
    pub no_train: bool,
}

/// What every seed of a run shares: the device, the loaded sets, the base-model recipe.
pub(super) struct Setup<'a> {
    pub(super) config: &'a ExperimentConfig,
    pub(super) device: Device,
    pub(super) loaded: Loaded,
    pub(super) spec: BaseSpec,
    pub(super) trainer: Trainer,
}

impl<'a> Setup<'a> {
    pub(super) fn new(config: &'a ExperimentConfig, opts: &RunOptions) -> Result<Self> {
        let first = config.experiment.devices.first().copied();
        let device = config.experiment.backend.device_at(first)?;
        let loaded = load(config, &opts.data_root)?;
        let spec = BaseSpec::new(config, &opts.data_root, &loaded.train_full)?;
        let mut trainer = Trainer::new(
            opts.cache_root.clone(),
            opts.quiet,
            config.experiment.name.clone(),
        );
        trainer.no_train = opts.no_train;
        // Alone on its cores only when the run starts no workers (a worker, whose options
        // have none, trains beside the main process).
        trainer.spin = opts.workers.as_ref().is_some_and(|w| w.processes == 0);
        Ok(Self {
            config,
            device,
            loaded,
            spec,
            trainer,
        })
    }

    pub(super) fn seed_data(&self, seed: u64) -> Result<SeedData> {
        SeedData::new(self.config, &self.loaded, seed, self.spec.tokenizer())
    }

    pub(super) fn base(
        &self,
        data: &SeedData,
        seed: u64,
        n: usize,
        pool: Option<&Pool>,
    ) -> Result<Base> {
        let (config, spec) = (self.config, &self.spec);
        base_models(
            config,
            spec,
            data.splits(),
            &self.trainer,
            seed,
            n,
            &self.device,
            pool,
        )
    }

    /// What method `spec` sees while it is built.
    pub(super) fn context<'s>(
        &'s self,
        spec: &'s MethodSpec,
        data: &'s SeedData,
        base: &'s Base,
        seed: u64,
    ) -> Context<'s> {
        Context {
            name: &spec.name,
            kind: spec.kind,
            params: &spec.params,
            train_overrides: &spec.train,
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

impl Setup<'_> {
    /// With --no-train: every base model of every seed in the cache, or an error naming all that
    /// are not (a method's trainings, named after their base model, are checked as they come).
    pub(super) fn check_base_models_cached(&self, cache_root: &Path) -> Result<()> {
        if self.spec.is_zero_shot() {
            return Ok(()); // Never trained, never cached.
        }
        let mut jobs = plan(self.config);
        mark_cached(&mut jobs, self.config, &self.spec, cache_root);
        let missing: Vec<String> = (jobs.iter())
            .filter(|j| j.cached == Some(false))
            .map(|j| {
                format!(
                    "{} ({})",
                    j.what,
                    j.fingerprint.as_deref().unwrap_or_default()
                )
            })
            .collect();
        match missing.is_empty() {
            true => Ok(()),
            false => Err(ExperimentError::invalid(format!(
                "--no-train: {} base model(s) are not in the cache {}: {}",
                missing.len(),
                cache_root.display(),
                missing.join(", ")
            ))),
        }
    }

    pub(super) fn run_job(&self, seed: u64, job: Job) -> Result<()> {
        let config = self.config;
        let data = self.seed_data(seed)?;
        match job {
            Job::Base(k) => {
                let (trainer, device) = (&self.trainer, &self.device);
                train_base(config, trainer, &self.spec, data.splits(), seed, k, device)?;
            }
            Job::Method(i) => {
                let spec = config.methods.get(i).ok_or_else(|| {
                    ExperimentError::invalid(format!(
                        "job method:{i}: the config has {} methods",
                        config.methods.len()
                    ))
                })?;
                if let Some(base) = &spec.base {
                    return Err(ExperimentError::invalid(format!(
                        "job method:{i}: method `{}` is built on `{base}` by the main process, \
                         not by a worker",
                        spec.name
                    )));
                }
                let base = self.base(&data, seed, spec.method.base_models(), None)?;
                spec.method.build(&self.context(spec, &data, &base, seed))?;
            }
        }
        Ok(())
    }
}

/// The resolved config as TOML (what `config.toml` and the workers get).
pub(super) fn resolved_toml(config: &ExperimentConfig) -> Result<String> {
    toml::to_string_pretty(config).context("serialising the resolved config")
}

/// The device of worker `slot` (0-based) with `devices`: the one after the main process's, in
/// order; none (the default device) without a list.
fn worker_device(devices: &[usize], slot: usize) -> Option<usize> {
    devices.get(slot + 1).copied()
}

/// Starts worker processes for the seed's independent trainings (base models after the first,
/// and every method that trains); the main process keeps base model 0.
pub(super) fn start_pool(
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
    let jobs = seed_jobs(config);
    // With several devices: the main process on the first, a worker on each other one.
    let devices = config.experiment.devices.clone();
    let processes = match devices.len() {
        0 | 1 => workers.processes,
        n => n - 1,
    };
    let (workers, data, cache) = (
        workers.clone(),
        opts.data_root.clone(),
        opts.cache_root.clone(),
    );
    let spawn: Arc<Spawn> = Arc::new(move |job, slot| {
        let spec = WorkerSpec {
            config: file.clone(),
            seed,
            job,
            data_root: data.clone(),
            cache_root: cache.clone(),
            quiet: workers.quiet,
            device: worker_device(&devices, slot),
        };
        command(&workers.exe, &spec).spawn()
    });
    Ok(Pool::start(
        jobs,
        &[Job::Base(0)],
        processes,
        spawn,
        stop_requested,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn workers_take_the_devices_after_the_main_process_s() {
        let devices = [3, 5, 7];
        let placed: Vec<Option<usize>> = (0..3)
            .map(|slot| super::worker_device(&devices, slot))
            .collect();
        assert_eq!(placed, [Some(5), Some(7), None]);
        assert_eq!(super::worker_device(&[], 0), None);
    }
}
