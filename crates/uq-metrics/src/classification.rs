//! Proper scoring rules and accuracy on probabilities `[N, C]` with integer labels.

use crate::error::{MetricsError, Result};
use crate::input::Probs;

/// Probabilities are clipped to `[NLL_EPS, 1 - NLL_EPS]` before the log, exactly as
/// scikit-learn's `log_loss` (>= 1.5) does for float64 input (`np.finfo(float64).eps`).
pub const NLL_EPS: f64 = f64::EPSILON;

/// Fraction of samples whose top-label prediction (first maximum, as `numpy.argmax`) is the label.
pub fn accuracy(probs: &Probs, labels: &[usize]) -> Result<f64> {
    check_labels(probs, labels)?;
    let hits = probs
        .rows()
        .zip(labels)
        .filter(|(row, y)| top_label(row).0 == **y)
        .count();
    Ok(hits as f64 / probs.n() as f64)
}

/// Negative log-likelihood: mean over samples of `-ln(clip(p[y], NLL_EPS, 1 - NLL_EPS))`.
pub fn nll(probs: &Probs, labels: &[usize]) -> Result<f64> {
    check_labels(probs, labels)?;
    let total: f64 = probs
        .rows()
        .zip(labels)
        .map(|(row, &y)| -row[y].clamp(NLL_EPS, 1.0 - NLL_EPS).ln())
        .sum();
    Ok(total / probs.n() as f64)
}

/// Multi-class Brier score: mean over samples of `sum_c (p[c] - [c == y])^2`, in [0, 2].
pub fn brier(probs: &Probs, labels: &[usize]) -> Result<f64> {
    check_labels(probs, labels)?;
    let total: f64 = probs
        .rows()
        .zip(labels)
        .map(|(row, &y)| {
            row.iter()
                .enumerate()
                .map(|(c, &p)| {
                    let d = p - if c == y { 1.0 } else { 0.0 };
                    d * d
                })
                .sum::<f64>()
        })
        .sum();
    Ok(total / probs.n() as f64)
}

/// One label per row, each below C.
pub(crate) fn check_labels(probs: &Probs, labels: &[usize]) -> Result<()> {
    check_labels_for(probs.n(), probs.c(), labels)
}

/// `n` labels, each below `c` (for inputs other than [`Probs`], such as logits).
pub(crate) fn check_labels_for(n: usize, c: usize, labels: &[usize]) -> Result<()> {
    if labels.len() != n {
        return Err(MetricsError::ShapeMismatch {
            what: "labels",
            expected: n,
            found: labels.len(),
        });
    }
    match labels.iter().position(|&y| y >= c) {
        Some(index) => Err(MetricsError::LabelOutOfRange {
            index,
            label: labels[index],
            classes: c,
        }),
        None => Ok(()),
    }
}

/// (argmax, max) of a row; the first maximum wins ties, as `numpy.argmax`.
pub(crate) fn top_label(row: &[f64]) -> (usize, f64) {
    row.iter().enumerate().fold(
        (0, row[0]),
        |best, (c, &p)| if p > best.1 { (c, p) } else { best },
    )
}

/// Per sample: the top-label confidence and whether the top label is correct (what calibration
/// and selective classification are computed from).
pub fn top_label_confidence(probs: &Probs, labels: &[usize]) -> Result<Vec<(f64, bool)>> {
    check_labels(probs, labels)?;
    Ok(confidences(probs, labels))
}

/// Per sample: (top-label confidence, whether the top label is correct). Labels must be checked.
pub(crate) fn confidences(probs: &Probs, labels: &[usize]) -> Vec<(f64, bool)> {
    probs
        .rows()
        .zip(labels)
        .map(|(row, &y)| {
            let (pred, conf) = top_label(row);
            (conf, pred == y)
        })
        .collect()
}
