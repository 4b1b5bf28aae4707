//! The helpers strategies share: their parameters read from TOML, the model's head grid, and
//! per-token statistics over the calibration data.

use backbone::{Block, BlockGates, Classifier, Mode};
use burn::tensor::{Bool, Tensor};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::scores::HeadScores;
use crate::calibration::Calibration;
use crate::error::HydraError;

/// A strategy's parameters read from its table by serde; the parameter struct refuses keys it
/// does not know (`#[serde(deny_unknown_fields)]`), and the error names the strategy.
pub(crate) fn read_params<T: DeserializeOwned>(
    strategy: &'static str,
    table: &toml::Table,
) -> Result<T, HydraError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| HydraError::Params {
        strategy,
        source: Box::new(e),
    })
}

/// The parameters of a strategy that takes none: any key is refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

/// `(L, H)` of a model whose blocks all have H heads (strategies score unpruned models).
pub(crate) fn grid(model: &Classifier) -> Result<(usize, usize), HydraError> {
    let layers = &model.encoder().layer;
    let heads = layers.first().map_or(0, |b| b.attention.n_heads);
    if let Some((l, b)) = layers
        .iter()
        .enumerate()
        .find(|(_, b)| b.attention.n_heads != heads)
    {
        return Err(HydraError::invalid(
            format!("model block {l} heads"),
            b.attention.n_heads,
            format!("{heads} heads, as in block 0 (head importance scores an unpruned model)"),
        ));
    }
    if heads == 0 {
        return Err(HydraError::invalid(
            "model blocks",
            "none",
            "at least one block with heads",
        ));
    }
    Ok((layers.len(), heads))
}

/// Per block and head, the mean over every token of the calibration data that counts (all of
/// an image's, a sequence's unpadded ones) of `stat(block, the block's input, key padding)`, a
/// `[B·T, H]` value per token and head; the blocks run as usual in between. Scores `[L, H]`.
pub(crate) fn token_means(
    model: &Classifier,
    data: &Calibration,
    stat: impl Fn(&Block, Tensor<3>, Option<Tensor<2, Bool>>) -> Tensor<2>,
) -> Result<HeadScores, HydraError> {
    let (layers, heads) = grid(model)?;
    let device = data.check(model)?;
    let mode = Mode::Deterministic;
    let mut sum = Tensor::<2>::zeros([layers, heads], &device);
    let mut tokens_seen = 0.0;
    for (input, _) in &data.batches {
        let key_padding = input.key_padding();
        let mut x = model.embed(input, mode);
        let [b, t, _] = x.dims();
        let real = match &key_padding {
            Some(padding) => padding.clone().bool_not().float().reshape([b * t, 1]),
            None => Tensor::ones([b * t, 1], &device),
        };
        let mut per_block = Vec::with_capacity(layers);
        for block in &model.encoder().layer {
            let values = stat(block, x.clone(), key_padding.clone());
            per_block.push((values * real.clone()).sum_dim(0).reshape([heads]));
            x = block.forward(x, BlockGates::default(), key_padding.clone(), mode);
        }
        tokens_seen += real.sum().into_scalar::<f32>() as f64;
        sum = sum + Tensor::stack(per_block, 0);
    }
    Ok(HeadScores::from_tensor(
        sum.div_scalar(tokens_seen.max(1.0)),
    ))
}

/// What a block's attention reads: its input, normalised first in a pre-norm block.
pub(crate) fn attention_input(block: &Block, x: Tensor<3>) -> Tensor<3> {
    if block.norm_first {
        block.norm1.forward(x)
    } else {
        x
    }
}
