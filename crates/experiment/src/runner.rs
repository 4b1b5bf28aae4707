//! The runner: for each seed, train (or reuse from the cache) the base model and any extra
//! members, build every method, evaluate it on the ID, OOD and shifted sets, measure its cost,
//! then write the run's results.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use backbone::{BertClassifier, BertConfig, BertModel, Classifier, Dropout, ViTConfig};
use burn::module::Module;
use burn::nn::LinearConfig;
use burn::tensor::Device;
use data::{
    Catalog, Corruption, Dataset, ImageDataset, Modality, Normalization, SubsetSize, WordPiece,
    corrupt, stratified_subset, train_val_split,
};
use ensembles::EnsembleModel;
use train::{Data, mix};
use uq_metrics::Score;

use crate::config::ExperimentConfig;
use crate::device::device;
use crate::eval::{EvalSets, Prep, cost, id_metrics, ood_metrics, predict, shift_metrics};
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
    train_full: Dataset,
    test: Dataset,
    ood: Vec<Dataset>,
}

/// The seed of the fixed test split of single-file datasets: the same for every experiment seed.
const TEST_SPLIT_SEED: u64 = 0x7E57;

fn load(config: &ExperimentConfig, opts: &RunOptions) -> Result<Loaded, String> {
    let catalog = Catalog::new(&opts.data_root);
    let name = &config.data.dataset;
    match config.modality()? {
        Modality::Image => {
            let splits = catalog.load_images(name).map_err(|e| e.to_string())?;
            let train_full = splits
                .train
                .ok_or_else(|| format!("data.dataset: `{name}` has no training split"))?;
            let ood = config
                .data
                .ood
                .iter()
                .map(|ood| {
                    let set = catalog.load_images(ood).map_err(|e| e.to_string())?.test;
                    if set.dims != train_full.dims {
                        return Err(format!(
                            "data.ood: `{ood}` has images {:?}, the training set {:?}",
                            set.dims, train_full.dims
                        ));
                    }
                    Ok(Dataset::Images(set))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Loaded {
                train_full: Dataset::Images(train_full),
                test: Dataset::Images(splits.test),
                ood,
            })
        }
        Modality::Text => {
            let full = catalog.load_text(name).map_err(|e| e.to_string())?;
            let (train, test) = train_val_split(
                &full.labels,
                config.data.test_fraction,
                TEST_SPLIT_SEED,
                true,
            )
            .map_err(|e| format!("data.test_fraction: {name}: {e}"))?;
            let ood = (config.data.ood.iter())
                .map(|ood| catalog.load_text(ood).map(Dataset::Text))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            Ok(Loaded {
                train_full: Dataset::Text(full.subset(&train)),
                test: Dataset::Text(full.subset(&test)),
                ood,
            })
        }
    }
}

/// How base models are made: a ViT from scratch or from a DINOv2 ONNX file, or a pretrained
/// BERT; pretrained models get a fresh head.
#[derive(Debug, Clone)]
enum BaseSpec {
    Vit {
        config: ViTConfig,
        /// The ONNX file and its folder's name under the data root, when pretrained.
        onnx: Option<(PathBuf, String)>,
    },
    Bert {
        config: BertConfig,
        /// The checkpoint folder (`config.json`, `model.safetensors`, `vocab.txt`).
        dir: PathBuf,
        /// Its name under the data root, for the cache key.
        name: String,
        num_classes: usize,
    },
}

/// One seed's splits, input preparation, evaluation sets and base-model recipe.
struct SeedData {
    train: Dataset,
    val: Dataset,
    prep: Prep,
    sets: EvalSets,
    base: BaseSpec,
    /// Text: mean tokenised test length (FLOPs are counted at it); 0 for images.
    text_tokens: usize,
}

impl SeedData {
    fn new(
        config: &ExperimentConfig,
        opts: &RunOptions,
        loaded: &Loaded,
        seed: u64,
    ) -> Result<Self, String> {
        let (train, val, sets) = prepare(config, loaded, seed)?;
        let (prep, base) = match &train {
            Dataset::Images(images) => {
                let norm = Normalization::fit(images).map_err(|e| e.to_string())?;
                let base = match &config.backbone.pretrained {
                    None => BaseSpec::Vit {
                        config: vit_config(config, images)?,
                        onnx: None,
                    },
                    Some(name) => pretrained_vit(config, opts, name, images)?,
                };
                (Prep::Pixels(norm), base)
            }
            Dataset::Text(texts) => {
                let name = config.backbone.pretrained.clone().unwrap_or_default();
                let dir = opts.data_root.join(&name);
                let tokenizer = WordPiece::from_vocab_file(&dir.join("vocab.txt"))
                    .map_err(|e| format!("backbone.pretrained: {e}"))?;
                let mut bert = BertConfig::from_hf_config(&dir.join("config.json"))
                    .map_err(|e| format!("backbone.pretrained: {e}"))?;
                bert.dropout = config.backbone.dropout;
                bert.attention_dropout = config.backbone.attention_dropout;
                let prep = Prep::Tokens {
                    tokenizer,
                    max_tokens: config.data.max_tokens,
                };
                let base = BaseSpec::Bert {
                    config: bert,
                    dir,
                    name,
                    num_classes: texts.num_classes,
                };
                (prep, base)
            }
        };
        let text_tokens = prep.mean_tokens(&sets.test)?;
        Ok(Self {
            train,
            val,
            prep,
            sets,
            base,
            text_tokens,
        })
    }

    fn train(&self) -> Data<'_> {
        self.prep.data(&self.train)
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
            vit: match &self.base {
                BaseSpec::Vit { config, .. } => Some(config),
                BaseSpec::Bert { .. } => None,
            },
            base: &base.models,
            train: self.train(),
            val: self.prep.data(&self.val),
            text_tokens: self.text_tokens,
            sets: &self.sets,
            prep: &self.prep,
            seed,
            device,
            trainer,
            base_fingerprint: &base.fingerprint,
        }
    }
}

/// The seed's trained base models and the cache fingerprint of the first.
struct Base {
    models: Vec<Classifier>,
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
            train_base(config, trainer, &data.base, data.train(), seed, k, device)?;
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
    let data = SeedData::new(config, opts, &load(config, opts)?, seed)?;
    let trainer = trainer(opts);
    match job {
        Job::Base(k) => {
            train_base(config, &trainer, &data.base, data.train(), seed, k, &device)?;
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
        let data = SeedData::new(config, opts, &loaded, seed)?;
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
                &data.prep,
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

/// The seed's training and validation splits and the evaluation sets.
fn prepare(
    config: &ExperimentConfig,
    loaded: &Loaded,
    seed: u64,
) -> Result<(Dataset, Dataset, EvalSets), String> {
    let data = &config.data;
    let full = &loaded.train_full;
    let (train_idx, val_idx) =
        train_val_split(full.labels(), data.val_fraction, seed, true).map_err(|e| e.to_string())?;
    let val = full.subset(&val_idx);
    let mut train = full.subset(&train_idx);
    if let Some(limit) = data.train_limit {
        train = limited(&train, limit, seed)?;
    }
    let limit = |set: &Dataset| match data.test_limit {
        Some(n) => limited(set, n, seed),
        None => Ok(set.clone()),
    };
    let test = limit(&loaded.test)?;
    let mut shift = Vec::new();
    if let Dataset::Images(images) = &test {
        for spec in &data.shift {
            let corruption: Corruption = spec
                .corruption
                .parse()
                .map_err(|e: data::DataError| e.to_string())?;
            for &severity in &spec.severities {
                let set = corrupt(images, corruption, severity, mix(seed, severity as u64))
                    .map_err(|e| e.to_string())?;
                shift.push((
                    format!("{}-{severity}", corruption.name()),
                    Dataset::Images(set),
                ));
            }
        }
    }
    let ood = loaded.ood.iter().map(limit).collect::<Result<_, _>>()?;
    Ok((train, val, EvalSets { test, ood, shift }))
}

/// A seeded stratified subset of at most `n` samples.
fn limited(set: &Dataset, n: usize, seed: u64) -> Result<Dataset, String> {
    if n >= set.len() {
        return Ok(set.clone());
    }
    let idx = stratified_subset(set.labels(), SubsetSize::Total(n), seed)
        .map_err(|e| format!("{}: {e}", set.name()))?;
    Ok(set.subset(&idx))
}

/// The side of the dataset's square images.
fn image_side(train: &ImageDataset) -> Result<usize, String> {
    let [_, h, w] = train.dims;
    if h != w {
        return Err(format!(
            "data.dataset: images are {h}x{w}; the Vision Transformer needs square images"
        ));
    }
    Ok(h)
}

/// A DINOv2 ONNX checkpoint (the one `*.onnx` file of the folder `name`) at the dataset's image
/// size; its configuration is read by importing it once.
fn pretrained_vit(
    config: &ExperimentConfig,
    opts: &RunOptions,
    name: &str,
    train: &ImageDataset,
) -> Result<BaseSpec, String> {
    let dir = opts.data_root.join(name);
    let fail = |what: String| format!("backbone.pretrained: {}: {what}", dir.display());
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        fail(format!(
            "cannot read the folder ({e}); run `datasets/fetch {name}`"
        ))
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    let path = match files.len() {
        1 => files.remove(0),
        n => return Err(fail(format!("expected one *.onnx file, found {n}"))),
    };
    let side = image_side(train)?;
    let (vit, _) = backbone::load_dinov2_onnx(
        &path,
        side,
        train.dims[0],
        train.num_classes,
        0,
        &Device::flex(),
    )
    .map_err(|e| format!("backbone.pretrained: {e}"))?;
    let b = &config.backbone;
    Ok(BaseSpec::Vit {
        config: vit
            .with_dropout(b.dropout)
            .with_attention_dropout(b.attention_dropout),
        onnx: Some((path, name.to_string())),
    })
}

/// The preset with the experiment's overrides, fitted to the dataset's images and classes.
fn vit_config(config: &ExperimentConfig, train: &ImageDataset) -> Result<ViTConfig, String> {
    let b = &config.backbone;
    let preset = b.preset.as_deref().unwrap_or_default();
    let mut vit = ViTConfig::preset(preset).map_err(|e| format!("backbone.preset: {e}"))?;
    let [channels, ..] = train.dims;
    let h = image_side(train)?;
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

/// Base model `k` of the seed, trained (a pretrained one: fine-tuned) with the experiment's
/// recipe or read back from the cache; also returns its cache fingerprint.
fn train_base(
    config: &ExperimentConfig,
    trainer: &Trainer,
    spec: &BaseSpec,
    data: Data<'_>,
    seed: u64,
    k: usize,
    device: &Device,
) -> Result<(Classifier, String), String> {
    let member_seed = if k == 0 { seed } else { mix(seed, k as u64) };
    let backbone = match spec {
        BaseSpec::Vit { config, onnx: None } => serde_json::json!(config),
        BaseSpec::Vit {
            config,
            onnx: Some((_, name)),
        } => serde_json::json!({"pretrained": name, "config": config}),
        BaseSpec::Bert { config, name, .. } => {
            serde_json::json!({"pretrained": name, "config": config})
        }
    };
    let identity = serde_json::json!({
        "backbone": backbone,
        "train": config.train,
        "dataset": config.data.dataset,
        "val_fraction": config.data.val_fraction,
        "test_fraction": config.data.test_fraction,
        "max_tokens": config.data.max_tokens,
        "train_limit": config.data.train_limit,
        "seed": member_seed,
        "backend": config.experiment.backend,
    });
    let autodiff = device.clone().autodiff();
    autodiff.seed(member_seed);
    let b = &config.backbone;
    let model: Classifier = match spec {
        BaseSpec::Vit {
            config: vit,
            onnx: None,
        } => vit
            .init(&autodiff)
            .map_err(|e| format!("backbone: {e}"))?
            .into(),
        BaseSpec::Vit {
            config: vit,
            onnx: Some((path, _)),
        } => {
            let (_, model) = backbone::load_dinov2_onnx(
                path,
                vit.image_size,
                vit.channels,
                vit.num_classes,
                member_seed,
                &autodiff,
            )
            .map_err(|e| format!("backbone.pretrained: {e}"))?;
            Classifier::from(model).with_dropout(b.dropout, b.attention_dropout)
        }
        BaseSpec::Bert {
            config: bert,
            dir,
            num_classes,
            ..
        } => {
            let encoder =
                BertModel::load_safetensors(&dir.join("model.safetensors"), bert, &autodiff)
                    .map_err(|e| format!("backbone.pretrained: {e}"))?;
            BertClassifier {
                bert: encoder,
                dropout: Dropout { prob: bert.dropout },
                classifier: LinearConfig::new(bert.d_model, *num_classes).init(&autodiff),
            }
            .into()
        }
    };
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
    prep: &Prep,
    config: &ExperimentConfig,
    score: Score,
    seed: u64,
    device: &Device,
) -> Result<MethodResult, String> {
    let batch = config.data.eval_batch_size;
    // Stochastic methods (MC Dropout) draw their masks from the device RNG: seed each set.
    let run = |set: &Dataset, salt: u64| {
        device.seed(mix(seed, salt));
        predict(model, prep.data(set), batch, device)
    };
    let id = run(&sets.test, 0)?;
    let mut ood = BTreeMap::new();
    for (i, set) in sets.ood.iter().enumerate() {
        ood.insert(
            set.name().to_string(),
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
    let sample = (data.prep.data(&data.sets.test))
        .batch(&probe, None, device)
        .map_err(|e| e.to_string())?;
    for (i, model) in models {
        results[*i].cost = cost(model.as_ref(), &sample, batch);
    }
    Ok(())
}
