//! Sweeps (Hydra's pruning analysis): clean and shifted NLL and ECE, OOD AUROC and accuracy
//! (in %) against the sweep's first column (the share of attention heads pruned, of parameters
//! kept).

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::{FigureFile, grid};
use super::inputs::{Entry, Inputs};
use super::notes::seeds_note;
use super::series::mean_std;
use crate::curves::SweepTable;

/// One figure per sweep name, one panel per metric, one line per method (mean ± std over
/// seeds at each point of the sweep).
pub fn sweeps(inputs: &Inputs<'_>) -> Result<Vec<FigureFile>, PlotError> {
    let mut names: Vec<&str> = (inputs.curves.sweeps.iter())
        .map(|s| s.name.as_str())
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let tables: Vec<&SweepTable> = (inputs.curves.sweeps.iter())
            .filter(|s| s.name == name)
            .collect();
        if !tables.is_empty() {
            out.push(sweep_figure(inputs, name, &tables)?);
        }
    }
    Ok(out)
}

/// The figure of one sweep, from its tables (one per method and seed, not empty).
fn sweep_figure(
    inputs: &Inputs<'_>,
    name: &str,
    tables: &[&SweepTable],
) -> Result<FigureFile, PlotError> {
    let first = tables[0];
    let x_name = first.columns.first().cloned().unwrap_or_default();
    let metric = |suffix: &str| -> Vec<String> {
        (first.columns.iter().skip(first.places))
            .filter(|c| c.ends_with(suffix))
            .cloned()
            .collect()
    };
    let (x_label, x_scale) = x_axis(name, &x_name);
    let sweep = Sweep {
        entries: inputs.entries(),
        tables,
        x_name: &x_name,
        x_label: &x_label,
        x_scale,
    };
    let mut panels = vec![
        sweep.panel("Clean NLL".into(), "NLL ↓", vec!["clean_nll".into()], 1.0),
        sweep.panel("Clean ECE".into(), "ECE ↓", vec!["clean_ece".into()], 1.0),
    ];
    let shift_nll: Vec<String> = (metric("_nll").into_iter())
        .filter(|c| c != "clean_nll")
        .collect();
    if !shift_nll.is_empty() {
        let title = "Shifted NLL (mean over shifts)".into();
        panels.push(sweep.panel(title, "NLL ↓", shift_nll, 1.0));
        let shift_ece = (metric("_ece").into_iter())
            .filter(|c| c != "clean_ece")
            .collect();
        let title = "Shifted ECE (mean over shifts)".into();
        panels.push(sweep.panel(title, "ECE ↓", shift_ece, 1.0));
    }
    for column in metric("_auroc") {
        let set = column.trim_end_matches("_auroc").to_string();
        let title = format!("OOD AUROC: {set}");
        panels.push(sweep.panel(title, "AUROC (%) ↑", vec![column], 100.0));
    }
    let accuracy = vec!["clean_acc".into()];
    panels.push(sweep.panel("Clean accuracy".into(), "accuracy (%) ↑", accuracy, 100.0));
    let methods: std::collections::BTreeSet<String> =
        tables.iter().map(|t| format!("`{}`", t.method)).collect();
    let methods = methods.into_iter().collect::<Vec<_>>().join(", ");
    grid(
        &format!("fig-{name}.svg"),
        &format!("Sweep: {name}"),
        format!(
            "The `{name}` sweep of {methods}: each metric against the {x_label} (column \
             `{x_name}`; {}).",
            seeds_note(inputs.summary)
        ),
        &panels,
    )
}

/// The x axis' label for the first column of sweep `name`, and the factor that puts the
/// column in the label's unit: the pruning sweep's `ratio` is the share of all attention heads
/// gated off (lowest scores first), the `pruned` sweep's `params_kept` the share of the base
/// model's parameters its physical form keeps; both shown in %.
fn x_axis(name: &str, column: &str) -> (String, f64) {
    match (name, column) {
        ("pruning", "ratio") => ("attention heads pruned (%)".into(), 100.0),
        ("pruned", "params_kept") => ("parameters kept (% of the base model)".into(), 100.0),
        _ => (column.replace('_', " "), 1.0),
    }
}

/// One sweep's tables, drawn panel by panel.
struct Sweep<'s> {
    entries: Vec<Entry>,
    tables: &'s [&'s SweepTable],
    x_name: &'s str,
    x_label: &'s str,
    /// The factor from the sweep's column to the axis' unit.
    x_scale: f64,
}

impl Sweep<'_> {
    /// One panel: per method, the mean over `columns` (times `scale`, 100 for a %) against the
    /// sweep's first column; the legend is shared, right of the panels.
    fn panel(&self, title: String, y_label: &str, columns: Vec<String>, scale: f64) -> Figure {
        let mut methods: Vec<&str> = self.tables.iter().map(|t| t.method.as_str()).collect();
        methods.dedup();
        let series = (methods.iter())
            .map(|m| {
                let of: Vec<&&SweepTable> = self.tables.iter().filter(|t| t.method == *m).collect();
                let points = (mean_curve(&of, self.x_name, &columns).into_iter())
                    .map(|p| Point {
                        x: p.x * self.x_scale,
                        y: p.y * scale,
                        lo: p.lo.map(|v| v * scale),
                        hi: p.hi.map(|v| v * scale),
                        ..p
                    })
                    .collect();
                let colour = (self.entries.iter().find(|e| e.name == *m)).map_or(0, |e| e.colour);
                Series::new(*m, Mark::Line, points).colour(colour)
            })
            .collect();
        Figure {
            title,
            x_label: self.x_label.into(),
            y_label: y_label.into(),
            legend: Legend::Outside,
            series,
            note: Some("no such column in this run".into()),
            ..Figure::default()
        }
    }
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
