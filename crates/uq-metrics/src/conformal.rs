//! Split conformal prediction sets (Vovk et al. 2005; Angelopoulos & Bates 2021): a threshold
//! on a non-conformity score, fitted on a calibration set, gives sets that hold the label with
//! probability at least `1 - alpha` on exchangeable data.

use serde::{Deserialize, Serialize};

use crate::classification::check_labels;
use crate::error::{MetricsError, Result};
use crate::input::Probs;
use crate::nonfinite::inf_if_null;

/// A non-conformity score `s(x, y)`, higher = less like the training data. Sets are
/// `{c : s(x, c) <= q}`, so `y` is in the set exactly when `s(x, y) <= q`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConformalScore {
    /// Threshold / LAC (Sadinle et al. 2019): `1 - p[y]`; smallest sets on average.
    Thr,
    /// Adaptive prediction sets (Romano et al. 2020), non-randomised: the probability mass of
    /// the classes ranked at or above `y`, ranking by `p` descending with ties to the lower
    /// index. Sets are a prefix of that ranking, possibly empty when `q < max p`.
    Aps,
}

impl ConformalScore {
    /// Every variant, in declaration order.
    pub const ALL: [Self; 2] = [Self::Thr, Self::Aps];

    /// The name configs and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Thr => "thr",
            Self::Aps => "aps",
        }
    }

    /// Every name, in the order of [`Self::ALL`], joined for an error message.
    pub(crate) fn listed() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl std::fmt::Display for ConformalScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ConformalScore {
    type Err = crate::error::MetricsError;

    fn from_str(s: &str) -> crate::error::Result<Self> {
        (Self::ALL.into_iter().find(|v| v.name() == s))
            .ok_or_else(|| crate::error::MetricsError::UnknownConformalScore(s.to_string()))
    }
}

/// Coverage and size of conformal sets on a test set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConformalReport {
    pub alpha: f64,
    pub score: ConformalScore,
    /// The calibrated `q`; +inf (JSON `null`) when the calibration set is too small for
    /// `alpha`, so every set is full.
    #[serde(deserialize_with = "inf_if_null")]
    pub threshold: f64,
    /// Fraction of test samples whose label is in their set.
    pub coverage: f64,
    /// Mean set size over test samples.
    pub set_size: f64,
}

/// `s(x_i, y_i)` for every sample.
pub fn conformal_scores(
    probs: &Probs,
    labels: &[usize],
    score: ConformalScore,
) -> Result<Vec<f64>> {
    check_labels(probs, labels)?;
    Ok(probs
        .rows()
        .zip(labels)
        .map(|(row, &y)| match score {
            ConformalScore::Thr => 1.0 - row[y],
            ConformalScore::Aps => class_scores_aps(row)[y],
        })
        .collect())
}

/// The split-conformal threshold: the `k`-th smallest of the n calibration scores with
/// `k = ceil((n + 1)(1 - alpha))`, i.e. their `k / n` empirical quantile; +inf when `k > n`.
/// Then `P(s(x, y) <= q) >= 1 - alpha` for an exchangeable test point, and at most
/// `1 - alpha + 1 / (n + 1)` without ties.
///
/// `(n + 1)(1 - alpha)` is snapped to the nearest integer when within 1e-9 relative of it, so
/// decimal alphas give the intended `k` (in f64, `10 * (1 - 0.7)` is `3.0000000000000004`).
pub fn conformal_threshold(
    cal: &Probs,
    labels: &[usize],
    score: ConformalScore,
    alpha: f64,
) -> Result<f64> {
    check_alpha(alpha)?;
    let mut scores = conformal_scores(cal, labels, score)?;
    let n = scores.len();
    let k = quantile_rank(n, alpha);
    if k > n {
        return Ok(f64::INFINITY);
    }
    scores.sort_unstable_by(f64::total_cmp);
    Ok(scores[k.max(1) - 1])
}

/// Per sample, the classes `c` with `s(x, c) <= q`, in increasing class index. A NaN `q` gives
/// empty sets; +inf gives full ones.
pub fn prediction_sets(probs: &Probs, q: f64, score: ConformalScore) -> Vec<Vec<usize>> {
    probs
        .rows()
        .map(|row| {
            let scores = match score {
                ConformalScore::Thr => row.iter().map(|p| 1.0 - p).collect(),
                ConformalScore::Aps => class_scores_aps(row),
            };
            (0..row.len()).filter(|&c| scores[c] <= q).collect()
        })
        .collect()
}

/// Calibrates on (`cal`, `cal_labels`) at level `alpha`, then measures the sets on (`test`,
/// `test_labels`). Both sets must have the same classes.
pub fn conformal(
    cal: &Probs,
    cal_labels: &[usize],
    test: &Probs,
    test_labels: &[usize],
    score: ConformalScore,
    alpha: f64,
) -> Result<ConformalReport> {
    if test.c() != cal.c() {
        return Err(MetricsError::ShapeMismatch {
            what: "test probs row",
            expected: cal.c(),
            found: test.c(),
        });
    }
    check_labels(test, test_labels)?;
    let threshold = conformal_threshold(cal, cal_labels, score, alpha)?;
    let sets = prediction_sets(test, threshold, score);
    let n = test.n() as f64;
    let covered = sets
        .iter()
        .zip(test_labels)
        .filter(|(set, y)| set.contains(y));
    Ok(ConformalReport {
        alpha,
        score,
        threshold,
        coverage: covered.count() as f64 / n,
        set_size: sets.iter().map(Vec::len).sum::<usize>() as f64 / n,
    })
}

/// APS score of every class of one row: the cumulative mass down the ranking, up to and
/// including the class. One code path for calibration and sets, so `y in set <=> s <= q` holds
/// exactly, rounding included.
fn class_scores_aps(row: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..row.len()).collect();
    // Stable sort: equal probabilities keep increasing class index (`+ 0.0` maps -0.0 to 0.0,
    // so signed zeros tie).
    order.sort_by(|&a, &b| (row[b] + 0.0).total_cmp(&(row[a] + 0.0)));
    let mut scores = vec![0.0; row.len()];
    let mut mass = 0.0;
    for c in order {
        mass += row[c];
        scores[c] = mass;
    }
    scores
}

/// `ceil((n + 1)(1 - alpha))`, snapped to an integer within rounding.
fn quantile_rank(n: usize, alpha: f64) -> usize {
    let x = (n + 1) as f64 * (1.0 - alpha);
    let nearest = x.round();
    let k = if (x - nearest).abs() <= 1e-9 * x {
        nearest
    } else {
        x.ceil()
    };
    // alpha < 1, so x > 0 and k >= 1; the float fits since x <= n + 1.
    k as usize
}

fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(MetricsError::InvalidOption {
            name: "alpha",
            value: alpha.to_string(),
            expected: "a miscoverage level in (0, 1)",
        })
    }
}
