//! `wanda`: weights times activations (Sun et al. 2023), summed over the weights a unit owns.
//! A weight `W[i, j]` scores `|W[i, j]|·‖X_i‖`, where `‖X_i‖` is the root mean square of its
//! input feature i over every token of the calibration data (padding excluded): a large weight
//! on a feature that is always near zero matters little. A head owns its Q/K/V columns (read
//! from the attention's input) and its output-projection rows (read from its context); a neuron
//! its `fc1` column (read from the MLP's input) and its `fc2` row (read from its activation).

use backbone::{Classifier, Mode, attend};
use burn::nn::Linear;
use burn::tensor::Tensor;

use super::shared::{attention_input, feature_rms, mlp_input};
use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::scores::Scores;
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Wanda>();

struct Wanda;

impl Parameterless for Wanda {
    const NAME: &'static str = "wanda";
    const ABOUT: &'static str =
        "sum of |weight| x RMS of its input feature over the calibration data (heads, neurons)";
    const KINDS: &'static [UnitKind] = &[UnitKind::Head, UnitKind::Neuron];

    fn scores(model: &Classifier, kind: UnitKind, data: &Calibration, _: &ScoreContext) -> Scored {
        let layers = &model.encoder().layer;
        let rows = if kind == UnitKind::Head {
            let inputs = feature_rms(model, data, |block, x, _| attention_input(block, x))?;
            let contexts = feature_rms(model, data, |block, x, key_padding| {
                let a = &block.attention;
                let input = attention_input(block, x);
                let qkv = [&a.query, &a.key, &a.value].map(|p| p.forward(input.clone()));
                attend(
                    qkv,
                    a.n_heads,
                    None,
                    key_padding,
                    &a.dropout,
                    Mode::Deterministic,
                )
            })?;
            (layers.iter().zip(inputs).zip(contexts))
                .map(|((block, x), context)| {
                    let a = &block.attention;
                    let columns = [&a.query, &a.key, &a.value].map(|p| read_columns(p, &x));
                    let [c0, c1, c2] = columns;
                    // Per feature of the heads' width; head h owns features h·d_h..(h+1)·d_h.
                    let per_feature = c0 + c1 + c2 + read_rows(&a.output, &context);
                    let [width] = per_feature.dims();
                    let per_head = per_feature.reshape([a.n_heads, width / a.n_heads]);
                    per_head.sum_dim(1).reshape([a.n_heads])
                })
                .collect()
        } else {
            let inputs = feature_rms(model, data, |block, x, key_padding| {
                mlp_input(block, x, key_padding)
            })?;
            let hidden = feature_rms(model, data, |block, x, key_padding| {
                let mlp = &block.mlp;
                mlp.activation
                    .apply(mlp.fc1.forward(mlp_input(block, x, key_padding)))
            })?;
            (layers.iter().zip(inputs).zip(hidden))
                .map(|((block, x), h)| {
                    read_columns(&block.mlp.fc1, &x) + read_rows(&block.mlp.fc2, &h)
                })
                .collect()
        };
        Ok(Scores::from_rows(rows))
    }
}

/// Per output column j of `linear` (`[in, out]`), `Σ_i |W[i, j]|·rms[i]`: `[out]`.
fn read_columns(linear: &Linear, rms: &Tensor<1>) -> Tensor<1> {
    let [d_in, d_out] = linear.weight.dims();
    let w = linear.weight.val().abs() * rms.clone().reshape([d_in, 1]);
    w.sum_dim(0).reshape([d_out])
}

/// Per input row i of `linear`, `rms[i]·Σ_k |W[i, k]|`: `[in]`.
fn read_rows(linear: &Linear, rms: &Tensor<1>) -> Tensor<1> {
    let [d_in, _] = linear.weight.dims();
    linear.weight.val().abs().sum_dim(1).reshape([d_in]) * rms.clone()
}
