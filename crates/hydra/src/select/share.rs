//! How closely members follow their scores: the share of kept heads in each block's top-k.

use super::{MemberPlan, check_scores, top_in_block};
use crate::error::HydraError;

/// The share of a member's kept heads that are in its block's top-k by the member's own scores,
/// k = the number of heads that block keeps (ties: the earlier head first, as in plain top-k).
/// 1 for plain top-k (temperature 0) with a per-block budget; `k/H` expected for uniformly random
/// choice of k of H heads per block. With a global budget it says how well the heads follow the
/// scores within each block, not how the budget was split between blocks. Errors when the plan
/// keeps no head or its head set does not fit its scores.
pub fn topk_share(plan: &MemberPlan) -> Result<f64, HydraError> {
    let scores = &plan.scores;
    check_scores(scores)?;
    let lens: Vec<usize> = scores.0.iter().map(Vec::len).collect();
    plan.kept.check(&lens, false)?;
    let kept: usize = plan.kept.0.iter().map(Vec::len).sum();
    if kept == 0 {
        return Err(HydraError::invalid(
            "MemberPlan.kept",
            "no head",
            "at least one kept head",
        ));
    }
    let hits: usize = (plan.kept.0.iter().enumerate())
        .map(|(l, row)| {
            let top = top_in_block(scores, l, row.len());
            row.iter().filter(|&&h| top.contains(&(l, h))).count()
        })
        .sum();
    Ok(hits as f64 / kept as f64)
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
