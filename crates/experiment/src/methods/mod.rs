//! `[[method]]` entries. Each method kind lives in its own file: it parses its own parameters
//! (unknown keys are errors listing the valid ones) and builds an [`EnsembleModel`] from the
//! seed's trained base model(s) through a [`Context`]. Adding a kind is one file plus one line in
//! [`KINDS`].
//!
//! Every method may also carry `train = { ... }`: overrides of `[train]` for whatever the method
//! trains itself (fine-tuning, adapters, a from-scratch variant), e.g. LoRA's lower learning rate.
//!
//! A method is given what it needs to build (a [`Context`]: base models, training and
//! validation data), never the evaluation sets; models it wants evaluated beside itself go back
//! as a [`Sweep`].
//!
//! [`EnsembleModel`]: seam::EnsembleModel

mod baselines;
pub(crate) mod context;
mod efficient;
mod gated;
mod hetdpt;
mod hydra;
mod lora;
mod params;

pub use context::{Built, Context, ModelInit, Sweep};

use std::fmt::Debug;
use std::sync::Arc;

use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use train::TrainConfig;

use efficient::FromScratch;

use crate::error::{ConfigError, ExperimentError, Result};

/// Post-hoc calibration of a method's predictions (`calibration` of a method or of `[eval]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recalibration {
    #[default]
    None,
    /// One temperature for every member, fitted on the validation split.
    Temperature,
}

/// What a method kind needs of the backbone, checked against the experiment's before anything
/// runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any backbone (a ViT or a BERT): it uses only what [`backbone::Classifier`] offers.
    AnyClassifier,
    /// A Vision Transformer: its shape, patch stem or blocks are part of the method.
    Vit,
}

impl Needs {
    /// Whether a backbone of `architecture` serves.
    pub fn met_by(self, architecture: backbone::Architecture) -> bool {
        self == Self::AnyClassifier || architecture == backbone::Architecture::Vit
    }
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

/// A method kind's parameters and how to build it.
pub trait Method: Debug + Send + Sync {
    /// How many members its predictions have (samples, for MC Dropout).
    fn members(&self) -> usize;

    /// How many independently trained base models of the seed it needs (Deep Ensemble: M).
    fn base_models(&self) -> usize {
        1
    }

    /// How many of those base models its result is trained from, so that their training counts
    /// in its `train_cost`: all of them, unless it borrows only the base model's shape (the
    /// ensembles trained from scratch, LoRA-Ensemble on the pretrained weights).
    fn base_models_trained_from(&self, _setting: &Setting) -> usize {
        self.base_models()
    }

    /// Whether building it trains models (into the cache), so that a worker process can do it
    /// in parallel with the rest of the run.
    fn trains(&self) -> bool {
        false
    }

    /// What it needs of the backbone.
    fn needs(&self) -> Needs;

    /// Whether building it times models, so that no worker process may share the CPU meanwhile.
    fn measures_latency(&self) -> bool {
        false
    }

    /// Checks the parameters, alone and against the rest of the experiment.
    fn check(&self, _setting: &Setting) -> Result<()> {
        Ok(())
    }

    /// Builds the method for one seed.
    fn build(&self, ctx: &Context<'_>) -> Result<Built>;
}

/// A registered method kind: its TOML name, a one-line description and its parameter parser.
pub struct Kind {
    pub name: &'static str,
    pub about: &'static str,
    parse: Parser,
}

/// Parses a kind's parameter table into the method and its resolved parameters.
type Parser = fn(toml::Table) -> Result<(Arc<dyn Method>, toml::Table), ConfigError>;

/// Every method kind, for the TOML `kind` key and `uqformer list`.
pub const KINDS: &[Kind] = &[
    Kind {
        name: "single",
        about: "the base model alone",
        parse: parse::<baselines::Single>,
    },
    Kind {
        name: "deep_ensemble",
        about: "M independently trained models (members = M)",
        parse: parse::<baselines::DeepEnsemble>,
    },
    Kind {
        name: "mc_dropout",
        about: "dropout on at test time, S samples (samples = S; p = [backbone] dropout)",
        parse: parse::<baselines::McDropout>,
    },
    Kind {
        name: "lora_ensemble",
        about: "a frozen backbone, N members differing by low-rank adapters on Q/K/V/O (members, rank, scale, init_gain, head_init, backbone = pretrained | base)",
        parse: params::parse::<lora::LoraEnsemble>,
    },
    Kind {
        name: "batch_ensemble",
        about: "shared weights with per-member rank-1 fast weights, trained from scratch (members, fast_init)",
        parse: params::parse::<FromScratch<BatchEnsembleConfig>>,
    },
    Kind {
        name: "mimo",
        about: "M inputs and M outputs through one network, trained from scratch (members, input_repetition)",
        parse: params::parse::<FromScratch<MimoConfig>>,
    },
    Kind {
        name: "packed_ensemble",
        about: "M narrow members packed in one grouped network, trained from scratch (members, alpha, gamma)",
        parse: params::parse::<FromScratch<PackedConfig>>,
    },
    Kind {
        name: "hydra",
        about: "M members pruning different heads of the base model, fused into one pass (members, importance, keep, merge, ...)",
        parse: parse::<hydra::Hydra>,
    },
    Kind {
        name: "hetdpt",
        about: "depth pruning of attention branches and GELUs with an accuracy predictor, merged and distilled (budget, ...)",
        parse: parse::<hetdpt::HetDpt>,
    },
];

/// One method of an experiment: a display name, its kind and parameters, and `[train]`
/// overrides.
#[derive(Debug, Clone)]
pub struct MethodSpec {
    pub name: String,
    pub kind: &'static str,
    /// The parameters with their defaults filled in (the resolved config shows them).
    pub params: toml::Table,
    /// Keys of `[train]` this method overrides for what it trains.
    pub train: toml::Table,
    /// `temperature`: also report the method temperature-scaled, as `<name>+ts`.
    pub calibration: Recalibration,
    pub method: Arc<dyn Method>,
}

impl MethodSpec {
    /// Builds a method from its raw table: `kind` picks the parameter schema, `name` is optional.
    pub fn from_table(mut table: toml::Table) -> Result<Self, ConfigError> {
        let kind = match table.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(other) => {
                return Err(ConfigError::msg(format!(
                    "`kind` must be a string, found {other}"
                )));
            }
            None => {
                return Err(ConfigError::msg(format!(
                    "missing `kind`; valid kinds: {}",
                    kind_names()
                )));
            }
        };
        let name = match table.remove("name") {
            Some(toml::Value::String(n)) if !n.is_empty() => n,
            Some(other) => {
                return Err(ConfigError::msg(format!(
                    "`name` must be a non-empty string, found {other}"
                )));
            }
            None => kind.clone(),
        };
        let train = match table.remove("train") {
            Some(toml::Value::Table(t)) => t,
            Some(other) => {
                return Err(ConfigError::msg(format!(
                    "method `{name}`: `train` must be a table of [train] overrides, found {other}"
                )));
            }
            None => toml::Table::new(),
        };
        let calibration = match table.remove("calibration") {
            Some(value) => Recalibration::deserialize(value.clone()).map_err(|_| {
                // Hydra's number of calibration samples was once called `calibration`.
                let hint = match value {
                    toml::Value::Integer(_) => " (a number of samples is `calibration_samples`)",
                    _ => "",
                };
                ConfigError::msg(format!(
                    "method `{name}`: calibration = {value}: expected \"none\" or \"temperature\"{hint}"
                ))
            })?,
            None => Recalibration::None,
        };
        let Some(registered) = KINDS.iter().find(|k| k.name == kind) else {
            return Err(ConfigError::msg(format!(
                "unknown method kind `{kind}`; valid kinds: {}",
                kind_names()
            )));
        };
        let (method, params) =
            (registered.parse)(table).map_err(|e| e.at(&format!("kind `{kind}`")))?;
        Ok(Self {
            name,
            kind: registered.name,
            params,
            train,
            calibration,
            method,
        })
    }

    /// How many members the method's predictions have.
    pub fn members(&self) -> usize {
        self.method.members()
    }

    /// `[train]` with this method's overrides applied.
    pub fn train_config(&self, base: &TrainConfig) -> Result<TrainConfig> {
        if self.train.is_empty() {
            return Ok(base.clone());
        }
        let fail = |what: String| {
            ExperimentError::Config(ConfigError::msg(format!("method `{}`: {what}", self.name)))
        };
        let mut table =
            toml::Table::try_from(base).map_err(|e| fail(format!("serialising [train]: {e}")))?;
        table.extend(self.train.clone());
        let config = TrainConfig::deserialize(toml::Value::Table(table))
            .map_err(|e| fail(format!("train: {}", e.message())))?;
        config.check().map_err(|e| fail(format!("train: {e}")))?;
        Ok(config)
    }

    /// Checks the method against the experiment's `[train]` and settings.
    pub(crate) fn check(&self, recipe: &TrainConfig, setting: &Setting) -> Result<(), ConfigError> {
        self.train_config(recipe)
            .map_err(|e| ConfigError::msg(e.to_string()))?;
        (self.method.check(setting))
            .map_err(|e| ConfigError::msg(format!("method `{}`: {e}", self.name)))
    }
}

impl Serialize for MethodSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = toml::Table::new();
        table.insert("name".into(), self.name.clone().into());
        table.insert("kind".into(), self.kind.into());
        table.extend(self.params.clone());
        if !self.train.is_empty() {
            table.insert("train".into(), self.train.clone().into());
        }
        if self.calibration != Recalibration::None {
            table.insert("calibration".into(), "temperature".into());
        }
        table.serialize(serializer)
    }
}

/// An ensemble needs at least two members.
fn at_least_two(members: usize) -> Result<()> {
    if members < 2 {
        return Err(ExperimentError::invalid(format!(
            "members = {members} must be at least 2"
        )));
    }
    Ok(())
}

/// Parses a kind's parameters and returns them re-serialised with defaults filled in.
fn parse<T>(table: toml::Table) -> Result<(Arc<dyn Method>, toml::Table), ConfigError>
where
    T: Method + DeserializeOwned + Serialize + 'static,
{
    let params =
        T::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::msg(e.message()))?;
    let resolved = toml::Table::try_from(&params).map_err(|e| ConfigError::msg(e.to_string()))?;
    Ok((Arc::new(params), resolved))
}

fn kind_names() -> String {
    KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}
