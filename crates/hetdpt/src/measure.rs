//! Validation accuracy and measured latency of merged models.

use backbone::Mode;
use burn::tensor::{Device, Tensor};
use seam::timing;
use train::ImageData;

use crate::error::HetDptError;
use crate::pruned::PrunedViT;

/// Forward passes per model before timing starts, and timed passes per model.
const WARMUP: usize = 3;
const REPS: usize = 15;
/// Images per evaluation batch.
const EVAL_BATCH: usize = 256;

/// Top-1 accuracy of `model` on all of `data`.
pub(crate) fn accuracy(
    model: &PrunedViT,
    data: ImageData<'_>,
    device: &Device,
) -> Result<f64, HetDptError> {
    let n = data.set.len();
    let mut correct = 0i64;
    let indices: Vec<usize> = (0..n).collect();
    for chunk in indices.chunks(EVAL_BATCH) {
        let images = data.batch(chunk, None, device)?;
        let labels = data.labels(chunk, device);
        let predicted = model
            .forward(images, Mode::Deterministic)
            .argmax(1)
            .squeeze_dim::<1>(1);
        correct += predicted.equal(labels).int().sum().into_scalar::<i64>();
    }
    Ok(correct as f64 / n as f64)
}

/// `batch` validation images (cycling through the set if it is smaller): the latency input.
pub(crate) fn latency_sample(
    data: ImageData<'_>,
    batch: usize,
    device: &Device,
) -> Result<Tensor<4>, HetDptError> {
    let indices: Vec<usize> = (0..batch).map(|i| i % data.set.len()).collect();
    Ok(data.batch(&indices, None, device)?)
}

/// Median forward latency (ms) of each model on `sample`, timed in interleaved rounds
/// ([`seam::timing`]).
pub(crate) fn latencies(models: &[&PrunedViT], sample: &Tensor<4>) -> Vec<f64> {
    let run = |m: &PrunedViT| {
        // Reading the result back waits for backends that run asynchronously.
        let _ = m.forward(sample.clone(), Mode::Deterministic).into_data();
    };
    for m in models {
        (0..WARMUP).for_each(|_| run(m));
    }
    let mut times = vec![Vec::with_capacity(REPS); models.len()];
    for _ in 0..REPS {
        timing::round(&mut times, |i| run(models[i]));
    }
    (times.iter_mut())
        .map(|t| timing::quartiles(t)[1])
        .collect()
}
