//! The curves of one method's predictions (see [`crate::curves`]).

use std::collections::BTreeMap;

use uq_metrics::DEFAULT_BINS;

use super::predict::Predictions;
use crate::curves::{MAX_POINTS, MethodCurves, OodCurves, histograms, thin};
use crate::error::Result;

/// Reliability bins and risk-coverage on the test set (from the ensemble's mean, as the ECE and
/// AURC of the summary), and the ROC curve and score histograms of each named OOD set, from the
/// OOD scores of the test set (`id_scores`) and of each set.
pub fn method_curves(
    test: &Predictions,
    id_scores: &[f64],
    ood: &[(&str, &[f64])],
) -> Result<MethodCurves> {
    let mean = test.members.mean();
    let reliability = uq_metrics::reliability_diagram(&mean, &test.labels, DEFAULT_BINS)?;
    let (uncertainty, correct): (Vec<f64>, Vec<bool>) =
        (uq_metrics::top_label_confidence(&mean, &test.labels)?.into_iter())
            .map(|(confidence, ok)| (1.0 - confidence, ok))
            .unzip();
    let risk_coverage = thin(
        uq_metrics::risk_coverage(&uncertainty, &correct)?,
        MAX_POINTS,
    );
    let mut per_set = BTreeMap::new();
    for &(name, ood_scores) in ood {
        let roc = thin(uq_metrics::roc_curve(id_scores, ood_scores)?, MAX_POINTS);
        let (edges, id_counts, ood_counts) = histograms(id_scores, ood_scores);
        per_set.insert(
            name.to_string(),
            OodCurves {
                roc,
                edges,
                id_counts,
                ood_counts,
            },
        );
    }
    Ok(MethodCurves {
        name: String::new(),
        seed: 0,
        reliability,
        risk_coverage,
        ood: per_set,
    })
}
