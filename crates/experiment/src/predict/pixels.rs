//! A ViT-family checkpoint on float pixel values `[N, C, H, W]`: the logits of a classifier or
//! the pooled features; and the pixel batches CLIP shares.

use std::path::Path;

use backbone::{Gates, Mode};
use burn::tensor::{Device, Tensor, TensorData};
use importers::load_vit;
use runtime::Backend;

use super::arrays::{Input, Outputs};
use crate::error::{ExperimentError, Result};

/// A ViT-family checkpoint's outputs on `pixels`, `batch_size` images a pass.
pub fn vision(
    checkpoint: &Path,
    pixels: Input<'_, f64>,
    batch_size: usize,
    backend: Backend,
) -> Result<Outputs> {
    let device = backend.device()?;
    let checkpoint = load_vit(checkpoint, &device)?;
    let config = &checkpoint.config;
    let expected = [config.channels, config.image_size, config.image_size];
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Outputs::new(checkpoint.classifier);
    for images in batches(&pixels, expected, batch_size, &device)? {
        outputs.push(match checkpoint.classifier {
            true => model.forward(images, gates, Mode::Deterministic),
            false => model.features(images, gates, Mode::Deterministic),
        })?;
    }
    Ok(outputs)
}

/// The pixel values of `pixels`, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected` and
/// N ≥ 1, as tensors of at most `batch_size` images.
pub(super) fn batches(
    pixels: &Input<'_, f64>,
    expected: [usize; 3],
    batch_size: usize,
    device: &Device,
) -> Result<Vec<Tensor<4>>> {
    let pixels = checked_pixels(pixels, expected)?;
    let per_image: usize = expected.iter().product();
    let [c, h, w] = expected;
    let batches = pixels.chunks(batch_size * per_image).map(|batch| {
        let shape = [batch.len() / per_image, c, h, w];
        Tensor::from_data(TensorData::new(batch.to_vec(), shape), device)
    });
    Ok(batches.collect())
}

/// The pixel values as f32, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected` and
/// N ≥ 1.
fn checked_pixels(pixels: &Input<'_, f64>, expected: [usize; 3]) -> Result<Vec<f32>> {
    let [c, h, w] = expected;
    match pixels.shape.as_slice() {
        &[n, ..] if n > 0 && pixels.shape[1..] == expected => {
            // f32 widened to f64 by the reader: narrowing gives the file's values back.
            Ok(pixels.values.iter().map(|&v| v as f32).collect())
        }
        shape => Err(ExperimentError::invalid(format!(
            "{}: shape {shape:?}, expected pixel values [N, {c}, {h}, {w}] (N ≥ 1) for this \
             checkpoint",
            pixels.path.display()
        ))),
    }
}
