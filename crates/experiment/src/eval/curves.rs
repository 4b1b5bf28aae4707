//! The curves of one method's predictions (`curves.json`'s [`MethodCurves`]), thinned to at
//! most [`MAX_POINTS`] points: a figure needs no more; the scalar metrics use every sample.

use std::collections::BTreeMap;

use uq_metrics::DEFAULT_BINS;

use super::predict::Predictions;
use crate::error::Result;
use report::curves::{MethodCurves, OodCurves};

/// The most points a stored curve keeps.
pub const MAX_POINTS: usize = 201;
/// Bins of the OOD score histograms.
pub const HISTOGRAM_BINS: usize = 40;

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

/// At most `max` points of `curve`, evenly spaced by index, always keeping both ends.
pub fn thin(curve: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if curve.len() <= max || max < 2 {
        return curve;
    }
    let last = curve.len() - 1;
    (0..max).map(|i| curve[i * last / (max - 1)]).collect()
}

/// Counts of `id` and `ood` in [`HISTOGRAM_BINS`] equal-width bins over their common range (the
/// last bin closed); non-finite scores are not counted.
pub fn histograms(id: &[f64], ood: &[f64]) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
    let finite = || id.iter().chain(ood).copied().filter(|x| x.is_finite());
    let lo = finite().fold(f64::INFINITY, f64::min);
    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = match lo <= hi {
        true if hi > lo => (lo, hi),
        true => (lo - 0.5, lo + 0.5),
        false => (0.0, 1.0),
    };
    let width = (hi - lo) / HISTOGRAM_BINS as f64;
    let edges = (0..=HISTOGRAM_BINS)
        .map(|i| lo + i as f64 * width)
        .collect();
    let count = |xs: &[f64]| {
        let mut counts = vec![0u64; HISTOGRAM_BINS];
        for x in xs.iter().filter(|x| x.is_finite()) {
            let b = (((x - lo) / width) as usize).min(HISTOGRAM_BINS - 1);
            counts[b] += 1;
        }
        counts
    };
    (edges, count(id), count(ood))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_keeps_ends_and_bounds_length() {
        let curve: Vec<(f64, f64)> = (0..1000).map(|i| (i as f64, 0.0)).collect();
        let t = thin(curve.clone(), 201);
        assert_eq!(t.len(), 201);
        assert_eq!((t[0], t[200]), (curve[0], curve[999]));
        assert!(t.windows(2).all(|w| w[1].0 > w[0].0));
        assert_eq!(thin(curve[..5].to_vec(), 201).len(), 5);
    }

    #[test]
    fn histograms_count_every_finite_score_once() {
        let id = [0.0, 0.5, 1.0, f64::NAN];
        let ood = [1.0, 2.0];
        let (edges, a, b) = histograms(&id, &ood);
        assert_eq!(edges.len(), HISTOGRAM_BINS + 1);
        assert_eq!((edges[0], edges[HISTOGRAM_BINS]), (0.0, 2.0));
        assert_eq!(a.iter().sum::<u64>(), 3);
        assert_eq!(b.iter().sum::<u64>(), 2);
        // 2.0 is the top edge: it lands in the last (closed) bin, as 0.0 in the first.
        assert_eq!((a[0], b[HISTOGRAM_BINS - 1]), (1, 1));
        // 1.0 sits on the edge between bins 19 and 20 and goes to the upper one.
        assert_eq!((a[20], b[20]), (1, 1));
    }
}
