//! OOD detection metrics. OOD is the positive class and a higher score means "more OOD".
//!
//! Every metric walks the thresholds of one sort (O(n log n)); equal scores form a single
//! threshold, as in scikit-learn's `roc_curve` / `precision_recall_curve`.

use serde::Serialize;

use crate::error::{MetricsError, Result};
use crate::input::check_finite;

/// The four OOD metrics from one sort of the scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OodReport {
    pub auroc: f64,
    pub aupr_in: f64,
    pub aupr_out: f64,
    pub fpr95: f64,
}

/// All OOD metrics at once, sorting the scores a single time.
pub fn ood_report(id_scores: &[f64], ood_scores: &[f64]) -> Result<OodReport> {
    let s = Sweep::new(id_scores, ood_scores)?;
    Ok(OodReport {
        auroc: s.auroc(),
        aupr_in: s.aupr_in(),
        aupr_out: s.aupr_out(),
        fpr95: s.fpr95(),
    })
}

/// Area under the ROC curve (trapezoids between distinct thresholds), i.e. the probability
/// that an OOD sample outscores an ID sample with ties counted 1/2 (average ranks), as
/// `sklearn.metrics.roc_auc_score`.
pub fn auroc(id_scores: &[f64], ood_scores: &[f64]) -> Result<f64> {
    Ok(Sweep::new(id_scores, ood_scores)?.auroc())
}

/// Average precision with OOD positive (`sklearn.metrics.average_precision_score`):
/// `sum_t (R_t - R_{t-1}) P_t` over distinct thresholds from high to low.
pub fn aupr_out(id_scores: &[f64], ood_scores: &[f64]) -> Result<f64> {
    Ok(Sweep::new(id_scores, ood_scores)?.aupr_out())
}

/// Average precision with ID positive and negated scores (thresholds from low to high).
pub fn aupr_in(id_scores: &[f64], ood_scores: &[f64]) -> Result<f64> {
    Ok(Sweep::new(id_scores, ood_scores)?.aupr_in())
}

/// False-positive rate at 95% TPR: walking distinct thresholds from high to low, the fraction
/// of ID samples scoring `>=` the first threshold where `tp / n_ood >= 0.95` (f64 division),
/// exactly as `fpr[argmax(tpr >= 0.95)]` from `sklearn.metrics.roc_curve`.
pub fn fpr95(id_scores: &[f64], ood_scores: &[f64]) -> Result<f64> {
    Ok(Sweep::new(id_scores, ood_scores)?.fpr95())
}

/// The ROC curve as `(fpr, tpr)` points: `(0, 0)`, then one point per distinct threshold from
/// the highest score down, ending at `(1, 1)` (`sklearn.metrics.roc_curve` with
/// `drop_intermediate=False`); its trapezoid area is [`auroc`].
pub fn roc_curve(id_scores: &[f64], ood_scores: &[f64]) -> Result<Vec<(f64, f64)>> {
    let s = Sweep::new(id_scores, ood_scores)?;
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut points = Vec::with_capacity(s.groups.len() + 1);
    points.push((0.0, 0.0));
    for g in &s.groups {
        tp += g.ood;
        fp += g.id;
        points.push((fp as f64 / s.n_id as f64, tp as f64 / s.n_ood as f64));
    }
    Ok(points)
}

/// Per distinct score, from highest to lowest: how many ID and OOD samples have it.
struct Sweep {
    groups: Vec<Group>,
    n_id: usize,
    n_ood: usize,
}

struct Group {
    id: usize,
    ood: usize,
}

impl Sweep {
    fn new(id_scores: &[f64], ood_scores: &[f64]) -> Result<Self> {
        if id_scores.is_empty() {
            return Err(MetricsError::MissingClass { missing: "ID" });
        }
        if ood_scores.is_empty() {
            return Err(MetricsError::MissingClass { missing: "OOD" });
        }
        check_finite("id scores", id_scores)?;
        check_finite("ood scores", ood_scores)?;
        let id = sorted_descending(id_scores);
        let ood = sorted_descending(ood_scores);
        let mut groups = Vec::new();
        let (mut i, mut o) = (0, 0);
        loop {
            let top = match (id.get(i), ood.get(o)) {
                (Some(&a), Some(&b)) => a.max(b),
                (Some(&a), None) => a,
                (None, Some(&b)) => b,
                (None, None) => break,
            };
            let (i0, o0) = (i, o);
            while id.get(i) == Some(&top) {
                i += 1;
            }
            while ood.get(o) == Some(&top) {
                o += 1;
            }
            groups.push(Group {
                id: i - i0,
                ood: o - o0,
            });
        }
        Ok(Self {
            groups,
            n_id: id.len(),
            n_ood: ood.len(),
        })
    }

    fn auroc(&self) -> f64 {
        // Twice the area in count units is an integer: sum it exactly, divide once.
        let (mut tp, mut fp, mut twice_area) = (0u128, 0u128, 0u128);
        for g in &self.groups {
            let (tp_next, fp_next) = (tp + g.ood as u128, fp + g.id as u128);
            twice_area += (fp_next - fp) * (tp_next + tp);
            (tp, fp) = (tp_next, fp_next);
        }
        twice_area as f64 / (2.0 * self.n_ood as f64 * self.n_id as f64)
    }

    fn aupr_out(&self) -> f64 {
        average_precision(self.groups.iter().map(|g| (g.ood, g.id)), self.n_ood)
    }

    fn aupr_in(&self) -> f64 {
        average_precision(self.groups.iter().rev().map(|g| (g.id, g.ood)), self.n_id)
    }

    fn fpr95(&self) -> f64 {
        let (mut tp, mut fp) = (0usize, 0usize);
        for g in &self.groups {
            tp += g.ood;
            fp += g.id;
            if tp as f64 / self.n_ood as f64 >= 0.95 {
                break;
            }
        }
        // The loop always breaks at the latest on the last group, where tp = n_ood.
        fp as f64 / self.n_id as f64
    }
}

/// Average precision over thresholds given in decreasing order as (positives, negatives).
fn average_precision(thresholds: impl Iterator<Item = (usize, usize)>, n_pos: usize) -> f64 {
    let (mut tp, mut fp, mut ap) = (0usize, 0usize, 0.0);
    for (pos, neg) in thresholds {
        tp += pos;
        fp += neg;
        if pos > 0 {
            ap += (pos as f64 / n_pos as f64) * (tp as f64 / (tp + fp) as f64);
        }
    }
    ap
}

/// Keys whose unsigned order is the numeric order of the scores, sorted descending; `-0.0` and
/// `0.0` share a key, so key equality is score equality. Integer keys sort faster than floats.
fn sorted_descending(scores: &[f64]) -> Vec<u64> {
    let mut keys: Vec<u64> = scores
        .iter()
        .map(|&s| {
            let bits = (s + 0.0).to_bits();
            if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            }
        })
        .collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    keys
}
