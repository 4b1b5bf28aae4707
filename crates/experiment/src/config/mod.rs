//! The experiment TOML schema and its validation.
//!
//! Every section rejects unknown keys (serde lists the valid ones in the message), and
//! [`ExperimentConfig::load`] prefixes each error with the file name.

mod sections;
mod validate;

pub use sections::{
    BackboneSection, DataSection, EvalSection, ExperimentSection, OodGroups, Precision, ScoreList,
    ShiftSpec,
};

use std::path::Path;

use backbone::Architecture;
use data::{Catalog, Modality};
use importers::{PRETRAINED, Pretrained};
use serde::{Deserialize, Serialize};
use train::TrainConfig;

use crate::error::ConfigError;
use crate::methods::{MethodSpec, Recalibration, Setting};

/// A whole experiment file, after validation.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentConfig {
    pub experiment: ExperimentSection,
    pub data: DataSection,
    pub backbone: BackboneSection,
    pub train: TrainConfig,
    pub eval: EvalSection,
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
    eval: EvalSection,
    #[serde(default)]
    method: Vec<toml::Table>,
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
            eval: raw.eval,
            methods,
        };
        config.validate()?;
        Ok(config)
    }

    /// What a method's check and build may know of the experiment.
    pub fn setting(&self) -> Setting {
        Setting {
            dropout: self.backbone.dropout,
            val_fraction: self.data.val_fraction,
            pretrained: self.backbone.pretrained.is_some(),
        }
    }

    /// Whether `method` gets a temperature-scaled entry, by its own key or by `[eval]`.
    pub fn calibrates(&self, method: &MethodSpec) -> bool {
        method.calibration == Recalibration::Temperature
            || self.eval.calibration == Recalibration::Temperature
    }

    /// The registered pretrained backbone `[backbone] pretrained` names, if any (an error
    /// listing the registered ones for an unknown name).
    pub fn pretrained(&self) -> Result<Option<&'static Pretrained>, ConfigError> {
        let Some(name) = &self.backbone.pretrained else {
            return Ok(None);
        };
        let entry = PRETRAINED.iter().find(|p| p.name == name);
        entry.map(Some).ok_or_else(|| {
            let names: Vec<_> = PRETRAINED.iter().map(|p| p.name).collect();
            ConfigError::msg(format!(
                "backbone.pretrained: unknown backbone {name:?}; valid: {}",
                names.join(", ")
            ))
        })
    }

    /// The backbone's family: the pretrained checkpoint's, else a ViT (every preset is one).
    pub fn architecture(&self) -> Result<Architecture, ConfigError> {
        Ok(self
            .pretrained()?
            .map_or(Architecture::Vit, |p| p.architecture))
    }

    /// Whether the in-distribution dataset holds images or texts (an error for unknown names).
    pub fn modality(&self) -> Result<Modality, ConfigError> {
        modality_of(&self.data.dataset).map_err(|e| ConfigError::msg(format!("data.dataset: {e}")))
    }
}

/// The modality of a catalog dataset, or the list of known names.
fn modality_of(name: &str) -> Result<Modality, String> {
    Catalog::names()
        .iter()
        .find(|d| d.name == name)
        .map(|d| d.modality())
        .ok_or_else(|| {
            let known: Vec<&str> = Catalog::names().iter().map(|d| d.name).collect();
            format!("unknown dataset `{name}`; known: {}", known.join(", "))
        })
}
