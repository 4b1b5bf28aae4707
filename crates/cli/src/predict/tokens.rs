//! `uqformer predict` on a BERT or RoBERTa checkpoint: int64 token ids `[N, L]` in, the logits of
//! a classifier or the pooler output out.

use std::path::Path;

use backbone::{Gates, Mode};
use burn::tensor::{Device, Int, Tensor, TensorData};
use importers::load_bert;

use super::args::{Outputs, PredictArgs};
use crate::npy::read_token_ids;

/// The checkpoint's outputs on the ids of `--input` (attention mask all ones).
pub(super) fn predict(args: &PredictArgs, device: &Device) -> crate::error::Result<Outputs> {
    let checkpoint = load_bert(&args.checkpoint, device)?;
    let config = &checkpoint.config;
    let limits = Limits {
        vocab: config.vocab_size,
        positions: config.max_position,
        padding: checkpoint.hf.roberta_padding(),
    };
    let (length, ids) = read_ids(&args.input, &limits)?;
    let (model, gates) = (&checkpoint.model, &Gates::none());
    let mut outputs = Outputs::new(checkpoint.classifier);
    for batch in ids.chunks(args.batch_size * length) {
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

/// The ids of `path` row-major with their length L, checked to be `[N, L]` (N, L ≥ 1, L within the position table), each
/// below the vocabulary size and, for RoBERTa, not its padding id (`transformers` would number
/// it as padding, which an all-ones mask does not have).
fn read_ids(path: &Path, limits: &Limits) -> crate::error::Result<(usize, Vec<i64>)> {
    let array = read_token_ids(path)?;
    let at = path.display();
    let &[n, length] = array.shape() else {
        return Err(format!(
            "{at}: shape {:?}, expected token ids [N, L] (2 dimensions)",
            array.shape()
        )
        .into());
    };
    if n == 0 || length == 0 || length > limits.positions {
        return Err(format!(
            "{at}: shape [{n}, {length}], expected token ids [N, L] with N ≥ 1 and \
             1 ≤ L ≤ {} (the checkpoint's position table)",
            limits.positions
        )
        .into());
    }
    let vocab = limits.vocab as i128;
    if let Some(bad) = array.iter().find(|&&id| id < 0 || id >= vocab) {
        return Err(format!(
            "{at}: token id {bad}, expected ids in 0..{vocab} (the checkpoint's vocabulary)"
        )
        .into());
    }
    if let Some(padding) = limits
        .padding
        .filter(|&p| array.iter().any(|&id| id == p as i128))
    {
        return Err(format!(
            "{at}: token id {padding} is RoBERTa's padding id (pad_token_id), expected \
             unpadded sequences (the attention mask is all ones)"
        )
        .into());
    }
    // Row-major whatever the file's order, as the [N, L] tensor reads them.
    let ids = array.iter().map(|&id| id as i64).collect();
    Ok((length, ids))
}
