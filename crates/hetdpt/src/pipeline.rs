//! The whole method: removal orders, MAP points and fit, the choice, optional width pruning,
//! and the final fine-tune with distillation from the unpruned model.

use std::time::Instant;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use data::mix;
use data::{ImageDataset, SubsetSize, stratified_subset};
use serde::Serialize;
use train::{Distill, FitOptions, ImageData, TrainConfig, TrainTotals, fit_with_report};

use crate::config::{Budget, HetDptConfig, Speed};
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

/// Points the search may measure beyond the grid before it decides (see [`search`]).
const EXTRA_POINTS: usize = 3;

/// Runs HetDPT on `base` (a trained ViT built from `vit`, on the plain `device`), all random
/// choices seeded from `seed`:
/// 1. removal orders of attention branches and GELUs (learnable gate scores, alternating kinds);
/// 2. the MAP: the measured (n_a, n_g) of the grid merged, fine-tuned briefly on a subset of
///    `train`, their `val` accuracy measured; a polynomial fitted; (n_a, n_g) chosen by budget
///    over every point of the grid ([`search`]);
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
    check(base, vit, train, val, cfg)?;
    let layers = vit.n_layers;
    let (max_attn, max_act) = cfg.grid(layers)?;
    let mut training = Training::default();

    let order = removal_order(base, train, max_attn, max_act, cfg, device, mix(seed, 1))?;
    let importance_s = start.elapsed().as_secs_f64();
    let gates = TrainTotals {
        wall_seconds: importance_s,
        steps: order.steps,
        samples: order.samples,
    };
    training.add(gates, 2 * layers);

    let reference = merge(base, &Removal::none(layers))?;
    let base_accuracy = accuracy(&reference, val, device)?;
    let mapper = Mapper {
        base,
        order: &order,
        map_set: subset(train.set, cfg.map_images, mix(seed, 2))?,
        train,
        val,
        cfg,
        device,
        seed,
    };
    let sample = latency_sample(val, cfg.latency_batch, device)?;
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
    let (model, width) = match &cfg.width {
        Some(w) => {
            let (narrowed, report) = width::apply(base, &removal, w, train, device, mix(seed, 5))?;
            (narrowed, Some(report))
        }
        None => (merge(base, &removal)?, None),
    };
    let (model, totals) = final_finetune(base, model, train, cfg, device, seed)?;
    training.add(totals, model.num_params());
    let finetune_s = start.elapsed().as_secs_f64() - importance_s - map_s;

    let timed = latencies(&[&reference, &model], &sample);
    let summary = |m: &PrunedViT, accuracy: f64, latency_ms: f64| ModelSummary {
        accuracy,
        params: m.num_params(),
        flops: m.flops(),
        latency_ms,
    };
    let base_summary = summary(&reference, base_accuracy, timed[0]);
    let pruned = summary(&model, accuracy(&model, val, device)?, timed[1]);
    let speedup = timed[0] / timed[1];
    let achieved_speedup = match cfg.speed {
        Speed::Flops => base_summary.flops as f64 / pruned.flops as f64,
        Speed::Latency => speedup,
    };
    let budget_met = match cfg.budget {
        Budget::MinSpeedup(s) => achieved_speedup >= s,
        Budget::MaxAccuracyDrop(d) => base_summary.accuracy - pruned.accuracy <= d,
    };
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
        base: base_summary,
        pruned,
        speedup,
        achieved_speedup,
        budget_met,
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

/// Measures MAP points: a merged model fine-tuned briefly on the MAP subset, then evaluated.
struct Mapper<'a> {
    base: &'a VisionTransformer,
    order: &'a RemovalOrder,
    map_set: ImageDataset,
    train: ImageData<'a>,
    val: ImageData<'a>,
    cfg: &'a HetDptConfig,
    device: &'a Device,
    seed: u64,
}

impl Mapper<'_> {
    /// The point (n_a, n_g), the `index`-th measured (its fine-tune's seed), with what its
    /// fine-tune cost and the parameters it trained.
    fn measure(
        &self,
        (n_attn, n_act): (usize, usize),
        index: usize,
    ) -> Result<(MapPoint, TrainTotals, usize), HetDptError> {
        let layers = self.base.encoder.layer.len();
        let removal = Removal::first(layers, &self.order.attn, n_attn, &self.order.act, n_act);
        let model = merge(self.base, &removal)?;
        let (flops, params) = (model.flops(), model.num_params());
        let base_flops = merge(self.base, &Removal::none(layers))?.flops();
        let data = ImageData {
            set: &self.map_set,
            norm: self.train.norm,
        };
        let (tuned, totals) = finetune(
            model,
            data,
            &self.cfg.recipe(self.cfg.map_epochs),
            None,
            self.device,
            mix(self.seed, 100 + index as u64),
            format!("hetdpt MAP n_a={n_attn} n_g={n_act}"),
        )?;
        let point = MapPoint {
            n_attn,
            n_act,
            accuracy: accuracy(&tuned, self.val, self.device)?,
            flops,
            params,
            speedup: base_flops as f64 / flops as f64,
            added_by_search: false,
        };
        Ok((point, totals, params))
    }
}

/// What the search measured, fitted and chose.
struct Found {
    points: Vec<MapPoint>,
    fit: MapFit,
    grid: Vec<Candidate>,
    choice: Choice,
    /// Each MAP fine-tune's cost and trained parameters.
    trained: Vec<((usize, usize), TrainTotals, usize)>,
}

/// The MAP and the choice: the grid's points (`cfg.measured_values` per axis) measured and a
/// polynomial fitted; every point of the search range predicted, capped at `cap` (the unpruned
/// model's measured accuracy: a pruned model is not predicted to beat it); the budget's choice.
/// When the choice is a point the MAP never measured, that point is measured, the polynomial
/// refitted and the choice made again, up to [`EXTRA_POINTS`] times: the decision then rests
/// on a measurement where it lands, at the cost of a few fine-tunes rather than a denser grid.
fn search(
    mapper: &Mapper<'_>,
    reference: &PrunedViT,
    sample: &burn::tensor::Tensor<4>,
    (max_attn, max_act): (usize, usize),
    cap: f64,
) -> Result<Found, HetDptError> {
    let cfg = mapper.cfg;
    let layers = mapper.base.encoder.layer.len();
    let l = layers as f64;
    let mut points = Vec::new();
    let mut trained = Vec::new();
    for n_attn in cfg.measured_values(max_attn) {
        for n_act in cfg.measured_values(max_act) {
            let (point, totals, params) = mapper.measure((n_attn, n_act), points.len())?;
            points.push(point);
            trained.push(((n_attn, n_act), totals, params));
        }
    }
    let order = mapper.order;
    let merged = |a: usize, g: usize| {
        merge(
            mapper.base,
            &Removal::first(layers, &order.attn, a, &order.act, g),
        )
    };
    let mut extra = 0;
    loop {
        let observed: Vec<(f64, f64, f64)> = (points.iter())
            .map(|p| (p.n_attn as f64 / l, p.n_act as f64 / l, p.accuracy))
            .collect();
        let fit = Polynomial::fit(&observed, cfg.degree)?;
        let mut grid = Vec::new();
        for n_attn in 0..=max_attn {
            for n_act in 0..=max_act {
                let predicted = fit.polynomial.predict(n_attn as f64 / l, n_act as f64 / l);
                grid.push(Candidate {
                    n_attn,
                    n_act,
                    predicted_accuracy: predicted.min(cap),
                    flop_speedup: reference.flops() as f64 / merged(n_attn, n_act)?.flops() as f64,
                    speedup: None,
                });
            }
        }
        let measured: Vec<(usize, usize)> = points.iter().map(|p| (p.n_attn, p.n_act)).collect();
        let choice = choose(grid.clone(), &measured, cfg.budget, CHECK_CHUNK, |chunk| {
            Ok(match cfg.speed {
                Speed::Flops => chunk.iter().map(|c| c.flop_speedup).collect(),
                Speed::Latency => {
                    let models: Vec<PrunedViT> = (chunk.iter())
                        .map(|c| merged(c.n_attn, c.n_act))
                        .collect::<Result<_, _>>()?;
                    let all: Vec<&PrunedViT> = std::iter::once(reference).chain(&models).collect();
                    let timed = latencies(&all, sample);
                    timed[1..].iter().map(|t| timed[0] / t).collect()
                }
            })
        })?;
        if choice.measured_point || extra == EXTRA_POINTS {
            return Ok(Found {
                points,
                fit,
                grid,
                choice,
                trained,
            });
        }
        let at = (choice.n_attn, choice.n_act);
        let (mut point, totals, params) = mapper.measure(at, points.len())?;
        point.added_by_search = true;
        points.push(point);
        trained.push((at, totals, params));
        extra += 1;
    }
}

/// The chosen model fine-tuned on `train` (or its `finetune_images` subset) with distillation
/// from `base`.
fn final_finetune(
    base: &VisionTransformer,
    model: PrunedViT,
    train: ImageData<'_>,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<(PrunedViT, TrainTotals), HetDptError> {
    let finetune_set = match cfg.finetune_images {
        Some(n) => Some(subset(train.set, n, mix(seed, 3))?),
        None => None,
    };
    let data = ImageData {
        set: finetune_set.as_ref().unwrap_or(train.set),
        norm: train.norm,
    };
    let distill = Distill {
        teacher: base.clone().into(),
        alpha: cfg.alpha,
        temperature: cfg.temperature,
    };
    finetune(
        model,
        data,
        &cfg.recipe(cfg.finetune_epochs),
        Some(distill),
        device,
        mix(seed, 4),
        "hetdpt fine-tune".into(),
    )
}

/// A seeded stratified subset of at most `n` images.
fn subset(set: &ImageDataset, n: usize, seed: u64) -> Result<ImageDataset, HetDptError> {
    let n = n.min(set.len());
    let idx = stratified_subset(&set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| HetDptError::Invalid(format!("subset of {}: {e}", set.name)))?;
    Ok(set.subset(&idx))
}

/// Fine-tunes `model` (plain device) on `device`'s autodiff twin, with what it cost; no-op for
/// 0 epochs.
fn finetune(
    model: PrunedViT,
    data: ImageData<'_>,
    recipe: &TrainConfig,
    distill: Option<Distill>,
    device: &Device,
    seed: u64,
    label: String,
) -> Result<(PrunedViT, TrainTotals), HetDptError> {
    if recipe.epochs == 0 {
        return Ok((model, TrainTotals::default()));
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
    let (tuned, report) = fit_with_report(trainable, data, recipe, &opts)?;
    Ok((tuned.valid(), report.totals))
}

#[cfg(test)]
mod tests;
