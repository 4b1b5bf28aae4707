//! The registry of method kinds ([`KINDS`]) and a `[[method]]` entry parsed through it
//! ([`MethodSpec`]).

use std::sync::Arc;

use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use registry::{Entry, Registry};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use train::TrainConfig;

use super::context::{Setting, train_with};
use super::efficient::FromScratch;
use super::method::{Method, Recalibration};
use super::{baselines, hetdpt, hydra, lora, pruned};
use crate::error::{ConfigError, Result};

/// Parses a kind's parameter table into the method and its resolved parameters.
pub type ParseParams = fn(toml::Table) -> Result<(Arc<dyn Method>, toml::Table), ConfigError>;

/// Every method kind, for the TOML `kind` key and `uqformer list`.
pub const KINDS: Registry<ParseParams> = Registry::new(
    "method kind",
    &[
        Entry {
            name: "single",
            about: "the base model alone",
            item: parse::<baselines::Single>,
        },
        Entry {
            name: "deep_ensemble",
            about: "M independently trained models (members = M)",
            item: parse::<baselines::DeepEnsemble>,
        },
        Entry {
            name: "mc_dropout",
            about: "dropout on at test time, S samples (samples = S; p = [backbone] dropout)",
            item: parse::<baselines::McDropout>,
        },
        Entry {
            name: "lora_ensemble",
            about: "a frozen backbone, N members differing by low-rank adapters on Q/K/V/O (members, rank, scale, init_gain, head_init, backbone = pretrained | base)",
            item: parse::<lora::LoraEnsemble>,
        },
        Entry {
            name: "batch_ensemble",
            about: "shared weights with per-member rank-1 fast weights, trained from scratch (members, fast_init)",
            item: parse::<FromScratch<BatchEnsembleConfig>>,
        },
        Entry {
            name: "mimo",
            about: "M inputs and M outputs through one network, trained from scratch (members, input_repetition)",
            item: parse::<FromScratch<MimoConfig>>,
        },
        Entry {
            name: "packed_ensemble",
            about: "M narrow members packed in one grouped network, trained from scratch (members, alpha, gamma)",
            item: parse::<FromScratch<PackedConfig>>,
        },
        Entry {
            name: "hydra",
            about: "M members pruning different heads of the base model, fused into one pass (members, importance, keep, merge, ...)",
            item: parse::<hydra::Hydra>,
        },
        Entry {
            name: "hetdpt",
            about: "depth pruning of attention branches and GELUs with an accuracy predictor, merged and distilled (budget, ...)",
            item: parse::<hetdpt::HetDpt>,
        },
        Entry {
            name: "pruned",
            about: "the base model pruned by a criterion over one unit kind, at a ratio or budget (criterion, unit, ratio | budget, scope, sweep, finetune)",
            item: parse::<pruned::Pruned>,
        },
    ],
);

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
    /// `base = "<method name>"`: built on that method's model instead of the seed's base model.
    pub base: Option<String>,
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
                    KINDS.listed()
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
        let base = match table.remove("base") {
            Some(toml::Value::String(b)) => Some(b),
            Some(other) => {
                return Err(ConfigError::msg(format!(
                    "method `{name}`: `base` must name another [[method]], found {other}"
                )));
            }
            None => None,
        };
        let registered =
            (KINDS.get(&kind)).map_err(|unknown| ConfigError::caused("kind", unknown))?;
        let (method, params) =
            (registered.item)(table).map_err(|e| e.at(&format!("kind `{kind}`")))?;
        Ok(Self {
            name,
            kind: registered.name,
            params,
            train,
            calibration,
            base,
            method,
        })
    }

    /// How many members the method's predictions have.
    pub fn members(&self) -> usize {
        self.method.members()
    }

    /// `[train]` with this method's overrides applied.
    pub fn train_config(&self, base: &TrainConfig) -> Result<TrainConfig, ConfigError> {
        train_with(base, &self.train, &self.name)
    }

    /// Checks the method against the experiment's `[train]` and settings.
    pub(crate) fn check(&self, recipe: &TrainConfig, setting: &Setting) -> Result<(), ConfigError> {
        train_with(recipe, &self.train, &self.name)?;
        (self.method.check(setting))
            .map_err(|e| ConfigError::caused(format!("method `{}`", self.name), e))
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
        if let Some(base) = &self.base {
            table.insert("base".into(), base.clone().into());
        }
        table.serialize(serializer)
    }
}

/// Parses a kind's parameters (serde: unknown keys are errors naming the valid ones, absent keys
/// take the defaults the parameter type declares) and returns them re-serialised with the
/// defaults filled in.
fn parse<T>(table: toml::Table) -> Result<(Arc<dyn Method>, toml::Table), ConfigError>
where
    T: Method + DeserializeOwned + Serialize + 'static,
{
    let params = T::deserialize(toml::Value::Table(table))
        .map_err(|e| ConfigError::caused("parameters", e))?;
    let resolved =
        toml::Table::try_from(&params).map_err(|e| ConfigError::caused("parameters", e))?;
    Ok((Arc::new(params), resolved))
}
