//! `uqformer predict`: a checkpoint's outputs on inputs given as an array, to check an import
//! against another implementation (e.g. `transformers` or `timm` on the same array): a ViT-family
//! checkpoint on pixel values ([`pixels`]), a BERT or RoBERTa one on token ids ([`tokens`]), a
//! CLIP one on pixel values against texts ([`clip`]).

mod args;
mod clip;
mod pixels;
mod tokens;

pub use args::PredictArgs;

use crate::error::CliError;
use experiment::eval::npy;
use importers::model_type;

pub fn run(args: &PredictArgs) -> crate::error::Result<()> {
    if args.batch_size == 0 {
        return Err("--batch-size 0: expected at least 1".to_string().into());
    }
    let device = args.backend.device()?;
    let family = model_type(&args.checkpoint)?;
    let outputs = match (family.as_deref(), &args.texts) {
        (Some("clip"), Some(texts)) => clip::predict(args, texts, &device)?,
        (Some("clip"), None) => {
            return Err(format!(
                "{}: a CLIP checkpoint (model_type \"clip\"): --texts FILE is required (one \
                 text a line; the output is logits_per_image [N, T])",
                args.checkpoint.display()
            )
            .into());
        }
        (other, Some(texts)) => {
            return Err(format!(
                "--texts {}: only for a CLIP checkpoint (config.json model_type \"clip\"); {} \
                 has model_type {}",
                texts.display(),
                args.checkpoint.display(),
                other.map_or("none (timm)".to_string(), |t| format!("{t:?}"))
            )
            .into());
        }
        (Some("bert" | "roberta"), None) => tokens::predict(args, &device)?,
        (_, None) => pixels::predict(args, &device)?,
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
