//! The cost-UQ trade-off: OOD AUROC and NLL against latency, one point per method.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::{FigureFile, Inputs, mean_std, seeds_note};
use crate::summary::MethodResult;

/// Two panels, OOD AUROC (mean over OOD sets) and test NLL against latency at the evaluation
/// batch; a point's area grows with the method's parameters, its bar is ± std over seeds.
pub fn pareto(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let entries: Vec<_> = inputs
        .entries()
        .into_iter()
        .filter(|e| !e.variant)
        .collect();
    let runs = |name: &str| -> Vec<&MethodResult> {
        inputs
            .summary
            .methods
            .iter()
            .filter(|r| r.name == name)
            .collect()
    };
    let max_params = (inputs.summary.methods.iter())
        .map(|r| r.cost.params as f64)
        .fold(1.0, f64::max);
    let panel = |title: &str, y_label: &str, value: &dyn Fn(&MethodResult) -> f64| {
        let series = entries
            .iter()
            .map(|e| {
                let rs = runs(&e.name);
                let (latency, _) =
                    mean_std(&rs.iter().map(|r| r.cost.latency_ms).collect::<Vec<_>>());
                let (y, sd) = mean_std(&rs.iter().map(|r| value(r)).collect::<Vec<_>>());
                let params = rs.first().map_or(0.0, |r| r.cost.params as f64);
                let mut p = Point::new(latency, y);
                if sd.is_finite() {
                    p = p.band(y - sd, y + sd);
                }
                p.size = Some(3.0 + 8.0 * (params / max_params).sqrt());
                Series::new(&e.name, Mark::Points, vec![p]).colour(e.colour)
            })
            .collect();
        Figure {
            title: title.into(),
            x_label: "latency per evaluation batch (ms)".into(),
            y_label: y_label.into(),
            legend: Legend::None,
            series,
            note: Some("no finite value (no OOD set, or not timed)".into()),
            ..Figure::default()
        }
    };
    let auroc = |r: &MethodResult| match r.ood.is_empty() {
        true => f64::NAN,
        false => r.ood.values().map(|m| m.auroc).sum::<f64>() / r.ood.len() as f64,
    };
    let mut left = panel(
        "OOD AUROC against latency",
        "OOD AUROC (mean over sets) ↑",
        &auroc,
    );
    let right = panel("Test NLL against latency", "NLL ↓", &|r| r.id.nll);
    left.legend = Legend::LowerRight;
    let svg = plots::render_grid(&[left, right], 2, (560, 420))?;
    Ok(FigureFile {
        file: super::PARETO.into(),
        title: "Cost against uncertainty quality".into(),
        caption: format!(
            "Each method once (no `+ts` or `+bf16` variants); up-left is better on the left panel, \
             down-left on the right. Point area grows with the parameter count; bars are ± std \
             over seeds ({}).",
            seeds_note(inputs.summary)
        ),
        svg,
    })
}
