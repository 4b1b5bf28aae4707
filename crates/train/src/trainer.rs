//! The training loop: seeded batches and augmentation, AdamW with a cosine schedule, a NaN guard,
//! a checkpoint after every epoch and resumption from the last one.

use backbone::{Classifier, Gates, Input, Mode};
use burn::grad_clipping::GradientClippingConfig;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Tensor};
use data::{AugmentConfig, BatchPlan, mix};
use rand::SeedableRng;
use rand::rngs::StdRng;
use seam::Trainable;

use crate::checkpoint::{
    Checkpoint, CheckpointState, Damage, EpochRecord, History, Loaded, TrainTotals,
};
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::inputs::Data;
use crate::loss::{cross_entropy, distillation};
use crate::progress::Progress;
use crate::readings::Readings;
use crate::schedule::cosine_with_warmup;

/// Where and how one training run happens.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// An autodiff device (`Device::flex().autodiff()`, ...); the model must live on it.
    pub device: Device,
    /// Drives batch order, augmentation and dropout masks.
    pub seed: u64,
    /// Shown in the progress line and in errors.
    pub label: String,
    pub checkpoint: Option<Checkpoint>,
    /// No progress output (tests). The resume line and a damaged checkpoint's warning are
    /// printed regardless: they say how the result came about, and worker processes (always
    /// quiet) pass them on.
    pub quiet: bool,
    /// Stop after this many epochs in this call (as if the process were killed); for tests.
    pub stop_after: Option<usize>,
    /// Learn from a teacher's predictions as well as the labels.
    pub distill: Option<Distill>,
}

/// Knowledge distillation: the loss becomes `(1 - alpha)·CE(labels) + alpha·D(teacher)` with
/// `D` from [`distillation`] at `temperature` (0 = the teacher's hard labels).
#[derive(Debug, Clone)]
pub struct Distill {
    /// A frozen model on the plain (non-autodiff) device of the training device.
    pub teacher: Classifier,
    pub alpha: f64,
    pub temperature: f64,
}

impl Distill {
    fn check(&self) -> Result<(), TrainError> {
        if !(0.0..=1.0).contains(&self.alpha)
            || !self.temperature.is_finite()
            || self.temperature < 0.0
        {
            return Err(TrainError::Invalid(format!(
                "distillation: alpha = {} must be in [0, 1] and temperature = {} finite and >= 0",
                self.alpha, self.temperature
            )));
        }
        Ok(())
    }

    /// The combined loss for one batch.
    fn loss(&self, input: Input, logits: Tensor<3>, hard: Tensor<1>) -> Tensor<1> {
        // Teacher logits off the autodiff graph: a constant for the student's loss.
        let teacher = self
            .teacher
            .forward(input.inner(), &Gates::none(), Mode::Deterministic);
        let soft = distillation(logits, teacher, self.temperature);
        hard.mul_scalar(1.0 - self.alpha) + soft.mul_scalar(self.alpha)
    }
}

/// Trains `model` (already on `opts.device`) and returns it, resuming from the checkpoint when
/// one exists. The returned model is still on the autodiff device: call `.valid()` to evaluate.
pub fn fit<'a, M: Trainable>(
    model: M,
    data: impl Into<Data<'a>>,
    config: &TrainConfig,
    opts: &FitOptions,
) -> Result<M, TrainError> {
    fit_with_report(model, data, config, opts).map(|(model, _)| model)
}

/// What one [`fit_with_report`] call did with the checkpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitReport {
    /// The checkpoint's state after training (its `history` spans every session); `None`
    /// without a checkpoint or before the first epoch is done.
    pub state: Option<CheckpointState>,
    /// The epoch this call resumed from; `None` when it started afresh or found the model
    /// fully trained (a cache hit is no resume).
    pub resumed_from: Option<usize>,
    /// The damaged checkpoint this call set aside before training from scratch.
    pub recovered: Option<Damage>,
    /// What the model's training cost, with or without a checkpoint (a resumed one includes
    /// the sessions before).
    pub totals: TrainTotals,
}

/// [`fit`], also reporting resumption and recovery. A damaged checkpoint is set aside with a
/// warning on stderr and training starts from scratch; a resume prints
/// `resumed <label> from epoch k of n (checkpoint <file>)`. Both lines are printed even when
/// quiet: they are not progress output.
pub fn fit_with_report<'a, M: Trainable>(
    mut model: M,
    data: impl Into<Data<'a>>,
    config: &TrainConfig,
    opts: &FitOptions,
) -> Result<(M, FitReport), TrainError> {
    let data = data.into();
    config.check().map_err(TrainError::Invalid)?;
    if let Some(distill) = &opts.distill {
        distill.check()?;
    }
    if data.is_empty() {
        return Err(TrainError::Invalid(format!(
            "{}: the training set {} is empty",
            opts.label,
            data.name()
        )));
    }
    // Checked before every step; a model read back fully trained needs none and is returned.
    let interrupted = |epochs_done: usize| {
        crate::interrupt::requested().map(|signal| TrainError::Interrupted {
            label: opts.label.clone(),
            signal,
            epochs_done,
            epochs: config.epochs,
            checkpointed: opts.checkpoint.is_some(),
        })
    };
    let device = &opts.device;
    // Keep the last partial batch only when the set is smaller than one batch.
    let drop_last = data.len() >= config.batch_size;
    let plan = BatchPlan::new(data.len(), config.batch_size, Some(opts.seed), drop_last)
        .map_err(|e| TrainError::Invalid(e.to_string()))?;
    let steps_per_epoch = plan.num_batches();
    let total_steps = config.epochs * steps_per_epoch;
    let warmup = (config.warmup_epochs * steps_per_epoch as f64).round() as usize;
    let clip =
        (config.grad_clip > 0.0).then_some(GradientClippingConfig::Norm(config.grad_clip as f32));
    let mut optim = AdamWConfig::new()
        .with_weight_decay(config.weight_decay as f32)
        .with_grad_clipping(clip)
        .init();

    let mut start = 0;
    let mut totals = TrainTotals::default();
    let mut history = History::default();
    let mut report = FitReport::default();
    if let Some(checkpoint) = &opts.checkpoint {
        match checkpoint.load(model.clone(), optim.clone())? {
            Loaded::Nothing => {}
            Loaded::Damaged(damage) => {
                eprintln!("warning: {}: {damage}, retraining from scratch", opts.label);
                let file = damage.set_aside_file();
                history.recovered.push(file.display().to_string());
                report.recovered = Some(damage);
            }
            Loaded::Checkpoint {
                model: m,
                optim: o,
                state,
            } => {
                (model, optim, start, totals) = (m, o, state.epochs_done, state.totals);
                history = state.history.clone();
                if start < config.epochs {
                    history.resumed_from.push(start);
                    report.resumed_from = Some(start);
                    eprintln!(
                        "resumed {} from epoch {start} of {} (checkpoint {})",
                        opts.label,
                        config.epochs,
                        checkpoint.model_file(&state).display()
                    );
                }
                report.state = Some(state);
            }
        }
    }
    let augment_config = AugmentConfig {
        pad: config.crop_padding,
        hflip: config.flip,
    };
    let augmenting = augment_config != AugmentConfig::default();
    let mut progress = Progress::new(
        &opts.label,
        config.epochs,
        steps_per_epoch,
        start * steps_per_epoch,
        opts.quiet,
    );
    let stop = opts
        .stop_after
        .map_or(config.epochs, |n| (start + n).min(config.epochs));

    for epoch in start..stop {
        // Per-epoch seeds, so a resumed run draws exactly what an uninterrupted one would.
        let epoch_seed = mix(opts.seed, epoch as u64);
        device.seed(epoch_seed);
        let mut rng = StdRng::seed_from_u64(epoch_seed ^ 0x05EE_DA06);
        progress.start_epoch(epoch);
        let mut readings = Readings::new();
        let started = std::time::Instant::now();
        for (i, indices) in plan.epoch(epoch as u64).enumerate() {
            if let Some(e) = interrupted(epoch) {
                progress.break_line();
                return Err(e);
            }
            let step = epoch * steps_per_epoch + i;
            let input = data.batch(
                &indices,
                augmenting.then_some((&augment_config, &mut rng)),
                device,
            )?;
            let labels = data.labels(&indices, device);
            let logits = model.train_logits(input.clone());
            let mut loss = cross_entropy(logits.clone(), labels.clone(), config.label_smoothing);
            if let Some(distill) = &opts.distill {
                loss = distill.loss(input, logits.clone(), loss);
            }
            let predicted = logits
                .inner()
                .mean_dim(0)
                .squeeze_dim::<2>(0)
                .argmax(1)
                .squeeze_dim::<1>(1);
            let correct = predicted.equal(labels.inner()).int().sum();
            readings.push(i, loss.clone().inner(), correct, indices.len());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            let lr = cosine_with_warmup(config.lr, step, warmup, total_steps);
            model = optim.step(lr, model, grads);
            totals.steps += 1;
            totals.samples += indices.len() as u64;
            if readings.due() {
                readings.read(&mut progress, &opts.label, epoch)?;
            }
        }
        readings.read(&mut progress, &opts.label, epoch)?;
        progress.end_epoch();
        let seconds = started.elapsed().as_secs_f64();
        totals.wall_seconds += seconds;
        let (loss, accuracy) = progress.epoch_stats();
        history.epochs.push(EpochRecord {
            epoch: epoch + 1,
            loss,
            accuracy,
            seconds,
        });
        if let Some(checkpoint) = &opts.checkpoint {
            report.state = Some(checkpoint.save(&model, &optim, epoch + 1, totals, &history)?);
        }
    }
    report.totals = totals;
    Ok((model, report))
}
