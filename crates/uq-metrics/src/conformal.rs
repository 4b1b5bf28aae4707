//! Split conformal prediction sets (Vovk et al. 2005; Angelopoulos & Bates 2021): a threshold
//! on a non-conformity score, fitted on a calibration set, gives sets that hold the label with
//! probability at least `1 - alpha` on exchangeable data.

use serde::{Deserialize, Serialize};

use crate::classification::check_labels;
use crate::error::{MetricsError, Result};
use crate::input::Probs;
use crate::nonfinite::inf_if_null;
use registry::{Entry, Registry};

/// A non-conformity score `s(x, y)`, higher = less like the training data. Sets are
/// `{c : s(x, c) <= q}`, so `y` is in the set exactly when `s(x, y) <= q`.
///
/// Written and parsed by name (`thr`, `aps`, `raps`), RAPS with its parameters when they are
/// not the defaults: `raps(penalty=0.01, k_reg=5)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ConformalScore {
    /// Threshold / LAC (Sadinle et al. 2019): `1 - p[y]`; smallest sets on average.
    Thr,
    /// Adaptive prediction sets (Romano et al. 2020), non-randomised: the probability mass of
    /// the classes ranked at or above `y`, ranking by `p` descending with ties to the lower
    /// index. Sets are a prefix of that ranking, possibly empty when `q < max p`.
    Aps,
    /// Regularised APS (Angelopoulos et al. 2021), non-randomised: the APS score plus
    /// [`Raps::penalty`] for every rank of `y` past [`Raps::k_reg`], which keeps rarely needed
    /// low-ranked classes out of the sets and makes them smaller and more stable.
    Raps(Raps),
}

/// RAPS's regulariser: `penalty * max(0, rank - k_reg)` is added to the APS score of the class at
/// 1-based `rank`. The defaults are torch-uncertainty's (`penalty = 0.1`, `k_reg = 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Raps {
    /// λ >= 0: the cost of each rank past `k_reg`; 0 gives APS.
    pub penalty: f64,
    /// Ranks up to this one go unpenalised.
    pub k_reg: usize,
}

impl Raps {
    /// torch-uncertainty's defaults.
    pub const DEFAULT: Self = Self {
        penalty: 0.1,
        k_reg: 1,
    };

    /// The regulariser, the penalty checked (finite, >= 0).
    pub fn new(penalty: f64, k_reg: usize) -> Result<Self> {
        match penalty.is_finite() && penalty >= 0.0 {
            true => Ok(Self { penalty, k_reg }),
            false => Err(MetricsError::InvalidOption {
                name: "penalty",
                value: penalty.to_string(),
                expected: "a finite number >= 0",
            }),
        }
    }
}

impl Default for Raps {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ConformalScore {
    /// Each score's name, without parameters, and what it measures, in a line; RAPS's row holds
    /// its default parameters.
    pub const NAMES: Registry<Self> = Registry::new(
        "conformal score",
        &[
            Entry {
                name: "thr",
                about: "one minus the probability of the class (threshold, LAC)",
                item: Self::Thr,
            },
            Entry {
                name: "aps",
                about: "probability mass of the classes ranked at or above the class (adaptive sets)",
                item: Self::Aps,
            },
            Entry {
                name: "raps",
                about: "the APS score plus a penalty for every rank past k_reg (regularised APS)",
                item: Self::Raps(Raps::DEFAULT),
            },
        ],
    );

    /// Every score, RAPS with its default parameters, in declaration order.
    pub const ALL: [Self; 3] = Self::NAMES.values();

    /// The score's name, without parameters.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// What the score measures, in a line.
    pub fn about(self) -> &'static str {
        Self::NAMES.entry_of(self).about
    }

    /// The score of every class of one row of probabilities.
    fn class_scores(self, row: &[f64]) -> Vec<f64> {
        match self {
            Self::Thr => row.iter().map(|p| 1.0 - p).collect(),
            Self::Aps => ranked_scores(row, |_| 0.0),
            Self::Raps(r) => {
                ranked_scores(row, |rank| r.penalty * rank.saturating_sub(r.k_reg) as f64)
            }
        }
    }
}

impl std::fmt::Display for ConformalScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Raps(r) if *r != Raps::default() => {
                write!(f, "raps(penalty={}, k_reg={})", r.penalty, r.k_reg)
            }
            other => f.write_str(other.name()),
        }
    }
}

impl std::str::FromStr for ConformalScore {
    type Err = MetricsError;

    fn from_str(s: &str) -> Result<Self> {
        let trimmed = s.trim();
        if let Some(args) = trimmed
            .strip_prefix("raps(")
            .and_then(|a| a.strip_suffix(')'))
        {
            return (parse_raps(args).map(Self::Raps)).ok_or_else(|| Self::NAMES.unknown(s).into());
        }
        Ok(Self::NAMES.get(trimmed)?.item)
    }
}

impl TryFrom<String> for ConformalScore {
    type Error = MetricsError;

    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<ConformalScore> for String {
    fn from(score: ConformalScore) -> Self {
        score.to_string()
    }
}

/// `penalty=<λ>, k_reg=<k>`, either key optional (its default then), λ finite and >= 0.
fn parse_raps(args: &str) -> Option<Raps> {
    let Raps {
        mut penalty,
        mut k_reg,
    } = Raps::DEFAULT;
    for pair in args.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=')?;
        match key.trim() {
            "penalty" => penalty = value.trim().parse().ok()?,
            "k_reg" => k_reg = value.trim().parse().ok()?,
            _ => return None,
        }
    }
    Raps::new(penalty, k_reg).ok()
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
            _ => score.class_scores(row)[y],
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
            let scores = score.class_scores(row);
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
/// including the class, plus `penalty(rank)` at its 1-based rank (0 for APS). One code path for
/// calibration and sets, so `y in set <=> s <= q` holds exactly, rounding included.
fn ranked_scores(row: &[f64], penalty: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..row.len()).collect();
    // Stable sort: equal probabilities keep increasing class index (`+ 0.0` maps -0.0 to 0.0,
    // so signed zeros tie).
    order.sort_by(|&a, &b| (row[b] + 0.0).total_cmp(&(row[a] + 0.0)));
    let mut scores = vec![0.0; row.len()];
    let mut mass = 0.0;
    for (rank, c) in order.into_iter().enumerate() {
        mass += row[c];
        scores[c] = mass + penalty(rank + 1);
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
