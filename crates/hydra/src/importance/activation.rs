//! `activation`: the mean L2 norm of each head's context vector (its output before the output
//! projection) over every token of the calibration data (padding excluded). Heads whose output
//! is small change the residual stream little, so they rank low.

use backbone::{Classifier, Mode, attend};

use super::{HeadImportance, HeadScores, NoParams, ScoreContext, Strategy, read_params};
use super::{attention_input, token_means};
use crate::calibration::Calibration;
use crate::error::HydraError;

pub(super) const STRATEGY: Strategy = Strategy {
    name: "activation",
    about: "mean L2 norm of each head's context vector over the calibration data",
    build: |params| {
        read_params::<NoParams>("activation", params)?;
        Ok(Box::new(Activation))
    },
};

struct Activation;

impl HeadImportance for Activation {
    fn name(&self) -> &'static str {
        STRATEGY.name
    }

    fn scores(
        &self,
        model: &Classifier,
        data: &Calibration,
        _ctx: &ScoreContext,
    ) -> Result<HeadScores, HydraError> {
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
