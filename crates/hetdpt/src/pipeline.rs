//! The whole method: removal orders, MAP points and fit, the choice, optional width pruning,
//! and the final fine-tune with distillation from the unpruned model.

use std::time::Instant;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use data::mix;
use data::{ImageDataset, SubsetSize, stratified_subset};
use serde::Serialize;
use train::{Distill, FitOptions, ImageData, TrainConfig, fit};

use crate::config::{HetDptConfig, Speed};
use crate::error::HetDptError;
use crate::importance::{RemovalOrder, removal_order};
use crate::map::{Candidate, Choice, MapFit, MapPoint, Polynomial, choose};
use crate::measure::{accuracy, latencies, latency_sample};
use crate::pruned::{PrunedViT, Removal, merge};
use crate::width::{self, WidthReport};

/// Candidates whose latency the search times together (with the unpruned model).
const CHECK_CHUNK: usize = 4;

/// The pruned model (plain device) and what led to it.
#[derive(Debug)]
pub struct Outcome {
    pub model: PrunedViT,
    pub report: HetDptReport,
}

/// Accuracy and cost of one model, measured on the validation set and the latency batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSummary {
    pub accuracy: f64,
    pub params: usize,
    pub flops: u64,
    pub latency_ms: f64,
}

/// Wall time of each phase, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    pub importance: f64,
    pub map: f64,
    pub finetune: f64,
    pub total: f64,
}

/// Everything HetDPT decided and measured, for the results file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HetDptReport {
    /// Blocks L of the base model.
    pub layers: usize,
    /// Removal order per kind, with the gate scores of every round.
    pub importance: RemovalOrder,
    /// The measure behind every `speedup`.
    pub speed: Speed,
    /// One per measured (n_a, n_g) of the grid, n_a major.
    pub points: Vec<MapPoint>,
    pub fit: MapFit,
    /// Every (n_a, n_g) of the search range, n_a major, with the MAP's prediction and its FLOP
    /// speed-up (measured or not; `speedup` is set on those the search checked).
    pub grid: Vec<Candidate>,
    pub choice: Choice,
    /// The layers the chosen model lacks.
    pub removal: Removal,
    /// HetDPT+ width pruning, when configured.
    pub width: Option<WidthReport>,
    /// The unpruned model.
    pub base: ModelSummary,
    /// The returned model, after its final fine-tune.
    pub pruned: ModelSummary,
    /// Measured latency ratio, base over pruned (timed together, interleaved).
    pub speedup: f64,
    pub timing: Timing,
}

/// Runs HetDPT on `base` (a trained ViT built from `vit`, on the plain `device`), all random
/// choices seeded from `seed`:
/// 1. removal orders of attention branches and GELUs (learnable gate scores, alternating kinds);
/// 2. the MAP: the measured (n_a, n_g) of the grid merged, fine-tuned briefly on a subset of
///    `train`, their `val` accuracy measured; a polynomial fitted; (n_a, n_g) chosen by budget
///    over every point of the grid, the speed of only the candidates considered measured;
/// 3. the chosen model merged (and width-pruned for HetDPT+), then fine-tuned on `train` with
///    distillation from `base`.
pub fn prune(
    base: &VisionTransformer,
    vit: &ViTConfig,
    train: ImageData<'_>,
    val: ImageData<'_>,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<Outcome, HetDptError> {
    let start = Instant::now();
    cfg.check()?;
    let layers = vit.n_layers;
    if base.encoder.layer.len() != layers {
        return Err(HetDptError::Invalid(format!(
            "the base model has {} blocks but its config says n_layers = {layers}",
            base.encoder.layer.len()
        )));
    }
    for (what, set) in [("training", train.set), ("validation", val.set)] {
        if set.is_empty() {
            return Err(HetDptError::Invalid(format!(
                "the {what} set {} is empty",
                set.name
            )));
        }
    }
    let (max_attn, max_act) = cfg.grid(layers)?;
    cfg.check_heads(vit.n_heads)?;

    let order = removal_order(base, train, max_attn, max_act, cfg, device, mix(seed, 1))?;
    let importance_s = start.elapsed().as_secs_f64();

    let reference = merge(base, &Removal::none(layers))?;
    let points = map_points(
        base,
        reference.flops(),
        &order,
        (max_attn, max_act),
        train,
        val,
        cfg,
        device,
        seed,
    )?;
    let l = layers as f64;
    let observed: Vec<(f64, f64, f64)> = points
        .iter()
        .map(|p| (p.n_attn as f64 / l, p.n_act as f64 / l, p.accuracy))
        .collect();
    let fit = Polynomial::fit(&observed, cfg.degree)?;
    let sample = latency_sample(val, cfg.latency_batch, device)?;
    let merged =
        |a: usize, g: usize| merge(base, &Removal::first(layers, &order.attn, a, &order.act, g));
    let mut candidates = Vec::new();
    for n_attn in 0..=max_attn {
        for n_act in 0..=max_act {
            candidates.push(Candidate {
                n_attn,
                n_act,
                predicted_accuracy: fit.polynomial.predict(n_attn as f64 / l, n_act as f64 / l),
                flop_speedup: reference.flops() as f64 / merged(n_attn, n_act)?.flops() as f64,
                speedup: None,
            });
        }
    }
    let grid: Vec<(usize, usize)> = points.iter().map(|p| (p.n_attn, p.n_act)).collect();
    let predicted = candidates.clone();
    let choice = choose(candidates, &grid, cfg.budget, CHECK_CHUNK, |chunk| {
        Ok(match cfg.speed {
            Speed::Flops => chunk.iter().map(|c| c.flop_speedup).collect(),
            Speed::Latency => {
                let models: Vec<PrunedViT> = (chunk.iter())
                    .map(|c| merged(c.n_attn, c.n_act))
                    .collect::<Result<_, _>>()?;
                let timed = latencies(
                    &std::iter::once(&reference)
                        .chain(&models)
                        .collect::<Vec<_>>(),
                    &sample,
                );
                timed[1..].iter().map(|t| timed[0] / t).collect()
            }
        })
    })?;
    let map_s = start.elapsed().as_secs_f64() - importance_s;

    let removal = Removal::first(layers, &order.attn, choice.n_attn, &order.act, choice.n_act);
    let (model, width) = match &cfg.width {
        Some(w) => {
            let (narrowed, report) = width::apply(base, &removal, w, train, device, mix(seed, 5))?;
            (narrowed, Some(report))
        }
        None => (merge(base, &removal)?, None),
    };
    let finetune_set = match cfg.finetune_images {
        Some(n) => Some(subset(train.set, n, mix(seed, 3))?),
        None => None,
    };
    let finetune_data = ImageData {
        set: finetune_set.as_ref().unwrap_or(train.set),
        norm: train.norm,
    };
    let distill = Distill {
        teacher: base.clone().into(),
        alpha: cfg.alpha,
        temperature: cfg.temperature,
    };
    let model = finetune(
        model,
        finetune_data,
        &cfg.recipe(cfg.finetune_epochs),
        Some(distill),
        device,
        mix(seed, 4),
        "hetdpt fine-tune".into(),
    )?;
    let finetune_s = start.elapsed().as_secs_f64() - importance_s - map_s;

    let timed = latencies(&[&reference, &model], &sample);
    let summary = |m: &PrunedViT, latency_ms: f64| -> Result<ModelSummary, HetDptError> {
        Ok(ModelSummary {
            accuracy: accuracy(m, val, device)?,
            params: m.num_params(),
            flops: m.flops(),
            latency_ms,
        })
    };
    let report = HetDptReport {
        layers,
        importance: order,
        speed: cfg.speed,
        points,
        fit,
        grid: predicted,
        choice,
        removal,
        width,
        base: summary(&reference, timed[0])?,
        pruned: summary(&model, timed[1])?,
        speedup: timed[0] / timed[1],
        timing: Timing {
            importance: importance_s,
            map: map_s,
            finetune: finetune_s,
            total: start.elapsed().as_secs_f64(),
        },
    };
    Ok(Outcome { model, report })
}

/// The MAP's measurements: the (n_a, n_g) of `cfg.measured_values` up to `max` (n_a major)
/// merged, fine-tuned briefly on a subset of `train`, and evaluated on `val`; `base_flops` are
/// the unpruned model's.
#[allow(clippy::too_many_arguments)]
fn map_points(
    base: &VisionTransformer,
    base_flops: u64,
    order: &RemovalOrder,
    (max_attn, max_act): (usize, usize),
    train: ImageData<'_>,
    val: ImageData<'_>,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<Vec<MapPoint>, HetDptError> {
    let layers = base.encoder.layer.len();
    let map_set = subset(train.set, cfg.map_images, mix(seed, 2))?;
    let map_data = ImageData {
        set: &map_set,
        norm: train.norm,
    };
    let mut points = Vec::new();
    for n_attn in cfg.measured_values(max_attn) {
        for n_act in cfg.measured_values(max_act) {
            let model = merge(
                base,
                &Removal::first(layers, &order.attn, n_attn, &order.act, n_act),
            )?;
            let (flops, params) = (model.flops(), model.num_params());
            let tuned = finetune(
                model,
                map_data,
                &cfg.recipe(cfg.map_epochs),
                None,
                device,
                mix(seed, 100 + points.len() as u64),
                format!("hetdpt MAP n_a={n_attn} n_g={n_act}"),
            )?;
            points.push(MapPoint {
                n_attn,
                n_act,
                accuracy: accuracy(&tuned, val, device)?,
                flops,
                params,
                speedup: base_flops as f64 / flops as f64,
            });
        }
    }
    Ok(points)
}

/// A seeded stratified subset of at most `n` images.
fn subset(set: &ImageDataset, n: usize, seed: u64) -> Result<ImageDataset, HetDptError> {
    let n = n.min(set.len());
    let idx = stratified_subset(&set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| HetDptError::Invalid(format!("subset of {}: {e}", set.name)))?;
    Ok(set.subset(&idx))
}

/// Fine-tunes `model` (plain device) on `device`'s autodiff twin; no-op for 0 epochs.
fn finetune(
    model: PrunedViT,
    data: ImageData<'_>,
    recipe: &TrainConfig,
    distill: Option<Distill>,
    device: &Device,
    seed: u64,
    label: String,
) -> Result<PrunedViT, HetDptError> {
    if recipe.epochs == 0 {
        return Ok(model);
    }
    let autodiff = device.clone().autodiff();
    let opts = FitOptions {
        device: autodiff.clone(),
        seed,
        label,
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill,
    };
    // `train` re-enables gradients on parameters of a model that was put in validation mode.
    let trainable = model.fork(&autodiff).train();
    Ok(fit(trainable, data, recipe, &opts)?.valid())
}

#[cfg(test)]
mod tests;
