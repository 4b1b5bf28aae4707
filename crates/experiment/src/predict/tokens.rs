//! A BERT or RoBERTa checkpoint on token ids `[N, L]`: the logits of a classifier or the pooler
//! output.

use std::path::Path;

use backbone::{Gates, Mode};
use burn::tensor::{Int, Tensor, TensorData};
use importers::load_bert;
use runtime::Backend;

use super::arrays::{Input, Outputs};
use crate::error::{ExperimentError, Result};

/// The checkpoint's outputs on `ids` (attention mask all ones), `batch_size` sequences a pass.
pub fn text(
    checkpoint: &Path,
    ids: Input<'_, i128>,
    batch_size: usize,
    backend: Backend,
) -> Result<Outputs> {
    let device = &backend.device()?;
    let checkpoint = load_bert(checkpoint, device)?;
    let config = &checkpoint.config;
    let limits = Limits {
        vocab: config.vocab_size,
        positions: config.max_position,
        padding: checkpoint.hf.roberta_padding(),
    };
    let (length, ids) = checked_ids(&ids, &limits)?;
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Outputs::new(checkpoint.classifier);
    for batch in ids.chunks(batch_size * length) {
        let shape = [batch.len() / length, length];
        let ids = Tensor::<2, Int>::from_data(TensorData::new(batch.to_vec(), shape), device);
        let mask = ids.ones_like();
        let out = match checkpoint.classifier {
            true => model.forward(ids, mask, gates, Mode::Deterministic),
            false => model.features(ids, mask, gates, Mode::Deterministic),
        };
        outputs.push(out)?;
    }
    Ok(outputs)
}

/// What the ids must fit: the vocabulary, the position table and RoBERTa's padding id.
struct Limits {
    vocab: usize,
    positions: usize,
    padding: Option<usize>,
}

/// The ids row-major with their length L, checked to be `[N, L]` (N, L ≥ 1, L within the position table), each
/// below the vocabulary size and, for RoBERTa, not its padding id (`transformers` would number
/// it as padding, which an all-ones mask does not have).
fn checked_ids(ids: &Input<'_, i128>, limits: &Limits) -> Result<(usize, Vec<i64>)> {
    let at = ids.path.display();
    let &[n, length] = ids.shape.as_slice() else {
        return Err(ExperimentError::invalid(format!(
            "{at}: shape {:?}, expected token ids [N, L] (2 dimensions)",
            ids.shape
        )));
    };
    if n == 0 || length == 0 || length > limits.positions {
        return Err(ExperimentError::invalid(format!(
            "{at}: shape [{n}, {length}], expected token ids [N, L] with N ≥ 1 and \
             1 ≤ L ≤ {} (the checkpoint's position table)",
            limits.positions
        )));
    }
    let vocab = limits.vocab as i128;
    if let Some(bad) = ids.values.iter().find(|&&id| id < 0 || id >= vocab) {
        return Err(ExperimentError::invalid(format!(
            "{at}: token id {bad}, expected ids in 0..{vocab} (the checkpoint's vocabulary)"
        )));
    }
    if let Some(padding) = limits
        .padding
        .filter(|&p| ids.values.contains(&(p as i128)))
    {
        return Err(ExperimentError::invalid(format!(
            "{at}: token id {padding} is RoBERTa's padding id (pad_token_id), expected \
             unpadded sequences (the attention mask is all ones)"
        )));
    }
    let ids = ids.values.iter().map(|&id| id as i64).collect();
    Ok((length, ids))
}
