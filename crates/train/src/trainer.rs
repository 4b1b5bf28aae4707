//! The training loop: seeded batches and augmentation, AdamW with a cosine schedule, a NaN guard,
//! a checkpoint after every epoch and resumption from the last one.

use backbone::{Classifier, Gates, Input, Mode};
use burn::grad_clipping::GradientClippingConfig;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Tensor};
use data::{AugmentConfig, BatchPlan, mix};
use rand::SeedableRng;
use rand::rngs::StdRng;
use seam::Trainable;

use crate::adamw::FusedAdamW;
use crate::checkpoint::{Checkpoint, CheckpointState, Damage, Loaded, TrainTotals};
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::history::{EpochRecord, History};
use crate::inputs::Data;
use crate::loss::{cross_entropy, distillation};
use crate::progress::Progress;
use crate::readings::Readings;
use crate::schedule::cosine_with_warmup;
use crate::validate::{Validation, validate};

/// Where and how one training run happens.
#[derive(Debug, Clone)]
pub struct FitOptions<'a> {
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
    /// Measured after every epoch in evaluation mode, into the epoch's record
    /// ([`EpochRecord::val_loss`], [`EpochRecord::val_accuracy`]); the training draws the same
    /// with or without it.
    pub validation: Option<Data<'a>>,
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
    opts: &FitOptions<'_>,
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
    model: M,
    data: impl Into<Data<'a>>,
    config: &TrainConfig,
    opts: &FitOptions<'_>,
) -> Result<(M, FitReport), TrainError> {
    let data = data.into();
    check(&data, config, opts)?;
    // Keep the last partial batch only when the set is smaller than one batch.
    let drop_last = data.len() >= config.batch_size;
    let plan = BatchPlan::new(data.len(), config.batch_size, Some(opts.seed), drop_last)
        .map_err(|e| TrainError::data(data.name(), e))?;
    let clip =
        (config.grad_clip > 0.0).then_some(GradientClippingConfig::Norm(config.grad_clip as f32));
    let mut optim = ModuleOptimizer::from(FusedAdamW::new(config.weight_decay as f32));
    if let Some(clip) = clip {
        optim = optim.with_grad_clipping(clip.init());
    }
    let mut session = resume(model, optim, config, opts)?;
    let steps_per_epoch = plan.num_batches();
    let mut progress = Progress::new(
        &opts.label,
        config.epochs,
        steps_per_epoch,
        session.start * steps_per_epoch,
        opts.quiet,
    );
    let stop = opts
        .stop_after
        .map_or(config.epochs, |n| (session.start + n).min(config.epochs));
    let schedule = Schedule {
        plan: &plan,
        warmup: (config.warmup_epochs * steps_per_epoch as f64).round() as usize,
        total_steps: config.epochs * steps_per_epoch,
    };
    for epoch in session.start..stop {
        let started = std::time::Instant::now();
        session = session.train_epoch(epoch, &data, config, opts, &schedule, &mut progress)?;
        // Timed before validating: the epoch's seconds are the training's cost alone.
        let seconds = started.elapsed().as_secs_f64();
        let validation = (opts.validation.as_ref())
            .map(|val| validate(&session.model, val, config.batch_size, &opts.device))
            .transpose()?;
        session.end_epoch(epoch, seconds, &progress, validation, opts)?;
    }
    session.report.totals = session.totals;
    Ok((session.model, session.report))
}

/// The configuration, the distillation and the data, checked before anything is built.
fn check(data: &Data, config: &TrainConfig, opts: &FitOptions<'_>) -> Result<(), TrainError> {
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
    if let Some(val) = opts.validation.filter(Data::is_empty) {
        return Err(TrainError::Invalid(format!(
            "{}: the validation set {} is empty (pass none to train without validation)",
            opts.label,
            val.name()
        )));
    }
    Ok(())
}

/// The batches of every epoch and the learning-rate schedule over all of them.
struct Schedule<'p> {
    plan: &'p BatchPlan,
    warmup: usize,
    total_steps: usize,
}

/// A training in progress: the model and optimiser, where it stands, what it has cost.
struct Session<M> {
    model: M,
    optim: ModuleOptimizer,
    /// The first epoch this call trains (the checkpoint's epochs are done).
    start: usize,
    totals: TrainTotals,
    history: History,
    report: FitReport,
}

/// The session to continue: the checkpoint's when a sound one exists, else a fresh one (a
/// damaged checkpoint is set aside and recorded).
fn resume<M: Trainable>(
    model: M,
    optim: ModuleOptimizer,
    config: &TrainConfig,
    opts: &FitOptions<'_>,
) -> Result<Session<M>, TrainError> {
    let mut session = Session {
        model,
        optim,
        start: 0,
        totals: TrainTotals::default(),
        history: History::default(),
        report: FitReport::default(),
    };
    let Some(checkpoint) = &opts.checkpoint else {
        return Ok(session);
    };
    match checkpoint.load(session.model.clone(), session.optim.clone())? {
        Loaded::Nothing => {}
        Loaded::Damaged(damage) => {
            eprintln!("warning: {}: {damage}, retraining from scratch", opts.label);
            let file = damage.set_aside_file();
            session.history.recovered.push(file.display().to_string());
            session.report.recovered = Some(damage);
        }
        Loaded::Checkpoint {
            model,
            optim,
            state,
        } => {
            (session.model, session.optim) = (model, optim);
            (session.start, session.totals) = (state.epochs_done, state.totals);
            session.history = state.history.clone();
            if session.start < config.epochs {
                session.history.resumed_from.push(session.start);
                session.report.resumed_from = Some(session.start);
                eprintln!(
                    "resumed {} from epoch {} of {} (checkpoint {})",
                    opts.label,
                    session.start,
                    config.epochs,
                    checkpoint.model_file(&state).display()
                );
            }
            session.report.state = Some(state);
        }
    }
    Ok(session)
}

impl<M: Trainable> Session<M> {
    /// One epoch's steps, interrupted (with an error) when a stop signal has come. Takes the
    /// session by value so the optimiser gets the only handle on the model's tensors.
    fn train_epoch(
        mut self,
        epoch: usize,
        data: &Data,
        config: &TrainConfig,
        opts: &FitOptions<'_>,
        schedule: &Schedule,
        progress: &mut Progress,
    ) -> Result<Self, TrainError> {
        // Per-epoch seeds, so a resumed run draws exactly what an uninterrupted one would.
        let epoch_seed = mix(opts.seed, epoch as u64);
        opts.device.seed(epoch_seed);
        let mut rng = StdRng::seed_from_u64(epoch_seed ^ 0x05EE_DA06);
        let augment = AugmentConfig {
            pad: config.crop_padding,
            hflip: config.flip,
        };
        let augmenting = augment != AugmentConfig::default();
        progress.start_epoch(epoch);
        let mut readings = Readings::new();
        let steps_per_epoch = schedule.plan.num_batches();
        for (i, indices) in schedule.plan.epoch(epoch as u64).enumerate() {
            // Checked before every step; a model read back fully trained needs none.
            if let Some(signal) = crate::interrupt::requested() {
                progress.break_line();
                return Err(TrainError::Interrupted {
                    label: opts.label.clone(),
                    signal,
                    epochs_done: epoch,
                    epochs: config.epochs,
                    checkpointed: opts.checkpoint.is_some(),
                });
            }
            let input = data.batch(
                &indices,
                augmenting.then_some((&augment, &mut rng)),
                &opts.device,
            )?;
            let labels = data.labels(&indices, &opts.device);
            let logits = self.model.train_logits(input.clone());
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
            let grads = GradientsParams::from_grads(loss.backward(), &self.model);
            let step = epoch * steps_per_epoch + i;
            let lr = cosine_with_warmup(config.lr, step, schedule.warmup, schedule.total_steps);
            self.model = self.optim.step(lr, self.model, grads);
            self.totals.steps += 1;
            self.totals.samples += indices.len() as u64;
            if readings.due() {
                readings.read(progress, &opts.label, epoch)?;
            }
        }
        readings.read(progress, &opts.label, epoch)?;
        progress.end_epoch();
        Ok(self)
    }

    /// The epoch's record and checkpoint.
    fn end_epoch(
        &mut self,
        epoch: usize,
        seconds: f64,
        progress: &Progress,
        validation: Option<Validation>,
        opts: &FitOptions<'_>,
    ) -> Result<(), TrainError> {
        self.totals.wall_seconds += seconds;
        let (loss, accuracy) = progress.epoch_stats();
        self.history.epochs.push(EpochRecord {
            epoch: epoch + 1,
            loss,
            accuracy,
            seconds,
            val_loss: validation.map(|v| v.loss),
            val_accuracy: validation.map(|v| v.accuracy),
        });
        if let Some(checkpoint) = &opts.checkpoint {
            let state = checkpoint.save(
                &self.model,
                &self.optim,
                epoch + 1,
                self.totals,
                &self.history,
            )?;
            self.report.state = Some(state);
        }
        Ok(())
    }
}
