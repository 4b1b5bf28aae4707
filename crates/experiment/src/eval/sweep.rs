//! The tables of a method's [`Sweep`]s: one row per point, its own columns then the metrics.

use uq_metrics::Score;

use super::Evaluator;
use super::metrics::{id_metrics, ood_metrics, scores, shift_metrics};
use super::predict::predict;
use crate::error::Result;
use crate::methods::Sweep;
use report::curves::SweepTable;

impl Evaluator<'_> {
    /// The table of a sweep: its own columns, then per point accuracy, NLL and ECE on the test
    /// set, NLL and ECE on each shifted set, and on each OOD set the AUROC and the mean
    /// confidence (max softmax probability; OOD has no labels, so no loss). Method and seed are
    /// the caller's to fill in; [`SweepTable::files`] gives `<name>.csv` and `<name>.md`.
    pub fn sweep(&self, sweep: &Sweep) -> Result<SweepTable> {
        let sets = self.sets;
        let mut header = sweep.columns.clone();
        header.extend(["clean_acc", "clean_nll", "clean_ece"].map(String::from));
        for (name, _) in &sets.shift {
            header.extend([format!("{name}_nll"), format!("{name}_ece")]);
        }
        for set in &sets.ood {
            header.extend([
                format!("{}_auroc", set.name()),
                format!("{}_confidence", set.name()),
            ]);
        }
        let mut rows = Vec::with_capacity(sweep.points.len());
        for (place, model) in &sweep.points {
            let model = model.as_ref();
            let predict = |data| predict(model, data, self.batch, self.device, false);
            let clean = predict(self.prep.set_data(&sets.test))?;
            let id = id_metrics(&clean)?;
            let id_scores = scores(&clean, self.sweep_score())?;
            let mut row = place.clone();
            row.extend([id.accuracy, id.nll, id.ece]);
            for (_, set) in &sets.shift {
                let m = shift_metrics(&predict(self.prep.data(set))?)?;
                row.extend([m.nll, m.ece]);
            }
            for set in &sets.ood {
                let ood = predict(self.prep.set_data(set))?;
                let m = ood_metrics(&id_scores, &scores(&ood, self.sweep_score())?, None)?;
                // Mean max-softmax probability: how confidently the model answers on OOD.
                let msp = scores(&ood, Score::Msp)?;
                let confidence = 1.0 - msp.iter().sum::<f64>() / msp.len().max(1) as f64;
                row.extend([m.auroc, confidence]);
            }
            rows.push(row);
        }
        Ok(SweepTable {
            method: String::new(),
            seed: self.seed,
            name: sweep.name.clone(),
            places: sweep.columns.len(),
            columns: header,
            rows,
        })
    }
}
