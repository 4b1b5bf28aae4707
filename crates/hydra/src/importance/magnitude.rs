//! `magnitude`: L1 norm of each head's weights (its Q/K/V columns and output-projection rows).

use backbone::Classifier;
use burn::nn::Linear;
use burn::tensor::Tensor;

use super::scores::HeadScores;
use super::shared::grid;
use super::strategy::{Parameterless, ScoreContext, Scored, Strategy, no_params};
use crate::calibration::Calibration;

pub(super) const STRATEGY: Strategy = no_params::<Magnitude>();

struct Magnitude;

impl Parameterless for Magnitude {
    const NAME: &'static str = "magnitude";
    const ABOUT: &'static str =
        "L1 norm of the head's Q/K/V columns and output rows (data-free baseline)";

    fn scores(model: &Classifier, _data: &Calibration, _ctx: &ScoreContext) -> Scored {
        let (_, heads) = grid(model)?;
        let rows = model
            .encoder()
            .layer
            .iter()
            .map(|block| {
                let a = &block.attention;
                // Head h owns columns h·d_h..(h+1)·d_h of an [in, out] projection weight.
                let columns = |linear: &Linear| {
                    let [d, width] = linear.weight.dims();
                    let w = linear.weight.val().abs().reshape([d, heads, width / heads]);
                    w.sum_dim(2).sum_dim(0).reshape([heads])
                };
                let [width, d] = a.output.weight.dims();
                let output_rows = a
                    .output
                    .weight
                    .val()
                    .abs()
                    .reshape([heads, width / heads * d])
                    .sum_dim(1)
                    .reshape([heads]);
                columns(&a.query) + columns(&a.key) + columns(&a.value) + output_rows
            })
            .collect();
        Ok(HeadScores::from_tensor(Tensor::stack(rows, 0)))
    }
}
