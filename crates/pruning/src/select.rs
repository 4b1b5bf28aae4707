//! Selection apart from scoring: which units to keep, from their scores, by a per-block or
//! global share or by a budget.

use backbone::Classifier;
use burn::module::Module;
use serde::{Deserialize, Serialize};

use crate::cost::{Measure, unit_costs};
use crate::error::PruningError;
use crate::plan::Plan;
use crate::scores::Scores;
use crate::units::UnitKind;

/// How many units to remove, lowest scores first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Remove `round(ratio · N)` of all N units, ranked over the whole model.
    Global(f64),
    /// Remove `round(ratio · U)` of each block's U units, ranked within the block.
    PerBlock(f64),
    /// Remove units, lowest scores over the whole model first, until the model's parameters
    /// or FLOPs are at most `keep` times the unpruned model's.
    Budget { measure: Measure, keep: f64 },
}

/// The plan keeping the units of `kind` that `selection` keeps by `scores` (ties: the earlier
/// unit ranks higher, so every plan is reproducible). `text_tokens` sizes FLOPs for a text model.
pub fn select(
    model: &Classifier,
    kind: UnitKind,
    scores: &Scores,
    selection: Selection,
    text_tokens: usize,
) -> Result<Plan, PruningError> {
    let mut order = positions(scores);
    order.sort_by(|&a, &b| key_order(scores, a, b));
    let removed: Vec<(usize, usize)> = match selection {
        Selection::Global(ratio) => lowest_share(&order, ratio)?,
        Selection::PerBlock(ratio) => {
            share("ratio", ratio)?;
            (scores.0.iter().enumerate())
                .flat_map(|(l, row)| {
                    let drop = (ratio * row.len() as f64).round() as usize;
                    let in_block: Vec<_> = order.iter().filter(|p| p.0 == l).copied().collect();
                    in_block[row.len() - drop..].to_vec()
                })
                .collect()
        }
        Selection::Budget { measure, keep } => {
            share("budget.keep", keep)?;
            let costs = unit_costs(model, kind, measure, text_tokens);
            lowest_until(model, kind, &order, &costs, measure, keep, text_tokens)?
        }
    };
    Ok(Plan::removing(kind, scores, &removed))
}

/// The kept units of each block when `round(ratio · N)` of all N units go, lowest scores over
/// the whole model first (ties: the later unit goes first). Blocks may keep none.
pub fn keep_top(scores: &Scores, ratio: f64) -> Result<Vec<Vec<usize>>, PruningError> {
    let mut order = positions(scores);
    order.sort_by(|&a, &b| key_order(scores, a, b));
    let removed = lowest_share(&order, ratio)?;
    Ok(Plan::removing(UnitKind::Head, scores, &removed).kept)
}

/// The last `round(ratio · N)` of `order`.
fn lowest_share(order: &[(usize, usize)], ratio: f64) -> Result<Vec<(usize, usize)>, PruningError> {
    share("ratio", ratio)?;
    let drop = (ratio * order.len() as f64).round() as usize;
    Ok(order[order.len() - drop..].to_vec())
}

/// The lowest-ranked units whose costs reach the saving a budget of `keep` needs.
fn lowest_until(
    model: &Classifier,
    kind: UnitKind,
    order: &[(usize, usize)],
    costs: &[Vec<i64>],
    measure: Measure,
    keep: f64,
    text_tokens: usize,
) -> Result<Vec<(usize, usize)>, PruningError> {
    let total = match measure {
        Measure::Params => model.num_params() as f64,
        Measure::Flops => model.flops(text_tokens) as f64,
    };
    let needed = total * (1.0 - keep);
    let mut saved = 0.0;
    let mut removed = Vec::new();
    for &(l, u) in order.iter().rev() {
        if saved >= needed {
            break;
        }
        saved += costs[l][u] as f64;
        removed.push((l, u));
    }
    if saved < needed {
        return Err(PruningError::invalid(
            "budget.keep",
            keep,
            format!(
                "a budget that removing {kind} units can meet: removing all of them leaves {:.3} \
                 of the model's {measure:?}",
                1.0 - saved / total
            )
            .to_lowercase(),
        ));
    }
    Ok(removed)
}

fn share(field: &str, ratio: f64) -> Result<(), PruningError> {
    if (0.0..=1.0).contains(&ratio) {
        return Ok(());
    }
    Err(PruningError::invalid(field, ratio, "a number in [0, 1]"))
}

/// All (block, unit) positions.
pub(crate) fn positions(scores: &Scores) -> Vec<(usize, usize)> {
    (scores.0.iter().enumerate())
        .flat_map(|(l, row)| (0..row.len()).map(move |u| (l, u)))
        .collect()
}

/// Descending by score; ties broken by position (earlier first), so every order is
/// reproducible.
pub fn key_order(scores: &Scores, a: (usize, usize), b: (usize, usize)) -> std::cmp::Ordering {
    (scores.0[b.0][b.1].total_cmp(&scores.0[a.0][a.1])).then(a.cmp(&b))
}
