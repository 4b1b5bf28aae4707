//! [`ExperimentConfig`]: the whole file, read once by [`ExperimentConfig::load`] with the
//! command line's [`Overrides`], and what the rest of the pipeline asks of it.

use std::path::Path;

use backbone::Architecture;
use data::Modality;
use importers::{PRETRAINED, Pretrained, checkpoint_architecture};
use registry::Entry;
use serde::{Deserialize, Serialize};
use train::TrainConfig;

use super::sections::{BackboneSection, DataSection, EvalSection, ExperimentSection};
use crate::error::ConfigError;
use crate::methods::{MethodSpec, Recalibration, Setting};
use runtime::Backend;

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
    /// The claims the experiment sets out to test (`[[claim]]`), decided apart from the
    /// exploratory comparisons ([`report::decide_claims`]).
    #[serde(rename = "claim", skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<report::Claim>,
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
    #[serde(default)]
    claim: Vec<report::Claim>,
}

/// Values given on the command line over an experiment file's `[experiment]` keys. They are
/// set on the file's values before validation, so they are checked and recorded in the resolved
/// config (`config.toml`) like the file's own.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `[experiment] backend`.
    pub backend: Option<Backend>,
    /// `[experiment] seeds`.
    pub seeds: Option<Vec<u64>>,
    /// `[experiment] devices`.
    pub devices: Option<Vec<usize>>,
}

impl Overrides {
    fn apply(&self, experiment: &mut ExperimentSection) {
        if let Some(backend) = self.backend {
            experiment.backend = backend;
        }
        if let Some(seeds) = &self.seeds {
            experiment.seeds = seeds.clone();
        }
        if let Some(devices) = &self.devices {
            experiment.devices = devices.clone();
        }
    }
}

impl ExperimentConfig {
    /// Reads an experiment file, sets `overrides` over it and validates the result; every error
    /// names the file.
    pub fn load(path: &Path, overrides: &Overrides) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::caused("cannot read the file", e).in_file(&file))?;
        Self::parse_with(&text, overrides).map_err(|e| e.in_file(&file))
    }

    /// Parses and validates experiment TOML text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        Self::parse_with(text, &Overrides::default())
    }

    /// Parses experiment TOML text, sets `overrides` over it and validates the result.
    fn parse_with(text: &str, overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut raw: RawConfig = toml::from_str(text)
            .map_err(|e| ConfigError::caused("not a valid experiment file", e))?;
        overrides.apply(&mut raw.experiment);
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
            claims: raw.claim,
        };
        config.validate()?;
        Ok(config)
    }

    /// What a method's check and build may know of the experiment.
    pub fn setting(&self) -> Setting {
        Setting {
            dropout: self.backbone.dropout,
            val_fraction: self.data.val_fraction,
            pretrained: self.backbone.is_pretrained(),
        }
    }

    /// Whether `method` gets a temperature-scaled entry, by its own key or by `[eval]`.
    pub fn calibrates(&self, method: &MethodSpec) -> bool {
        method.calibration == Recalibration::Temperature
            || self.eval.calibration == Recalibration::Temperature
    }

    /// The registered pretrained backbone `[backbone] pretrained` names, if any (an error
    /// listing the registered ones for an unknown name).
    pub fn pretrained(&self) -> Result<Option<&'static Entry<Pretrained>>, ConfigError> {
        let Some(name) = &self.backbone.pretrained else {
            return Ok(None);
        };
        (PRETRAINED.get(name).map(Some))
            .map_err(|unknown| ConfigError::caused("backbone.pretrained", unknown))
    }

    /// The backbone's family: the pretrained checkpoint's (a registered one, or the one
    /// `[backbone] checkpoint` names, told by its `config.json`), else a ViT (every preset is
    /// one).
    pub fn architecture(&self) -> Result<Architecture, ConfigError> {
        if let Some(path) = &self.backbone.checkpoint {
            return checkpoint_architecture(path)
                .map_err(|e| ConfigError::caused("backbone.checkpoint", e));
        }
        Ok(self
            .pretrained()?
            .map_or(Architecture::Vit, |p| p.item.architecture))
    }

    /// Whether the in-distribution dataset holds images or texts (an error for unknown names).
    pub fn modality(&self) -> Result<Modality, ConfigError> {
        (self.data.dataset.modality())
            .map_err(|unknown| ConfigError::caused("data.dataset", unknown))
    }
}
