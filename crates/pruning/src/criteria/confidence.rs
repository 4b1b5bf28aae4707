//! `confidence`: how sharply each head attends, the mean over every token of the calibration
//! data (padding excluded) of the largest attention weight the token gives a key. A head that
//! spreads its attention evenly mixes the sequence into a blur; heads that point at one token
//! are the ones worth keeping.

use backbone::{Classifier, attention_probs};

use super::shared::{attention_input, token_means};
use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Confidence>();

struct Confidence;

impl Parameterless for Confidence {
    const NAME: &'static str = "confidence";
    const ABOUT: &'static str =
        "mean over the calibration tokens of each head's largest attention weight";
    const KINDS: &'static [UnitKind] = &[UnitKind::Head];

    fn scores(model: &Classifier, kind: UnitKind, data: &Calibration, _: &ScoreContext) -> Scored {
        token_means(model, kind, data, |block, x, key_padding| {
            let a = &block.attention;
            let input = attention_input(block, x);
            let qk = [&a.query, &a.key].map(|p| p.forward(input.clone()));
            let probs = attention_probs(qk, a.n_heads, key_padding); // [B, H, T, T]
            let [b, heads, t, _] = probs.dims();
            // Each query token's peak weight, as [B·T, H].
            let peak = probs.max_dim(3).reshape([b, heads, t]).swap_dims(1, 2);
            peak.reshape([b * t, heads])
        })
    }
}
