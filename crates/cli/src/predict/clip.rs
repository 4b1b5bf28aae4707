//! `uqformer predict` on a CLIP checkpoint: pixel values `[N, C, H, W]` and texts (one a line,
//! tokenized by the checkpoint folder's tokenizer) in, `logits_per_image` `[N, T]` out.

use std::path::Path;

use burn::tensor::{Device, Tensor};
use importers::{ClipCheckpoint, load_clip, token_batch};

use super::args::{Outputs, PredictArgs};
use super::pixels::batches;
use crate::error::CliError;

/// `logits_per_image` of the images of `--input` against the texts of `texts`.
pub(super) fn predict(
    args: &PredictArgs,
    texts: &Path,
    device: &Device,
) -> crate::error::Result<Outputs> {
    let checkpoint = load_clip(&args.checkpoint, device)?;
    let lines = read_texts(texts)?;
    let text_embeds = embed_texts(&checkpoint, args, &lines, device)?;
    let vision = &checkpoint.config.vision;
    let expected = [vision.channels, vision.image_size, vision.image_size];
    let model = &checkpoint.model;
    let mut outputs = Outputs::new(false);
    outputs.what = "logits_per_image";
    for images in batches(&args.input, expected, args.batch_size, device)? {
        outputs.push(model.similarity(model.image_embeds(images), text_embeds.clone()))?;
    }
    Ok(outputs)
}

/// The texts of `path`, one a line (at least one).
fn read_texts(path: &Path) -> crate::error::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::at(format_args!("{}: cannot read the texts", path.display()), e))?;
    let lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return Err(format!("{}: no texts, expected one text a line", path.display()).into());
    }
    Ok(lines)
}

/// The text embeddings `[T, E]` of `lines`, tokenized by the checkpoint's tokenizer (cut to
/// its position table, as transformers' `truncation=True`), `--batch-size` texts at a time.
fn embed_texts(
    checkpoint: &ClipCheckpoint,
    args: &PredictArgs,
    lines: &[String],
    device: &Device,
) -> crate::error::Result<Tensor<2>> {
    let text = &checkpoint.config.text;
    let at = args.checkpoint.display();
    let Some(tokenizer) = &checkpoint.tokenizer else {
        return Err(format!(
            "{at}: no tokenizer, expected CLIP's tokenizer files (tokenizer.json, or vocab.json \
             and merges.txt) beside the weights to tokenize --texts"
        )
        .into());
    };
    if tokenizer.vocab_size() > text.vocab_size {
        return Err(format!(
            "{at}: the tokenizer has {} tokens, expected at most text_config.vocab_size = {}",
            tokenizer.vocab_size(),
            text.vocab_size
        )
        .into());
    }
    let mut embeds = Vec::new();
    for chunk in lines.chunks(args.batch_size) {
        let (ids, mask) = token_batch(tokenizer, chunk, text.max_positions, device)?;
        embeds.push(checkpoint.model.text_embeds(ids, mask));
    }
    Ok(Tensor::cat(embeds, 0))
}
