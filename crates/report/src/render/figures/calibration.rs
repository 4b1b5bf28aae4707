//! Calibration and selective prediction: reliability diagrams and risk-coverage curves.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::{FigureFile, chart, grid};
use super::inputs::Inputs;
use super::notes::{NO_CURVES, lines_note, seeds_note};
use super::series::{bands_if_few, linspace, mean_std, percent, seed_series};
use crate::curves::MethodCurves;

/// One panel per entry: accuracy per confidence bin (pooled over seeds) against the diagonal,
/// with the gap to the bin's mean confidence; the ECE of the summary in the title.
pub fn reliability(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let mut panels = Vec::new();
    for entry in inputs.entries() {
        let curves = inputs.curves_of(&entry.name);
        let eces: Vec<f64> = (inputs.summary.methods.iter())
            .filter(|r| r.name == entry.name)
            .map(|r| r.id.ece)
            .collect();
        let (ece, ece_std) = mean_std(&eces);
        let title = match ece_std.is_finite() {
            true => format!("{}: ECE {ece:.4} ± {ece_std:.4}", entry.name),
            false => format!("{}: ECE {ece:.4}", entry.name),
        };
        let (accuracy, gap, share) = pooled_bins(&curves);
        let width = curves
            .first()
            .and_then(|c| c.reliability.first())
            .map_or(10.0, |b| 90.0 * (b.hi - b.lo));
        panels.push(Figure {
            title,
            x_label: "confidence (%)".into(),
            y_label: "accuracy (%)".into(),
            x_range: Some((0.0, 100.0)),
            y_range: Some((0.0, 100.0)),
            diagonal: true,
            // The same three entries in every panel: one legend beside the grid.
            legend: Legend::Outside,
            series: vec![
                Series::new("accuracy", Mark::Bars { width }, accuracy).colour(0),
                Series::new("gap to confidence", Mark::Outlines { width }, gap).colour(3),
                // How much each bin weighs in the ECE: a tall bar over few samples is noise.
                Series::new("share of samples", Mark::Points, share).colour(11),
            ],
            note: Some(NO_CURVES.into()),
            ..Figure::default()
        });
    }
    grid(
        "fig-reliability.svg",
        "Reliability diagrams",
        format!(
            "Accuracy per confidence bin (15 equal-width bins, test set, pooled over seeds) \
             against the diagonal of perfect calibration; the outlined part is the gap to the bin's \
             mean confidence; grey dots give each bin's share of the samples, its weight in the \
             ECE (a bin of few samples is noisy; the counts are in `curves.json`). ECE in the \
             titles ({}).",
            seeds_note(inputs.summary)
        ),
        &panels,
    )
}

/// Per filled confidence bin, pooled over the seeds' `curves` (the bins are the same
/// equal-width bins in every seed), in %: accuracy, the gap from it to the mean confidence,
/// and the bin's share of the samples.
fn pooled_bins(curves: &[&MethodCurves]) -> (Vec<Point>, Vec<Point>, Vec<Point>) {
    let (mut accuracy, mut gap, mut share) = (Vec::new(), Vec::new(), Vec::new());
    let total: f64 = (curves.iter())
        .flat_map(|c| c.reliability.iter())
        .map(|b| b.count as f64)
        .sum();
    let Some(first) = curves.first() else {
        return (accuracy, gap, share);
    };
    for (b, bin) in first.reliability.iter().enumerate() {
        let (mut n, mut hits, mut confidence) = (0.0, 0.0, 0.0);
        for s in curves.iter().filter_map(|c| c.reliability.get(b)) {
            let count = s.count as f64;
            n += count;
            hits += s.accuracy.unwrap_or(0.0) * count;
            confidence += s.confidence.unwrap_or(0.0) * count;
        }
        if n == 0.0 {
            continue;
        }
        let (acc, conf) = (100.0 * hits / n, 100.0 * confidence / n);
        let centre = 100.0 * (bin.lo + bin.hi) / 2.0;
        share.push(Point::new(centre, 100.0 * n / total));
        accuracy.push(Point::new(centre, acc));
        gap.push(Point {
            lo: Some(acc),
            ..Point::new(centre, conf)
        });
    }
    (accuracy, gap, share)
}

/// Every method's risk-coverage curve (variants left out) on one axis, its AURC in the legend.
pub fn risk_coverage(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let grid_x = linspace(0.01, 1.0, 99);
    let series = (inputs.entries().into_iter())
        .filter(|entry| !entry.variant)
        .map(|entry| {
            let curves = inputs.curves_of(&entry.name);
            let raw: Vec<&[(f64, f64)]> =
                curves.iter().map(|c| c.risk_coverage.as_slice()).collect();
            let aurc = inputs.mean_of(&entry.name, |r| Some(r.id.aurc));
            let name = format!("{} (AURC {aurc:.4})", entry.name);
            let points = percent(seed_series(&raw, &grid_x));
            Series::new(name, Mark::Line, points).colour(entry.colour)
        })
        .collect();
    let figure = Figure {
        title: "Risk-coverage (test set)".into(),
        x_label: "coverage (% of samples kept, most confident first)".into(),
        y_label: "risk (error rate among kept, %)".into(),
        x_range: Some((0.0, 100.0)),
        // Beside the chart: at low coverage the curves are high and noisy.
        legend: Legend::Outside,
        series: bands_if_few(series),
        note: Some("no entry has curves stored (runs older than curves.json)".into()),
        ..Figure::default()
    };
    chart(
        "fig-risk-coverage.svg",
        "Risk-coverage curves",
        format!(
            "Error rate among the samples a method keeps when it abstains on the least confident; \
             lower is better, and the area under each curve is the AURC of the tables ({}; \
             temperature-scaled entries are in the tables: one temperature barely moves the \
             confidence ranking).",
            lines_note(inputs.summary)
        ),
        &figure,
    )
}
