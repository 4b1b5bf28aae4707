//! `activation`: how much a unit puts out, averaged over every token of the calibration data
//! (padding excluded). A head scores the L2 norm of its context vector (its output before the
//! output projection), a neuron the magnitude of its activation, a branch the L2 norm of what it
//! adds to the residual stream. Units whose output is small change the stream little, so they
//! rank low. No score for a GELU or a whole block (their removal is not an output that is small).

use backbone::Classifier;

use super::shared::{
    attention_input, attention_output, head_context, mlp_hidden, mlp_input, token_means,
    token_norms,
};
use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Activation>();

struct Activation;

impl Parameterless for Activation {
    const NAME: &'static str = "activation";
    const ABOUT: &'static str =
        "mean output norm of each unit over the calibration data (head context, neuron, branch)";
    const KINDS: &'static [UnitKind] = &[
        UnitKind::Head,
        UnitKind::Neuron,
        UnitKind::Attention,
        UnitKind::Mlp,
    ];

    fn scores(model: &Classifier, kind: UnitKind, data: &Calibration, _: &ScoreContext) -> Scored {
        token_means(model, kind, data, |block, x, key_padding| match kind {
            UnitKind::Head => {
                let heads = block.attention.n_heads;
                let context = head_context(block, attention_input(block, x), key_padding);
                let [b, t, width] = context.dims();
                // The L2 norm of each head's d_h-vector per token: [B·T, H].
                let per_head = context.reshape([b * t, heads, width / heads]);
                per_head
                    .powi_scalar(2)
                    .sum_dim(2)
                    .sqrt()
                    .reshape([b * t, heads])
            }
            UnitKind::Neuron => {
                let hidden = mlp_hidden(block, mlp_input(block, x, key_padding));
                let [b, t, f] = hidden.dims();
                hidden.abs().reshape([b * t, f])
            }
            UnitKind::Attention => token_norms(attention_output(block, x, key_padding)),
            _ => token_norms(block.mlp.forward(mlp_input(block, x, key_padding), None)),
        })
    }
}
