//! Sweeps (Hydra's pruning analysis): clean and shifted NLL and ECE and OOD AUROC against the
//! sweep's first column (the prune ratio).

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::{FigureFile, Inputs, grid, mean_std, seeds_note};
use crate::curves::SweepTable;

/// One figure per sweep name, one panel per metric, one line per method (mean ± std over
/// seeds at each point of the sweep).
pub fn sweeps(inputs: &Inputs<'_>) -> Result<Vec<FigureFile>, PlotError> {
    let mut names: Vec<&str> = inputs
        .curves
        .sweeps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    names.dedup();
    names.sort();
    names.dedup();
    let entries = inputs.entries();
    let mut out = Vec::new();
    for name in names {
        let tables: Vec<&SweepTable> = (inputs.curves.sweeps.iter())
            .filter(|s| s.name == name)
            .collect();
        let Some(first) = tables.first() else {
            continue;
        };
        let x_name = first.columns.first().cloned().unwrap_or_default();
        let metric = |suffix: &str| -> Vec<String> {
            (first.columns.iter().skip(first.places))
                .filter(|c| c.ends_with(suffix))
                .cloned()
                .collect()
        };
        let mut panels = Vec::new();
        let mut panel = |title: String, y_label: &str, columns: Vec<String>| {
            let mut methods: Vec<&str> = tables.iter().map(|t| t.method.as_str()).collect();
            methods.dedup();
            let series = methods
                .iter()
                .map(|m| {
                    let of: Vec<&&SweepTable> = tables.iter().filter(|t| t.method == *m).collect();
                    let points = mean_curve(&of, &x_name, &columns);
                    let colour = entries
                        .iter()
                        .find(|e| e.name == *m)
                        .map_or(0, |e| e.colour);
                    Series::new(*m, Mark::Line, points).colour(colour)
                })
                .collect();
            panels.push(Figure {
                title,
                x_label: x_name.replace('_', " "),
                y_label: y_label.into(),
                legend: Legend::UpperLeft,
                series,
                note: Some("no such column in this run".into()),
                ..Figure::default()
            });
        };
        panel("Clean NLL".into(), "NLL ↓", vec!["clean_nll".into()]);
        panel("Clean ECE".into(), "ECE ↓", vec!["clean_ece".into()]);
        let shift_nll: Vec<String> = metric("_nll")
            .into_iter()
            .filter(|c| c != "clean_nll")
            .collect();
        if !shift_nll.is_empty() {
            panel("Shifted NLL (mean over shifts)".into(), "NLL ↓", shift_nll);
            let shift_ece = metric("_ece")
                .into_iter()
                .filter(|c| c != "clean_ece")
                .collect();
            panel("Shifted ECE (mean over shifts)".into(), "ECE ↓", shift_ece);
        }
        for column in metric("_auroc") {
            let set = column.trim_end_matches("_auroc").to_string();
            panel(format!("OOD AUROC: {set}"), "AUROC ↑", vec![column]);
        }
        panel(
            "Clean accuracy".into(),
            "accuracy ↑",
            vec!["clean_acc".into()],
        );
        out.push(grid(
            &format!("fig-{name}.svg"),
            &format!("Sweep: {name}"),
            format!(
                "The `{name}` sweep of {}: each metric against `{x_name}` ({}).",
                tables
                    .iter()
                    .map(|t| format!("`{}`", t.method))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join(", "),
                seeds_note(inputs.summary)
            ),
            &panels,
        )?);
    }
    Ok(out)
}

/// At each row of the sweep: the mean over `columns` of one table, then mean ± std over tables
/// (seeds). Tables are expected to share their rows (the same sweep in every seed).
fn mean_curve(tables: &[&&SweepTable], x_name: &str, columns: &[String]) -> Vec<Point> {
    let Some(xs) = tables.first().and_then(|t| t.column(x_name)) else {
        return Vec::new();
    };
    let per_table: Vec<Vec<f64>> = tables
        .iter()
        .map(|t| {
            let cols: Vec<Vec<f64>> = columns.iter().filter_map(|c| t.column(c)).collect();
            (0..xs.len())
                .map(|i| match cols.is_empty() {
                    true => f64::NAN,
                    false => {
                        cols.iter()
                            .map(|c| c.get(i).copied().unwrap_or(f64::NAN))
                            .sum::<f64>()
                            / cols.len() as f64
                    }
                })
                .collect()
        })
        .collect();
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let ys: Vec<f64> = per_table
                .iter()
                .map(|v| v.get(i).copied().unwrap_or(f64::NAN))
                .collect();
            let (mean, std) = mean_std(&ys);
            let p = Point::new(x, mean);
            match std.is_finite() {
                true => p.band(mean - std, mean + std),
                false => p,
            }
        })
        .collect()
}
