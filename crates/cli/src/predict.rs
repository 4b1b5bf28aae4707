//! `uqformer predict`: a checkpoint's outputs on inputs given as an array, to check an import
//! against another implementation (e.g. `transformers` or `timm` on the same array): a ViT-family
//! checkpoint on pixel values, a BERT or RoBERTa one on token ids ([`tokens`]).

mod args;
mod tokens;

use args::Outputs;
pub use args::PredictArgs;

use std::path::Path;

use backbone::{Gates, Mode};
use burn::tensor::{Device, Tensor, TensorData};
use experiment::eval::npy;
use importers::{load_vit, model_type};

use crate::npy::read_floats;

pub fn run(args: &PredictArgs) -> crate::error::Result<()> {
    if args.batch_size == 0 {
        return Err("--batch-size 0: expected at least 1".to_string().into());
    }
    let device = args.backend.device()?;
    let outputs = match model_type(&args.checkpoint)?.as_deref() {
        Some("bert" | "roberta") => tokens::predict(args, &device)?,
        _ => pixels(args, &device)?,
    };
    let (n, width) = (outputs.rows, outputs.width);
    let file = npy(
        "<f4",
        &[n, width],
        outputs.values.iter().flat_map(|v| v.to_le_bytes()),
    );
    std::fs::write(&args.out, file)
        .map_err(|e| format!("{}: cannot write the outputs: {e}", args.out.display()))?;
    println!("{}: {} [{n}, {width}]", args.out.display(), outputs.what);
    Ok(())
}

/// A ViT-family checkpoint's outputs on the pixel values of `--input`.
fn pixels(args: &PredictArgs, device: &Device) -> crate::error::Result<Outputs> {
    let checkpoint = load_vit(&args.checkpoint, device)?;
    let config = &checkpoint.config;
    let expected = [config.channels, config.image_size, config.image_size];
    let pixels = read_pixels(&args.input, expected)?;
    let per_image: usize = expected.iter().product();
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Outputs::new(checkpoint.classifier);
    for batch in pixels.chunks(args.batch_size * per_image) {
        let [c, h, w] = expected;
        let shape = [batch.len() / per_image, c, h, w];
        let images = Tensor::from_data(TensorData::new(batch.to_vec(), shape), device);
        outputs.push(match checkpoint.classifier {
            true => model.forward(images, gates, Mode::Deterministic),
            false => model.features(images, gates, Mode::Deterministic),
        })?;
    }
    Ok(outputs)
}

/// The pixel values of `path` as f32, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected`
/// and N ≥ 1.
fn read_pixels(path: &Path, expected: [usize; 3]) -> Result<Vec<f32>, String> {
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
        )),
    }
}
