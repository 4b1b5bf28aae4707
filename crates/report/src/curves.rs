//! The numbers behind a run's figures that `summary.json` does not hold, as `curves.json`
//! holds them: per method and seed the reliability bins, the risk-coverage curve, and per OOD
//! set the ROC curve and the score histograms; per sweep its table; every training's epochs;
//! HetDPT's predictor grids. The runner thins the curves (a figure needs a few hundred points;
//! the scalar metrics use every sample).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use uq_metrics::ReliabilityBin;

use crate::error::{ReportError, Result};

/// The file name in a run directory.
pub const CURVES_FILE: &str = "curves.json";

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

/// One training's epochs, as its checkpoint's `training.csv` holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingLog {
    /// `seed S model K`, `seed S <method> <what>`: the progress line's label.
    pub label: String,
    pub epochs: Vec<Epoch>,
}

/// One epoch of a training: loss and accuracy (a fraction) over its training batches, and on
/// the validation split after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Epoch {
    /// 1-based.
    pub epoch: usize,
    pub loss: f64,
    pub accuracy: f64,
    pub seconds: f64,
    /// Absent for a training without a validation split, and in runs (or cached models)
    /// older than the validation pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_accuracy: Option<f64>,
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
    /// Bin edges spanning both sets' scores (one more than the counts).
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
            .map_err(|e| ReportError::parse(Path::new(CURVES_FILE), "serialisable", e))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// `curves.json` of the run directory `dir`; an empty set when the run predates it.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(CURVES_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| ReportError::parse(&path, "a curves file", e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(ReportError::io(&path, e)),
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
