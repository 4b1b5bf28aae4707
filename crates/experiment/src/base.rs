//! The base stage: what the base model is (a ViT from a preset, DINOv2 from ONNX, a pretrained
//! BERT, CLIP's zero-shot classifier), and the seed's base models trained (pretrained ones
//! fine-tuned with a fresh head; a zero-shot classifier never) or read back from the cache. Deep Ensemble members are base models `1..M`. A pretrained backbone
//! is the entry of [`importers::PRETRAINED`] that `[backbone] pretrained = "<name>"` names, its
//! checkpoint folder `<data root>/<name>` read, fitted to the training set and the experiment's
//! dropouts.

use std::path::Path;
use std::sync::Arc;

use backbone::{Architecture, Classifier, InputKind, ViTConfig};
use burn::module::Module;
use burn::tensor::Device;
use data::mix;
use data::{Dataset, ImageDataset, WordPiece};
use importers::{Checkpoint, ImportError, Target, open_checkpoint, open_zero_shot};

use crate::cache::{Fit, Splits, Trainer, fingerprint};
use crate::config::ExperimentConfig;
use crate::error::{ErrorContext, ExperimentError, Result};
use crate::methods::{MethodSpec, ModelInit};
use crate::zero_shot::prompts;
use report::summary::TrainCost;
use runtime::workers::{Job, Pool};

pub use importers::{PRETRAINED, Pretrained};

/// A fresh base model from a seed, on a device.
type Init = Arc<ModelInit>;

/// How base models are made: a ViT from a preset, or a registered pretrained backbone (its
/// loader in [`PRETRAINED`] fills this in), which gets a fresh head.
#[derive(Clone)]
pub struct BaseSpec {
    /// What the cache key records of the backbone.
    identity: serde_json::Value,
    /// The configuration of a Vision Transformer base model (what the image-only methods
    /// build from).
    vit: Option<ViTConfig>,
    /// The tokenizer of a text backbone.
    tokenizer: Option<WordPiece>,
    /// Whether `init` gives pretrained weights (else a model to train from scratch).
    pretrained: bool,
    /// Whether the base model is used as `init` gives it, never trained (a zero-shot
    /// classifier).
    zero_shot: bool,
    init: Init,
}

impl std::fmt::Debug for BaseSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseSpec")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl BaseSpec {
    /// The base model of `[backbone]` for the training set `train_full`.
    pub fn new(config: &ExperimentConfig, data_root: &Path, train_full: &Dataset) -> Result<Self> {
        if let Some(path) = &config.backbone.checkpoint {
            let name = path.display().to_string();
            let architecture = config.architecture()?;
            if let Some(zero_shot) = &config.backbone.zero_shot {
                let (classes, templates) = prompts(config, zero_shot, train_full.num_classes())?;
                let open = |target: &Target| open_zero_shot(path, target, &classes, &templates);
                return load_pretrained(config, (&name, architecture), open, train_full);
            }
            let open = |target: &Target| open_checkpoint(path, target);
            return load_pretrained(config, (&name, architecture), open, train_full);
        }
        match (config.pretrained()?, train_full) {
            (Some(entry), data) => {
                let open = |target: &Target| entry.item.open(entry.name, data_root, target);
                load_pretrained(config, (entry.name, entry.item.architecture), open, data)
            }
            (None, Dataset::Images(images)) => {
                let vit = vit_config(config, images)?;
                let init = vit.clone();
                Ok(Self {
                    identity: serde_json::json!(vit),
                    vit: Some(vit),
                    tokenizer: None,
                    pretrained: false,
                    zero_shot: false,
                    init: Arc::new(move |_, device| {
                        Ok(init.init(device).context("backbone")?.into())
                    }),
                })
            }
            (None, Dataset::Text(_)) => Err(ExperimentError::invalid(
                "backbone.pretrained: a text dataset needs a pretrained BERT",
            )),
        }
    }

    /// A pretrained backbone `name` whose configuration `config` the cache key records.
    fn pretrained(
        name: &str,
        config: impl serde::Serialize,
        init: impl Fn(u64, &Device) -> Result<Classifier> + Send + Sync + 'static,
    ) -> Self {
        Self {
            identity: serde_json::json!({"pretrained": name, "config": config}),
            vit: None,
            tokenizer: None,
            pretrained: true,
            zero_shot: false,
            init: Arc::new(init),
        }
    }

    /// The ViT configuration (preset with overrides, fitted to the data); `None` for text.
    pub fn vit(&self) -> Option<&ViTConfig> {
        self.vit.as_ref()
    }

    /// The BERT configuration of a text backbone, as the cache key records it (`uqformer
    /// plan`'s estimates count it).
    pub fn bert(&self) -> Option<backbone::BertConfig> {
        let config = self.identity.get("config")?;
        (self.tokenizer.is_some()).then(|| serde_json::from_value(config.clone()).ok())?
    }

    /// The CLIP configuration of a zero-shot base model and its prompts' `[classes,
    /// templates]` counts, as the cache key records them (`uqformer plan`'s estimates count
    /// them).
    pub fn clip(&self) -> Option<(backbone::ClipConfig, [usize; 2])> {
        let config = self.identity.get("config").filter(|_| self.zero_shot)?;
        let count = |key: &str| config.get(key)?.as_array().map(Vec::len);
        let clip = serde_json::from_value(config.get("clip")?.clone()).ok()?;
        Some((clip, [count("classes")?, count("templates")?]))
    }

    /// The tokenizer of a text backbone.
    pub fn tokenizer(&self) -> Option<WordPiece> {
        self.tokenizer.clone()
    }

    /// Whether the base model is a zero-shot classifier, used as it is, never trained.
    pub fn is_zero_shot(&self) -> bool {
        self.zero_shot
    }

    /// What makes the pretrained model with a fresh head from a seed (the caller seeds the
    /// device); `None` when the backbone is trained from scratch.
    pub fn pretrained_init(&self) -> Option<&ModelInit> {
        self.pretrained.then_some(&*self.init)
    }

    /// A fresh model on `device`: initialised from `seed`, or the pretrained weights with a head
    /// initialised from `seed`.
    fn init(&self, seed: u64, device: &Device) -> Result<Classifier> {
        (self.init)(seed, device)
    }
}

/// The seed's trained base models, what training each cost, and the cache fingerprint of the
/// first.
pub struct Base {
    pub models: Vec<Classifier>,
    pub costs: Vec<TrainCost>,
    pub fingerprint: String,
}

impl Base {
    /// What a method with `base = "<method>"` builds on: `method`'s `model`, built on `self`,
    /// with the whole training that made it (`cost`, the seed's base model's included) and a
    /// fingerprint naming both, so the cache keeps what is trained on it apart.
    pub fn of_method(&self, method: &MethodSpec, model: Classifier, cost: TrainCost) -> Self {
        let identity = serde_json::json!({ "base": self.fingerprint, "method": method });
        Self {
            models: vec![model],
            costs: vec![cost],
            fingerprint: fingerprint(&identity),
        }
    }
}

/// Trains (or loads) base models `0..n` of the seed; with a pool, each is claimed from it first.
#[allow(clippy::too_many_arguments)]
pub fn base_models(
    config: &ExperimentConfig,
    spec: &BaseSpec,
    data: Splits<'_>,
    trainer: &Trainer,
    seed: u64,
    n: usize,
    device: &Device,
    pool: Option<&Pool>,
) -> Result<Base> {
    let mut base = Base {
        models: Vec::with_capacity(n),
        costs: Vec::with_capacity(n),
        fingerprint: String::new(),
    };
    for k in 0..n {
        if let Some(pool) = pool {
            pool.claim(Job::Base(k));
        }
        let (model, fingerprint, cost) = train_base(config, trainer, spec, data, seed, k, device)?;
        if let Some(pool) = pool {
            pool.done(Job::Base(k));
        }
        if k == 0 {
            base.fingerprint = fingerprint;
        }
        base.models.push(model);
        base.costs.push(cost);
    }
    Ok(base)
}

/// The base models the experiment's methods need (the largest Deep Ensemble, else 1).
pub fn needed_base_models(config: &ExperimentConfig) -> usize {
    (config.methods.iter())
        .map(|m| m.method.base_models())
        .max()
        .unwrap_or(1)
}

/// What makes base model `k` of `seed` (its cache fingerprint is that of this identity), and
/// the seed it trains with.
pub fn base_identity(
    config: &ExperimentConfig,
    spec: &BaseSpec,
    seed: u64,
    k: usize,
) -> (serde_json::Value, u64) {
    let member_seed = if k == 0 { seed } else { mix(seed, k as u64) };
    let mut identity = serde_json::json!({
        "backbone": spec.identity,
        "train": config.train,
        "dataset": config.data.dataset,
        "val_fraction": config.data.val_fraction,
        "test_fraction": config.data.test_fraction,
        "max_tokens": config.data.max_tokens,
        "train_limit": config.data.train_limit,
        "seed": member_seed,
        "backend": config.experiment.backend,
    });
    // The images a model trains on follow `[data.preprocess]`; added only when given, so that
    // the models cached without it keep their names.
    if let Some(preprocess) = &config.data.preprocess {
        identity["preprocess"] = serde_json::json!(preprocess);
    }
    (identity, member_seed)
}

/// Base model `k` of the seed, trained (a pretrained one: fine-tuned) with the experiment's
/// recipe or read back from the cache; also returns its cache fingerprint and training cost.
pub fn train_base(
    config: &ExperimentConfig,
    trainer: &Trainer,
    spec: &BaseSpec,
    data: Splits<'_>,
    seed: u64,
    k: usize,
    device: &Device,
) -> Result<(Classifier, String, TrainCost)> {
    let (identity, member_seed) = base_identity(config, spec, seed, k);
    if spec.zero_shot {
        // Used as it is: nothing to train or cache.
        device.seed(member_seed);
        let model = spec.init(member_seed, device)?;
        return Ok((model, fingerprint(&identity), TrainCost::default()));
    }
    let autodiff = device.clone().autodiff();
    autodiff.seed(member_seed);
    let model = spec.init(member_seed, &autodiff)?;
    let (model, cost) = trainer.fit(
        model,
        data,
        Fit {
            identity: &identity,
            config: &config.train,
            seed: member_seed,
            label: format!("seed {seed} model {}", k + 1),
            distill: None,
            device: &autodiff,
        },
    )?;
    Ok((model.valid(), fingerprint(&identity), cost))
}

/// The side of the dataset's square images.
fn image_side(train: &ImageDataset) -> Result<usize> {
    let [_, h, w] = train.dims;
    if h != w {
        return Err(ExperimentError::invalid(format!(
            "data.dataset: images are {h}x{w}; the Vision Transformer needs square images"
        )));
    }
    Ok(h)
}

/// The preset with the experiment's overrides, fitted to the dataset's images and classes.
fn vit_config(config: &ExperimentConfig, train: &ImageDataset) -> Result<ViTConfig> {
    let b = &config.backbone;
    let preset = b.preset.as_deref().unwrap_or_default();
    let mut vit = ViTConfig::preset(preset).context("backbone.preset")?;
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

/// The base-model recipe of the pretrained backbone `name` of family `architecture`, which
/// `open` reads fitted to a target, for the training set `data`.
fn load_pretrained(
    config: &ExperimentConfig,
    (name, architecture): (&str, Architecture),
    open: impl FnOnce(&Target) -> std::result::Result<Checkpoint, ImportError>,
    data: &Dataset,
) -> Result<BaseSpec> {
    let images = match (architecture.reads(), data) {
        (InputKind::Images, Dataset::Images(train)) => Some([train.dims[0], image_side(train)?]),
        (InputKind::Tokens, Dataset::Text(_)) => None,
        (serves, _) => {
            return Err(ExperimentError::invalid(format!(
                "backbone.pretrained: `{name}` is a backbone for {serves}, not this dataset's"
            )));
        }
    };
    let target = Target {
        num_classes: data.num_classes(),
        images,
        dropout: config.backbone.dropout,
        attention_dropout: config.backbone.attention_dropout,
    };
    let checkpoint = open(&target).context("backbone.pretrained")?;
    let tokenizer = (checkpoint.vocab.as_deref())
        .map(WordPiece::from_vocab_file)
        .transpose()
        .context("backbone.pretrained")?;
    let init = checkpoint.init;
    let mut spec = BaseSpec::pretrained(name, checkpoint.config, move |seed, device| {
        init(seed, device).context("backbone.pretrained")
    });
    spec.vit = checkpoint.vit;
    spec.tokenizer = tokenizer;
    spec.zero_shot = architecture == Architecture::ClipZeroShot;
    Ok(spec)
}
