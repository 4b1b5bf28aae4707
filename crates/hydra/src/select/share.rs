//! How closely members follow a ranking (the share of kept heads in each block's top-k), and how
//! much members overlap (Jaccard).

use super::choose::{check_scores, top_in_block};
use super::head_set::HeadSet;
use super::plan::MemberPlan;
use crate::error::HydraError;
use pruning::Scores;

/// The share of a member's kept heads that are in its block's top-k by the member's own scores,
/// k = the number of heads that block keeps (ties: the earlier head first, as in plain top-k).
/// 1 for plain top-k (temperature 0) with a per-block budget; `k/H` expected for uniformly random
/// choice of k of H heads per block. With a global budget it says how well the heads follow the
/// scores within each block, not how the budget was split between blocks. Errors when the plan
/// keeps no head or its head set does not fit its scores.
pub fn topk_share(plan: &MemberPlan) -> Result<f64, HydraError> {
    share_in_top(&plan.kept, &plan.scores)
}

/// [`topk_share`] of the heads `kept` against any `scores` of the same model: e.g. one ranking
/// computed on the whole calibration set, which members scored on bootstrap resamples (or a
/// random strategy) did not see, so that the share says how much of that ranking they keep.
pub fn share_in_top(kept: &HeadSet, scores: &Scores) -> Result<f64, HydraError> {
    check_scores(scores)?;
    let lens: Vec<usize> = scores.0.iter().map(Vec::len).collect();
    kept.check(&lens, false)?;
    let total: usize = kept.0.iter().map(Vec::len).sum();
    if total == 0 {
        return Err(HydraError::invalid(
            "MemberPlan.kept",
            "no head",
            "at least one kept head",
        ));
    }
    let hits: usize = (kept.0.iter().enumerate())
        .map(|(l, row)| {
            let top = top_in_block(scores, l, row.len());
            row.iter().filter(|&&h| top.contains(&(l, h))).count()
        })
        .sum();
    Ok(hits as f64 / total as f64)
}

/// The Jaccard overlap |A ∩ B| / |A ∪ B| of the (block, head) pairs two members keep, for every
/// pair of members a < b in order (1 for equal head sets; none for a single member).
pub fn head_jaccard(kept: &[HeadSet]) -> Vec<f64> {
    let pairs = |set: &HeadSet| -> Vec<(usize, usize)> {
        (set.0.iter().enumerate())
            .flat_map(|(l, row)| row.iter().map(move |&h| (l, h)))
            .collect()
    };
    let sets: Vec<Vec<(usize, usize)>> = kept.iter().map(pairs).collect();
    let mut out = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            let common = sets[a].iter().filter(|p| sets[b].contains(p)).count();
            let union = sets[a].len() + sets[b].len() - common;
            out.push(if union == 0 {
                1.0
            } else {
                common as f64 / union as f64
            });
        }
    }
    out
}

/// The mean [`topk_share`] over members (errors when there are none).
pub fn mean_topk_share(plans: &[MemberPlan]) -> Result<f64, HydraError> {
    if plans.is_empty() {
        return Err(HydraError::invalid(
            "member plans",
            "none",
            "at least one member",
        ));
    }
    let shares = plans
        .iter()
        .map(topk_share)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(shares.iter().sum::<f64>() / shares.len() as f64)
}
