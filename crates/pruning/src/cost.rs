//! What each unit costs, in parameters and in FLOPs per sample (counted as
//! `backbone::block_flops` counts), so that a budget can be met by removing units.

use backbone::{Block, BlockShape, Classifier, block_flops};
use burn::module::Module;
use serde::{Deserialize, Serialize};

use crate::units::UnitKind;

/// What a budget measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Parameters stored.
    Params,
    /// FLOPs per sample.
    Flops,
}

/// The `measure` each unit of `kind` in `model` accounts for, `[block][unit]`, on inputs of
/// `text_tokens` tokens (text models; a ViT has its own count). A GELU is counted as what
/// merging `fc2∘fc1` into one D×D map saves, which is negative for an MLP narrower than D/2.
pub fn unit_costs(
    model: &Classifier,
    kind: UnitKind,
    measure: Measure,
    text_tokens: usize,
) -> Vec<Vec<i64>> {
    let tokens = model.backbone().tokens(text_tokens);
    (model.encoder().layer.iter().zip(kind.per_block(model)))
        .map(|(block, units)| {
            let cost = match measure {
                Measure::Params => params(block, kind),
                Measure::Flops => flops(block, kind, tokens),
            };
            vec![cost; units]
        })
        .collect()
}

/// Parameters one unit of `kind` holds in `block` (every head or neuron holds the same).
fn params(block: &Block, kind: UnitKind) -> i64 {
    let [d, hidden] = block.mlp.fc1.weight.dims();
    let heads = block.attention.n_heads.max(1);
    let attention = block.attention.num_params() as i64;
    let mlp = block.mlp.num_params() as i64;
    match kind {
        // A head's share of the projections; the output bias stays with the block.
        UnitKind::Head => (attention - d as i64) / heads as i64,
        UnitKind::Attention => attention,
        UnitKind::Mlp => mlp,
        UnitKind::Neuron => (mlp - d as i64) / hidden.max(1) as i64,
        // fc1 and fc2 become one D×D map with its bias.
        UnitKind::Gelu => mlp - (d * d + d) as i64,
        UnitKind::Block => (block.num_params() - block.dropout.num_params()) as i64,
    }
}

/// FLOPs per sample one unit of `kind` accounts for in `block` on `tokens` tokens.
fn flops(block: &Block, kind: UnitKind, tokens: usize) -> i64 {
    let [d, hidden] = block.mlp.fc1.weight.dims();
    let heads = block.attention.n_heads;
    let head_dim = block.attention.query.weight.dims()[1] / heads.max(1);
    let of = |shape: BlockShape| block_flops(shape, tokens, d, head_dim, hidden) as i64;
    let full = of(BlockShape::full(heads));
    let without = |attention, activation| {
        full - of(BlockShape {
            heads,
            attention,
            activation,
        })
    };
    let mlp = 4 * (tokens * d * hidden) as i64;
    match kind {
        UnitKind::Head => of(BlockShape::full(1)) - of(BlockShape::full(0)),
        UnitKind::Attention => without(false, true),
        UnitKind::Gelu => without(true, false),
        UnitKind::Mlp => mlp,
        UnitKind::Neuron => mlp / hidden.max(1) as i64,
        UnitKind::Block => without(false, true) + mlp,
    }
}
