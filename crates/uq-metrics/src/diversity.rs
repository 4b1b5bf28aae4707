//! Ensemble diversity: how differently the members predict, and whether averaging them pays.

use serde::{Deserialize, Serialize};

use crate::classification::{NLL_EPS, accuracy, check_labels, top_label};
use crate::error::{MetricsError, Result};
use crate::input::MemberProbs;
use crate::nonfinite::nan_if_null;
use crate::scores::{disagreement, mutual_info};

/// Diversity of M >= 2 members on one data set; every field is a mean over samples. Natural logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diversity {
    /// Fraction of unordered member pairs `i < j` (and samples) whose argmaxes differ; ties go
    /// to the first maximum, as in [`accuracy`].
    pub disagreement: f64,
    /// Entropy of the member mean minus the mean member entropy, per sample clamped at 0, as
    /// the `mutual_info` score.
    pub mutual_info: f64,
    /// `KL(p_i || p_j) = sum_c p_i[c] (ln p_i[c] - ln p_j[c])` over ordered pairs `i != j`, each
    /// probability clipped below at [`NLL_EPS`] inside the logs so it stays finite (a zero
    /// `p_i[c]` adds nothing).
    pub pairwise_kl: f64,
    /// Accuracy of the mean prediction minus `member_accuracy`: what averaging gains. NaN
    /// without labels.
    #[serde(deserialize_with = "nan_if_null")]
    pub ensemble_gain: f64,
    /// Mean over members of each member's accuracy. NaN without labels (OOD sets).
    #[serde(deserialize_with = "nan_if_null")]
    pub member_accuracy: f64,
}

/// The [`Diversity`] of `members`; `labels` (one per sample) fill in the accuracy fields.
/// Needs at least 2 members.
pub fn diversity(members: &MemberProbs, labels: Option<&[usize]>) -> Result<Diversity> {
    let m = members.m();
    if m < 2 {
        return Err(MetricsError::TooFewMembers {
            metric: "diversity",
            needed: 2,
            found: m,
        });
    }
    let mean = members.mean();
    let (ensemble_gain, member_accuracy) = match labels {
        Some(labels) => {
            check_labels(&mean, labels)?;
            let hits = (0..m)
                .flat_map(|k| labels.iter().enumerate().map(move |(i, &y)| (k, i, y)))
                .filter(|&(k, i, y)| top_label(members.row(k, i)).0 == y)
                .count();
            let member_accuracy = hits as f64 / (m * members.n()) as f64;
            (accuracy(&mean, labels)? - member_accuracy, member_accuracy)
        }
        None => (f64::NAN, f64::NAN),
    };
    Ok(Diversity {
        disagreement: sample_mean(&disagreement(members)),
        mutual_info: sample_mean(&mutual_info(members)),
        pairwise_kl: pairwise_kl(members),
        ensemble_gain,
        member_accuracy,
    })
}

fn sample_mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Mean of `KL(p_i || p_j)` over ordered pairs `i != j` and samples.
fn pairwise_kl(members: &MemberProbs) -> f64 {
    let (m, n, c) = (members.m(), members.n(), members.c());
    let mut logs = vec![0.0; m * c];
    let mut total = 0.0;
    for i in 0..n {
        for (k, log_row) in logs.chunks_exact_mut(c).enumerate() {
            for (l, &p) in log_row.iter_mut().zip(members.row(k, i)) {
                *l = p.max(NLL_EPS).ln();
            }
        }
        for a in 0..m {
            let (p, log_p) = (members.row(a, i), &logs[a * c..(a + 1) * c]);
            for b in (0..m).filter(|&b| b != a) {
                let log_q = &logs[b * c..(b + 1) * c];
                total += (0..c).map(|j| p[j] * (log_p[j] - log_q[j])).sum::<f64>();
            }
        }
    }
    total / (n * m * (m - 1)) as f64
}
