//! The whole method: removal orders, MAP points and fit, the choice, optional width pruning,
//! and the final fine-tune with distillation from the unpruned model.

use std::time::Instant;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use data::mix;
use serde::Serialize;
use train::{ImageData, TrainTotals};

use crate::config::{Budget, HetDptConfig, Speed};
use crate::error::HetDptError;
use crate::finetune::final_finetune;
use crate::map::{Candidate, Choice, MapFit, MapPoint};
use crate::measure::{accuracy, latencies, latency_sample};
use crate::order::RemovalOrder;
use crate::pruned::{PrunedViT, Removal, merge};
use crate::ranked::removal;
use crate::search::{Mapper, search};
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

/// What HetDPT's own training cost: the gate-score rounds (one training of the 2L gate scores),
/// every MAP fine-tune and the final distilled fine-tune (HetDPT+'s width pruning trains
/// nothing). The base model's training is not included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Training {
    pub trainings: usize,
    pub steps: u64,
    pub samples: u64,
    pub wall_seconds: f64,
    /// Parameters updated, summed over the trainings.
    pub trainable_params: u64,
}

impl Training {
    fn add(&mut self, totals: TrainTotals, params: usize) {
        if totals.steps == 0 {
            return;
        }
        self.trainings += 1;
        self.steps += totals.steps;
        self.samples += totals.samples;
        self.wall_seconds += totals.wall_seconds;
        self.trainable_params += params as u64;
    }
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
    /// One per measured (n_a, n_g): the grid's, n_a major, then any the search added.
    pub points: Vec<MapPoint>,
    pub fit: MapFit,
    /// Every (n_a, n_g) of the search range, n_a major, with the MAP's prediction (capped at
    /// the unpruned model's measured accuracy) and its FLOP speed-up (`speedup` is set on
    /// those the search checked).
    pub grid: Vec<Candidate>,
    /// No prediction exceeds this: the unpruned model's validation accuracy.
    pub prediction_cap: f64,
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
    /// The returned model's speed-up by the configured measure (`speed`: FLOPs or latency).
    pub achieved_speedup: f64,
    /// Whether the returned model meets the budget: `achieved_speedup` at least
    /// `min_speedup`, or its measured accuracy at most `max_accuracy_drop` below the unpruned
    /// model's.
    pub budget_met: bool,
    pub training: Training,
    pub timing: Timing,
}

/// What HetDPT compresses and learns from.
#[derive(Debug, Clone, Copy)]
pub struct Task<'a> {
    /// The trained ViT, on the plain `device`.
    pub base: &'a VisionTransformer,
    /// The config `base` was built from.
    pub vit: &'a ViTConfig,
    /// The fine-tunes' data (the MAP's points on a seeded subset of it).
    pub train: ImageData<'a>,
    /// Where accuracy is measured (the MAP's points, the unpruned and the returned model).
    pub val: ImageData<'a>,
    /// Plain; trainings run on its autodiff twin.
    pub device: &'a Device,
    /// Every random choice derives from it.
    pub seed: u64,
}

/// Runs HetDPT on `task.base`:
/// 1. removal orders of attention branches and GELUs (learnable gate scores, alternating kinds);
/// 2. the MAP: the measured (n_a, n_g) of the grid merged, fine-tuned briefly on a subset of
///    `train`, their `val` accuracy measured; a polynomial fitted; (n_a, n_g) chosen by budget
///    over every point of the grid (the search, `search.rs`);
/// 3. the chosen model merged (and width-pruned for HetDPT+), then fine-tuned on `train` with
///    distillation from `base`.
pub fn compress(task: &Task<'_>, cfg: &HetDptConfig) -> Result<Outcome, HetDptError> {
    let Task {
        base,
        vit,
        train,
        val,
        device,
        seed,
    } = *task;
    let start = Instant::now();
    check(base, vit, train, val, cfg)?;
    let layers = vit.n_layers;
    let (max_attn, max_act) = cfg.grid(layers)?;
    let mut training = Training::default();

    let order = removal(base, train, (max_attn, max_act), cfg, device, mix(seed, 1))?;
    let importance_s = start.elapsed().as_secs_f64();
    let gates = TrainTotals {
        wall_seconds: importance_s,
        steps: order.steps,
        samples: order.samples,
    };
    training.add(gates, 2 * layers);

    let reference = merge(base, &Removal::none(layers))?;
    let base_accuracy = accuracy(&reference, val, device)?;
    let mapper = Mapper::new(base, &order, train, val, cfg, device, seed)?;
    let sample = latency_sample(val, cfg.latency_batch(), device)?;
    let found = search(
        &mapper,
        &reference,
        &sample,
        (max_attn, max_act),
        base_accuracy,
    )?;
    for (_, totals, params) in &found.trained {
        training.add(*totals, *params);
    }
    let map_s = start.elapsed().as_secs_f64() - importance_s;

    let choice = &found.choice;
    let removal = Removal::first(layers, &order.attn, choice.n_attn, &order.act, choice.n_act);
    let (model, width) = build(base, &removal, train, cfg, device, seed)?;
    let (model, totals) = final_finetune(base, model, train, cfg, device, seed)?;
    training.add(totals, model.num_params());
    let finetune_s = start.elapsed().as_secs_f64() - importance_s - map_s;

    let measured = Measured::of(&reference, base_accuracy, &model, val, &sample, cfg, device)?;
    let report = HetDptReport {
        layers,
        importance: order,
        speed: cfg.speed,
        points: found.points,
        fit: found.fit,
        grid: found.grid,
        prediction_cap: base_accuracy,
        choice: found.choice,
        removal,
        width,
        base: measured.base,
        pruned: measured.pruned,
        speedup: measured.speedup,
        achieved_speedup: measured.achieved_speedup,
        budget_met: measured.budget_met,
        training,
        timing: Timing {
            importance: importance_s,
            map: map_s,
            finetune: finetune_s,
            total: start.elapsed().as_secs_f64(),
        },
    };
    Ok(Outcome { model, report })
}

/// The chosen removal applied to `base`: merged, and narrowed too for HetDPT+.
fn build(
    base: &VisionTransformer,
    removal: &Removal,
    train: ImageData<'_>,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<(PrunedViT, Option<WidthReport>), HetDptError> {
    Ok(match &cfg.width {
        Some(w) => {
            let (narrowed, report) = width::apply(base, removal, w, train, device, mix(seed, 5))?;
            (narrowed, Some(report))
        }
        None => (merge(base, removal)?, None),
    })
}

/// The unpruned and the returned model measured side by side, and the budget judged.
struct Measured {
    base: ModelSummary,
    pruned: ModelSummary,
    speedup: f64,
    achieved_speedup: f64,
    budget_met: bool,
}

impl Measured {
    fn of(
        reference: &PrunedViT,
        base_accuracy: f64,
        model: &PrunedViT,
        val: ImageData<'_>,
        sample: &Tensor<4>,
        cfg: &HetDptConfig,
        device: &Device,
    ) -> Result<Self, HetDptError> {
        let timed = latencies(&[reference, model], sample);
        let summary = |m: &PrunedViT, accuracy: f64, latency_ms: f64| ModelSummary {
            accuracy,
            params: m.num_params(),
            flops: m.flops(),
            latency_ms,
        };
        let base = summary(reference, base_accuracy, timed[0]);
        let pruned = summary(model, accuracy(model, val, device)?, timed[1]);
        let speedup = timed[0] / timed[1];
        let achieved_speedup = match cfg.speed {
            Speed::Flops => base.flops as f64 / pruned.flops as f64,
            Speed::Latency => speedup,
        };
        let budget_met = match cfg.budget {
            Budget::MinSpeedup(s) => achieved_speedup >= s,
            Budget::MaxAccuracyDrop(d) => base.accuracy - pruned.accuracy <= d,
        };
        Ok(Self {
            base,
            pruned,
            speedup,
            achieved_speedup,
            budget_met,
        })
    }
}

/// The inputs agree: the base model has the config's blocks, the sets are not empty, the grid
/// and the heads fit the model.
fn check(
    base: &VisionTransformer,
    vit: &ViTConfig,
    train: ImageData<'_>,
    val: ImageData<'_>,
    cfg: &HetDptConfig,
) -> Result<(), HetDptError> {
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
    cfg.grid(layers)?;
    cfg.check_heads(vit.n_heads)
}

#[cfg(test)]
mod tests;
