//! The training recipe, as written in an experiment's `[train]` table.

use serde::{Deserialize, Serialize};

/// How to train a classifier. Defaults follow common small-ViT recipes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    pub epochs: usize,
    pub batch_size: usize,
    /// Peak learning rate of AdamW.
    pub lr: f64,
    pub weight_decay: f64,
    /// Linear warm-up length in epochs (fractions allowed), then cosine decay to zero.
    pub warmup_epochs: f64,
    pub label_smoothing: f64,
    /// Gradient norm clip, applied per parameter tensor by Burn's AdamW; 0 turns it off.
    pub grad_clip: f64,
    /// Random-crop padding in pixels (0: no crop augmentation).
    pub crop_padding: usize,
    /// Random horizontal flips (off for digits and text).
    pub flip: bool,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            epochs: 10,
            batch_size: 128,
            lr: 1e-3,
            weight_decay: 0.05,
            warmup_epochs: 1.0,
            label_smoothing: 0.0,
            grad_clip: 1.0,
            crop_padding: 0,
            flip: false,
        }
    }
}

impl TrainConfig {
    /// Checks the ranges the types do not; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        let fail = |field: &str, what: String| Err(format!("train.{field}: {what}"));
        if self.batch_size == 0 {
            return fail("batch_size", "must be at least 1".into());
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return fail("lr", format!("{} must be a positive number", self.lr));
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return fail(
                "label_smoothing",
                format!("{} is outside [0, 1)", self.label_smoothing),
            );
        }
        for (field, v) in [
            ("weight_decay", self.weight_decay),
            ("grad_clip", self.grad_clip),
            ("warmup_epochs", self.warmup_epochs),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return fail(field, format!("{v} must be a non-negative number"));
            }
        }
        Ok(())
    }
}
