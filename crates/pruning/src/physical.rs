//! Physical pruning: genuinely smaller models, with narrower attention projections (heads),
//! narrower MLPs (neurons) or fewer blocks. Each computes exactly what the unpruned model
//! computes with the removed units' gates at 0.

use backbone::{Attention, Classifier, Mlp};
use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Int, Tensor, TensorData};

use crate::error::PruningError;
use crate::kept::check_kept;
use crate::units::UnitKind;

/// A copy of `model` keeping only the `kept` heads of each block (at least one per block).
///
/// Head h owns columns `h·d_h..(h+1)·d_h` of the Q/K/V weights and biases and the same rows of
/// the output weight; those are selected, the output bias and everything else is kept as is.
pub fn prune_heads(model: &Classifier, kept: &[Vec<usize>]) -> Result<Classifier, PruningError> {
    check_kept(UnitKind::Head, kept, &UnitKind::Head.per_block(model), true)?;
    let mut pruned = model.clone();
    for (block, keep) in pruned.encoder_mut().layer.iter_mut().zip(kept) {
        block.attention = prune_attention(&block.attention, keep);
    }
    Ok(pruned)
}

/// A copy of `model` keeping only the `kept` hidden neurons of each block's MLP (at least one
/// per block): neuron i is column i of `fc1` (and its bias) and row i of `fc2`.
pub fn prune_neurons(model: &Classifier, kept: &[Vec<usize>]) -> Result<Classifier, PruningError> {
    check_kept(
        UnitKind::Neuron,
        kept,
        &UnitKind::Neuron.per_block(model),
        true,
    )?;
    let mut pruned = model.clone();
    for (block, keep) in pruned.encoder_mut().layer.iter_mut().zip(kept) {
        let mlp = &block.mlp;
        let index = indices(
            keep.iter().map(|&i| i as i64).collect(),
            &mlp.fc1.weight.device(),
        );
        block.mlp = Mlp {
            fc1: select_columns(&mlp.fc1, &index),
            fc2: Linear {
                weight: Param::from_tensor(mlp.fc2.weight.val().select(0, index.clone())),
                bias: mlp.fc2.bias.clone(),
            },
            activation: mlp.activation,
        };
    }
    Ok(pruned)
}

/// A copy of `model` without the blocks `kept` does not list (`kept[l]` is `[0]` to keep
/// block l, `[]` to drop it; at least one block stays).
pub fn drop_blocks(model: &Classifier, kept: &[Vec<usize>]) -> Result<Classifier, PruningError> {
    check_kept(
        UnitKind::Block,
        kept,
        &UnitKind::Block.per_block(model),
        false,
    )?;
    if kept.iter().all(Vec::is_empty) {
        return Err(PruningError::invalid(
            "blocks kept",
            "none",
            "at least one block",
        ));
    }
    let mut pruned = model.clone();
    let layers = std::mem::take(&mut pruned.encoder_mut().layer);
    pruned.encoder_mut().layer = (layers.into_iter().zip(kept))
        .filter(|(_, keep)| !keep.is_empty())
        .map(|(block, _)| block)
        .collect();
    Ok(pruned)
}

fn prune_attention(attention: &Attention, keep: &[usize]) -> Attention {
    let [_, width] = attention.query.weight.dims();
    let head_dim = width / attention.n_heads;
    let index: Vec<i64> = keep
        .iter()
        .flat_map(|&h| (h * head_dim..(h + 1) * head_dim).map(|i| i as i64))
        .collect();
    let index = indices(index, &attention.query.weight.device());
    let columns = |linear: &Linear| select_columns(linear, &index);
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

/// The output columns `index` of `linear` (its weight is `[in, out]`), with their biases.
fn select_columns(linear: &Linear, index: &Tensor<1, Int>) -> Linear {
    Linear {
        weight: Param::from_tensor(linear.weight.val().select(1, index.clone())),
        bias: (linear.bias.as_ref()).map(|b| Param::from_tensor(b.val().select(0, index.clone()))),
    }
}

fn indices(values: Vec<i64>, device: &burn::tensor::Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}
