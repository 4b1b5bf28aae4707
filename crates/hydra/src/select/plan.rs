//! Member construction: every member's scores and, from them, the heads it keeps, all from one
//! seed.

use backbone::Classifier;
use data::mix;
use serde::{Deserialize, Serialize};

use super::choose::{check_keep, select_heads};
use super::head_set::{HeadSet, Keep};
use crate::error::HydraError;
use pruning::{Calibration, Criterion, ScoreContext, Scores, UnitKind, score};

/// How members are chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectConfig {
    /// Number of members M (at least 1).
    pub members: usize,
    pub keep: Keep,
    /// Gumbel-top-k temperature τ on normalised ranks; 0 = plain top-k on the raw scores.
    ///
    /// Each head's score is replaced by its rank among the heads competing for the budget,
    /// scaled to [0, 1] (best = 1, worst = 0, tied scores share their mean rank): the heads of
    /// its block for [`Keep::PerBlock`], all heads of the model for [`Keep::Global`]. Heads are
    /// then kept by top-k on `rank/τ + Gumbel`, which is sampling without replacement with
    /// probabilities ∝ `exp(rank/τ)` (Plackett–Luce). So τ is the temperature of a softmax over
    /// ranks: the best head of a block is `e^(1/τ)` times as likely as the worst to be drawn
    /// first, whatever the scores' scale, tail or strategy. With 4 heads and 2 kept per block at
    /// τ = 0.5, a block's best head is kept with probability 0.84, both of its top-2 with 0.49,
    /// and the expected share of kept heads in the top-2 ([`topk_share`](crate::topk_share)) is
    /// 0.73 (0.5 for uniform choice); τ = 0.25 gives 0.97, 0.73 and 0.87; large τ tends to uniform choice.
    pub temperature: f64,
    /// Score every member on its own seeded bootstrap resample of the calibration data.
    pub bootstrap: bool,
}

/// One member: the heads it keeps and the scores they were chosen from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberPlan {
    pub kept: HeadSet,
    pub scores: Scores,
}

/// Gumbel draws per member before accepting a head set an earlier member already has.
const REDRAWS: usize = 64;

/// Scores heads and picks each member's heads, all from `seed`.
///
/// Scores are computed once, or per member when `bootstrap` is set (member m scores its own
/// bootstrap resample) or the strategy [varies by member](Criterion::varies_by_member).
/// Each member's heads are [`select_heads`] on its scores: top-k on the keys `rank/τ + Gumbel`
/// with the scores replaced by normalised ranks in [0, 1] over each block (over the model for a
/// global budget); see [`SelectConfig::temperature`] for what τ means. Ranks rather than the
/// scores themselves because importance scores are heavy-tailed (squared gradients span many
/// orders of magnitude, within a block and between blocks): on any scale that keeps magnitudes,
/// such as scores min-max scaled over the model, all but the largest heads land near 0 and the
/// Gumbel noise alone decides. Ranks also make τ independent of the strategy and of the model.
/// τ = 0 is plain top-k on the raw scores.
/// With τ > 0, a member whose draw repeats an earlier member's head set draws again (up to 64
/// times), so members differ whenever the budget leaves room; bootstrap alone may still give
/// equal members when the resampled scores rank alike.
pub fn plan_members(
    model: &Classifier,
    importance: &dyn Criterion,
    data: &Calibration,
    cfg: &SelectConfig,
    seed: u64,
) -> Result<Vec<MemberPlan>, HydraError> {
    if cfg.members == 0 {
        return Err(HydraError::invalid("SelectConfig.members", 0, "at least 1"));
    }
    if !cfg.temperature.is_finite() || cfg.temperature < 0.0 {
        return Err(HydraError::invalid(
            "SelectConfig.temperature",
            cfg.temperature,
            "a finite number >= 0",
        ));
    }
    let heads: Vec<usize> = (model.encoder().layer.iter())
        .map(|b| b.attention.n_heads)
        .collect();
    check_keep(cfg.keep, &heads)?;
    if cfg.bootstrap {
        data.check(model)?;
    }
    let per_member = cfg.bootstrap || importance.varies_by_member();
    let shared = if per_member {
        None
    } else {
        Some(score(
            importance,
            model,
            UnitKind::Head,
            data,
            &ScoreContext { seed, member: 0 },
        )?)
    };
    let mut plans: Vec<MemberPlan> = Vec::with_capacity(cfg.members);
    for member in 0..cfg.members {
        let scores = match &shared {
            Some(s) => s.clone(),
            None => {
                let ctx = ScoreContext { seed, member };
                if cfg.bootstrap {
                    let resample = data.bootstrap(stream(seed, member, 1))?;
                    score(importance, model, UnitKind::Head, &resample, &ctx)?
                } else {
                    score(importance, model, UnitKind::Head, data, &ctx)?
                }
            }
        };
        let draw = stream(seed, member, 2);
        let mut kept = select_heads(&scores, cfg.keep, cfg.temperature, draw)?;
        if cfg.temperature > 0.0 {
            for redraw in 1..=REDRAWS {
                if plans.iter().all(|p| p.kept != kept) {
                    break;
                }
                kept = select_heads(&scores, cfg.keep, cfg.temperature, mix(draw, redraw as u64))?;
            }
        }
        plans.push(MemberPlan { kept, scores });
    }
    Ok(plans)
}

/// A seed for one purpose of one member.
fn stream(seed: u64, member: usize, purpose: u64) -> u64 {
    mix(mix(seed, purpose), member as u64)
}
