//! The whole method: removal orders, MAP points and fit, the choice, optional width pruning,
//! and the final fine-tune with distillation from the unpruned model.

use std::time::Instant;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use data::{ImageDataset, SubsetSize, stratified_subset};
use serde::Serialize;
use train::{Distill, FitOptions, ImageData, TrainConfig, fit, mix};

use crate::config::{HetDptConfig, Speed};
use crate::error::HetDptError;
use crate::importance::{RemovalOrder, removal_order};
use crate::map::{Choice, MapFit, MapPoint, Polynomial, choose};
use crate::measure::{accuracy, latencies, latency_sample};
use crate::pruned::{PrunedViT, Removal, merge};
use crate::width::{self, WidthReport};

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
    /// One per (n_a, n_g) of the grid, n_a major.
    pub points: Vec<MapPoint>,
    pub fit: MapFit,
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
/// 2. the MAP: every (n_a, n_g) of the grid merged, fine-tuned briefly on a subset of `train`,
///    its `val` accuracy and speed measured; a polynomial fitted; (n_a, n_g) chosen by budget;
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

    let sample = latency_sample(val, cfg.latency_batch, device)?;
    let points = map_points(
        base,
        &order,
        (max_attn, max_act),
        train,
        val,
        &sample,
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
    let choice = choose(&points, &fit.polynomial, layers, cfg.budget);
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

    let reference = merge(base, &Removal::none(layers))?;
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

/// The MAP's measurements: every (n_a, n_g) up to `max` (n_a major) merged, timed on `sample`
/// when speed is latency (all candidates interleaved), fine-tuned briefly on a subset of
/// `train`, and evaluated on `val`.
#[allow(clippy::too_many_arguments)]
fn map_points(
    base: &VisionTransformer,
    order: &RemovalOrder,
    (max_attn, max_act): (usize, usize),
    train: ImageData<'_>,
    val: ImageData<'_>,
    sample: &Tensor<4>,
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
    let grid: Vec<(usize, usize)> = (0..=max_attn)
        .flat_map(|a| (0..=max_act).map(move |g| (a, g)))
        .collect();
    let candidates: Vec<PrunedViT> = grid
        .iter()
        .map(|&(a, g)| merge(base, &Removal::first(layers, &order.attn, a, &order.act, g)))
        .collect::<Result<_, _>>()?;
    let measured = (cfg.speed == Speed::Latency)
        .then(|| latencies(&candidates.iter().collect::<Vec<_>>(), sample));
    // Grid point 0 is (0, 0), the unpruned model.
    let base_flops = candidates[0].flops();
    let mut points = Vec::with_capacity(grid.len());
    for (i, (&(n_attn, n_act), model)) in grid.iter().zip(candidates).enumerate() {
        let (flops, params) = (model.flops(), model.num_params());
        let latency_ms = measured.as_ref().map(|t| t[i]);
        let speedup = match &measured {
            Some(t) => t[0] / t[i],
            None => base_flops as f64 / flops as f64,
        };
        let tuned = finetune(
            model,
            map_data,
            &cfg.recipe(cfg.map_epochs),
            None,
            device,
            mix(seed, 100 + i as u64),
            format!("hetdpt MAP n_a={n_attn} n_g={n_act}"),
        )?;
        points.push(MapPoint {
            n_attn,
            n_act,
            accuracy: accuracy(&tuned, val, device)?,
            latency_ms,
            flops,
            params,
            speedup,
        });
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
