//! The runner: for each seed, train (or reuse from the cache) the base model and any extra
//! members, build every method, evaluate it on the ID, OOD and shifted sets, measure its cost,
//! then write the run's results.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use data::{
    Catalog, Corruption, ImageDataset, Normalization, SubsetSize, corrupt, stratified_subset,
    train_val_split,
};
use ensembles::EnsembleModel;
use train::{ImageData, mix};
use uq_metrics::Score;

use crate::config::ExperimentConfig;
use crate::device::device;
use crate::eval::{EvalSets, cost, id_metrics, ood_metrics, predict, shift_metrics};
use crate::methods::context::{Trainer, fingerprint};
use crate::methods::{Context, MethodSpec};
use crate::results::{Cost, MethodResult, Summary, write_run};
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

/// The data sets every seed draws from, loaded once.
struct Loaded {
    train_full: ImageDataset,
    test: ImageDataset,
    ood: Vec<ImageDataset>,
}

fn load(config: &ExperimentConfig, opts: &RunOptions) -> Result<Loaded, String> {
    let catalog = Catalog::new(&opts.data_root);
    let splits = catalog
        .load_images(&config.data.dataset)
        .map_err(|e| e.to_string())?;
    let train_full = splits.train.ok_or_else(|| {
        format!(
            "data.dataset: `{}` has no training split",
            config.data.dataset
        )
    })?;
    let ood = config
        .data
        .ood
        .iter()
        .map(|name| {
            let set = catalog.load_images(name).map_err(|e| e.to_string())?.test;
            if set.dims != train_full.dims {
                return Err(format!(
                    "data.ood: `{name}` has images {:?}, the training set {:?}",
                    set.dims, train_full.dims
                ));
            }
            Ok(set)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Loaded {
        train_full,
        test: splits.test,
        ood,
    })
}

/// One seed's splits, normalisation, evaluation sets and backbone configuration.
struct SeedData {
    train: ImageDataset,
    val: ImageDataset,
    norm: Normalization,
    sets: EvalSets,
    vit: ViTConfig,
}

impl SeedData {
    fn new(config: &ExperimentConfig, loaded: &Loaded, seed: u64) -> Result<Self, String> {
        let (train, val, norm, sets) =
            prepare(config, &loaded.train_full, &loaded.test, &loaded.ood, seed)?;
        let vit = vit_config(config, &train)?;
        Ok(Self {
            train,
            val,
            norm,
            sets,
            vit,
        })
    }

    fn train(&self) -> ImageData<'_> {
        ImageData {
            set: &self.train,
            norm: &self.norm,
        }
    }

    /// What a method sees while it is built.
    fn context<'a>(
        &'a self,
        spec: &'a MethodSpec,
        config: &'a ExperimentConfig,
        base: &'a Base,
        seed: u64,
        device: &'a Device,
        trainer: &'a Trainer,
    ) -> Context<'a> {
        Context {
            spec,
            config,
            vit: &self.vit,
            base: &base.models,
            train: self.train(),
            val: ImageData {
                set: &self.val,
                norm: &self.norm,
            },
            sets: &self.sets,
            seed,
            device,
            trainer,
            base_fingerprint: &base.fingerprint,
        }
    }
}

/// The seed's trained base models and the cache fingerprint of the first.
struct Base {
    models: Vec<VisionTransformer>,
    fingerprint: String,
}

/// Trains (or loads) base models `0..n` of the seed; with a pool, each is claimed from it first.
fn base_models(
    config: &ExperimentConfig,
    data: &SeedData,
    trainer: &Trainer,
    seed: u64,
    n: usize,
    device: &Device,
    pool: Option<&Pool>,
) -> Result<Base, String> {
    let mut base = Base {
        models: Vec::with_capacity(n),
        fingerprint: String::new(),
    };
    for k in 0..n {
        if let Some(pool) = pool {
            pool.claim(Job::Base(k));
        }
        let (model, fingerprint) =
            train_base(config, trainer, &data.vit, data.train(), seed, k, device)?;
        if let Some(pool) = pool {
            pool.done(Job::Base(k));
        }
        if k == 0 {
            base.fingerprint = fingerprint;
        }
        base.models.push(model);
    }
    Ok(base)
}

/// The base models the experiment's methods need (the largest Deep Ensemble, else 1).
fn needed_base_models(config: &ExperimentConfig) -> usize {
    config
        .methods
        .iter()
        .map(|m| m.method.base_models())
        .max()
        .unwrap_or(1)
}

/// Runs one job of one seed, as a worker process does: its trained models land in the cache.
pub fn run_job(
    config: &ExperimentConfig,
    opts: &RunOptions,
    seed: u64,
    job: Job,
) -> Result<(), String> {
    let device = device(&config.experiment.backend)?;
    let data = SeedData::new(config, &load(config, opts)?, seed)?;
    let trainer = trainer(opts);
    match job {
        Job::Base(k) => {
            train_base(config, &trainer, &data.vit, data.train(), seed, k, &device)?;
        }
        Job::Method(i) => {
            let spec = config.methods.get(i).ok_or_else(|| {
                format!(
                    "job method:{i}: the config has {} methods",
                    config.methods.len()
                )
            })?;
            let base = base_models(
                config,
                &data,
                &trainer,
                seed,
                spec.method.base_models(),
                &device,
                None,
            )?;
            spec.method
                .build(&data.context(spec, config, &base, seed, &device, &trainer))?;
        }
    }
    Ok(())
}

/// Starts worker processes for the seed's independent trainings (base models after the first,
/// and every method that trains); the main process keeps base model 0.
fn start_pool(
    config: &ExperimentConfig,
    opts: &RunOptions,
    workers: &Workers,
    seed: u64,
) -> Result<Pool, String> {
    let text = toml::to_string_pretty(config)
        .map_err(|e| format!("serialising the resolved config: {e}"))?;
    let file = opts.cache_root.join(format!(
        "worker-config-{}.toml",
        fingerprint(&serde_json::Value::String(text.clone()))
    ));
    std::fs::create_dir_all(&opts.cache_root)
        .map_err(|e| format!("{}: {e}", opts.cache_root.display()))?;
    train::atomic_write(&file, text.as_bytes()).map_err(|e| e.to_string())?;
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

/// The model trainer of a run: its cache and verbosity.
fn trainer(opts: &RunOptions) -> Trainer {
    Trainer {
        cache_root: opts.cache_root.clone(),
        quiet: opts.quiet,
    }
}

/// Runs the whole experiment and writes its results.
pub fn run(config: &ExperimentConfig, opts: &RunOptions) -> Result<RunOutput, String> {
    let device = device(&config.experiment.backend)?;
    let loaded = load(config, opts)?;
    let score: Score = config
        .data
        .ood_score
        .parse()
        .map_err(|e| format!("data.ood_score: {e}"))?;
    let trainer = trainer(opts);

    let mut methods = Vec::new();
    let mut files = Vec::new();
    for &seed in &config.experiment.seeds {
        let started = Instant::now();
        let data = SeedData::new(config, &loaded, seed)?;
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
        let base = base_models(
            config,
            &data,
            &trainer,
            seed,
            needed_base_models(config),
            &device,
            pool.as_ref(),
        )?;
        if !opts.quiet {
            eprintln!(
                "seed {seed}: {} model(s) ready after {:.0} s; building and evaluating methods",
                base.models.len(),
                started.elapsed().as_secs_f64()
            );
        }
        let first = methods.len();
        let mut built_models = Vec::new();
        for (i, spec) in config.methods.iter().enumerate() {
            let t = Instant::now();
            let fail = |e: String| format!("method `{}`, seed {seed}: {e}", spec.name);
            let timing = spec.method.measures_latency();
            if let Some(pool) = &pool {
                pool.claim(Job::Method(i));
                if timing {
                    pool.pause();
                }
            }
            let built = spec
                .method
                .build(&data.context(spec, config, &base, seed, &device, &trainer))
                .map_err(fail)?;
            if let Some(pool) = &pool {
                pool.done(Job::Method(i));
                if timing {
                    pool.resume();
                }
            }
            let build_seconds = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut result = evaluate(
                built.model.as_ref(),
                &data.sets,
                &data.norm,
                config,
                score,
                seed,
                &device,
            )
            .map_err(fail)?;
            result.name = spec.name.clone();
            result.kind = spec.kind.to_string();
            result.extra = built.extra;
            result
                .extra
                .insert("build_seconds".into(), build_seconds.into());
            result
                .extra
                .insert("eval_seconds".into(), t.elapsed().as_secs_f64().into());
            for (file, bytes) in built.files {
                files.push((format!("{}-seed{seed}-{file}", spec.name), bytes));
            }
            if !opts.quiet {
                eprintln!(
                    "  {:<16} acc {:.2}%  nll {:.4}  ece {:.4}  (build {:.1} s, eval {:.1} s)",
                    spec.name,
                    100.0 * result.id.accuracy,
                    result.id.nll,
                    result.id.ece,
                    build_seconds,
                    t.elapsed().as_secs_f64()
                );
            }
            built_models.push((methods.len() - first, built.model));
            methods.push(result);
        }
        // Every job is done by now; timings must not share the CPU with a worker process.
        drop(pool);
        measure_costs(&built_models, &mut methods[first..], &data, config, &device)?;
    }
    let summary = Summary {
        experiment: config.experiment.name.clone(),
        seeds: config.experiment.seeds.clone(),
        methods,
    };
    let text = toml::to_string_pretty(config)
        .map_err(|e| format!("serialising the resolved config: {e}"))?;
    let dir = write_run(&opts.results_root, &text, &summary, &files)
        .map_err(|e| format!("writing results: {e}"))?;
    Ok(RunOutput { dir, summary })
}

/// The seed's training and validation splits, the training normalisation and the evaluation
/// sets.
fn prepare(
    config: &ExperimentConfig,
    train_full: &ImageDataset,
    test: &ImageDataset,
    ood: &[ImageDataset],
    seed: u64,
) -> Result<(ImageDataset, ImageDataset, Normalization, EvalSets), String> {
    let data = &config.data;
    let (train_idx, val_idx) = train_val_split(&train_full.labels, data.val_fraction, seed, true)
        .map_err(|e| e.to_string())?;
    let val = train_full.subset(&val_idx);
    let mut train = train_full.subset(&train_idx);
    if let Some(limit) = data.train_limit {
        train = limited(&train, limit, seed)?;
    }
    let norm = Normalization::fit(&train).map_err(|e| e.to_string())?;
    let limit = |set: &ImageDataset| match data.test_limit {
        Some(n) => limited(set, n, seed),
        None => Ok(set.clone()),
    };
    let test = limit(test)?;
    let mut shift = Vec::new();
    for spec in &data.shift {
        let corruption: Corruption = spec
            .corruption
            .parse()
            .map_err(|e: data::DataError| e.to_string())?;
        for &severity in &spec.severities {
            let set = corrupt(&test, corruption, severity, mix(seed, severity as u64))
                .map_err(|e| e.to_string())?;
            shift.push((format!("{}-{severity}", corruption.name()), set));
        }
    }
    let ood = ood.iter().map(limit).collect::<Result<_, _>>()?;
    Ok((train, val, norm, EvalSets { test, ood, shift }))
}

/// A seeded stratified subset of at most `n` samples.
fn limited(set: &ImageDataset, n: usize, seed: u64) -> Result<ImageDataset, String> {
    if n >= set.len() {
        return Ok(set.clone());
    }
    let idx = stratified_subset(&set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| format!("{}: {e}", set.name))?;
    Ok(set.subset(&idx))
}

/// The preset with the experiment's overrides, fitted to the dataset's images and classes.
fn vit_config(config: &ExperimentConfig, train: &ImageDataset) -> Result<ViTConfig, String> {
    let b = &config.backbone;
    let mut vit = ViTConfig::preset(&b.preset).map_err(|e| format!("backbone.preset: {e}"))?;
    let [channels, h, w] = train.dims;
    if h != w {
        return Err(format!(
            "data.dataset: images are {h}x{w}; the Vision Transformer needs square images"
        ));
    }
    vit = vit
        .with_image_size(h)
        .with_channels(channels)
        .with_num_classes(train.num_classes)
        .with_dropout(b.dropout)
        .with_attention_dropout(b.attention_dropout);
    vit.patch_size = b.patch_size.unwrap_or(vit.patch_size);
    vit.d_model = b.d_model.unwrap_or(vit.d_model);
    vit.n_layers = b.n_layers.unwrap_or(vit.n_layers);
    vit.n_heads = b.n_heads.unwrap_or(vit.n_heads);
    vit.d_mlp = b.d_mlp.unwrap_or(vit.d_mlp);
    Ok(vit)
}

/// Base model `k` of the seed, trained with the experiment's recipe or read back from the
/// cache; also returns its cache fingerprint.
fn train_base(
    config: &ExperimentConfig,
    trainer: &Trainer,
    vit: &ViTConfig,
    data: ImageData<'_>,
    seed: u64,
    k: usize,
    device: &Device,
) -> Result<(VisionTransformer, String), String> {
    let member_seed = if k == 0 { seed } else { mix(seed, k as u64) };
    let identity = serde_json::json!({
        "backbone": vit,
        "train": config.train,
        "dataset": config.data.dataset,
        "val_fraction": config.data.val_fraction,
        "train_limit": config.data.train_limit,
        "seed": member_seed,
        "backend": config.experiment.backend,
    });
    let autodiff = device.clone().autodiff();
    autodiff.seed(member_seed);
    let model = vit.init(&autodiff).map_err(|e| format!("backbone: {e}"))?;
    let label = format!("seed {seed} model {}", k + 1);
    let model = trainer.fit(
        &identity,
        model,
        data,
        &config.train,
        member_seed,
        label,
        None,
        &autodiff,
    )?;
    Ok((model.valid(), fingerprint(&identity)))
}

fn evaluate(
    model: &dyn EnsembleModel,
    sets: &EvalSets,
    norm: &Normalization,
    config: &ExperimentConfig,
    score: Score,
    seed: u64,
    device: &Device,
) -> Result<MethodResult, String> {
    let batch = config.data.eval_batch_size;
    // Stochastic methods (MC Dropout) draw their masks from the device RNG: seed each set.
    let run = |set: &ImageDataset, salt: u64| {
        device.seed(mix(seed, salt));
        predict(model, set, norm, batch, device)
    };
    let id = run(&sets.test, 0)?;
    let mut ood = BTreeMap::new();
    for (i, set) in sets.ood.iter().enumerate() {
        ood.insert(
            set.name.clone(),
            ood_metrics(&id, &run(set, 1 + i as u64)?, score)?,
        );
    }
    let mut shift = BTreeMap::new();
    for (i, (name, set)) in sets.shift.iter().enumerate() {
        shift.insert(name.clone(), shift_metrics(&run(set, 1000 + i as u64)?)?);
    }
    Ok(MethodResult {
        name: String::new(),
        kind: String::new(),
        members: model.members(),
        seed,
        id: id_metrics(&id)?,
        ood,
        shift,
        // Timed later, once no worker process shares the CPU (see `measure_costs`).
        cost: Cost {
            params: model.num_params() as u64,
            flops: model.flops_per_sample(),
            latency_ms_b1: f64::NAN,
            latency_ms: f64::NAN,
            peak_mem_bytes: None,
        },
        extra: BTreeMap::new(),
    })
}

/// Latency and peak memory of each built model on the first evaluation batch of the test set.
fn measure_costs(
    models: &[(usize, Box<dyn EnsembleModel>)],
    results: &mut [MethodResult],
    data: &SeedData,
    config: &ExperimentConfig,
    device: &Device,
) -> Result<(), String> {
    let batch = config.data.eval_batch_size;
    let probe: Vec<usize> = (0..data.sets.test.len().min(batch)).collect();
    let sample = ImageData {
        set: &data.sets.test,
        norm: &data.norm,
    }
    .batch(&probe, None, device)
    .map_err(|e| e.to_string())?;
    for (i, model) in models {
        results[*i].cost = cost(model.as_ref(), &sample, batch);
    }
    Ok(())
}
