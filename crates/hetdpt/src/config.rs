//! The `[hetdpt]` parameters, as written in an experiment's method table.

use serde::{Deserialize, Serialize};
use train::TrainConfig;

use crate::error::HetDptError;

/// How the speed of a pruned model is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Median wall time of the merged model's forward pass at `latency_batch`, after warm-up.
    Latency,
    /// FLOPs per image of the merged model (deterministic; no timing noise).
    Flops,
}

/// What the MAP choice optimises. Written as `budget = { min_speedup = 1.3 }` or
/// `budget = { max_accuracy_drop = 0.01 }`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// Maximise predicted accuracy among points (of the whole search range) at least this much
    /// faster than the base.
    MinSpeedup(f64),
    /// Maximise speed among points whose predicted accuracy is at most this far (a
    /// fraction, 0.01 = one point) below the predicted accuracy of the unpruned model.
    MaxAccuracyDrop(f64),
}

/// HetDPT+: width pruning applied with the chosen depth pruning, before the final fine-tune.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WidthConfig {
    /// Fraction of MLP hidden channels kept in every block that keeps its GELU, in (0, 1]
    /// (default 1); channels are ranked by magnitude, `‖W1[:, j]‖·‖W2[j, :]‖`.
    #[serde(default = "one")]
    pub mlp_keep: f64,
    /// Head pruning (absent: all heads kept).
    #[serde(default)]
    pub heads: Option<HeadWidth>,
}

/// The removal order from a criterion of the pruning seam: attention branches and GELUs each
/// ranked once on the unpruned model, the lowest-scored removed first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderConfig {
    /// A criterion that scores both `attention` and `gelu` units (`pruning::CRITERIA`).
    pub criterion: String,
    /// Its parameters.
    #[serde(default)]
    pub params: toml::Table,
}

/// Head pruning for HetDPT+, scored on the unpruned model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadWidth {
    /// A head criterion of the pruning seam (`taylor`, `magnitude`, ...; see `pruning::CRITERIA`).
    pub strategy: String,
    /// The strategy's parameters.
    #[serde(default)]
    pub params: toml::Table,
    /// Heads kept in every block (the top-scored ones).
    pub keep: usize,
    /// Training images (seeded stratified subset) the strategy scores on.
    #[serde(default = "default_calibration_images")]
    pub calibration_images: usize,
}

fn one() -> f64 {
    1.0
}

fn default_calibration_images() -> usize {
    256
}

/// Every knob of the pipeline; the defaults suit `vit_tiny_28` on a few thousand images.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HetDptConfig {
    /// Largest number of attention branches removed in the MAP grid (default L / 2).
    pub max_attn: Option<usize>,
    /// Largest number of GELUs removed in the MAP grid (default L / 2).
    pub max_act: Option<usize>,
    /// Training steps of the gate scores in each removal round.
    pub importance_steps: usize,
    /// SGD step size of the gate scores.
    pub importance_lr: f64,
    /// Weight of the sparsity pressure `Σ b` on the (binarised) gates.
    pub sparsity: f64,
    /// Initial gate score; each round draws every score in (init / 2, init] (positive: every
    /// gate starts on).
    pub importance_init: f64,
    /// Training images (seeded stratified subset) the gate scores are trained on.
    pub importance_images: usize,
    /// Training images (seeded stratified subset) each MAP point is fine-tuned on.
    pub map_images: usize,
    /// Fine-tune epochs of each MAP point (0: measure without fine-tuning).
    pub map_epochs: usize,
    /// How many values of each removal count the MAP measures, spread evenly over 0..=max_attn
    /// (0..=max_act), both ends included (default degree + 2, at least degree + 1; capped at
    /// every value). The budget search scores every point of the grid, measured or not.
    pub map_values: Option<usize>,
    /// Total degree of the MAP polynomial in (m_a, m_g).
    pub degree: usize,
    pub speed: Speed,
    /// Batch size at which latency is measured (absent: [`DEFAULT_LATENCY_BATCH`]; uqformer
    /// sets it to the run's evaluation batch, so the speed-up HetDPT reports and the run's
    /// latency table measure at one batch).
    pub latency_batch: Option<usize>,
    pub budget: Budget,
    /// Batch size of every fine-tune and of the gate-score training.
    pub batch_size: usize,
    /// Peak learning rate of every fine-tune (AdamW, cosine decay, no warm-up).
    pub lr: f64,
    /// Epochs of the final fine-tune (with distillation) of the chosen model.
    pub finetune_epochs: usize,
    /// Training images of the final fine-tune (None: the whole training set).
    pub finetune_images: Option<usize>,
    /// Distillation weight: loss = (1 - alpha)·CE + alpha·distillation.
    pub alpha: f64,
    /// Distillation temperature (0: the teacher's hard labels, as in DeiT).
    pub temperature: f64,
    /// HetDPT+ width pruning (absent: depth only).
    pub width: Option<WidthConfig>,
    /// The removal order by a criterion of the pruning seam, on `importance_images` training
    /// images (absent: HetDPT's own removal rounds of learnable gates).
    pub order: Option<OrderConfig>,
}

/// The latency batch when the configuration leaves it out.
pub const DEFAULT_LATENCY_BATCH: usize = 64;

impl Default for HetDptConfig {
    fn default() -> Self {
        Self {
            max_attn: None,
            max_act: None,
            importance_steps: 30,
            importance_lr: 1.0,
            sparsity: 0.05,
            importance_init: 0.5,
            importance_images: 1000,
            map_images: 1000,
            map_epochs: 1,
            map_values: None,
            degree: 2,
            speed: Speed::Latency,
            latency_batch: None,
            budget: Budget::MinSpeedup(1.3),
            batch_size: 64,
            lr: 5e-4,
            finetune_epochs: 2,
            finetune_images: None,
            alpha: 0.5,
            temperature: 1.0,
            width: None,
            order: None,
        }
    }
}

impl WidthConfig {
    fn check(&self) -> Result<(), HetDptError> {
        if !(self.mlp_keep > 0.0 && self.mlp_keep <= 1.0) {
            return Err(HetDptError::config(
                "width.mlp_keep",
                self.mlp_keep,
                "a fraction in (0, 1]",
            ));
        }
        let Some(heads) = &self.heads else {
            return Ok(());
        };
        for (field, v) in [
            ("width.heads.keep", heads.keep),
            ("width.heads.calibration_images", heads.calibration_images),
        ] {
            if v == 0 {
                return Err(HetDptError::config(field, v, "a positive integer"));
            }
        }
        pruning::criterion_for(&heads.strategy, &heads.params, pruning::UnitKind::Head)
            .map(drop)
            .map_err(|e| HetDptError::hydra("hetdpt.width.heads.strategy", e.into()))
    }
}

impl Budget {
    fn check(&self) -> Result<(), HetDptError> {
        match *self {
            Budget::MinSpeedup(s) if !(s >= 1.0 && s.is_finite()) => Err(HetDptError::config(
                "budget.min_speedup",
                s,
                "a finite speed-up >= 1",
            )),
            Budget::MaxAccuracyDrop(d) if !(0.0..=1.0).contains(&d) => Err(HetDptError::config(
                "budget.max_accuracy_drop",
                d,
                "a fraction in [0, 1]",
            )),
            _ => Ok(()),
        }
    }
}

impl HetDptConfig {
    /// The batch size latency is measured at.
    pub fn latency_batch(&self) -> usize {
        self.latency_batch.unwrap_or(DEFAULT_LATENCY_BATCH)
    }

    /// Checks every field the types do not; the error names it (`hetdpt.<field>`).
    pub fn check(&self) -> Result<(), HetDptError> {
        self.check_counts()?;
        self.check_rates()?;
        self.budget.check()?;
        if let Some(w) = &self.width {
            w.check()?;
        }
        if let Some(order) = &self.order {
            for kind in [pruning::UnitKind::Attention, pruning::UnitKind::Gelu] {
                pruning::criterion_for(&order.criterion, &order.params, kind)
                    .map_err(|e| HetDptError::pruning("hetdpt.order.criterion", e))?;
            }
        }
        Ok(())
    }

    /// The integer fields: sizes and counts.
    fn check_counts(&self) -> Result<(), HetDptError> {
        for (field, v) in [
            ("importance_steps", self.importance_steps),
            ("importance_images", self.importance_images),
            ("map_images", self.map_images),
            ("degree", self.degree),
            ("latency_batch", self.latency_batch()),
            ("batch_size", self.batch_size),
        ] {
            if v == 0 {
                return Err(HetDptError::config(field, v, "a positive integer"));
            }
        }
        if let Some(v) = self.map_values
            && v < self.degree + 1
        {
            return Err(HetDptError::config(
                "map_values",
                v,
                format!(
                    "at least degree + 1 = {} (fewer values along an axis make the degree-{} fit \
                     singular)",
                    self.degree + 1,
                    self.degree
                ),
            ));
        }
        if self.finetune_images == Some(0) {
            return Err(HetDptError::config(
                "finetune_images",
                0,
                "a positive integer (or leave it out for the whole training set)",
            ));
        }
        Ok(())
    }

    /// The real-valued fields: rates, weights and temperatures.
    fn check_rates(&self) -> Result<(), HetDptError> {
        for (field, v) in [("importance_lr", self.importance_lr), ("lr", self.lr)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(HetDptError::config(field, v, "a finite number > 0"));
            }
        }
        for (field, v) in [
            ("sparsity", self.sparsity),
            ("temperature", self.temperature),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(HetDptError::config(field, v, "a finite number >= 0"));
            }
        }
        if !(self.importance_init > 0.0 && self.importance_init.is_finite()) {
            return Err(HetDptError::config(
                "importance_init",
                self.importance_init,
                "a finite number > 0 (every gate starts on)",
            ));
        }
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(HetDptError::config(
                "alpha",
                self.alpha,
                "a weight in [0, 1]",
            ));
        }
        Ok(())
    }

    /// The width settings checked against a model with `heads` heads per block.
    pub(crate) fn check_heads(&self, heads: usize) -> Result<(), HetDptError> {
        match self.width.as_ref().and_then(|w| w.heads.as_ref()) {
            Some(h) if h.keep > heads => Err(HetDptError::config(
                "width.heads.keep",
                h.keep,
                format!("at most the model's {heads} heads per block"),
            )),
            _ => Ok(()),
        }
    }

    /// The MAP grid's largest (n_a, n_g) for an encoder of `layers` blocks: the configured
    /// values or L / 2, each at most L and at least `degree` (fewer distinct values along an
    /// axis than degree + 1 would make the least-squares fit singular).
    pub fn grid(&self, layers: usize) -> Result<(usize, usize), HetDptError> {
        let pick = |field: &str, v: Option<usize>| {
            let v = v.unwrap_or(layers / 2);
            if v > layers || v < self.degree {
                return Err(HetDptError::config(
                    field,
                    v,
                    format!(
                        "between degree = {} and the number of blocks L = {layers} \
                         (a degree-{} fit needs at least {} values of each ratio)",
                        self.degree,
                        self.degree,
                        self.degree + 1
                    ),
                ));
            }
            Ok(v)
        };
        Ok((
            pick("max_attn", self.max_attn)?,
            pick("max_act", self.max_act)?,
        ))
    }

    /// The removal counts the MAP measures along an axis whose largest is `max`: `map_values`
    /// of 0..=max, evenly spread (rounded), both ends included.
    pub(crate) fn measured_values(&self, max: usize) -> Vec<usize> {
        let k = self.map_values.unwrap_or(self.degree + 2).min(max + 1);
        if k <= 1 {
            return vec![0];
        }
        (0..k).map(|i| (i * max + (k - 1) / 2) / (k - 1)).collect()
    }

    /// The recipe of a fine-tune of `epochs` epochs: AdamW at `lr` with cosine decay and no
    /// warm-up (the weights are already trained), no augmentation.
    pub(crate) fn recipe(&self, epochs: usize) -> TrainConfig {
        TrainConfig {
            epochs,
            batch_size: self.batch_size,
            lr: self.lr,
            warmup_epochs: 0.0,
            ..TrainConfig::default()
        }
    }
}

#[cfg(test)]
mod tests;
