//! What a method runs, in numbers: the trainings it does and the model it evaluates, counted
//! from the base model's [`ModelShape`]. Each method says so itself ([`crate::Method::work`]);
//! `uqformer plan --device` turns it into FLOPs, memory and time ([`crate::estimate`]).

use serde::Serialize;

mod prompts;
mod shape;

pub use prompts::Prompts;
pub use shape::ModelShape;

/// Bytes of one f32 value.
const F32: u64 = 4;

/// What a method's work is counted from.
pub struct Sizing<'a> {
    pub base: &'a ModelShape,
    /// Samples of the seed's training split (after `[data] train_limit`).
    pub train_samples: u64,
    /// The method's `[train]` recipe (its overrides applied): epochs and batch size.
    pub epochs: usize,
    pub batch_size: usize,
}

impl Sizing<'_> {
    /// A training of a model of `params` parameters (`trainable` of them trained) that runs
    /// `forward_flops` per sample and keeps `activation_bytes` per sample for the backward pass,
    /// for the recipe's epochs over the training split at its batch size.
    pub fn training(
        &self,
        what: impl Into<String>,
        forward_flops: u64,
        (params, trainable): (u64, u64),
        activation_bytes: u64,
    ) -> Training {
        Training {
            what: what.into(),
            forward_flops,
            samples: self.train_samples * self.epochs as u64,
            params,
            trainable,
            batch_size: self.batch_size,
            activation_bytes,
        }
    }
}

/// One training (or a scoring pass with gradients): `samples` samples through a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Training {
    pub what: String,
    /// Forward FLOPs per sample.
    pub forward_flops: u64,
    /// Samples over all epochs.
    pub samples: u64,
    pub params: u64,
    /// Parameters with gradients and AdamW state (0: gradients to the input only).
    pub trainable: u64,
    pub batch_size: usize,
    /// Bytes kept per sample for the backward pass.
    pub activation_bytes: u64,
}

impl Training {
    /// FLOPs: forward × 3 per sample (the backward pass costs about twice the forward: the
    /// gradients to the inputs and to the weights of every matmul).
    pub fn flops(&self) -> f64 {
        3.0 * self.forward_flops as f64 * self.samples as f64
    }

    /// Peak bytes in f32: weights, gradients and AdamW's two moments of the trained ones, and
    /// one batch of activations.
    pub fn memory_bytes(&self) -> u64 {
        F32 * (self.params + 3 * self.trainable) + self.batch_size as u64 * self.activation_bytes
    }
}

/// A method's work: its own trainings and the model it predicts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// Trainings it runs beyond the seed's base models (Hydra's scoring and fine-tunes, the
    /// efficient ensembles, LoRA adapters, HetDPT's search and fine-tune).
    pub trainings: Vec<Training>,
    /// Forward FLOPs per evaluated sample, every member included.
    pub eval_flops: u64,
    /// Parameters held at evaluation.
    pub eval_params: u64,
    /// Activation bytes per evaluated sample (members run side by side multiply it).
    pub eval_activation_bytes: u64,
}

impl Work {
    /// `passes` forwards of the base model per sample, one after another, of `models`
    /// distinct sets of weights, training nothing of its own.
    pub fn passes(base: &ModelShape, passes: u64, models: u64) -> Self {
        Self {
            trainings: Vec::new(),
            eval_flops: passes * base.forward_flops(),
            eval_params: models * base.params(),
            eval_activation_bytes: base.eval_activation_bytes(),
        }
    }

    /// Peak bytes of an evaluation batch of `batch` samples in f32.
    pub fn eval_memory_bytes(&self, batch: usize) -> u64 {
        F32 * self.eval_params + batch as u64 * self.eval_activation_bytes
    }
}
