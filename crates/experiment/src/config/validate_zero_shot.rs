//! The check of `[backbone] zero_shot` against the backbone and the methods.

use backbone::Architecture;

use super::experiment::ExperimentConfig;
use super::validate::fail;
use crate::error::ConfigError;

impl ExperimentConfig {
    /// `[backbone] zero_shot` is given exactly for a CLIP checkpoint, its lists are valid, and
    /// every method runs on a classifier that is never trained.
    pub(super) fn validate_zero_shot(&self) -> Result<(), ConfigError> {
        let b = &self.backbone;
        let clip = b.checkpoint.is_some() && self.architecture()? == Architecture::ClipZeroShot;
        let Some(zero_shot) = &b.zero_shot else {
            if clip {
                return fail(
                    "backbone.zero_shot",
                    "missing: the checkpoint is CLIP, used as a zero-shot classifier; give its \
                     prompts, e.g. zero_shot = { templates = [\"a photo of a {}.\"] } (class \
                     names default to the data set's)",
                );
            }
            return Ok(());
        };
        if !clip {
            let backbone = match &b.checkpoint {
                Some(_) => format!("the checkpoint is {}", self.architecture()?),
                None => "no `checkpoint` is given".to_string(),
            };
            return fail(
                "backbone.zero_shot",
                format!("zero-shot classification needs a CLIP `checkpoint`; {backbone}"),
            );
        }
        zero_shot.classes()?;
        zero_shot.templates()?;
        for (i, m) in self.methods.iter().enumerate() {
            let recipe =
                (m.train_config(&self.train)).map_err(|e| ConfigError::msg(e.to_string()))?;
            if let Err(why) = m.method.on_zero_shot(&recipe) {
                return Err(ConfigError::msg(format!(
                    "method `{}` (kind `{}`) cannot run on a zero-shot classifier: {why}",
                    m.name, m.kind
                ))
                .at(&format!("[[method]] #{}", i + 1)));
            }
        }
        Ok(())
    }
}
