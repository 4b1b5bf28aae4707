//! Deciding one declared claim over seeds: a one-sided paired t-test for non-inferiority and
//! superiority, two one-sided tests (TOST) for equivalence, the interval that agrees with the
//! test (90% two-sided: its ends are the two one-sided 95% bounds), and the seeds the test
//! would need to show the claim with 80% power at the effect and spread observed.

use serde::{Deserialize, Serialize};

use crate::decide::{ALPHA, POWER, fewest_seeds};
use crate::error::{MetricsError, Result};
use crate::stats::{interval90, mean_ci, t_cdf, t_quantile};

/// What a claim asserts of a method against a reference, within a margin `m` (in the metric's
/// units, "better" positive): non-inferior (the true difference is above −m), equivalent
/// (within ± m) or superior (above +m; m may be 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimKind {
    NonInferior,
    Equivalent,
    Superior,
}

impl ClaimKind {
    /// Every kind, as an experiment file writes them.
    pub const NAMES: [&'static str; 3] = ["non-inferior", "equivalent", "superior"];
    /// Every kind, in the order of [`ClaimKind::NAMES`].
    pub const ALL: [ClaimKind; 3] = [
        ClaimKind::NonInferior,
        ClaimKind::Equivalent,
        ClaimKind::Superior,
    ];

    /// The kind as an experiment file and summary.json write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimKind::NonInferior => Self::NAMES[0],
            ClaimKind::Equivalent => Self::NAMES[1],
            ClaimKind::Superior => Self::NAMES[2],
        }
    }
}

/// The test of a claim on a set of per-seed gains (method − reference, oriented so that a
/// positive gain is better). Undefined parts are NaN (fewer than two seeds).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimTest {
    /// One-sided p-value (non-inferior, superior) or the larger of TOST's two (equivalent).
    pub p: f64,
    /// The 90% two-sided Student-t interval of the mean gain: the claim is shown at [`ALPHA`]
    /// exactly when this interval lies above −m (non-inferior), above +m (superior) or within
    /// ± m (equivalent).
    pub ci90_low: f64,
    pub ci90_high: f64,
    /// [`claim_seeds_needed`] at the observed mean and spread.
    pub seeds_needed: Option<usize>,
}

/// Tests `kind` at `margin` on `gains`. The margin is above 0, or at least 0 for superiority.
/// With zero spread the claim is decided by the mean alone (p = 0 when it holds, else 1).
pub fn claim_test(gains: &[f64], kind: ClaimKind, margin: f64) -> Result<ClaimTest> {
    let allowed = match kind {
        ClaimKind::Superior => margin >= 0.0,
        _ => margin > 0.0,
    };
    if !(margin.is_finite() && allowed) {
        return Err(MetricsError::InvalidOption {
            name: "margin",
            value: margin.to_string(),
            expected: "a finite number above 0 (at least 0 for superiority)",
        });
    }
    let i = mean_ci(gains);
    let df = i.n.saturating_sub(1);
    if df == 0 || !i.mean.is_finite() {
        let nan = f64::NAN;
        return Ok(ClaimTest {
            p: nan,
            ci90_low: nan,
            ci90_high: nan,
            seeds_needed: None,
        });
    }
    let se = i.std / (i.n as f64).sqrt();
    let p = if se > 0.0 {
        // P(T >= t) and P(T <= t) under the null's boundary.
        let above = |bound: f64| t_cdf(-(i.mean - bound) / se, df);
        let below = |bound: f64| t_cdf((i.mean - bound) / se, df);
        match kind {
            ClaimKind::NonInferior => above(-margin),
            ClaimKind::Superior => above(margin),
            ClaimKind::Equivalent => above(-margin).max(below(margin)),
        }
    } else {
        f64::from(u8::from(!holds(kind, i.mean, margin)))
    };
    // 1 − 2α = 90%: the interval of a one-sided test at α.
    let (ci90_low, ci90_high) = interval90(&i);
    Ok(ClaimTest {
        p,
        ci90_low,
        ci90_high,
        seeds_needed: claim_seeds_needed(kind, i.mean, i.std, margin),
    })
}

/// Whether a true mean gain `mean` satisfies the claim.
fn holds(kind: ClaimKind, mean: f64, margin: f64) -> bool {
    match kind {
        ClaimKind::NonInferior => mean > -margin,
        ClaimKind::Superior => mean > margin,
        ClaimKind::Equivalent => mean.abs() < margin,
    }
}

/// The power of the claim's test at [`ALPHA`] with `n` seeds when the true mean gain is `mean`
/// and the per-seed spread `std`, by the usual shifted central-t approximation of the
/// noncentral t: a one-sided test rejects with probability `F_{n−1}(δ sqrt(n) / std −
/// t_{1−α, n−1})` for a distance δ from its null's boundary; TOST with the sum of its two
/// sides' less 1 (Schuirmann 1987). With zero spread: 1 when the claim holds, else 0.
pub fn claim_power(kind: ClaimKind, mean: f64, std: f64, margin: f64, n: usize) -> f64 {
    if n < 2 || !(mean.is_finite() && std.is_finite()) {
        return f64::NAN;
    }
    if std == 0.0 {
        return f64::from(u8::from(holds(kind, mean, margin)));
    }
    let df = n - 1;
    let crit = t_quantile(1.0 - ALPHA, df);
    let side = |distance: f64| t_cdf(distance * (n as f64).sqrt() / std - crit, df);
    match kind {
        ClaimKind::NonInferior => side(mean + margin),
        ClaimKind::Superior => side(mean - margin),
        ClaimKind::Equivalent => (side(margin - mean) + side(margin + mean) - 1.0).max(0.0),
    }
}

/// The fewest seeds (2 to [`MAX_SEEDS`](crate::decide::MAX_SEEDS)) at which [`claim_power`]
/// reaches [`POWER`] for the observed `mean` and `std`; `None` when even `MAX_SEEDS` are not
/// enough (among them every case where the observed mean itself contradicts the claim) or the
/// spread is undefined.
/// For equivalence this is the number to *show* equivalence, not to detect a margin-sized
/// difference.
pub fn claim_seeds_needed(kind: ClaimKind, mean: f64, std: f64, margin: f64) -> Option<usize> {
    // The power grows with n wherever the claim holds at the mean.
    fewest_seeds(|n| claim_power(kind, mean, std, margin, n) >= POWER)
}
