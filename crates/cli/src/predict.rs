//! `uqformer predict`: a checkpoint's outputs on inputs given as an array, to check an import
//! against another implementation (e.g. `transformers` or `timm` on the same array): a ViT-family
//! checkpoint on pixel values, a BERT or RoBERTa one on token ids ([`tokens`]).

mod tokens;

use std::path::{Path, PathBuf};

use backbone::{Gates, Mode};
use burn::tensor::{Device, Tensor, TensorData};
use clap::Args;
use experiment::device::Backend;
use experiment::eval::npy;
use importers::{load_vit, model_type};

use crate::npy::read_floats;

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A checkpoint, told apart by its config.json: a `transformers` ViT, DeiT, BERT or RoBERTa
    /// folder (config.json + model.safetensors; `model_type` vit, deit, bert or roberta) or a
    /// timm ViT / DeiT state dict (a folder, or its .safetensors file, with timm's config.json
    /// beside it).
    #[arg(long)]
    checkpoint: PathBuf,
    /// A .npy of inputs. ViT / DeiT: pixel values `[N, C, H, W]` (float32 or float64), already
    /// preprocessed as the checkpoint expects (as `transformers` takes `pixel_values`). BERT /
    /// RoBERTa: token ids `[N, L]` (int64; any integer type is read), unpadded: the attention
    /// mask is all ones.
    #[arg(long)]
    input: PathBuf,
    /// Where to write the outputs (float32 .npy): the logits `[N, K]` of a checkpoint with a
    /// classifier, else the pooled features `[N, D]` (ViT: the class token after the final norm;
    /// BERT / RoBERTa: the pooler output).
    #[arg(long)]
    out: PathBuf,
    /// Inputs per forward pass.
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

/// A checkpoint's outputs `[rows, width]`, row-major, gathered batch by batch.
struct Outputs {
    /// What they are ("logits", "pooled features").
    what: &'static str,
    rows: usize,
    width: usize,
    values: Vec<f32>,
}

impl Outputs {
    /// No outputs yet, of a checkpoint with or without a classifier.
    fn new(classifier: bool) -> Self {
        Self {
            what: match classifier {
                true => "logits",
                false => "pooled features",
            },
            rows: 0,
            width: 0,
            values: Vec::new(),
        }
    }

    /// Appends one batch's outputs `[B, width]`.
    fn push(&mut self, batch: Tensor<2>) -> Result<(), String> {
        let [rows, width] = batch.dims();
        let values = batch.into_data().convert::<f32>().try_into_vec::<f32>();
        self.values
            .extend(values.map_err(|e| format!("reading the outputs back: {e:?}"))?);
        (self.rows, self.width) = (self.rows + rows, width);
        Ok(())
    }
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
