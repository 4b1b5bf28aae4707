//! What a method sees while it is built, and what it hands back.

use std::cell::RefCell;

use backbone::{Classifier, ViTConfig, VisionTransformer};
use burn::tensor::Device;
use data::mix;
use seam::EnsembleModel;
use seam::Trainable;
use train::{Data, Distill, ImageData, TrainConfig};

use crate::cache::{Fit, Splits, Trainer, fnv1a};
use serde::Deserialize;

use crate::error::{ConfigError, ExperimentError, Result};
use crate::prep::Prep;
use report::summary::TrainCost;

/// Makes a model from a seed on a device: how base models are made, the pretrained weights with
/// a fresh head on a pretrained backbone.
pub type ModelInit = dyn Fn(u64, &Device) -> Result<Classifier> + Send + Sync;

/// One seed's view of the experiment, given to [`super::Method::build`]: the base models and the
/// training and validation data, never the evaluation sets.
pub struct Context<'a> {
    /// The `[[method]]` entry's name.
    pub name: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its parameters with their defaults filled in (part of the cache key of what it trains).
    pub params: &'a toml::Table,
    /// Its `train = { ... }` overrides of `[train]`.
    pub train_overrides: &'a toml::Table,
    /// What the method's check saw of the experiment.
    pub setting: Setting,
    /// The experiment's `[train]` (the method's overrides: [`Context::train_config`]).
    pub recipe: &'a TrainConfig,
    /// `[data] eval_batch_size`: the batch for forward passes without gradients.
    pub eval_batch: usize,
    /// The ViT configuration (preset with overrides, fitted to the data); `None` for text.
    pub vit: Option<&'a ViTConfig>,
    /// The seed's trained base models: `base[0]` is the seed's model, then Deep Ensemble members.
    pub base: &'a [Classifier],
    pub train: Data<'a>,
    /// The held-out split (`data.val_fraction`): calibration, selection, early decisions.
    pub val: Data<'a>,
    /// Text: the mean tokenised length of the test set, at which FLOPs per sample are counted.
    pub text_tokens: usize,
    /// How samples become model input (for data a method derives, e.g. corrupted copies).
    pub prep: &'a Prep,
    pub seed: u64,
    /// The plain evaluation device; [`Context::autodiff`] gives the training device.
    pub device: &'a Device,
    pub(crate) trainer: &'a Trainer,
    /// The cache fingerprint of `base[0]`, so that derived models are cached per base model.
    pub(crate) base_fingerprint: &'a str,
    /// What makes the pretrained backbone with a fresh head, for methods that start from it;
    /// `None` on a backbone trained from scratch.
    pub(crate) pretrained: Option<&'a ModelInit>,
    /// What the method's own trainings ([`Context::fit`]) cost so far.
    pub(crate) trained: RefCell<TrainCost>,
}

/// What a method's parameters are checked against besides themselves: the few settings of the
/// experiment a kind depends on.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// `[backbone] dropout`.
    pub dropout: f64,
    /// `[data] val_fraction`.
    pub val_fraction: f64,
    /// Whether `[backbone] pretrained` names a backbone (else it is trained from scratch).
    pub pretrained: bool,
}

/// What a method builds: the model to evaluate plus what it wants kept with the results.
pub struct Built {
    pub model: Box<dyn EnsembleModel>,
    /// The method's own results for `summary.json`, typed: its variant of
    /// [`report::MethodOutputs`], which the report draws (docs/extending.md).
    pub outputs: Option<report::MethodOutputs>,
    /// Files for the run folder, `(file name, contents)`; the runner prefixes them with the
    /// method name and seed.
    pub files: Vec<(String, Vec<u8>)>,
    /// Models to evaluate beside the method itself, as tables in the run folder.
    pub sweeps: Vec<Sweep>,
    /// HetDPT's accuracy predictor, for its figure.
    pub predictor: Option<report::curves::PredictorGrid>,
    /// The model a method with `base = "<this method>"` builds on (see
    /// [`Method::offers_model`](super::Method::offers_model)).
    pub base: Option<Classifier>,
}

/// Models a method wants evaluated on every evaluation set, one table row each (Hydra's pruning
/// analysis). The evaluation stage computes the metrics and writes `<name>.csv` and
/// `<name>.md`; the run's figures draw it.
pub struct Sweep {
    pub name: String,
    /// Headers of the values that place a point on the sweep (e.g. `ratio`, `heads_kept`).
    pub columns: Vec<String>,
    pub points: Vec<(Vec<f64>, Box<dyn EnsembleModel>)>,
}

impl Built {
    pub fn new(model: impl EnsembleModel + 'static) -> Self {
        Self {
            model: Box::new(model),
            outputs: None,
            files: Vec::new(),
            sweeps: Vec::new(),
            predictor: None,
            base: None,
        }
    }
}

impl<'a> Context<'a> {
    /// FLOPs per sample of one base model.
    pub fn base_flops(&self) -> u64 {
        self.base[0].flops(self.text_tokens)
    }

    /// The ViT configuration, or an error naming the method: image-only kinds call this.
    pub fn vit(&self) -> Result<&'a ViTConfig> {
        self.vit.ok_or_else(|| self.images_only())
    }

    /// The seed's base model as a Vision Transformer (image-only kinds).
    pub fn base_vit(&self) -> Result<&'a VisionTransformer> {
        match &self.base[0] {
            Classifier::Vit(v) => Ok(v),
            _ => Err(self.images_only()),
        }
    }

    /// `data` as images (image-only kinds).
    pub fn images(&self, data: Data<'a>) -> Result<ImageData<'a>> {
        match data {
            Data::Images(d) => Ok(d),
            // Training data are held in memory; only evaluation sets stay on disk.
            Data::Disk(d) => Err(ExperimentError::invalid(format!(
                "kind `{}` needs {} in memory",
                self.kind, d.set.name
            ))),
            Data::Text(_) => Err(self.images_only()),
        }
    }

    fn images_only(&self) -> ExperimentError {
        ExperimentError::invalid(format!("kind `{}` works on image datasets only", self.kind))
    }

    /// `[train]` with the method's overrides.
    pub fn train_config(&self) -> Result<TrainConfig> {
        Ok(train_with(self.recipe, self.train_overrides, self.name)?)
    }

    /// A seed for one random choice of this method (`tag` tells the choices apart), derived
    /// from the experiment seed and the method's name. The name rather than the recipe, so
    /// that two arms with the same recipe are two draws (docs/running.md, "Reproducibility").
    pub fn seed_for(&self, tag: &str) -> u64 {
        mix(self.seed, fnv1a(format!("{}/{tag}", self.name).as_bytes()))
    }

    /// The pretrained backbone as loaded, never trained on the task, with a head initialised
    /// from `seed`, on the training device; `None` when the backbone is trained from scratch.
    pub fn pretrained(&self, seed: u64) -> Result<Option<Classifier>> {
        let Some(init) = self.pretrained else {
            return Ok(None);
        };
        let device = self.autodiff();
        device.seed(seed);
        init(seed, &device).map(Some)
    }

    /// The training device (autodiff on top of the evaluation device).
    pub fn autodiff(&self) -> Device {
        self.device.clone().autodiff()
    }

    /// Prints a progress note unless the run is quiet.
    pub fn say(&self, message: &str) {
        if !self.trainer.quiet {
            eprintln!("  [{}] {message}", self.name);
        }
    }

    /// Trains `model` (built on [`Context::autodiff`]) or reads the trained weights back from the
    /// cache, measuring it on the validation split after every epoch. The cache key covers the base model, the method's kind and parameters, `tag`, the
    /// recipe, the seed and the data, so a changed input retrains.
    pub fn fit<M: Trainable>(
        &self,
        model: M,
        data: Data<'_>,
        config: &TrainConfig,
        tag: &str,
        seed: u64,
        distill: Option<Distill>,
    ) -> Result<M> {
        let identity = serde_json::json!({
            "base": self.base_fingerprint,
            "kind": self.kind,
            "params": self.params,
            "tag": tag,
            "train": config,
            "seed": seed,
            "data": [data.name(), data.len()],
            "distill": distill.as_ref().map(|d| [d.alpha, d.temperature]),
        });
        let (model, cost) = self.trainer.fit(
            model,
            Splits::new(data, self.val),
            Fit {
                identity: &identity,
                config,
                seed,
                label: format!("seed {} {} {tag}", self.seed, self.name),
                distill,
                device: &self.autodiff(),
            },
        )?;
        *self.trained.borrow_mut() += cost;
        Ok(model)
    }

    /// The method's whole model trained (or read back) with its recipe on the training set, its
    /// weights tagged `tag` in the cache, ready to evaluate.
    pub fn fit_method<M: Trainable + EnsembleModel + 'static>(
        &self,
        model: M,
        tag: &str,
    ) -> Result<Built> {
        let config = self.train_config()?;
        let trained = self.fit(model, self.train, &config, tag, self.seed_for("fit"), None)?;
        Ok(Built::new(trained.valid()))
    }
}

/// `base` (`[train]`) with a method's `train = { ... }` `overrides`, checked; errors name the
/// method.
pub(crate) fn train_with(
    base: &TrainConfig,
    overrides: &toml::Table,
    method: &str,
) -> Result<TrainConfig, ConfigError> {
    if overrides.is_empty() {
        return Ok(base.clone());
    }
    let place = format!("method `{method}`: train");
    let mut table = toml::Table::try_from(base)
        .map_err(|e| ConfigError::caused(format!("{place}: serialising [train]"), e))?;
    table.extend(overrides.clone());
    let config = TrainConfig::deserialize(toml::Value::Table(table))
        .map_err(|e| ConfigError::caused(place.clone(), e))?;
    config
        .check()
        .map_err(|why| ConfigError::msg(why).at(&place))?;
    Ok(config)
}
