//! `uqformer predict`: a checkpoint's outputs on inputs given as an array, to check an import
//! against another implementation (e.g. `transformers` or `timm` on the same array): a ViT-family
//! checkpoint on pixel values, a BERT or RoBERTa one on token ids, a CLIP one on pixel values
//! against texts. The checkpoint runs in the pipeline ([`experiment::predict`]); this reads the
//! .npy and writes the outputs.

use std::path::{Path, PathBuf};

use crate::error::CliError;
use crate::npy::{read_floats, read_token_ids};
use clap::Args;
use experiment::eval::npy;
use experiment::predict::{self, Input};
use runtime::Backend;

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A checkpoint, told apart by its config.json: a `transformers` ViT, DeiT, BERT, RoBERTa
    /// or CLIP folder (config.json + model.safetensors; `model_type` vit, deit, bert, roberta or
    /// clip) or a timm ViT / DeiT state dict (a folder, or its .safetensors file, with timm's
    /// config.json beside it).
    #[arg(long)]
    checkpoint: PathBuf,
    /// A .npy of inputs. ViT / DeiT / CLIP: pixel values `[N, C, H, W]` (float32 or float64),
    /// already preprocessed as the checkpoint expects (as `transformers` takes
    /// `pixel_values`). BERT / RoBERTa: token ids `[N, L]` (int64; any integer type is read),
    /// unpadded: the attention mask is all ones.
    #[arg(long)]
    input: PathBuf,
    /// Where to write the outputs (float32 .npy): the logits `[N, K]` of a checkpoint with a
    /// classifier, else the pooled features `[N, D]` (ViT: the class token after the final norm;
    /// BERT / RoBERTa: the pooler output); CLIP: `logits_per_image` `[N, T]`.
    #[arg(long)]
    out: PathBuf,
    /// CLIP only, and required for it: a text file, one text a line, tokenized by the tokenizer
    /// in the checkpoint folder; the output is then `logits_per_image` `[N, T]`.
    #[arg(long)]
    texts: Option<PathBuf>,
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
    let (checkpoint, batch, backend) = (&args.checkpoint, args.batch_size, args.backend);
    let family = predict::model_type(checkpoint)?;
    let outputs = match (family.as_deref(), &args.texts) {
        (Some("clip"), Some(texts)) => {
            predict::clip(checkpoint, pixels(&args.input)?, texts, batch, backend)?
        }
        (Some("clip"), None) => {
            return Err(format!(
                "{}: a CLIP checkpoint (model_type \"clip\"): --texts FILE is required (one \
                 text a line; the output is logits_per_image [N, T])",
                checkpoint.display()
            )
            .into());
        }
        (other, Some(texts)) => {
            return Err(format!(
                "--texts {}: only for a CLIP checkpoint (config.json model_type \"clip\"); {} \
                 has model_type {}",
                texts.display(),
                checkpoint.display(),
                other.map_or("none (timm)".to_string(), |t| format!("{t:?}"))
            )
            .into());
        }
        (Some("bert" | "roberta"), None) => {
            let ids = read_token_ids(&args.input)?;
            let ids = Input {
                path: &args.input,
                shape: ids.shape().to_vec(),
                // Row-major whatever the file's order, as the [N, L] tensor reads them.
                values: ids.iter().copied().collect(),
            };
            predict::text(checkpoint, ids, batch, backend)?
        }
        (_, None) => predict::vision(checkpoint, pixels(&args.input)?, batch, backend)?,
    };
    let (n, width) = (outputs.rows, outputs.width);
    let file = npy(
        "<f4",
        &[n, width],
        outputs.values.iter().flat_map(|v| v.to_le_bytes()),
    );
    std::fs::write(&args.out, file).map_err(|e| {
        CliError::at(
            format_args!("{}: cannot write the outputs", args.out.display()),
            e,
        )
    })?;
    println!("{}: {} [{n}, {width}]", args.out.display(), outputs.what);
    Ok(())
}

/// The pixel values of `path`, row-major.
fn pixels(path: &Path) -> crate::error::Result<Input<'_, f64>> {
    let array = read_floats(path)?;
    Ok(Input {
        path,
        shape: array.shape().to_vec(),
        values: array.iter().copied().collect(),
    })
}
