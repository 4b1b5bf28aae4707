//! OOD detection by score: every method's AUROC under every listed score, side by side.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::{FigureFile, Inputs, grid};
use crate::summary::MethodResult;

/// Width of the band of bars one score's group of methods fills, in x units (a score is 1).
const GROUP_WIDTH: f64 = 0.8;

/// Room right of the last score's bars, in x units, where the legend sits clear of the bars.
const LEGEND_ROOM: f64 = 3.4;

/// The label above a score's bars: OpenOOD's short names for the detectors.
fn short(score: &str) -> &str {
    match score {
        "mahalanobis" => "MDS",
        "relative_mahalanobis" => "RMDS",
        "vim" => "ViM",
        "knn" => "KNN",
        "max_logit" => "MaxLogit",
        "mutual_info" => "MI",
        "member_variance" => "var",
        "disagreement" => "disagree",
        other => other,
    }
}

/// One panel per OOD set and per group (`near`, `far`): for each listed score (x), one bar per
/// method (variants left out), its mean AUROC over seeds; the score's name above its bars.
pub fn auroc_by_score(inputs: &Inputs<'_>) -> Result<Option<FigureFile>, PlotError> {
    let scores = &inputs.summary.ood_scores;
    let sets = inputs.ood_sets();
    if scores.len() < 2 || sets.is_empty() {
        return Ok(None);
    }
    type Read<'a> = Box<dyn Fn(&MethodResult, &str) -> Option<f64> + 'a>;
    let mut panels: Vec<(String, Read)> = Vec::new();
    for set in &sets {
        let read: Read = Box::new(move |r, score| Some(r.ood_scores.get(score)?.get(set)?.auroc));
        panels.push((format!("test vs {set}"), read));
    }
    for group in ["near", "far"] {
        let has = |r: &MethodResult| r.ood_groups.values().any(|g| g.contains_key(group));
        if inputs.summary.methods.iter().any(has) {
            let read: Read =
                Box::new(move |r, score| Some(r.ood_groups.get(score)?.get(group)?.auroc));
            panels.push((format!("{group} OOD (mean)"), read));
        }
    }
    let entries: Vec<_> = (inputs.entries().into_iter())
        .filter(|e| !e.variant)
        .collect();
    let width = GROUP_WIDTH / entries.len().max(1) as f64;
    let figures: Vec<Figure> = panels
        .iter()
        .map(|(title, read)| {
            let mut series: Vec<Series> = (entries.iter().enumerate())
                .map(|(k, e)| {
                    let offset = (k as f64 + 0.5) * width - GROUP_WIDTH / 2.0;
                    let points = (scores.iter().enumerate())
                        .map(|(s, score)| {
                            let auroc = inputs.mean_of(&e.name, |r| read(r, score));
                            Point::new(s as f64 + 1.0 + offset, 100.0 * auroc)
                        })
                        .collect();
                    Series::new(&e.name, Mark::Bars { width }, points).colour(e.colour)
                })
                .collect();
            let labels = (scores.iter().enumerate())
                .map(|(s, score)| Point {
                    label: Some(short(score).to_string()),
                    size: Some(1.0),
                    // The label is written right of its point: start it at the group's left edge.
                    ..Point::new(s as f64 + 1.0 - GROUP_WIDTH / 2.0, 103.0)
                })
                .collect();
            series.push(Series::new("score", Mark::Points, labels));
            Figure {
                title: title.clone(),
                x_label: "OOD score (named above its bars)".into(),
                y_label: "AUROC (%) ↑".into(),
                x_range: Some((0.5, scores.len() as f64 + 0.5 + LEGEND_ROOM)),
                y_range: Some((0.0, 108.0)),
                legend: Legend::LowerRight,
                series,
                ..Figure::default()
            }
        })
        .collect();
    Ok(Some(grid(
        "fig-ood-scores.svg",
        "OOD AUROC by score",
        format!(
            "Each method's AUROC (mean over seeds) under every listed OOD score, per OOD set and \
             per group; the feature-space detectors are fitted per member on the training \
             split's features (MDS: Mahalanobis, RMDS: Relative Mahalanobis). Scores in listing \
             order: {}.",
            scores.join(", ")
        ),
        &figures,
    )?))
}
