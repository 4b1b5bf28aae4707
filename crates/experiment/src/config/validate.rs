//! The checks that the types alone do not make (ranges, uniqueness, what fits the data), each
//! naming the field and what was expected.

use backbone::InputKind;
use data::Modality;

use super::experiment::ExperimentConfig;
use super::sections::Precision;
use crate::error::ConfigError;
use crate::methods::Recalibration;
use report::summary::Variant;
use runtime::Backend;

pub(super) fn fail(field: &str, what: impl Into<String>) -> Result<(), ConfigError> {
    Err(ConfigError::msg(format!("{field}: {}", what.into())))
}

/// `field` refused by another crate's check, whose error is the source.
pub(super) fn failed(
    field: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> Result<(), ConfigError> {
    Err(ConfigError::caused(field, source))
}

impl ExperimentConfig {
    /// Every check, in the order an experiment file reads: run, data, backbone, methods.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        self.validate_run()?;
        self.validate_modality()?;
        self.validate_backend()?;
        self.validate_groups()?;
        self.validate_margins()?;
        self.validate_data()?;
        self.validate_backbone()?;
        self.validate_zero_shot()?;
        self.train.check().map_err(ConfigError::msg)?;
        self.validate_methods()?;
        self.validate_names()?;
        self.validate_bases()?;
        self.validate_baseline()?;
        self.validate_claims()
    }

    /// A baseline the file names is one of its methods (left out, it is the method named
    /// `single` where there is one, and none otherwise).
    fn validate_baseline(&self) -> Result<(), ConfigError> {
        let Some(baseline) = &self.eval.baseline else {
            return Ok(());
        };
        if self.methods.iter().any(|m| &m.name == baseline) {
            return Ok(());
        }
        let names: Vec<&str> = self.methods.iter().map(|m| m.name.as_str()).collect();
        fail(
            "eval.baseline",
            format!(
                "`{baseline}` is not a method of the run; expected a [[method]] name: {}",
                names.join(", ")
            ),
        )
    }

    /// `[experiment]` and `[eval]`, and a validation split for temperature scaling.
    fn validate_run(&self) -> Result<(), ConfigError> {
        if self.experiment.name.is_empty() || self.experiment.name.contains(['/', '\\']) {
            return fail(
                "experiment.name",
                "must be a non-empty name without slashes",
            );
        }
        if self.experiment.seeds.is_empty() {
            return fail("experiment.seeds", "needs at least one seed");
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
            return fail("eval.timing_rounds", "must be at least 1");
        }
        let calibrates = self.eval.calibration == Recalibration::Temperature
            || (self.methods.iter()).any(|m| m.calibration == Recalibration::Temperature);
        if calibrates && self.data.val_fraction == 0.0 {
            return fail(
                "data.val_fraction",
                "temperature scaling is fitted on the validation split: set it above 0",
            );
        }
        if self.data.eval_batch_size == 0 {
            return fail("data.eval_batch_size", "must be at least 1");
        }
        Ok(())
    }

    /// The backend is compiled in and can evaluate the requested precision.
    fn validate_backend(&self) -> Result<(), ConfigError> {
        // Before the backend check, so that it holds whichever backends are compiled in.
        if self.eval.precision == Precision::Bf16 && self.experiment.backend == Backend::Ndarray {
            return fail(
                "eval.precision",
                "\"bf16\" needs bf16 tensors, which the ndarray backend lacks; use flex, tch or \
                 cuda, or leave precision at \"f32\"",
            );
        }
        if let Err(e) = self.experiment.backend.device() {
            return failed("experiment.backend", e);
        }
        self.validate_devices()
    }

    /// `[experiment] devices`: distinct, and one device (0) on a CPU backend.
    fn validate_devices(&self) -> Result<(), ConfigError> {
        let (devices, backend) = (&self.experiment.devices, self.experiment.backend);
        if let Some((i, d)) = (devices.iter().enumerate()).find(|(i, d)| devices[..*i].contains(d))
        {
            return fail(
                "experiment.devices",
                format!("device {d} is listed twice (at {i}); expected distinct devices"),
            );
        }
        if backend.is_cpu() && devices.iter().any(|&d| d != 0) {
            return fail(
                "experiment.devices",
                format!(
                    "{devices:?} on backend `{backend}`, which runs on one device, the CPU \
                     ([0]); several devices need a GPU backend: cuda, wgpu or tch-cuda"
                ),
            );
        }
        Ok(())
    }

    /// Dropout rates are probabilities below 1.
    fn validate_backbone(&self) -> Result<(), ConfigError> {
        let b = &self.backbone;
        for (field, p) in [
            ("backbone.dropout", b.dropout),
            ("backbone.attention_dropout", b.attention_dropout),
        ] {
            if !(0.0..1.0).contains(&p) {
                return fail(field, format!("{p} is outside [0, 1)"));
            }
        }
        Ok(())
    }

    /// At least one method, each valid for this experiment and its backbone.
    fn validate_methods(&self) -> Result<(), ConfigError> {
        if self.methods.is_empty() {
            return fail("[[method]]", "the experiment lists no method");
        }
        let setting = self.setting();
        let architecture = self.architecture()?;
        for (i, m) in self.methods.iter().enumerate() {
            let at = |e: ConfigError| e.at(&format!("[[method]] #{}", i + 1));
            m.check(&self.train, &setting).map_err(at)?;
            if !m.method.needs().met_by(architecture) {
                return Err(at(ConfigError::msg(format!(
                    "method `{}` (kind `{}`) needs a Vision Transformer; the backbone is {}",
                    m.name, m.kind, architecture
                ))));
            }
        }
        Ok(())
    }

    /// The names results carry are distinct: each method's, `<name>+ts` for a calibrated one and
    /// `<name>+bf16` when bf16 is evaluated too.
    fn validate_names(&self) -> Result<(), ConfigError> {
        let mut names = std::collections::HashSet::new();
        for name in self.entry_names() {
            if !names.insert(name.clone()) {
                return fail(
                    "[[method]] name",
                    format!("`{name}` is used twice; give each method a distinct `name`"),
                );
            }
        }
        Ok(())
    }

    /// Every entry the run evaluates: each method, then each variant of it (`+ts`, `+bf16`).
    pub(super) fn entry_names(&self) -> Vec<String> {
        let bf16 = (self.eval.precision == Precision::Bf16).then_some(Variant::Bf16);
        let mut out = Vec::new();
        for m in &self.methods {
            let calibrated = self.calibrates(m).then_some(Variant::Ts);
            // The plain entry (no variant), then each variant the run evaluates.
            let variants =
                std::iter::once(None).chain([calibrated, bf16].into_iter().flatten().map(Some));
            out.extend(variants.map(|v| Variant::name(v, &m.name)));
        }
        out
    }

    /// The OOD sets hold the dataset's modality, and the backbone fits it.
    fn validate_modality(&self) -> Result<(), ConfigError> {
        let modality = self.modality()?;
        for source in &self.data.ood {
            match source.modality() {
                Ok(m) if m == modality => {}
                Ok(m) => {
                    let name = source.name();
                    return fail(
                        "data.ood",
                        format!("`{name}` holds {m:?} data, the dataset {modality:?} data"),
                    );
                }
                Err(unknown) => return Err(ConfigError::caused("data.ood", unknown)),
            }
        }
        self.validate_disk_sets()?;
        let b = &self.backbone;
        let overrides = [
            b.preset.is_some(),
            b.patch_size.is_some(),
            b.d_model.is_some(),
            b.n_layers.is_some(),
            b.n_heads.is_some(),
            b.d_mlp.is_some(),
        ];
        if b.pretrained.is_some() && b.checkpoint.is_some() {
            return fail(
                "backbone.checkpoint",
                "give `pretrained` (a registered backbone) or `checkpoint` (a path), not both",
            );
        }
        if b.is_pretrained() && overrides.contains(&true) {
            return fail(
                "backbone",
                "preset and shape overrides describe a ViT trained from scratch; a pretrained \
                 backbone has the shape of its pretrained checkpoint",
            );
        }
        if let Some(name) = (b.pretrained.clone())
            .or_else(|| b.checkpoint.as_ref().map(|p| p.display().to_string()))
        {
            let architecture = self.architecture()?;
            let fits = match modality {
                Modality::Image => architecture.reads() == InputKind::Images,
                Modality::Text => architecture.reads() == InputKind::Tokens,
            };
            if !fits {
                return fail(
                    "backbone.pretrained",
                    format!(
                        "`{name}` is {architecture}, which reads {}; the dataset `{}` holds \
                         {modality:?} data",
                        architecture.reads(),
                        self.data.dataset.name()
                    ),
                );
            }
        }
        match modality {
            Modality::Image => self.validate_image_backbone(),
            Modality::Text => self.validate_text(),
        }
    }

    /// Images: a ViT preset unless the backbone is pretrained.
    fn validate_image_backbone(&self) -> Result<(), ConfigError> {
        if self.backbone.is_pretrained() {
            return Ok(());
        }
        let Some(preset) = &self.backbone.preset else {
            return fail(
                "backbone.preset",
                format!(
                    "missing (or give `pretrained`); valid presets: {}",
                    backbone::PRESETS.listed()
                ),
            );
        };
        match backbone::ViTConfig::preset(preset) {
            Err(e) => failed("backbone.preset", e),
            Ok(_) => Ok(()),
        }
    }

    /// Texts: a pretrained BERT, no image corruptions or resizing.
    fn validate_text(&self) -> Result<(), ConfigError> {
        if !self.backbone.is_pretrained() {
            return fail(
                "backbone.pretrained",
                format!(
                    "missing: the text dataset `{}` needs a BERT checkpoint folder under the data \
                     root (e.g. \"all-minilm-l6-v2\", from `datasets/fetch`)",
                    self.data.dataset.name()
                ),
            );
        }
        if !self.data.shift.is_empty() {
            return fail(
                "data.shift",
                "corruptions apply to images; this dataset holds texts",
            );
        }
        if self.data.image_size.is_some() {
            return fail(
                "data.image_size",
                "images are resized; this dataset holds texts",
            );
        }
        Ok(())
    }
}
