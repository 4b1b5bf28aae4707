//! The experiment TOML schema and its validation.
//!
//! Every section rejects unknown keys (serde lists the valid ones in the message), and
//! [`ExperimentConfig::load`] prefixes each error with the file name.

mod sections;

pub use sections::{
    BackboneSection, DataSection, EvalSection, ExperimentSection, OodGroups, Precision, ScoreList,
    ShiftSpec,
};

use std::path::Path;

use data::{Catalog, Modality};
use serde::{Deserialize, Serialize};
use train::TrainConfig;
use uq_metrics::OodScore;

use crate::compare::DEFAULT_MARGINS;
use crate::error::ConfigError;
use crate::methods::{Calibration, MethodSpec, Setting};
use crate::results::Variant;

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

    /// The `[data] ood_score` list parsed, the headline score first: an error names the field
    /// and the score, and refuses an empty list and repeats.
    pub fn ood_scores(&self) -> Result<Vec<OodScore>, ConfigError> {
        let names = self.data.ood_score.names();
        if names.is_empty() {
            return Err(ConfigError::msg(
                "data.ood_score: an empty list; expected at least one score",
            ));
        }
        let mut scores = Vec::with_capacity(names.len());
        for name in names {
            let score: OodScore =
                (name.parse()).map_err(|e| ConfigError::msg(format!("data.ood_score: {e}")))?;
            if scores.contains(&score) {
                return Err(ConfigError::msg(format!(
                    "data.ood_score: `{name}` is listed twice"
                )));
            }
            scores.push(score);
        }
        Ok(scores)
    }

    /// Every grouped OOD set is one of `[data] ood`, in one group.
    fn validate_groups(&self) -> Result<(), ConfigError> {
        let mut seen: Vec<&str> = Vec::new();
        for (group, sets) in self.data.ood_groups.groups() {
            for set in sets {
                if !self.data.ood.contains(set) {
                    return Err(ConfigError::msg(format!(
                        "data.ood_groups.{group}: `{set}` is not an OOD set of the run; expected \
                         one of data.ood: {:?}",
                        self.data.ood
                    )));
                }
                if seen.contains(&set.as_str()) {
                    return Err(ConfigError::msg(format!(
                        "data.ood_groups: `{set}` is in both groups; expected one"
                    )));
                }
                seen.push(set);
            }
        }
        Ok(())
    }

    /// Every margin names a compared metric (a family, or one OOD set's AUROC) and is above 0.
    fn validate_margins(&self) -> Result<(), ConfigError> {
        for (metric, &margin) in &self.eval.margins {
            let known = DEFAULT_MARGINS.iter().any(|(k, _)| k == metric)
                || (metric
                    .strip_prefix("ood.")
                    .and_then(|m| m.strip_suffix(".auroc")))
                .is_some_and(|set| set == "mean" || self.data.ood.iter().any(|s| s == set));
            if !known {
                let families: Vec<&str> = DEFAULT_MARGINS.iter().map(|(k, _)| *k).collect();
                return Err(ConfigError::msg(format!(
                    "eval.margins: `{metric}` is not a compared metric; expected one of {} or \
                     ood.<set>.auroc for a set of data.ood (or ood.mean.auroc)",
                    families.join(", ")
                )));
            }
            if !(margin.is_finite() && margin > 0.0) {
                return Err(ConfigError::msg(format!(
                    "eval.margins.\"{metric}\": {margin}; expected a finite number above 0"
                )));
            }
        }
        Ok(())
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
        method.calibration == Calibration::Temperature
            || self.eval.calibration == Calibration::Temperature
    }

    /// Whether the in-distribution dataset holds images or texts (an error for unknown names).
    pub fn modality(&self) -> Result<Modality, ConfigError> {
        modality_of(&self.data.dataset).map_err(|e| ConfigError::msg(format!("data.dataset: {e}")))
    }

    /// The backbone fits the data: a ViT preset for images; pretrained BERT weights for text,
    /// with OOD sets of the same modality, no image corruptions and methods that take text.
    fn validate_modality(&self) -> Result<(), ConfigError> {
        let fail = |field: &str, what: String| Err(ConfigError::msg(format!("{field}: {what}")));
        let modality = self.modality()?;
        for name in &self.data.ood {
            match modality_of(name) {
                Ok(m) if m == modality => {}
                Ok(m) => {
                    return fail(
                        "data.ood",
                        format!("`{name}` holds {m:?} data, the dataset {modality:?} data"),
                    );
                }
                Err(e) => return fail("data.ood", e),
            }
        }
        let b = &self.backbone;
        let overrides = [
            b.preset.is_some(),
            b.patch_size.is_some(),
            b.d_model.is_some(),
            b.n_layers.is_some(),
            b.n_heads.is_some(),
            b.d_mlp.is_some(),
        ];
        if b.pretrained.is_some() && overrides.contains(&true) {
            return fail(
                "backbone",
                "preset and shape overrides describe a ViT trained from scratch; a pretrained \
                 backbone has the shape of its pretrained checkpoint"
                    .into(),
            );
        }
        match modality {
            Modality::Image => {
                if b.pretrained.is_none() {
                    let Some(preset) = &b.preset else {
                        return fail(
                            "backbone.preset",
                            format!(
                                "missing (or give `pretrained`); valid presets: {}",
                                backbone::ViTConfig::preset_names().join(", ")
                            ),
                        );
                    };
                    if let Err(e) = backbone::ViTConfig::preset(preset) {
                        return fail("backbone.preset", e.to_string());
                    }
                }
            }
            Modality::Text => {
                if b.pretrained.is_none() {
                    return fail(
                        "backbone.pretrained",
                        format!(
                            "missing: the text dataset `{}` needs a BERT checkpoint folder under \
                             the data root (e.g. \"all-minilm-l6-v2\", from `datasets/fetch`)",
                            self.data.dataset
                        ),
                    );
                }
                if !self.data.shift.is_empty() {
                    return fail(
                        "data.shift",
                        "corruptions apply to images; this dataset holds texts".into(),
                    );
                }
                if self.data.image_size.is_some() {
                    return fail(
                        "data.image_size",
                        "images are resized; this dataset holds texts".into(),
                    );
                }
                for (i, m) in self.methods.iter().enumerate() {
                    if !m.method.supports_text() {
                        return Err(ConfigError::msg(format!(
                            "method `{}` (kind `{}`) works on image datasets only; the dataset `{}` \
                             holds texts",
                            m.name, m.kind, self.data.dataset
                        ))
                        .at(&format!("[[method]] #{}", i + 1)));
                    }
                }
            }
        }
        Ok(())
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
        let alpha = self.eval.conformal_alpha;
        if !(alpha > 0.0 && alpha < 1.0) {
            return fail("eval.conformal_alpha", format!("{alpha} is outside (0, 1)"));
        }
        if self.eval.timing_rounds == 0 {
            return fail("eval.timing_rounds", "must be at least 1".into());
        }
        let calibrates = self.eval.calibration == Calibration::Temperature
            || self
                .methods
                .iter()
                .any(|m| m.calibration == Calibration::Temperature);
        if calibrates && self.data.val_fraction == 0.0 {
            return fail(
                "data.val_fraction",
                "temperature scaling is fitted on the validation split: set it above 0".into(),
            );
        }
        if self.data.eval_batch_size == 0 {
            return fail("data.eval_batch_size", "must be at least 1".into());
        }
        self.validate_modality()?;
        // Before the backend check, so that it holds whichever backends are compiled in.
        if self.eval.precision == Precision::Bf16 && self.experiment.backend == "ndarray" {
            return fail(
                "eval.precision",
                "\"bf16\" needs bf16 tensors, which the ndarray backend lacks; use flex, tch or \
                 cuda, or leave precision at \"f32\""
                    .into(),
            );
        }
        if let Err(e) = crate::device::device(&self.experiment.backend) {
            return fail("experiment.backend", e.to_string());
        }
        self.ood_scores()?;
        self.validate_groups()?;
        self.validate_margins()?;
        if self.data.image_size == Some(0) {
            return fail("data.image_size", "must be at least 1 pixel".into());
        }
        if self.data.train_limit == Some(0) || self.data.test_limit == Some(0) {
            return fail(
                "data.train_limit / data.test_limit",
                "must be at least 1".into(),
            );
        }
        if !(self.data.test_fraction > 0.0 && self.data.test_fraction < 1.0) {
            return fail(
                "data.test_fraction",
                format!("{} is outside (0, 1)", self.data.test_fraction),
            );
        }
        if self.data.max_tokens < 2 {
            return fail(
                "data.max_tokens",
                format!(
                    "{} leaves no room for [CLS] and [SEP]; expected at least 2",
                    self.data.max_tokens
                ),
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
        let setting = self.setting();
        for (i, m) in self.methods.iter().enumerate() {
            (m.check(&self.train, &setting))
                .map_err(|e| e.at(&format!("[[method]] #{}", i + 1)))?;
        }
        // The names results carry: each method's, `<name>+ts` for a calibrated one and
        // `<name>+bf16` when bf16 is evaluated too.
        let mut names = std::collections::HashSet::new();
        for m in &self.methods {
            let calibrated = self.calibrates(m).then_some(Variant::Ts);
            let bf16 = (self.eval.precision == Precision::Bf16).then_some(Variant::Bf16);
            // The plain entry (no variant), then each variant the run evaluates.
            let variants =
                std::iter::once(None).chain([calibrated, bf16].into_iter().flatten().map(Some));
            for name in variants.map(|v| Variant::name(v, &m.name)) {
                if !names.insert(name.clone()) {
                    return fail(
                        "[[method]] name",
                        format!("`{name}` is used twice; give each method a distinct `name`"),
                    );
                }
            }
        }
        Ok(())
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
