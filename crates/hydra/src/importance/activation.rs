//! `activation`: the mean L2 norm of each head's context vector (its output before the output
//! projection) over every token of the calibration data (padding excluded). Heads whose output
//! is small change the residual stream little, so they rank low.

use backbone::{Classifier, Mode, attend};

use super::shared::{attention_input, token_means};
use super::strategy::{Parameterless, ScoreContext, Scored, Strategy, no_params};
use crate::calibration::Calibration;

pub(super) const STRATEGY: Strategy = no_params::<Activation>();

struct Activation;

impl Parameterless for Activation {
    const NAME: &'static str = "activation";
    const ABOUT: &'static str =
        "mean L2 norm of each head's context vector over the calibration data";

    fn scores(model: &Classifier, data: &Calibration, _ctx: &ScoreContext) -> Scored {
        token_means(model, data, |block, x, key_padding| {
            // Recompute the block's attention core to see the per-head context (twice the
            // attention cost, but no change to the backbone).
            let a = &block.attention;
            let input = attention_input(block, x);
            let qkv = [&a.query, &a.key, &a.value].map(|p| p.forward(input.clone()));
            let context = attend(
                qkv,
                a.n_heads,
                None,
                key_padding,
                &a.dropout,
                Mode::Deterministic,
            );
            let [b, t, width] = context.dims();
            // The L2 norm of each head's d_h-vector per token: [B·T, H].
            let per_head = context.reshape([b * t, a.n_heads, width / a.n_heads]);
            per_head
                .powi_scalar(2)
                .sum_dim(2)
                .sqrt()
                .reshape([b * t, a.n_heads])
        })
    }
}
