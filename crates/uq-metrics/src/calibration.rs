//! Calibration: top-label ECE (equal-width bins), adaptive ECE (equal-mass bins), class-wise ECE,
//! reliability data.

use serde::{Deserialize, Serialize};

use crate::classification::{check_labels, confidences};
use crate::error::{MetricsError, Result};
use crate::input::Probs;

/// Default number of bins for ECE, adaptive ECE and the reliability diagram.
pub const DEFAULT_BINS: usize = 15;

/// One equal-width bin of a reliability diagram, covering confidences in `(lo, hi]`
/// (the first bin also holds confidence 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    pub lo: f64,
    pub hi: f64,
    pub count: usize,
    /// Mean top-label confidence of the bin; `None` when the bin is empty.
    pub confidence: Option<f64>,
    /// Fraction of correct top-label predictions in the bin; `None` when the bin is empty.
    pub accuracy: Option<f64>,
}

/// Expected calibration error with `bins` equal-width bins on the top-label confidence `c`:
/// `sum_b (n_b / N) |acc_b - conf_b|`. Sample goes to bin `ceil(c * bins) - 1`, clamped to
/// `[0, bins - 1]`, i.e. bins are `(b/B, (b+1)/B]` and `c = 0` falls in the first.
pub fn ece(probs: &Probs, labels: &[usize], bins: usize) -> Result<f64> {
    Ok(weighted_gap(&equal_width(probs, labels, bins)?, probs.n()))
}

/// Class-wise ECE (Kull et al. 2019): for every class `k`, the ECE of the one-vs-rest forecast
/// `p[k]` against `[y == k]` with `bins` equal-width bins on `p[k]` (bins as in [`ece`]),
/// `sum_b (n_b / N) |freq_b - mean p_b|`; then the mean over classes. It sees every class's
/// probability, where [`ece`] sees only the top label's. torch-uncertainty's
/// `ClasswiseCalibrationError` (reduction `mean`) is the same sum with bins `[lo, hi)` and a bin of
/// its own for `p = 1`: the two agree unless a probability lies exactly on a bin edge.
pub fn classwise_ece(probs: &Probs, labels: &[usize], bins: usize) -> Result<f64> {
    check_bins(bins)?;
    check_labels(probs, labels)?;
    let total: f64 = (0..probs.c())
        .map(|k| {
            let samples = probs.rows().zip(labels).map(|(row, &y)| (row[k], y == k));
            weighted_gap(&binned(samples, bins), probs.n())
        })
        .sum();
    Ok(total / probs.c() as f64)
}

/// Adaptive (equal-mass) ECE: samples sorted by top-label confidence ascending with a stable
/// sort (ties keep input order); bin `b` holds sorted positions `floor(b N / B) ..
/// floor((b+1) N / B)` (integer division), so bin sizes differ by at most one and empty bins
/// (when N < B) are skipped. Value: `sum_b (n_b / N) |acc_b - conf_b|`.
pub fn adaptive_ece(probs: &Probs, labels: &[usize], bins: usize) -> Result<f64> {
    check_bins(bins)?;
    check_labels(probs, labels)?;
    let mut samples = confidences(probs, labels);
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = samples.len();
    let groups: Vec<BinSums> = (0..bins)
        .map(|b| BinSums::of(&samples[b * n / bins..(b + 1) * n / bins]))
        .collect();
    Ok(weighted_gap(&groups, n))
}

/// Reliability-diagram data: the `bins` equal-width bins that [`ece`] uses, in order.
pub fn reliability_diagram(
    probs: &Probs,
    labels: &[usize],
    bins: usize,
) -> Result<Vec<ReliabilityBin>> {
    let groups = equal_width(probs, labels, bins)?;
    let width = bins as f64;
    Ok(groups
        .iter()
        .enumerate()
        .map(|(b, g)| ReliabilityBin {
            lo: b as f64 / width,
            hi: (b + 1) as f64 / width,
            count: g.count,
            confidence: (g.count > 0).then(|| g.confidence / g.count as f64),
            accuracy: (g.count > 0).then(|| g.hits / g.count as f64),
        })
        .collect())
}

/// Running sums of one bin.
#[derive(Default)]
struct BinSums {
    count: usize,
    confidence: f64,
    hits: f64,
}

impl BinSums {
    fn add(&mut self, (confidence, correct): (f64, bool)) {
        self.count += 1;
        self.confidence += confidence;
        self.hits += f64::from(u8::from(correct));
    }

    fn of(samples: &[(f64, bool)]) -> Self {
        let mut sums = Self::default();
        samples.iter().for_each(|&s| sums.add(s));
        sums
    }
}

fn check_bins(bins: usize) -> Result<()> {
    if bins == 0 {
        return Err(MetricsError::InvalidOption {
            name: "bins",
            value: "0".into(),
            expected: "at least 1",
        });
    }
    Ok(())
}

fn equal_width(probs: &Probs, labels: &[usize], bins: usize) -> Result<Vec<BinSums>> {
    check_bins(bins)?;
    check_labels(probs, labels)?;
    Ok(binned(confidences(probs, labels), bins))
}

/// `(confidence, correct)` samples summed into `bins` equal-width bins `(b/B, (b+1)/B]`, the
/// first also holding 0; `bins` is at least 1.
fn binned(samples: impl IntoIterator<Item = (f64, bool)>, bins: usize) -> Vec<BinSums> {
    let mut groups: Vec<BinSums> = (0..bins).map(|_| BinSums::default()).collect();
    for sample in samples {
        // Confidence is in [0, 1], so the ceiling fits a usize; c = 0 saturates to bin 0.
        let b = ((sample.0 * bins as f64).ceil() as usize).saturating_sub(1);
        groups[b.min(bins - 1)].add(sample);
    }
    groups
}

/// `sum_b (n_b / n) |acc_b - conf_b|` over non-empty bins.
fn weighted_gap(groups: &[BinSums], n: usize) -> f64 {
    groups
        .iter()
        .filter(|g| g.count > 0)
        .map(|g| (g.hits - g.confidence).abs() / n as f64)
        .sum()
}
