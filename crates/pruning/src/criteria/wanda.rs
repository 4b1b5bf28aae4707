//! `wanda`: weights times activations (Sun et al. 2023), summed over the weights a unit owns.
//! A weight `W[i, j]` scores `|W[i, j]|·‖X_i‖`, where `‖X_i‖` is the root mean square of its
//! input feature i over every token of the calibration data (padding excluded): a large weight
//! on a feature that is always near zero matters little. A head owns its Q/K/V columns (read
//! from the attention's input) and its output-projection rows (read from its context); a neuron
//! its `fc1` column (read from the MLP's input) and its `fc2` row (read from its activation).

use backbone::Classifier;
use burn::nn::Linear;
use burn::tensor::Tensor;

use super::shared::{attention_input, feature_rms, head_context, mlp_hidden, mlp_input};
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
        // One walk over the data: each unit's inputs and outputs side by side, split after.
        let rms = feature_rms(model, data, |block, x, key_padding| {
            let (input, output) = if kind == UnitKind::Head {
                let input = attention_input(block, x);
                (input.clone(), head_context(block, input, key_padding))
            } else {
                let input = mlp_input(block, x, key_padding);
                (input.clone(), mlp_hidden(block, input))
            };
            Tensor::cat(vec![input, output], 2)
        })?;
        let rows = (model.encoder().layer.iter().zip(rms))
            .map(|(block, rms)| {
                let (a, mlp) = (&block.attention, &block.mlp);
                let [d, _] = a.query.weight.dims();
                let [total] = rms.dims();
                let (x, out) = (rms.clone().narrow(0, 0, d), rms.narrow(0, d, total - d));
                if kind == UnitKind::Neuron {
                    return read_columns(&mlp.fc1, &x) + read_rows(&mlp.fc2, &out);
                }
                let [c0, c1, c2] = [&a.query, &a.key, &a.value].map(|p| read_columns(p, &x));
                // Per feature of the heads' width; head h owns features h·d_h..(h+1)·d_h.
                let per_feature = c0 + c1 + c2 + read_rows(&a.output, &out);
                let [width] = per_feature.dims();
                let per_head = per_feature.reshape([a.n_heads, width / a.n_heads]);
                per_head.sum_dim(1).reshape([a.n_heads])
            })
            .collect();
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
