//! The validation pass after each epoch: the model in evaluation mode on a held-out set.

use burn::tensor::{Device, Tensor};
use seam::Trainable;

use crate::error::TrainError;
use crate::inputs::Data;
use crate::loss::cross_entropy;

/// One epoch's measurement on the validation set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Validation {
    /// Mean cross-entropy over samples and members, without label smoothing.
    pub loss: f64,
    /// Share of samples whose mean member logits put the label first (the training
    /// accuracy's rule, so that the two compare).
    pub accuracy: f64,
}

/// `model` measured on `data` in batches of `batch_size`: on a snapshot off the autodiff
/// graph (no gradients), through [`Trainable::eval_logits`] (no dropout, no random draw),
/// with no augmentation. Losses and counts stay on the device until the end, so a GPU is not
/// stalled every batch.
pub fn validate<M: Trainable>(
    model: &M,
    data: &Data,
    batch_size: usize,
    device: &Device,
) -> Result<Validation, TrainError> {
    let model = model.valid();
    let n = data.len();
    let mut loss_sum: Option<Tensor<1>> = None;
    let mut correct_sum = None;
    let starts = (0..n).step_by(batch_size.max(1));
    for start in starts {
        let indices: Vec<usize> = (start..(start + batch_size).min(n)).collect();
        let input = data.batch(&indices, None, device)?.inner();
        let labels = data.labels(&indices, device).inner();
        let logits = model.eval_logits(input);
        let loss = cross_entropy(logits.clone(), labels.clone(), 0.0);
        let predicted = logits
            .mean_dim(0)
            .squeeze_dim::<2>(0)
            .argmax(1)
            .squeeze_dim::<1>(1);
        let correct = predicted.equal(labels).int().sum();
        let loss = loss.mul_scalar(indices.len() as f64);
        loss_sum = Some(loss_sum.map_or(loss.clone(), |s| s + loss));
        correct_sum = Some(correct_sum.map_or(correct.clone(), |s| s + correct));
    }
    let (Some(loss), Some(correct)) = (loss_sum, correct_sum) else {
        return Err(TrainError::Invalid(format!(
            "the validation set {} is empty",
            data.name()
        )));
    };
    let loss: f32 = loss.into_scalar();
    let correct: i64 = correct.into_scalar();
    Ok(Validation {
        loss: f64::from(loss) / n as f64,
        accuracy: correct as f64 / n as f64,
    })
}
