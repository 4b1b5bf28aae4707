//! `activation`: the mean L2 norm of each head's context vector (its output before the output
//! projection) over every token of the calibration data (padding excluded). Heads whose output
//! is small change the residual stream little, so they rank low.

use backbone::{BlockGates, Classifier, Mode, attend};
use burn::tensor::Tensor;

use super::{HeadImportance, HeadScores, Params, ScoreContext, Strategy, grid};
use crate::calibration::Calibration;
use crate::error::HydraError;

pub(super) const STRATEGY: Strategy = Strategy {
    name: "activation",
    about: "mean L2 norm of each head's context vector over the calibration data",
    build: |params| {
        Params::new("activation", params, &[])?;
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
        let (layers, heads) = grid(model)?;
        let device = data.check(model)?;
        let mode = Mode::Deterministic;
        let mut sum = Tensor::<2>::zeros([layers, heads], &device);
        let mut tokens_seen = 0.0;
        for (input, _) in &data.batches {
            let key_padding = input.key_padding();
            let mut x = model.embed(input, mode);
            let [b, t, _] = x.dims();
            // 1 for every token that counts (all of an image's, a sequence's unpadded ones).
            let real = match &key_padding {
                Some(padding) => padding.clone().bool_not().float().reshape([b * t, 1]),
                None => Tensor::ones([b * t, 1], &device),
            };
            let mut norms = Vec::with_capacity(layers);
            for block in &model.encoder().layer {
                // Recompute the block's attention core to see the per-head context; the block
                // then runs as usual (twice the attention cost, but no change to the backbone).
                let a = &block.attention;
                let input = if block.norm_first {
                    block.norm1.forward(x.clone())
                } else {
                    x.clone()
                };
                let qkv = [&a.query, &a.key, &a.value].map(|p| p.forward(input.clone()));
                let context = attend(qkv, heads, None, key_padding.clone(), &a.dropout, mode);
                let width = context.dims()[2];
                let per_head = context.reshape([b * t, heads, width / heads]);
                // Sum over counted tokens of the L2 norm of each head's d_h-vector: [H].
                let norm = per_head
                    .powi_scalar(2)
                    .sum_dim(2)
                    .sqrt()
                    .reshape([b * t, heads]);
                norms.push((norm * real.clone()).sum_dim(0).reshape([heads]));
                x = block.forward(x, BlockGates::default(), key_padding.clone(), mode);
            }
            tokens_seen += real.sum().into_scalar::<f32>() as f64;
            sum = sum + Tensor::stack(norms, 0);
        }
        Ok(HeadScores::from_tensor(
            sum.div_scalar(tokens_seen.max(1.0)),
        ))
    }
}
