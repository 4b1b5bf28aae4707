//! `activation`: the mean L2 norm of each head's context vector (its output before the output
//! projection) over every token of the calibration images. Heads whose output is small change
//! the residual stream little, so they rank low.

use backbone::{BlockGates, Mode, VisionTransformer, attend};
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
        model: &VisionTransformer,
        data: &Calibration,
        _ctx: &ScoreContext,
    ) -> Result<HeadScores, HydraError> {
        let (layers, heads) = grid(model)?;
        let device = data.check()?;
        let mode = Mode::Deterministic;
        let mut sum = Tensor::<2>::zeros([layers, heads], &device);
        let mut tokens_seen = 0;
        for (images, _) in &data.batches {
            let mut x = model.embed(images.clone(), mode);
            let mut norms = Vec::with_capacity(layers);
            for block in &model.encoder.layer {
                // Recompute the block's attention core to see the per-head context; the block
                // then runs as usual (twice the attention cost, but no change to the backbone).
                let a = &block.attention;
                let input = if block.norm_first {
                    block.norm1.forward(x.clone())
                } else {
                    x.clone()
                };
                let qkv = [&a.query, &a.key, &a.value].map(|p| p.forward(input.clone()));
                let context = attend(qkv, heads, None, None, &a.dropout, mode); // [B, T, H·d_h]
                let [b, t, width] = context.dims();
                let per_head = context.reshape([b * t, heads, width / heads]);
                // Sum over tokens of the L2 norm of each head's d_h-vector: [H].
                norms.push(
                    per_head
                        .powi_scalar(2)
                        .sum_dim(2)
                        .sqrt()
                        .sum_dim(0)
                        .reshape([heads]),
                );
                x = block.forward(x, BlockGates::default(), None, mode);
            }
            let [b, t, _] = x.dims();
            tokens_seen += b * t;
            sum = sum + Tensor::stack(norms, 0);
        }
        Ok(HeadScores::from_tensor(sum.div_scalar(tokens_seen as f64)))
    }
}
