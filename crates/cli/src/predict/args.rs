//! `uqformer predict`'s arguments and the outputs it gathers.

use std::path::PathBuf;

use crate::error::CliError;
use burn::tensor::Tensor;
use clap::Args;
use experiment::device::Backend;

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A checkpoint, told apart by its config.json: a `transformers` ViT, DeiT, BERT, RoBERTa
    /// or CLIP folder (config.json + model.safetensors; `model_type` vit, deit, bert, roberta or
    /// clip) or a timm ViT / DeiT state dict (a folder, or its .safetensors file, with timm's
    /// config.json beside it).
    #[arg(long)]
    pub(super) checkpoint: PathBuf,
    /// A .npy of inputs. ViT / DeiT / CLIP: pixel values `[N, C, H, W]` (float32 or float64),
    /// already preprocessed as the checkpoint expects (as `transformers` takes
    /// `pixel_values`). BERT / RoBERTa: token ids `[N, L]` (int64; any integer type is read),
    /// unpadded: the attention mask is all ones.
    #[arg(long)]
    pub(super) input: PathBuf,
    /// Where to write the outputs (float32 .npy): the logits `[N, K]` of a checkpoint with a
    /// classifier, else the pooled features `[N, D]` (ViT: the class token after the final norm;
    /// BERT / RoBERTa: the pooler output); CLIP: `logits_per_image` `[N, T]`.
    #[arg(long)]
    pub(super) out: PathBuf,
    /// CLIP only, and required for it: a text file, one text a line, tokenized by the tokenizer
    /// in the checkpoint folder; the output is then `logits_per_image` `[N, T]`.
    #[arg(long)]
    pub(super) texts: Option<PathBuf>,
    /// Inputs per forward pass.
    #[arg(long, default_value_t = 64)]
    pub(super) batch_size: usize,
    /// Compute device: flex, ndarray, wgpu, cuda, tch or tch-cuda (as compiled in).
    #[arg(long, default_value = "flex")]
    pub(super) backend: Backend,
}

/// A checkpoint's outputs `[rows, width]`, row-major, gathered batch by batch.
pub(super) struct Outputs {
    /// What they are ("logits", "pooled features").
    pub(super) what: &'static str,
    pub(super) rows: usize,
    pub(super) width: usize,
    pub(super) values: Vec<f32>,
}

impl Outputs {
    /// No outputs yet, of a checkpoint with or without a classifier.
    pub(super) fn new(classifier: bool) -> Self {
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
    pub(super) fn push(&mut self, batch: Tensor<2>) -> crate::error::Result<()> {
        let [rows, width] = batch.dims();
        let values = batch.into_data().convert::<f32>().try_into_vec::<f32>();
        self.values
            .extend(values.map_err(|e| CliError::at("reading the outputs back", e))?);
        (self.rows, self.width) = (self.rows + rows, width);
        Ok(())
    }
}
