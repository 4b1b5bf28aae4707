//! `uqformer predict` on a ViT-family checkpoint: float pixel values `[N, C, H, W]` in, the
//! logits of a classifier or the pooled features out; and the pixel reader CLIP shares.

use std::path::Path;

use backbone::{Gates, Mode};
use burn::tensor::{Device, Tensor, TensorData};
use importers::load_vit;

use super::args::{Outputs, PredictArgs};
use crate::npy::read_floats;

/// A ViT-family checkpoint's outputs on the pixel values of `--input`.
pub(super) fn predict(args: &PredictArgs, device: &Device) -> crate::error::Result<Outputs> {
    let checkpoint = load_vit(&args.checkpoint, device)?;
    let config = &checkpoint.config;
    let expected = [config.channels, config.image_size, config.image_size];
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Outputs::new(checkpoint.classifier);
    for images in batches(&args.input, expected, args.batch_size, device)? {
        outputs.push(match checkpoint.classifier {
            true => model.forward(images, gates, Mode::Deterministic),
            false => model.features(images, gates, Mode::Deterministic),
        })?;
    }
    Ok(outputs)
}

/// The pixel values of `path`, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected` and
/// N ≥ 1, as tensors of at most `batch_size` images.
pub(super) fn batches(
    path: &Path,
    expected: [usize; 3],
    batch_size: usize,
    device: &Device,
) -> crate::error::Result<Vec<Tensor<4>>> {
    let pixels = read_pixels(path, expected)?;
    let per_image: usize = expected.iter().product();
    let [c, h, w] = expected;
    let batches = pixels.chunks(batch_size * per_image).map(|batch| {
        let shape = [batch.len() / per_image, c, h, w];
        Tensor::from_data(TensorData::new(batch.to_vec(), shape), device)
    });
    Ok(batches.collect())
}

/// The pixel values of `path` as f32, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected`
/// and N ≥ 1.
fn read_pixels(path: &Path, expected: [usize; 3]) -> crate::error::Result<Vec<f32>> {
    let array = read_floats(path)?;
    let [c, h, w] = expected;
    match array.shape() {
        &[n, ..] if n > 0 && array.shape()[1..] == expected => {
            // f32 widened to f64 by the reader: narrowing gives the file's values back.
            Ok(array.iter().map(|&v| v as f32).collect())
        }
        shape => Err(format!(
            "{}: shape {shape:?}, expected pixel values [N, {c}, {h}, {w}] (N ≥ 1) for this \
             checkpoint",
            path.display()
        )
        .into()),
    }
}
