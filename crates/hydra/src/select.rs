//! Member construction: which heads each member keeps (seeded Gumbel-top-k on its head
//! scores), how closely a member follows its scores ([`topk_share`]), and the global ranking
//! of the pruning analysis (heads dropped by score over the whole model, [`prune_ratio`]).

use backbone::Classifier;
use burn::tensor::{Device, Tensor, TensorData};
use data::mix;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::error::HydraError;
use crate::importance::{HeadImportance, HeadScores, ScoreContext};

mod share;

pub use share::{head_jaccard, mean_topk_share, share_in_top, topk_share};

/// Which heads each block keeps (indices, sorted ascending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadSet(pub Vec<Vec<usize>>);

impl HeadSet {
    /// The `[L, H]` mask: 1 for kept heads, 0 for dropped ones (for `Gates.heads`).
    pub fn mask(&self, heads: usize, device: &Device) -> Result<Tensor<2>, HydraError> {
        self.check(&vec![heads; self.0.len()], false)?;
        let mut values = vec![0.0f32; self.0.len() * heads];
        for (l, kept) in self.0.iter().enumerate() {
            for &h in kept {
                values[l * heads + h] = 1.0;
            }
        }
        Ok(Tensor::from_data(
            TensorData::new(values, [self.0.len(), heads]),
            device,
        ))
    }

    /// Checks one row per block, indices strictly increasing and below the block's head count,
    /// and (when `non_empty`) at least one head per block.
    pub(crate) fn check(&self, heads: &[usize], non_empty: bool) -> Result<(), HydraError> {
        if self.0.len() != heads.len() {
            return Err(HydraError::invalid(
                "HeadSet",
                format!("{} blocks", self.0.len()),
                format!("{} blocks, as in the model", heads.len()),
            ));
        }
        for (l, (kept, &h)) in self.0.iter().zip(heads).enumerate() {
            let sorted = kept.windows(2).all(|w| w[0] < w[1]);
            if !sorted || kept.iter().any(|&i| i >= h) || (non_empty && kept.is_empty()) {
                let least = if non_empty { "at least one, " } else { "" };
                return Err(HydraError::invalid(
                    format!("HeadSet[{l}]"),
                    format!("{kept:?}"),
                    format!("{least}distinct sorted head indices below {h}"),
                ));
            }
        }
        Ok(())
    }
}

/// How many heads a member keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// This many heads in every block.
    PerBlock(usize),
    /// This many heads in all, at least one per block.
    Global(usize),
}

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
    /// and the expected share of kept heads in the top-2 ([`topk_share`]) is 0.73 (0.5 for
    /// uniform choice); τ = 0.25 gives 0.97, 0.73 and 0.87; large τ tends to uniform choice.
    pub temperature: f64,
    /// Score every member on its own seeded bootstrap resample of the calibration data.
    pub bootstrap: bool,
}

/// One member: the heads it keeps and the scores they were chosen from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberPlan {
    pub kept: HeadSet,
    pub scores: HeadScores,
}

/// Gumbel draws per member before accepting a head set an earlier member already has.
const REDRAWS: usize = 64;

/// Scores heads and picks each member's heads, all from `seed`.
///
/// Scores are computed once, or per member when `bootstrap` is set (member m scores its own
/// bootstrap resample) or the strategy [varies by member](HeadImportance::varies_by_member).
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
    importance: &dyn HeadImportance,
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
        Some(importance.scores(model, data, &ScoreContext { seed, member: 0 })?)
    };
    let mut plans: Vec<MemberPlan> = Vec::with_capacity(cfg.members);
    for member in 0..cfg.members {
        let scores = match &shared {
            Some(s) => s.clone(),
            None => {
                let ctx = ScoreContext { seed, member };
                if cfg.bootstrap {
                    let resample = data.bootstrap(stream(seed, member, 1))?;
                    importance.scores(model, &resample, &ctx)?
                } else {
                    importance.scores(model, data, &ctx)?
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

/// Global ranking for the pruning analysis: drops the `round(ratio · L·H)` lowest-scored heads
/// (ties: the later head first). Blocks may end with no heads: the result is meant for head
/// gates ([`HeadSet::mask`]), not for [`crate::prune`].
pub fn prune_ratio(scores: &HeadScores, ratio: f64) -> Result<HeadSet, HydraError> {
    check_scores(scores)?;
    if !(0.0..=1.0).contains(&ratio) {
        return Err(HydraError::invalid(
            "prune ratio",
            ratio,
            "a number in [0, 1]",
        ));
    }
    let mut order = positions(scores);
    let total = order.len();
    // Highest first, so the dropped heads are the tail.
    order.sort_by(|a, b| key_order(scores, *a, *b));
    let drop = (ratio * total as f64).round() as usize;
    Ok(gather(scores, &order[..total - drop]))
}

/// Picks one member's heads from `scores` by Gumbel-top-k with temperature `temperature` on
/// normalised ranks (see [`SelectConfig::temperature`]), the Gumbel draws from `seed`.
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
    scores: &HeadScores,
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
            Keep::PerBlock(_) => HeadScores(rows.iter().map(|row| ranks(row)).collect()),
            Keep::Global(_) => {
                let flat = ranks(&rows.iter().flatten().copied().collect::<Vec<_>>());
                let mut rest = flat.as_slice();
                HeadScores(
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
        HeadScores(
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
fn top_in_block(keys: &HeadScores, l: usize, k: usize) -> Vec<(usize, usize)> {
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
fn check_keep(keep: Keep, heads: &[usize]) -> Result<(), HydraError> {
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
fn positions(scores: &HeadScores) -> Vec<(usize, usize)> {
    (scores.0.iter().enumerate())
        .flat_map(|(l, row)| (0..row.len()).map(move |h| (l, h)))
        .collect()
}

/// Descending by key; ties broken by position (earlier first), so every order is reproducible.
fn key_order(keys: &HeadScores, a: (usize, usize), b: (usize, usize)) -> std::cmp::Ordering {
    keys.0[b.0][b.1]
        .total_cmp(&keys.0[a.0][a.1])
        .then(a.cmp(&b))
}

/// The head set holding `positions` (one row per block of `scores`).
fn gather(scores: &HeadScores, positions: &[(usize, usize)]) -> HeadSet {
    let mut kept = vec![Vec::new(); scores.0.len()];
    for &(l, h) in positions {
        kept[l].push(h);
    }
    kept.iter_mut().for_each(|row| row.sort_unstable());
    HeadSet(kept)
}

fn check_scores(scores: &HeadScores) -> Result<(), HydraError> {
    if scores.0.is_empty() || scores.0.iter().any(Vec::is_empty) {
        return Err(HydraError::invalid(
            "HeadScores",
            "an empty block",
            "one score per head of every block",
        ));
    }
    for (l, row) in scores.0.iter().enumerate() {
        if let Some(h) = row.iter().position(|s| !s.is_finite()) {
            return Err(HydraError::invalid(
                format!("HeadScores[{l}][{h}]"),
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
