//! The helpers criteria share: their parameters read from TOML, the model's unit grid, gates
//! on every unit of a kind, and per-token statistics over the calibration data.

use backbone::{Block, BlockGates, Classifier, Mode, attend};
use burn::tensor::{Bool, Tensor};

use crate::calibration::Calibration;
use crate::error::PruningError;
use crate::scores::Scores;
use crate::units::UnitKind;

/// `(L, U)` of a model whose blocks all have U units of `kind` (criteria score unpruned
/// models: the same number of heads and the same MLP width in every block).
pub(crate) fn grid(model: &Classifier, kind: UnitKind) -> Result<(usize, usize), PruningError> {
    let counts = kind.per_block(model);
    let width = counts.first().copied().unwrap_or(0);
    if let Some((l, &n)) = counts.iter().enumerate().find(|&(_, &n)| n != width) {
        return Err(PruningError::invalid(
            format!("model block {l} {kind} units"),
            n,
            format!("{width}, as in block 0 (criteria score an unpruned model)"),
        ));
    }
    if width == 0 {
        return Err(PruningError::invalid(
            "model blocks",
            "none",
            format!("at least one block with {kind} units"),
        ));
    }
    Ok((counts.len(), width))
}

/// The gradient of `loss` with respect to the tracked gate values `gates` `[L, U]`; refused,
/// naming `criterion` and `kind`, when the model's forward pass did not use those gates.
pub(crate) fn gate_gradient(
    gates: &Tensor<2>,
    loss: Tensor<1>,
    criterion: &str,
    kind: UnitKind,
) -> Result<Tensor<2>, PruningError> {
    gates.grad(&loss.backward()).ok_or_else(|| {
        PruningError::invalid(
            criterion,
            format!("no gradient reached the {kind} gates"),
            "a model whose forward uses those gates",
        )
    })
}

/// Per block and unit, the mean over every token of the calibration data that counts (all of
/// an image's, a sequence's unpadded ones) of `stat(block, the block's input, key padding)`, a
/// `[B·T, U]` value per token and unit; the blocks run as usual in between. Scores `[L, U]`.
pub(crate) fn token_means(
    model: &Classifier,
    kind: UnitKind,
    data: &Calibration,
    stat: impl Fn(&Block, Tensor<3>, Option<Tensor<2, Bool>>) -> Tensor<2>,
) -> Result<Scores, PruningError> {
    // Every block the same number of units, so the rows are one table.
    grid(model, kind)?;
    let (sums, tokens) = token_sums(model, data, stat)?;
    Ok(Scores::from_tensor(sums.div_scalar(tokens.max(1.0))))
}

/// Per block, the root mean square over every token that counts of each feature of
/// `features(block, the block's input, key padding)` `[B, T, W]`: one `[W]` row per block.
pub(crate) fn feature_rms(
    model: &Classifier,
    data: &Calibration,
    features: impl Fn(&Block, Tensor<3>, Option<Tensor<2, Bool>>) -> Tensor<3>,
) -> Result<Vec<Tensor<1>>, PruningError> {
    let squares = |block: &Block, x: Tensor<3>, padding: Option<Tensor<2, Bool>>| {
        let f = features(block, x, padding);
        let [b, t, w] = f.dims();
        f.powi_scalar(2).reshape([b * t, w])
    };
    let (sums, tokens) = token_sums(model, data, squares)?;
    let rms = sums.div_scalar(tokens.max(1.0)).sqrt();
    let [layers, _] = rms.dims();
    Ok((0..layers)
        .map(|l| rms.clone().narrow(0, l, 1).squeeze_dim(0))
        .collect())
}

/// Per block, the sum over every token that counts of `stat(..)` `[B·T, W]` (a table
/// `[L, W]`), and the number of those tokens.
fn token_sums(
    model: &Classifier,
    data: &Calibration,
    stat: impl Fn(&Block, Tensor<3>, Option<Tensor<2, Bool>>) -> Tensor<2>,
) -> Result<(Tensor<2>, f64), PruningError> {
    let device = data.check(model)?;
    let layers = &model.encoder().layer;
    if layers.is_empty() {
        return Err(PruningError::invalid(
            "model blocks",
            "none",
            "at least one block",
        ));
    }
    let mode = Mode::Deterministic;
    let mut sum: Option<Tensor<2>> = None;
    let mut tokens_seen = 0.0;
    for (input, _) in &data.batches {
        let key_padding = input.key_padding();
        let mut x = model.embed(input, mode);
        let [b, t, _] = x.dims();
        let real = match &key_padding {
            Some(padding) => padding.clone().bool_not().float().reshape([b * t, 1]),
            None => Tensor::ones([b * t, 1], &device),
        };
        let mut per_block = Vec::with_capacity(layers.len());
        for block in layers {
            let values = stat(block, x.clone(), key_padding.clone());
            per_block.push((values * real.clone()).sum_dim(0)); // [1, W]
            x = block.forward(x, BlockGates::default(), key_padding.clone(), mode);
        }
        tokens_seen += real.sum().into_scalar::<f32>() as f64;
        let table = Tensor::cat(per_block, 0);
        // Started from zeros, as every batch after it is added.
        sum = Some(sum.unwrap_or_else(|| table.zeros_like()) + table);
    }
    // `check` has refused calibration data without batches.
    let sum = sum.ok_or_else(|| {
        PruningError::invalid("Calibration.batches", "an empty list", "at least one batch")
    })?;
    Ok((sum, tokens_seen))
}

/// What a block's attention reads: its input, normalised first in a pre-norm block.
pub(crate) fn attention_input(block: &Block, x: Tensor<3>) -> Tensor<3> {
    if block.norm_first {
        block.norm1.forward(x)
    } else {
        x
    }
}

/// What a block's attention branch adds to the residual stream (deterministic: no dropout).
pub(crate) fn attention_output(
    block: &Block,
    x: Tensor<3>,
    key_padding: Option<Tensor<2, Bool>>,
) -> Tensor<3> {
    let input = attention_input(block, x);
    (block.attention).forward(input, None, key_padding, Mode::Deterministic)
}

/// Each head's context vectors `[B, T, H·d_h]` from the attention's `input` (already
/// normalised in a pre-norm block): the attention core before the output projection,
/// recomputed (the backbone does not hand them out; twice the attention's cost).
pub(crate) fn head_context(
    block: &Block,
    input: Tensor<3>,
    key_padding: Option<Tensor<2, Bool>>,
) -> Tensor<3> {
    let a = &block.attention;
    let qkv = [&a.query, &a.key, &a.value].map(|p| p.forward(input.clone()));
    attend(
        qkv,
        a.n_heads,
        None,
        key_padding,
        &a.dropout,
        Mode::Deterministic,
    )
}

/// The MLP's hidden activations `[B, T, F]` from its `input`.
pub(crate) fn mlp_hidden(block: &Block, input: Tensor<3>) -> Tensor<3> {
    block.mlp.activation.apply(block.mlp.fc1.forward(input))
}

/// What a block's MLP reads: the residual stream after the attention sublayer, normalised
/// first in a pre-norm block (the wiring of `backbone::residual`).
pub(crate) fn mlp_input(
    block: &Block,
    x: Tensor<3>,
    key_padding: Option<Tensor<2, Bool>>,
) -> Tensor<3> {
    let h = x.clone() + attention_output(block, x, key_padding);
    if block.norm_first {
        block.norm2_forward(h)
    } else {
        block.norm1_forward(h)
    }
}

/// The L2 norm of each token's `[.., D]` vector, as `[B·T, 1]`.
pub(crate) fn token_norms(x: Tensor<3>) -> Tensor<2> {
    let [b, t, d] = x.dims();
    x.reshape([b * t, d]).powi_scalar(2).sum_dim(1).sqrt()
}
