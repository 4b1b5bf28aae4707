//! OOD detection: score histograms and ROC curves.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::{FigureFile, chart, grid};
use super::inputs::Inputs;
use super::notes::{NO_CURVES, lines_note};
use super::series::{bands_if_few, linspace, percent, seed_series};

/// One panel per method (variants left out): the density of the OOD score on the test set and on each
/// OOD set (first seed).
pub fn histograms(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let sets = inputs.ood_sets();
    let mut panels = Vec::new();
    for entry in inputs.entries().into_iter().filter(|e| !e.variant) {
        let curves = inputs.curves_of(&entry.name);
        let first = curves.first();
        let mut series = Vec::new();
        if let Some(c) = first {
            // The test set's histogram is the same against every OOD set (edges differ).
            if let Some((_, o)) = c.ood.iter().next() {
                series.push(
                    Series::new("test (ID)", Mark::Step, density(&o.edges, &o.id_counts)).colour(0),
                );
            }
            for (k, set) in sets.iter().enumerate() {
                if let Some(o) = c.ood.get(set) {
                    series.push(
                        Series::new(set, Mark::Step, density(&o.edges, &o.ood_counts))
                            .colour(k + 1),
                    );
                }
            }
        }
        let seed = first.map_or(String::new(), |c| format!(" (seed {})", c.seed));
        panels.push(Figure {
            title: format!("{}{seed}", entry.name),
            x_label: format!("{} score (higher = more OOD)", inputs.score),
            y_label: "density".into(),
            // The same sets in every panel: one legend beside the grid.
            legend: Legend::Outside,
            series,
            note: Some(match first {
                None => NO_CURVES.into(),
                Some(_) => "no OOD set in this run".into(),
            }),
            ..Figure::default()
        });
    }
    grid(
        "fig-ood-histograms.svg",
        "OOD score histograms",
        format!(
            "How the `{}` score separates the test set from each OOD set: the less the \
             distributions overlap, the higher the AUROC. First seed only (the bin edges are \
             per seed).",
            inputs.score
        ),
        &panels,
    )
}

/// A density step series over `edges` (the last point closes the last bin).
fn density(edges: &[f64], counts: &[u64]) -> Vec<Point> {
    let total = counts.iter().sum::<u64>().max(1) as f64;
    let mut points: Vec<Point> = (edges.windows(2).zip(counts))
        .map(|(e, &n)| Point::new(e[0], n as f64 / (total * (e[1] - e[0]))))
        .collect();
    if let (Some(&last), Some(p)) = (edges.last(), points.last().cloned()) {
        points.push(Point::new(last, p.y));
    }
    points
}

/// One panel per OOD set: every entry's ROC curve.
pub fn roc(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let sets = inputs.ood_sets();
    let grid_x = linspace(0.0, 1.0, 100);
    let mut panels: Vec<Figure> = sets
        .iter()
        .map(|set| {
            let series = (inputs.entries().into_iter())
                .filter(|entry| !entry.variant)
                .map(|entry| {
                    let curves = inputs.curves_of(&entry.name);
                    let raw: Vec<&[(f64, f64)]> = (curves.iter())
                        .filter_map(|c| c.ood.get(set).map(|o| o.roc.as_slice()))
                        .collect();
                    let auroc = inputs.mean_of(&entry.name, |r| r.ood.get(set).map(|m| m.auroc));
                    let name = format!("{} (AUROC {:.1})", entry.name, 100.0 * auroc);
                    let points = percent(seed_series(&raw, &grid_x));
                    Series::new(name, Mark::Line, points).colour(entry.colour)
                })
                .collect();
            Figure {
                title: format!("ROC: test vs {set}"),
                x_label: "false-positive rate (% of ID flagged as OOD)".into(),
                y_label: "true-positive rate (% of OOD flagged)".into(),
                x_range: Some((0.0, 100.0)),
                y_range: Some((0.0, 100.0)),
                diagonal: true,
                legend: Legend::LowerRight,
                series: bands_if_few(series),
                ..Figure::default()
            }
        })
        .collect();
    if panels.is_empty() {
        panels.push(Figure {
            title: "ROC".into(),
            note: Some("no OOD set in this run".into()),
            ..Figure::default()
        });
    }
    let caption = format!(
        "OOD detection with the `{}` score, OOD positive; the dotted diagonal is chance, AUROC \
         (%) in the legend ({}; temperature-scaled entries are in the tables).",
        inputs.score,
        lines_note(inputs.summary)
    );
    match panels.len() {
        1 => chart("fig-roc.svg", "ROC curves", caption, &panels[0]),
        _ => grid("fig-roc.svg", "ROC curves", caption, &panels),
    }
}
