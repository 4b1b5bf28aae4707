//! The numbers behind a run's figures that `summary.json` does not hold, as `curves.json`
//! holds them: per method and seed the reliability bins, the risk-coverage curve, and per OOD
//! set the ROC curve and the score histograms; per sweep its table. Curves are thinned to at
//! most [`MAX_POINTS`] points (a figure needs no more; the scalar metrics use every sample).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use train::EpochRecord;
use uq_metrics::ReliabilityBin;

use crate::error::{ExperimentError, Result};

/// The file name in a run directory.
pub const CURVES_FILE: &str = "curves.json";
/// The most points a stored curve keeps.
pub const MAX_POINTS: usize = 201;
/// Bins of the OOD score histograms.
pub const HISTOGRAM_BINS: usize = 40;

/// Everything of `curves.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunCurves {
    pub methods: Vec<MethodCurves>,
    #[serde(default)]
    pub sweeps: Vec<SweepTable>,
    /// Every training the run stands on, with its epochs (read from its checkpoint).
    #[serde(default)]
    pub training: Vec<TrainingLog>,
    /// HetDPT's accuracy predictors, one per method and seed.
    #[serde(default)]
    pub predictors: Vec<PredictorGrid>,
}

/// HetDPT's accuracy predictor (the MAP) against what it was fitted to, on one seed: over the
/// grid of removals (n_a attention branches, n_g GELUs), validation accuracy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictorGrid {
    pub method: String,
    pub seed: u64,
    /// `(n_a, n_g, predicted)` over the whole search range.
    pub predicted: Vec<(usize, usize, f64)>,
    /// `(n_a, n_g, measured, in-sample prediction, leave-one-out prediction)` at the points
    /// measured to fit it.
    pub measured: Vec<(usize, usize, f64, f64, f64)>,
    /// The chosen `(n_a, n_g)`, its prediction, and its accuracy after the final fine-tune.
    pub chosen: (usize, usize, f64, f64),
    /// The unpruned model's accuracy.
    pub base_accuracy: f64,
    pub loo_r_squared: f64,
    pub loo_max_abs_error: f64,
}

impl PredictorGrid {
    /// The grid of a HetDPT report (`method` and `seed` filled in by the runner).
    pub fn of(report: &hetdpt::HetDptReport) -> Self {
        let prediction = |a: usize, g: usize| {
            (report.grid.iter())
                .find(|c| (c.n_attn, c.n_act) == (a, g))
                .map_or(f64::NAN, |c| c.predicted_accuracy)
        };
        let held_out = &report.fit.loo_predictions;
        Self {
            method: String::new(),
            seed: 0,
            predicted: (report.grid.iter())
                .map(|c| (c.n_attn, c.n_act, c.predicted_accuracy))
                .collect(),
            measured: (report.points.iter().enumerate())
                .map(|(i, p)| {
                    let loo = held_out.get(i).copied().unwrap_or(f64::NAN);
                    let fitted = prediction(p.n_attn, p.n_act);
                    (p.n_attn, p.n_act, p.accuracy, fitted, loo)
                })
                .collect(),
            chosen: (
                report.choice.n_attn,
                report.choice.n_act,
                report.choice.predicted_accuracy,
                report.pruned.accuracy,
            ),
            base_accuracy: report.base.accuracy,
            loo_r_squared: report.fit.loo_r_squared,
            loo_max_abs_error: report.fit.loo_max_abs_error,
        }
    }
}

/// One training's epochs, as its checkpoint's `training.csv` holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingLog {
    /// `seed S model K`, `seed S <method> <what>`: the progress line's label.
    pub label: String,
    pub epochs: Vec<EpochRecord>,
}

/// One method (entry of summary.json, by name) on one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodCurves {
    pub name: String,
    pub seed: u64,
    /// Equal-width bins of the ensemble's top-label confidence on the test set (the ECE's).
    pub reliability: Vec<ReliabilityBin>,
    /// `(coverage, risk)` from the most confident sample.
    pub risk_coverage: Vec<(f64, f64)>,
    /// Keyed by OOD set name.
    pub ood: BTreeMap<String, OodCurves>,
}

/// Separating the test set from one OOD set, with the run's OOD score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OodCurves {
    /// `(fpr, tpr)`, OOD positive.
    pub roc: Vec<(f64, f64)>,
    /// `HISTOGRAM_BINS + 1` edges spanning both sets' scores.
    pub edges: Vec<f64>,
    pub id_counts: Vec<u64>,
    pub ood_counts: Vec<u64>,
}

/// A method's sweep (Hydra's pruning analysis) as numbers: the columns of `<name>.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTable {
    pub method: String,
    pub seed: u64,
    pub name: String,
    /// The first `places` columns place a point on the sweep (`ratio`, `heads_kept`); metrics
    /// follow.
    pub places: usize,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl RunCurves {
    /// Compact JSON (curves are long; `summary.json` is the file meant for reading).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec(self)
            .map_err(|e| ExperimentError::invalid(format!("serialising {CURVES_FILE}: {e}")))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// `curves.json` of the run directory `dir`; an empty set when the run predates it.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(CURVES_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                ExperimentError::invalid(format!("{}: not a curves file: {e}", path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(ExperimentError::invalid(format!("{}: {e}", path.display()))),
        }
    }
}

impl SweepTable {
    /// The values of column `name`, one per row.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.columns.iter().position(|c| c == name)?;
        Some(
            self.rows
                .iter()
                .map(|r| r.get(k).copied().unwrap_or(f64::NAN))
                .collect(),
        )
    }

    /// `<name>.csv` and `<name>.md`: the sweep's own columns as they are (the places), the
    /// metrics with 6 decimals.
    pub fn files(&self) -> [(String, Vec<u8>); 2] {
        let show = |(k, x): (usize, &f64)| match k < self.places {
            true => format!("{x}"),
            false => format!("{x:.6}"),
        };
        let rows: Vec<Vec<String>> = (self.rows.iter())
            .map(|r| r.iter().enumerate().map(show).collect())
            .collect();
        let csv: String = std::iter::once(&self.columns)
            .chain(&rows)
            .map(|r| r.join(",") + "\n")
            .collect();
        let markdown: String = [
            format!("| {} |\n", self.columns.join(" | ")),
            format!("|{}\n", "---:|".repeat(self.columns.len())),
        ]
        .into_iter()
        .chain(rows.iter().map(|r| format!("| {} |\n", r.join(" | "))))
        .collect();
        [
            (format!("{}.csv", self.name), csv.into_bytes()),
            (format!("{}.md", self.name), markdown.into_bytes()),
        ]
    }
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
