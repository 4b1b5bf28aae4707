//! The experiment TOML schema and its validation.
//!
//! Every section rejects unknown keys (serde lists the valid ones in the message), and
//! [`ExperimentConfig::load`] prefixes each error with the file name.

use std::path::Path;

use serde::{Deserialize, Serialize};

use train::TrainConfig;

use crate::error::ConfigError;
use crate::methods::MethodSpec;

/// A whole experiment file, after validation.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentConfig {
    pub experiment: ExperimentSection,
    pub data: DataSection,
    pub backbone: BackboneSection,
    pub train: TrainConfig,
    #[serde(rename = "method")]
    pub methods: Vec<MethodSpec>,
}

/// The file as written: method tables stay raw until their kind is known.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    experiment: ExperimentSection,
    data: DataSection,
    backbone: BackboneSection,
    #[serde(default)]
    train: TrainConfig,
    #[serde(default)]
    method: Vec<toml::Table>,
}

/// `[experiment]`: name, seeds, device.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSection {
    pub name: String,
    /// One full run (training, methods, evaluation) per seed; results give mean ± std over them.
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// `flex` (CPU, default), `ndarray`, `wgpu` or `cuda`, as compiled in.
    #[serde(default = "default_backend")]
    pub backend: String,
}

/// `[data]`: the in-distribution set, OOD sets and shift corruptions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// A catalog name (`uqformer list` shows them).
    pub dataset: String,
    /// Fraction of the training set held out for validation (seeded split).
    #[serde(default = "default_val_fraction")]
    pub val_fraction: f64,
    /// OOD sets evaluated against the in-distribution test set.
    #[serde(default)]
    pub ood: Vec<String>,
    /// Corrupted copies of the test set.
    #[serde(default)]
    pub shift: Vec<ShiftSpec>,
    #[serde(default = "default_eval_batch")]
    pub eval_batch_size: usize,
    /// OOD score (higher = more likely OOD): msp, entropy, mutual_info, max_logit, energy, ...
    #[serde(default = "default_score")]
    pub ood_score: String,
    /// Use a seeded stratified subset of this many training images (quick runs).
    #[serde(default)]
    pub train_limit: Option<usize>,
    /// Likewise for every evaluation set (ID test, OOD, shifted).
    #[serde(default)]
    pub test_limit: Option<usize>,
}

/// One corruption at one or more severities (1..=5).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShiftSpec {
    pub corruption: String,
    pub severities: Vec<u8>,
}

/// `[backbone]`: a named preset, its dropout, and optional overrides of its shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackboneSection {
    pub preset: String,
    #[serde(default)]
    pub dropout: f64,
    #[serde(default)]
    pub attention_dropout: f64,
    pub patch_size: Option<usize>,
    pub d_model: Option<usize>,
    pub n_layers: Option<usize>,
    pub n_heads: Option<usize>,
    pub d_mlp: Option<usize>,
}

fn default_seeds() -> Vec<u64> {
    vec![0]
}
fn default_backend() -> String {
    "flex".into()
}
fn default_val_fraction() -> f64 {
    0.1
}
fn default_eval_batch() -> usize {
    256
}
fn default_score() -> String {
    "msp".into()
}

impl ExperimentConfig {
    /// Reads and validates an experiment file; every error names the file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(&file, format!("cannot read the file: {e}")))?;
        Self::parse(&text).map_err(|e| e.in_file(&file))
    }

    /// Parses and validates experiment TOML text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::msg(e.to_string()))?;
        let methods = raw
            .method
            .into_iter()
            .enumerate()
            .map(|(i, table)| {
                MethodSpec::from_table(table).map_err(|e| e.at(&format!("[[method]] #{}", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let config = Self {
            experiment: raw.experiment,
            data: raw.data,
            backbone: raw.backbone,
            train: raw.train,
            methods,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks values that the types alone do not (ranges, uniqueness, non-empty lists).
    fn validate(&self) -> Result<(), ConfigError> {
        let fail = |field: &str, what: String| Err(ConfigError::msg(format!("{field}: {what}")));
        if self.experiment.name.is_empty() || self.experiment.name.contains(['/', '\\']) {
            return fail(
                "experiment.name",
                "must be a non-empty name without slashes".into(),
            );
        }
        if self.experiment.seeds.is_empty() {
            return fail("experiment.seeds", "needs at least one seed".into());
        }
        if !(0.0..1.0).contains(&self.data.val_fraction) {
            return fail(
                "data.val_fraction",
                format!("{} is outside [0, 1)", self.data.val_fraction),
            );
        }
        if self.data.eval_batch_size == 0 {
            return fail("data.eval_batch_size", "must be at least 1".into());
        }
        if let Err(e) = backbone::ViTConfig::preset(&self.backbone.preset) {
            return fail("backbone.preset", e.to_string());
        }
        if let Err(e) = crate::device::device(&self.experiment.backend) {
            return fail("experiment.backend", e);
        }
        if let Err(e) = self.data.ood_score.parse::<uq_metrics::Score>() {
            return fail("data.ood_score", e.to_string());
        }
        if self.data.train_limit == Some(0) || self.data.test_limit == Some(0) {
            return fail(
                "data.train_limit / data.test_limit",
                "must be at least 1".into(),
            );
        }
        for s in &self.data.shift {
            if let Err(e) = s.corruption.parse::<data::Corruption>() {
                return fail("data.shift.corruption", e.to_string());
            }
            if s.severities.is_empty() || s.severities.iter().any(|v| !(1..=5).contains(v)) {
                return fail(
                    "data.shift.severities",
                    format!("{:?}: each must be 1 to 5", s.severities),
                );
            }
        }
        for (field, p) in [
            ("backbone.dropout", self.backbone.dropout),
            (
                "backbone.attention_dropout",
                self.backbone.attention_dropout,
            ),
        ] {
            if !(0.0..1.0).contains(&p) {
                return fail(field, format!("{p} is outside [0, 1)"));
            }
        }
        self.train.check().map_err(ConfigError::msg)?;
        if self.methods.is_empty() {
            return fail("[[method]]", "the experiment lists no method".into());
        }
        for (i, m) in self.methods.iter().enumerate() {
            m.check(self)
                .map_err(|e| ConfigError::msg(e).at(&format!("[[method]] #{}", i + 1)))?;
        }
        let mut names = std::collections::HashSet::new();
        for m in &self.methods {
            if !names.insert(m.name.as_str()) {
                return fail(
                    "[[method]] name",
                    format!(
                        "`{}` is used twice; give each method a distinct `name`",
                        m.name
                    ),
                );
            }
        }
        Ok(())
    }
}
