//! `[[method]]` entries: the kinds the runner knows and their parameters.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// One method of an experiment: a display name and what to build.
#[derive(Debug, Clone, Serialize)]
pub struct MethodSpec {
    pub name: String,
    #[serde(flatten)]
    pub kind: MethodKind,
}

/// The method kinds and their parameters, as written in TOML (`kind = "..."`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MethodKind {
    /// The base model alone.
    Single,
    /// M independently seeded models (member 0 is the base model of the seed).
    DeepEnsemble(DeepEnsembleParams),
    /// The base model with dropout kept on at test time, S stochastic passes.
    McDropout(McDropoutParams),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeepEnsembleParams {
    pub members: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McDropoutParams {
    /// Stochastic passes S; dropout is the backbone's (`[backbone] dropout`).
    #[serde(default = "default_samples")]
    pub samples: usize,
}

fn default_samples() -> usize {
    10
}

/// Every kind with a one-line description, for `uqformer list` and error messages.
pub const KINDS: &[(&str, &str)] = &[
    ("single", "the base model alone"),
    (
        "deep_ensemble",
        "M independently trained models (members = M)",
    ),
    (
        "mc_dropout",
        "dropout on at test time, S samples (samples = S; p = [backbone] dropout)",
    ),
];

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
        let kind = match kind.as_str() {
            "single" => params::<Empty>(table, &kind).map(|_| MethodKind::Single)?,
            "deep_ensemble" => MethodKind::DeepEnsemble(params(table, &kind)?),
            "mc_dropout" => MethodKind::McDropout(params(table, &kind)?),
            other => {
                return Err(ConfigError::msg(format!(
                    "unknown method kind `{other}`; valid kinds: {}",
                    kind_names()
                )));
            }
        };
        let spec = Self { name, kind };
        spec.check()?;
        Ok(spec)
    }

    /// How many members the method's predictions have.
    pub fn members(&self) -> usize {
        match &self.kind {
            MethodKind::Single => 1,
            MethodKind::DeepEnsemble(p) => p.members,
            MethodKind::McDropout(p) => p.samples,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            MethodKind::Single => "single",
            MethodKind::DeepEnsemble(_) => "deep_ensemble",
            MethodKind::McDropout(_) => "mc_dropout",
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
        let bad = |what: String| Err(ConfigError::msg(format!("method `{}`: {what}", self.name)));
        match &self.kind {
            MethodKind::DeepEnsemble(p) if p.members < 2 => {
                bad(format!("members = {} must be at least 2", p.members))
            }
            MethodKind::McDropout(p) if p.samples < 2 => {
                bad(format!("samples = {} must be at least 2", p.samples))
            }
            _ => Ok(()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

fn params<T: DeserializeOwned>(table: toml::Table, kind: &str) -> Result<T, ConfigError> {
    T::deserialize(toml::Value::Table(table))
        .map_err(|e| ConfigError::msg(format!("kind `{kind}`: {}", e.message())))
}

fn kind_names() -> String {
    KINDS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}
