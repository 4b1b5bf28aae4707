//! A budget in measured latency: remove units, lowest scores over the whole model first, until
//! the pruned model runs a sample batch in at most `keep` times the unpruned model's time. The
//! time is measured, not counted, so the plan depends on the machine and may differ between
//! runs where two candidates are close.

use std::time::Instant;

use backbone::{Classifier, Gates, Input, Mode};

use crate::error::PruningError;
use crate::plan::{Applied, Plan};
use crate::scores::Scores;
use crate::select::{key_order, positions};
use crate::units::UnitKind;

/// Passes of each model per measurement round, after one pass of warm-up.
const PASSES: usize = 3;

/// Refuses a latency budget that is not a share in (0, 1] or is set on a kind whose removal is
/// only gated (attention, mlp, gelu): gating saves no time here.
pub fn check_latency_budget(kind: UnitKind, keep: f64) -> Result<(), PruningError> {
    if kind.physical() && keep > 0.0 && keep <= 1.0 {
        return Ok(());
    }
    Err(PruningError::invalid(
        "budget.latency",
        format!("{keep} with unit = \"{kind}\""),
        "a share in (0, 1] of head, neuron or block units (the others are removed through \
         gates, which saves no time)",
    ))
}

/// The plan for `kind` that removes the fewest lowest-scored units (by `scores`, over the whole
/// model) whose applied model runs `sample` in at most `keep` times the unpruned model's median
/// time, the two timed alternately over `rounds` rounds; with the measured share. Budgets
/// [`check_latency_budget`] refuses are refused.
pub fn select_by_latency(
    model: &Classifier,
    kind: UnitKind,
    scores: &Scores,
    keep: f64,
    sample: &Input,
    rounds: usize,
) -> Result<(Plan, f64), PruningError> {
    check_latency_budget(kind, keep)?;
    let device = sample.device();
    let mut order = positions(scores);
    order.sort_by(|&a, &b| key_order(scores, a, b));
    let plan_of = |k: usize| {
        let removed: Vec<_> = order.iter().rev().take(k).copied().collect();
        Plan::removing(kind, scores, &removed)
    };
    let share = |k: usize| -> Result<f64, PruningError> {
        let applied = plan_of(k).apply(model, &device)?;
        Ok(median_ratio(model, &applied, sample, rounds.max(1)))
    };
    let k = fewest_meeting(most_physical(kind, scores, &order), keep, share, kind)?;
    Ok((plan_of(k.0), k.1))
}

/// The most removals, in `order`'s reverse, that leave a smaller model rather than a gated
/// one: every block keeps a head or neuron, or one block is kept.
fn most_physical(kind: UnitKind, scores: &Scores, order: &[(usize, usize)]) -> usize {
    let mut left: Vec<usize> = scores.0.iter().map(Vec::len).collect();
    let mut total: usize = left.iter().sum();
    for (k, &(l, _)) in order.iter().rev().enumerate() {
        left[l] -= 1;
        total -= 1;
        let gated = match kind {
            UnitKind::Block => total == 0,
            _ => left[l] == 0,
        };
        if gated {
            return k;
        }
    }
    order.len()
}

/// The fewest of `n` removals whose `share` is at most `keep`, with that share, by bisection
/// (more removals, less time); refused when even `n` miss it.
fn fewest_meeting(
    n: usize,
    keep: f64,
    mut share: impl FnMut(usize) -> Result<f64, PruningError>,
    kind: UnitKind,
) -> Result<(usize, f64), PruningError> {
    let (mut low, mut high) = (0, n);
    let mut best = share(high)?;
    if best > keep {
        return Err(PruningError::invalid(
            "budget.latency",
            keep,
            format!(
                "a share that removing {kind} units can reach: removing the most that leave a \
                 smaller model ({n}) ran at {best:.3} of the model's time"
            ),
        ));
    }
    let none = share(0)?;
    if none <= keep {
        return Ok((0, none));
    }
    while high - low > 1 {
        let mid = (low + high) / 2;
        let s = share(mid)?;
        if s <= keep {
            (high, best) = (mid, s);
        } else {
            low = mid;
        }
    }
    Ok((high, best))
}

/// The median over `rounds` of (pruned time / unpruned time), the two timed back to back.
fn median_ratio(model: &Classifier, applied: &Applied, sample: &Input, rounds: usize) -> f64 {
    let none = Gates::none();
    let (pruned, gates) = match applied {
        Applied::Physical(m) => (m, &none),
        Applied::Gated(m, g) => (m, g.as_ref()),
    };
    let time = |m: &Classifier, g: &Gates| {
        let start = Instant::now();
        for _ in 0..PASSES {
            // Reading the result back waits for backends that run asynchronously.
            let _ = m
                .forward(sample.clone(), g, Mode::Deterministic)
                .into_data();
        }
        start.elapsed().as_secs_f64()
    };
    time(model, &none);
    time(pruned, gates);
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| time(pruned, gates) / time(model, &none))
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_removals_stop_before_a_block_empties() {
        // Removal order (lowest first): (1, 0), (0, 1), (1, 1), (0, 0).
        let scores = Scores(vec![vec![0.4, 0.2], vec![0.1, 0.3]]);
        let mut order = positions(&scores);
        order.sort_by(|&a, &b| key_order(&scores, a, b));
        // The third removal, (1, 1), would empty block 1 of its heads.
        assert_eq!(most_physical(UnitKind::Head, &scores, &order), 2);
        let blocks = Scores(vec![vec![0.5], vec![0.1], vec![0.9]]);
        let mut order = positions(&blocks);
        order.sort_by(|&a, &b| key_order(&blocks, a, b));
        assert_eq!(most_physical(UnitKind::Block, &blocks, &order), 2);
    }

    #[test]
    fn bisection_finds_the_fewest_removals_that_meet_the_budget() {
        // 40 units, each saving 1% of the time: 0.8 needs 20 removals.
        let share = |k: usize| Ok(1.0 - 0.01 * k as f64);
        let (k, s) = fewest_meeting(40, 0.8, share, UnitKind::Head).unwrap();
        assert_eq!(k, 20);
        assert!((s - 0.8).abs() < 1e-12);
        assert_eq!(fewest_meeting(40, 1.0, share, UnitKind::Head).unwrap().0, 0);
        assert_eq!(
            fewest_meeting(40, 0.6, share, UnitKind::Head).unwrap().0,
            40
        );
        let e = fewest_meeting(40, 0.5, share, UnitKind::Neuron)
            .unwrap_err()
            .to_string();
        assert!(e.contains("budget.latency") && e.contains("0.600"), "{e}");
    }
}
