//! `uqformer predict`: a ViT-family checkpoint's outputs on inputs given as an array, to check
//! an import against another implementation (e.g. `transformers` or `timm` on the same array).

use std::path::{Path, PathBuf};

use backbone::{Gates, Mode};
use burn::tensor::{Tensor, TensorData};
use clap::Args;
use experiment::device::Backend;
use experiment::eval::npy;
use importers::load_vit;

use crate::npy::read_floats;

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A ViT or DeiT checkpoint: a `transformers` folder (config.json + model.safetensors) or a
    /// timm state dict (a folder, or its .safetensors file, with timm's config.json beside it).
    #[arg(long)]
    checkpoint: PathBuf,
    /// Pixel values `[N, C, H, W]` (float32 or float64 .npy), already preprocessed as the
    /// checkpoint expects (as `transformers` takes `pixel_values`).
    #[arg(long)]
    input: PathBuf,
    /// Where to write the outputs (float32 .npy): the logits `[N, K]` of a checkpoint with a
    /// classifier, else the pooled features `[N, D]`.
    #[arg(long)]
    out: PathBuf,
    /// Images per forward pass.
    #[arg(long, default_value_t = 64)]
    batch_size: usize,
    /// Compute device: flex, ndarray, wgpu, cuda, tch or tch-cuda (as compiled in).
    #[arg(long, default_value = "flex")]
    backend: Backend,
}

pub fn run(args: &PredictArgs) -> crate::error::Result<()> {
    if args.batch_size == 0 {
        return Err("--batch-size 0: expected at least 1".to_string().into());
    }
    let device = args.backend.device()?;
    let checkpoint = load_vit(&args.checkpoint, &device)?;
    let config = &checkpoint.config;
    let expected = [config.channels, config.image_size, config.image_size];
    let (n, pixels) = read_pixels(&args.input, expected)?;
    let per_image: usize = expected.iter().product();
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Vec::new();
    let mut width = 0;
    for batch in pixels.chunks(args.batch_size * per_image) {
        let shape = [
            batch.len() / per_image,
            expected[0],
            expected[1],
            expected[2],
        ];
        let images = Tensor::from_data(TensorData::new(batch.to_vec(), shape), &device);
        let out = match checkpoint.classifier {
            true => model.forward(images, gates, Mode::Deterministic),
            false => model.features(images, gates, Mode::Deterministic),
        };
        width = out.dims()[1];
        let values = out.into_data().convert::<f32>().try_into_vec::<f32>();
        outputs.extend(values.map_err(|e| format!("reading the outputs back: {e:?}"))?);
    }
    let file = npy(
        "<f4",
        &[n, width],
        outputs.iter().flat_map(|v| v.to_le_bytes()),
    );
    std::fs::write(&args.out, file)
        .map_err(|e| format!("{}: cannot write the outputs: {e}", args.out.display()))?;
    let what = if checkpoint.classifier {
        "logits"
    } else {
        "pooled features"
    };
    println!("{}: {what} [{n}, {width}]", args.out.display());
    Ok(())
}

/// The pixel values of `path` as f32, checked to be `[N, C, H, W]` with `[C, H, W]` = `expected`
/// and N ≥ 1.
fn read_pixels(path: &Path, expected: [usize; 3]) -> Result<(usize, Vec<f32>), String> {
    let array = read_floats(path)?;
    let [c, h, w] = expected;
    match array.shape() {
        &[n, ..] if n > 0 && array.shape()[1..] == expected => {
            // f32 widened to f64 by the reader: narrowing gives the file's values back.
            let values = array.iter().map(|&v| v as f32).collect();
            Ok((n, values))
        }
        shape => Err(format!(
            "{}: shape {shape:?}, expected pixel values [N, {c}, {h}, {w}] (N ≥ 1) for this \
             checkpoint",
            path.display()
        )),
    }
}
