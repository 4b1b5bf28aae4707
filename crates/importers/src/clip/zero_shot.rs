//! CLIP's zero-shot classifier from a checkpoint: class names in prompt templates, through the
//! checkpoint's tokenizer and text tower, become [`backbone::ClipZeroShot`]'s class embeddings.

use backbone::{BackboneError, ClipZeroShot, Prompts};
use burn::tensor::{Device, Int, Tensor, TensorData};
use data::ClipBpe;

use super::load::ClipCheckpoint;
use crate::error::ImportError;

/// The zero-shot classifier of `checkpoint` for `classes`: class c's prompts are the
/// `templates` with `{}` replaced by its name, tokenized by the checkpoint's tokenizer (cut to
/// the text tower's positions), as CLIP's zero-shot recipe. Errors name the checkpoint folder:
/// no tokenizer, no class or template, a template without `{}`.
pub fn clip_zero_shot<S: AsRef<str>>(
    checkpoint: &ClipCheckpoint,
    classes: &[S],
    templates: &[S],
) -> Result<ClipZeroShot, ImportError> {
    let prompts = class_prompts(checkpoint, classes, templates)?;
    (ClipZeroShot::new(&checkpoint.model, &prompts)).map_err(|error| ImportError::Config {
        path: checkpoint.folder.clone(),
        error,
    })
}

/// Class c's prompts for [`clip_zero_shot`], tokenized: everything but the text tower's pass,
/// so that a caller can check the prompts without paying for it.
pub(crate) fn class_prompts<S: AsRef<str>>(
    checkpoint: &ClipCheckpoint,
    classes: &[S],
    templates: &[S],
) -> Result<Vec<Prompts>, ImportError> {
    let folder = &checkpoint.folder;
    let invalid = |error: BackboneError| ImportError::Config {
        path: folder.clone(),
        error,
    };
    let Some(tokenizer) = &checkpoint.tokenizer else {
        let message = "no tokenizer (tokenizer.json, or vocab.json and merges.txt), expected \
                       one to tokenize the class prompts";
        return Err(ImportError::file(folder, message));
    };
    if let Some(bad) = templates.iter().find(|t| !t.as_ref().contains("{}")) {
        let expected = "a template holding {} where the class name goes";
        return Err(invalid(BackboneError::invalid(
            "template",
            format!("{:?}", bad.as_ref()),
            expected,
        )));
    }
    if templates.is_empty() {
        return Err(invalid(BackboneError::invalid(
            "templates",
            "none",
            "at least one",
        )));
    }
    let device = checkpoint.model.logit_scale.device();
    let positions = checkpoint.config.text.max_positions;
    let mut prompts: Vec<Prompts> = Vec::with_capacity(classes.len());
    for class in classes {
        let texts: Vec<String> = (templates.iter())
            .map(|t| t.as_ref().replace("{}", class.as_ref()))
            .collect();
        let prompt = token_batch(tokenizer, &texts, positions, &device).map_err(|error| {
            ImportError::Tokenizer {
                path: folder.clone(),
                error,
            }
        })?;
        prompts.push(prompt);
    }
    Ok(prompts)
}

/// `texts` tokenized by `tokenizer` (each cut to `positions` tokens), padded to the longest:
/// the ids and attention mask `[T, L]` CLIP's text tower reads.
pub fn token_batch<S: AsRef<str>>(
    tokenizer: &ClipBpe,
    texts: &[S],
    positions: usize,
    device: &Device,
) -> Result<Prompts, data::DataError> {
    let batch = tokenizer.encode_batch(texts, positions)?;
    let shape = [
        batch.rows.len(),
        batch.rows.first().map_or(0, |r| r.ids.len()),
    ];
    let (mut ids, mut mask) = (Vec::new(), Vec::new());
    for row in &batch.rows {
        ids.extend(row.ids.iter().map(|&v| i64::from(v)));
        mask.extend(row.attention_mask.iter().map(|&v| i64::from(v)));
    }
    let tensor = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, shape), device);
    Ok((tensor(ids), tensor(mask)))
}
