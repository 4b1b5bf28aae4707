//! `magnitude`: the L1 norm of the weights a unit owns. A head owns its Q/K/V columns and
//! output-projection rows, a neuron its `fc1` column and `fc2` row; a branch owns all of its
//! projections, a block both branches. No score for a GELU: it owns no weights.

use backbone::{Block, Classifier};
use burn::nn::Linear;
use burn::tensor::Tensor;

use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::scores::Scores;
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Magnitude>();

struct Magnitude;

impl Parameterless for Magnitude {
    const NAME: &'static str = "magnitude";
    const ABOUT: &'static str =
        "L1 norm of the weights a unit owns (data-free baseline; no GELU score: it owns none)";
    const KINDS: &'static [UnitKind] = &[
        UnitKind::Head,
        UnitKind::Attention,
        UnitKind::Mlp,
        UnitKind::Neuron,
        UnitKind::Block,
    ];

    fn scores(model: &Classifier, kind: UnitKind, _: &Calibration, _: &ScoreContext) -> Scored {
        let rows = (model.encoder().layer.iter())
            .map(|block| match kind {
                UnitKind::Head => heads(block),
                UnitKind::Neuron => neurons(block),
                UnitKind::Attention => heads(block).sum(),
                UnitKind::Mlp => neurons(block).sum(),
                _ => heads(block).sum() + neurons(block).sum(),
            })
            .collect();
        Ok(Scores::from_rows(rows))
    }
}

/// Per head of `block`, the L1 norm of its Q/K/V columns and output-projection rows `[H]`.
fn heads(block: &Block) -> Tensor<1> {
    let a = &block.attention;
    let heads = a.n_heads;
    // Head h owns columns h·d_h..(h+1)·d_h of an [in, out] projection weight.
    let columns = |linear: &Linear| {
        let [d, width] = linear.weight.dims();
        let w = linear.weight.val().abs().reshape([d, heads, width / heads]);
        w.sum_dim(2).sum_dim(0).reshape([heads])
    };
    let [width, d] = a.output.weight.dims();
    let output_rows = (a.output.weight.val().abs())
        .reshape([heads, width / heads * d])
        .sum_dim(1)
        .reshape([heads]);
    columns(&a.query) + columns(&a.key) + columns(&a.value) + output_rows
}

/// Per hidden neuron of `block`'s MLP, the L1 norm of its `fc1` column and `fc2` row `[F]`.
fn neurons(block: &Block) -> Tensor<1> {
    let (fc1, fc2) = (&block.mlp.fc1, &block.mlp.fc2);
    let [_, hidden] = fc1.weight.dims();
    let columns = fc1.weight.val().abs().sum_dim(0).reshape([hidden]);
    let rows = fc2.weight.val().abs().sum_dim(1).reshape([hidden]);
    columns + rows
}
