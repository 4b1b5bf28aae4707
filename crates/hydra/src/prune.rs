//! Physical head pruning: a genuinely smaller model with narrower attention projections.

use backbone::{Attention, Classifier};
use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Int, Tensor, TensorData};

use crate::error::HydraError;
use crate::select::HeadSet;

/// A copy of `model` keeping only the `kept` heads of each block (at least one per block).
///
/// Head h owns columns `h·d_h..(h+1)·d_h` of the Q/K/V weights and biases and the same rows of
/// the output weight; those are selected, the output bias and everything else is kept as is.
/// The result computes exactly what `model` computes with the dropped heads' gates at 0.
pub fn prune(model: &Classifier, kept: &HeadSet) -> Result<Classifier, HydraError> {
    let heads: Vec<usize> = (model.encoder().layer.iter())
        .map(|b| b.attention.n_heads)
        .collect();
    kept.check(&heads, true)?;
    let mut pruned = model.clone();
    for (block, keep) in pruned.encoder_mut().layer.iter_mut().zip(&kept.0) {
        block.attention = prune_attention(&block.attention, keep);
    }
    Ok(pruned)
}

fn prune_attention(attention: &Attention, keep: &[usize]) -> Attention {
    let [_, width] = attention.query.weight.dims();
    let head_dim = width / attention.n_heads;
    let index: Vec<i64> = keep
        .iter()
        .flat_map(|&h| (h * head_dim..(h + 1) * head_dim).map(|i| i as i64))
        .collect();
    let device = attention.query.weight.device();
    let index = Tensor::<1, Int>::from_data(TensorData::new(index.clone(), [index.len()]), &device);
    let columns = |linear: &Linear| Linear {
        weight: Param::from_tensor(linear.weight.val().select(1, index.clone())),
        bias: (linear.bias.as_ref()).map(|b| Param::from_tensor(b.val().select(0, index.clone()))),
    };
    Attention {
        query: columns(&attention.query),
        key: columns(&attention.key),
        value: columns(&attention.value),
        output: Linear {
            weight: Param::from_tensor(attention.output.weight.val().select(0, index.clone())),
            bias: attention.output.bias.clone(),
        },
        dropout: attention.dropout.clone(),
        n_heads: keep.len(),
        causal: attention.causal,
    }
}
