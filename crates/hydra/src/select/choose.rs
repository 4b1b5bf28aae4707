//! One member's heads from its scores (seeded Gumbel-top-k on normalised ranks), and the global
//! ranking of the pruning analysis.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::head_set::{HeadSet, Keep};
use crate::error::HydraError;
use pruning::{Scores, key_order};

/// Global ranking for the pruning analysis: drops the `round(ratio · L·H)` lowest-scored heads
/// (ties: the later head first). Blocks may end with no heads: the result is meant for head
/// gates ([`HeadSet::mask`]), not for [`crate::prune`].
pub fn prune_ratio(scores: &Scores, ratio: f64) -> Result<HeadSet, HydraError> {
    check_scores(scores)?;
    Ok(HeadSet(pruning::keep_top(scores, ratio)?))
}

/// Picks one member's heads from `scores` by Gumbel-top-k with temperature `temperature` on
/// normalised ranks (see [`SelectConfig::temperature`](crate::SelectConfig::temperature)), the Gumbel draws from `seed`.
///
/// - [`Keep::PerBlock`]`(k)`: ranks within each block; each block keeps its `k` highest keys.
/// - [`Keep::Global`]`(n)`: a global budget compares heads across blocks, so the ranks are over
///   all heads of the model (a head's rank reflects its raw score against every other block's
///   heads, and the order of the raw scores is kept as τ → 0); each block keeps its highest key,
///   then the `n - L` highest keys of the rest join.
///
/// Temperature 0 is plain top-k on the raw scores (ties: the earlier head first), the same as
/// any τ small enough that rank gaps outweigh the noise (except that τ > 0 breaks ties between
/// equal scores at random). Errors on empty blocks, non-finite
/// scores, a negative or non-finite temperature, or a budget the blocks cannot meet.
pub fn select_heads(
    scores: &Scores,
    keep: Keep,
    temperature: f64,
    seed: u64,
) -> Result<HeadSet, HydraError> {
    check_scores(scores)?;
    if !temperature.is_finite() || temperature < 0.0 {
        return Err(HydraError::invalid(
            "temperature",
            temperature,
            "a finite number >= 0",
        ));
    }
    let rows = &scores.0;
    let lens: Vec<usize> = rows.iter().map(Vec::len).collect();
    check_keep(keep, &lens)?;
    let keys = if temperature == 0.0 {
        scores.clone()
    } else {
        let normalised = match keep {
            Keep::PerBlock(_) => Scores(rows.iter().map(|row| ranks(row)).collect()),
            Keep::Global(_) => {
                let flat = ranks(&rows.iter().flatten().copied().collect::<Vec<_>>());
                let mut rest = flat.as_slice();
                Scores(
                    (lens.iter())
                        .map(|&n| {
                            let (row, tail) = rest.split_at(n);
                            rest = tail;
                            row.to_vec()
                        })
                        .collect(),
                )
            }
        };
        let mut rng = StdRng::seed_from_u64(seed);
        Scores(
            (normalised.0.iter())
                .map(|row| {
                    row.iter()
                        .map(|&r| r / temperature + gumbel(&mut rng))
                        .collect()
                })
                .collect(),
        )
    };
    let chosen = match keep {
        Keep::PerBlock(k) => (0..rows.len())
            .flat_map(|l| top_in_block(&keys, l, k))
            .collect(),
        Keep::Global(n) => {
            let mut order = positions(&keys);
            order.sort_by(|a, b| key_order(&keys, *a, *b));
            // Each block's best head first, then the best of the rest.
            let mut chosen: Vec<(usize, usize)> = Vec::with_capacity(n);
            for l in 0..rows.len() {
                chosen.extend(order.iter().find(|p| p.0 == l));
            }
            let rest: Vec<_> = order.into_iter().filter(|p| !chosen.contains(p)).collect();
            chosen.extend(rest.into_iter().take(n - rows.len()));
            chosen
        }
    };
    Ok(gather(scores, &chosen))
}

/// The `k` highest-keyed heads of block `l` (in [`key_order`]).
pub(super) fn top_in_block(keys: &Scores, l: usize, k: usize) -> Vec<(usize, usize)> {
    let mut row: Vec<_> = (0..keys.0[l].len()).map(|h| (l, h)).collect();
    row.sort_by(|a, b| key_order(keys, *a, *b));
    row.truncate(k);
    row
}

/// Normalised ranks of `scores`: 1 for the highest, 0 for the lowest, evenly spaced between
/// (`(number of lower scores) / (n - 1)`); equal scores share their mean rank, and a single
/// score (or all equal) ranks 1/2.
fn ranks(scores: &[f64]) -> Vec<f64> {
    let n = scores.len();
    if n < 2 {
        return vec![0.5; n];
    }
    (scores.iter())
        .map(|s| {
            let lower = scores.iter().filter(|t| t.total_cmp(s).is_lt()).count();
            let equal = scores.iter().filter(|t| t.total_cmp(s).is_eq()).count();
            (lower as f64 + (equal - 1) as f64 / 2.0) / (n - 1) as f64
        })
        .collect()
}

/// Checks the budget against blocks of `heads` heads.
pub(super) fn check_keep(keep: Keep, heads: &[usize]) -> Result<(), HydraError> {
    let fewest = heads.iter().copied().min().unwrap_or(0);
    let total: usize = heads.iter().sum();
    match keep {
        Keep::PerBlock(k) if k == 0 || k > fewest => Err(HydraError::invalid(
            "SelectConfig.keep (per block)",
            k,
            format!("1 to {fewest}, the heads of a block"),
        )),
        Keep::Global(n) if n < heads.len() || n > total => Err(HydraError::invalid(
            "SelectConfig.keep (global)",
            n,
            format!("{} to {total}: at least one head per block", heads.len()),
        )),
        _ => Ok(()),
    }
}

/// All (block, head) positions.
fn positions(scores: &Scores) -> Vec<(usize, usize)> {
    (scores.0.iter().enumerate())
        .flat_map(|(l, row)| (0..row.len()).map(move |h| (l, h)))
        .collect()
}

/// The head set holding `positions` (one row per block of `scores`).
fn gather(scores: &Scores, positions: &[(usize, usize)]) -> HeadSet {
    let mut kept = vec![Vec::new(); scores.0.len()];
    for &(l, h) in positions {
        kept[l].push(h);
    }
    kept.iter_mut().for_each(|row| row.sort_unstable());
    HeadSet(kept)
}

pub(super) fn check_scores(scores: &Scores) -> Result<(), HydraError> {
    if scores.0.is_empty() || scores.0.iter().any(Vec::is_empty) {
        return Err(HydraError::invalid(
            "Scores",
            "an empty block",
            "one score per head of every block",
        ));
    }
    for (l, row) in scores.0.iter().enumerate() {
        if let Some(h) = row.iter().position(|s| !s.is_finite()) {
            return Err(HydraError::invalid(
                format!("Scores[{l}][{h}]"),
                row[h],
                "a finite score",
            ));
        }
    }
    Ok(())
}

/// A standard Gumbel draw, `-ln(-ln u)` with u uniform in the open interval (0, 1).
fn gumbel(rng: &mut StdRng) -> f64 {
    let u = ((rng.random::<u64>() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -(-u.ln()).ln()
}
