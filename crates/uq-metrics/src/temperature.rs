//! Post-hoc temperature scaling (Guo et al. 2017): one scalar T, fitted on held-out logits,
//! divides every logit. It changes confidence, never the argmax.
//!
//! For an ensemble one T divides every member's logits and the prediction stays the mean of the
//! members' softmax ([`fit_ensemble_temperature`], [`scaled_members`]), so T = 1 is the
//! uncalibrated ensemble.

use crate::classification::{check_labels_for, top_label};
use crate::error::{MetricsError, Result};
use crate::input::{Logits, MemberProbs, Probs};

/// The search range of [`fit_temperature`]: T in [0.05, 20].
pub const TEMPERATURE_RANGE: (f64, f64) = (0.05, 20.0);

/// Grid points on ln T before refinement; odd, so T = 1 is one of them.
const GRID: usize = 41;

/// Golden-section steps: each shrinks the bracket by 0.618, so 60 take it from two grid steps
/// (0.3 in ln T) below 1e-13.
const GOLDEN_STEPS: usize = 60;

/// The T minimising the NLL of `softmax(logits / T)` against `labels`, over ln T in
/// `[ln 0.05, ln 20]`.
///
/// A 41-point grid on ln T, then golden-section search between the neighbours of the best grid
/// point. The NLL is convex in 1/T, so unimodal in ln T, and the grid keeps the search from
/// stalling on flat stretches; the result is the best point evaluated, so its NLL is never
/// above the NLL at T = 1 (a grid point). Ties go to the T nearest 1: a flat objective (say,
/// every row's logits equal) leaves T = 1. The NLL is computed in log space, unclipped.
pub fn fit_temperature(logits: &Logits, labels: &[usize]) -> Result<f64> {
    check_labels_for(logits.n(), logits.c(), labels)?;
    Ok(search(|b| scaled_nll(logits, labels, b)))
}

/// The T minimising the NLL of the ensemble prediction `mean_m softmax(z_m / T)` against
/// `labels`, one logit matrix `z_m` per member (all `[N, C]`), searched as [`fit_temperature`]
/// does; with one member it is [`fit_temperature`].
pub fn fit_ensemble_temperature(members: &[Logits], labels: &[usize]) -> Result<f64> {
    let (n, c) = member_shape(members)?;
    check_labels_for(n, c, labels)?;
    if let [one] = members {
        return Ok(search(|b| scaled_nll(one, labels, b)));
    }
    Ok(search(|b| ensemble_nll(members, labels, b)))
}

/// The grid-then-golden-section search of [`fit_temperature`] over ln T for an NLL given as a
/// function of `b = 1 / T`; returns T.
fn search(nll: impl Fn(f64) -> f64) -> f64 {
    let objective = |u: f64| {
        let f = nll((-u).exp());
        // Only absurd logits (near f64::MAX, times 1/T) overflow; treat them as worst.
        if f.is_finite() { f } else { f64::INFINITY }
    };
    // [0.05, 20] is symmetric in ln T (0.05 = 1/20): the grid runs from -ln 20 to ln 20.
    let half = TEMPERATURE_RANGE.1.ln();
    let grid: Vec<f64> = (0..GRID)
        .map(|i| half * (2.0 * i as f64 / (GRID - 1) as f64 - 1.0))
        .collect();
    let centre = GRID / 2;
    let mut best = (grid[centre], objective(grid[centre]));
    let mut best_index = centre;
    // Visit the grid outwards from T = 1, so equal values keep the point nearest it.
    for step in 1..=centre {
        for i in [centre - step, centre + step] {
            let f = objective(grid[i]);
            if f < best.1 {
                (best, best_index) = ((grid[i], f), i);
            }
        }
    }
    let (lo, hi) = (
        grid[best_index.saturating_sub(1)],
        grid[(best_index + 1).min(GRID - 1)],
    );
    golden_section(objective, lo, hi, best).0.exp()
}

/// `logits / t`; T must be finite and > 0, and the quotients finite. T = 1 returns the logits
/// unchanged, bit for bit.
pub fn scale_logits(logits: &Logits, t: f64) -> Result<Logits> {
    if !(t.is_finite() && t > 0.0) {
        return Err(MetricsError::InvalidOption {
            name: "temperature",
            value: t.to_string(),
            expected: "a finite number > 0",
        });
    }
    let data = logits.rows().flatten().map(|&z| z / t).collect();
    Logits::new(data, logits.n(), logits.c())
}

/// Each member's `softmax(z_m / t)`, as [`MemberProbs`] `[M, N, C]`: the members of a
/// temperature-scaled ensemble, whose prediction is their mean. All members `[N, C]`.
pub fn scaled_members(members: &[Logits], t: f64) -> Result<MemberProbs> {
    let scaled = (members.iter())
        .map(|z| scale_logits(z, t))
        .collect::<Result<Vec<_>>>()?;
    member_softmax(&scaled)
}

/// Each member's `softmax(z_m)`, as [`MemberProbs`] `[M, N, C]`. All members `[N, C]`.
pub fn member_softmax(members: &[Logits]) -> Result<MemberProbs> {
    let (n, c) = member_shape(members)?;
    let mut flat = Vec::with_capacity(members.len() * n * c);
    for z in members {
        flat.extend(softmax_probs(z).rows().flatten());
    }
    MemberProbs::new(flat, members.len(), n, c)
}

/// `[N, C]` of the first member, every member checked to have it; at least one member.
fn member_shape(members: &[Logits]) -> Result<(usize, usize)> {
    let first = members
        .first()
        .ok_or(MetricsError::Empty { what: "members" })?;
    let (n, c) = (first.n(), first.c());
    match members.iter().find(|m| m.n() != n || m.c() != c) {
        Some(m) => Err(MetricsError::ShapeMismatch {
            what: "a member's logits (N·C, as the first member's)",
            expected: n * c,
            found: m.n() * m.c(),
        }),
        None => Ok((n, c)),
    }
}

/// Row-wise softmax, `exp(z - max z) / sum exp(z - max z)`: no overflow for any finite logits,
/// and no loss of digits for large ones (`exp(z - logsumexp(z))` loses the ulp of `z`).
pub fn softmax_probs(logits: &Logits) -> Probs {
    let mut data = Vec::with_capacity(logits.n() * logits.c());
    for row in logits.rows() {
        let max = top_label(row).1;
        let start = data.len();
        data.extend(row.iter().map(|&z| (z - max).exp()));
        // The sum is at least 1 (the maximum contributes exp(0)).
        let inv = 1.0 / data[start..].iter().sum::<f64>();
        data[start..].iter_mut().for_each(|p| *p *= inv);
    }
    // Each row sums to 1 within C rounding errors, far inside DEFAULT_SUM_TOL.
    Probs::trusted(data, logits.n(), logits.c())
}

/// Mean over rows of `logsumexp(b z) - b z[y]`, the NLL of `softmax(b z)`, with `b = 1 / T`.
fn scaled_nll(logits: &Logits, labels: &[usize], b: f64) -> f64 {
    let total: f64 = logits
        .rows()
        .zip(labels)
        .map(|(row, &y)| {
            let max = top_label(row).1;
            let sum: f64 = row.iter().map(|&z| (b * (z - max)).exp()).sum();
            b * (max - row[y]) + sum.ln()
        })
        .sum();
    total / logits.n() as f64
}

/// Mean over rows of `-ln mean_m softmax(b z_m)[y]`, each member's log-softmax in log space and
/// the mean over members by log-sum-exp.
fn ensemble_nll(members: &[Logits], labels: &[usize], b: f64) -> f64 {
    let mut rows: Vec<_> = members.iter().map(Logits::rows).collect();
    let ln_m = (members.len() as f64).ln();
    let mut total = 0.0;
    let mut log_p = vec![0.0; members.len()];
    for &y in labels {
        for (lp, member) in log_p.iter_mut().zip(rows.iter_mut()) {
            let row = member.next().unwrap_or_default();
            let max = top_label(row).1;
            let sum: f64 = row.iter().map(|&z| (b * (z - max)).exp()).sum();
            *lp = b * (row[y] - max) - sum.ln();
        }
        let top = log_p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = top + log_p.iter().map(|lp| (lp - top).exp()).sum::<f64>().ln();
        total += ln_m - lse;
    }
    total / labels.len() as f64
}

/// Golden-section search for a minimum of `f` in `[lo, hi]`; returns the best of the points it
/// evaluates and `start` (a point already evaluated, which it may not beat).
fn golden_section(
    f: impl Fn(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
    start: (f64, f64),
) -> (f64, f64) {
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let mut best = start;
    let mut keep = |x: f64, fx: f64| {
        if fx < best.1 {
            best = (x, fx);
        }
    };
    let (mut x1, mut x2) = (hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    keep(x1, f1);
    keep(x2, f2);
    for _ in 0..GOLDEN_STEPS {
        if f1 <= f2 {
            (hi, x2, f2) = (x2, x1, f1);
            x1 = hi - inv_phi * (hi - lo);
            f1 = f(x1);
            keep(x1, f1);
        } else {
            (lo, x1, f1) = (x1, x2, f2);
            x2 = lo + inv_phi * (hi - lo);
            f2 = f(x2);
            keep(x2, f2);
        }
    }
    best
}
