//! A CLIP checkpoint on pixel values `[N, C, H, W]` against texts (one a line, tokenized by the
//! checkpoint folder's tokenizer): `logits_per_image` `[N, T]`.

use std::path::Path;

use burn::tensor::{Device, Tensor};
use importers::{ClipCheckpoint, load_clip, token_batch};
use runtime::Backend;

use super::arrays::{Input, Outputs};
use super::pixels::batches;
use crate::error::{ErrorContext as _, ExperimentError, Result};

/// `logits_per_image` of the images `pixels` against the texts of the file `texts`,
/// `batch_size` images (and texts) a pass.
pub fn clip(
    checkpoint_dir: &Path,
    pixels: Input<'_, f64>,
    texts: &Path,
    batch_size: usize,
    backend: Backend,
) -> Result<Outputs> {
    let device = &backend.device()?;
    let checkpoint = load_clip(checkpoint_dir, device)?;
    let lines = read_texts(texts)?;
    let text_embeds = embed_texts(&checkpoint, checkpoint_dir, &lines, batch_size, device)?;
    let vision = &checkpoint.config.vision;
    let expected = [vision.channels, vision.image_size, vision.image_size];
    let model = &checkpoint.model;
    let mut outputs = Outputs::new(false);
    outputs.what = "logits_per_image";
    for images in batches(&pixels, expected, batch_size, device)? {
        outputs.push(model.similarity(model.image_embeds(images), text_embeds.clone()))?;
    }
    Ok(outputs)
}

/// The texts of `path`, one a line (at least one).
fn read_texts(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .context(format_args!("{}: cannot read the texts", path.display()))?;
    let lines: Vec<String> = text.lines().map(String::from).collect();
    if lines.is_empty() {
        return Err(ExperimentError::invalid(format!(
            "{}: no texts, expected one text a line",
            path.display()
        )));
    }
    Ok(lines)
}

/// The text embeddings `[T, E]` of `lines`, tokenized by the checkpoint's tokenizer (cut to
/// its position table, as transformers' `truncation=True`), `batch_size` texts at a time; `dir`
/// is the checkpoint's folder, named in errors.
fn embed_texts(
    checkpoint: &ClipCheckpoint,
    dir: &Path,
    lines: &[String],
    batch_size: usize,
    device: &Device,
) -> Result<Tensor<2>> {
    let text = &checkpoint.config.text;
    let at = dir.display();
    let Some(tokenizer) = &checkpoint.tokenizer else {
        return Err(ExperimentError::invalid(format!(
            "{at}: no tokenizer, expected CLIP's tokenizer files (tokenizer.json, or vocab.json \
             and merges.txt) beside the weights to tokenize --texts"
        )));
    };
    if tokenizer.vocab_size() > text.vocab_size {
        return Err(ExperimentError::invalid(format!(
            "{at}: the tokenizer has {} tokens, expected at most text_config.vocab_size = {}",
            tokenizer.vocab_size(),
            text.vocab_size
        )));
    }
    let mut embeds = Vec::new();
    for chunk in lines.chunks(batch_size) {
        let (ids, mask) = token_batch(tokenizer, chunk, text.max_positions, device)?;
        embeds.push(checkpoint.model.text_embeds(ids, mask));
    }
    Ok(Tensor::cat(embeds, 0))
}
