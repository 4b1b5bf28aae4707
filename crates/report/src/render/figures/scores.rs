//! OOD detection by score: every method's AUROC under every listed score, side by side.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::{CHART, COLUMNS, FigureFile, PANEL};
use super::inputs::Inputs;
use crate::summary::MethodResult;

/// Width of the band of bars one score's group of methods fills, in x units (a score is 1).
const GROUP_WIDTH: f64 = 0.8;

/// The category name of a score: OpenOOD's short names for the detectors.
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

/// A panel's title and its values: AUROC (%) per method (row) and score (column).
type Panel = (String, Vec<Vec<f64>>);

/// One panel per OOD set and per group (`near`, `far`), each drawn once: a panel whose values
/// repeat an earlier one's (a `far` group of one set is that set) is named in its title. In a
/// panel, for each listed score (x), one bar per method (variants left out), its mean AUROC
/// over seeds, on a y axis fitted to the values of all panels.
pub fn auroc_by_score(inputs: &Inputs<'_>) -> Result<Option<FigureFile>, PlotError> {
    let scores = &inputs.summary.ood_scores;
    let entries: Vec<_> = (inputs.entries().into_iter())
        .filter(|e| !e.variant)
        .collect();
    let read = |title: String, value: &dyn Fn(&MethodResult, &str) -> Option<f64>| -> Panel {
        let rows = (entries.iter())
            .map(|e| {
                (scores.iter())
                    .map(|s| 100.0 * inputs.mean_of(&e.name, |r| value(r, s)))
                    .collect()
            })
            .collect();
        (title, rows)
    };
    let mut panels = Vec::new();
    for set in score_sets(inputs) {
        let value = |r: &MethodResult, s: &str| Some(r.ood_scores.get(s)?.get(&set)?.auroc);
        panels.push(read(format!("test vs {set}"), &value));
    }
    for group in ["near", "far"] {
        let has = |r: &MethodResult| r.ood_groups.values().any(|g| g.contains_key(group));
        if inputs.summary.methods.iter().any(has) {
            let value = |r: &MethodResult, s: &str| Some(r.ood_groups.get(s)?.get(group)?.auroc);
            panels.push(read(format!("{group} OOD (mean)"), &value));
        }
    }
    if scores.len() < 2 || panels.is_empty() {
        return Ok(None);
    }
    let panels = distinct(panels);
    let y_range = fitted(panels.iter().flat_map(|(_, rows)| rows.iter().flatten()));
    let width = GROUP_WIDTH / entries.len().max(1) as f64;
    let figures: Vec<Figure> = (panels.iter())
        .map(|(title, rows)| {
            let series = (entries.iter().zip(rows))
                .enumerate()
                .map(|(k, (e, row))| {
                    let offset = (k as f64 + 0.5) * width - GROUP_WIDTH / 2.0;
                    let points = (row.iter().enumerate())
                        .map(|(s, &auroc)| Point::new(s as f64 + 1.0 + offset, auroc))
                        .collect();
                    Series::new(&e.name, Mark::Bars { width }, points).colour(e.colour)
                })
                .collect();
            Figure {
                title: title.clone(),
                x_label: "OOD score".into(),
                y_label: "AUROC (%) ↑".into(),
                x_categories: scores.iter().map(|s| short(s).to_string()).collect(),
                y_range,
                legend: Legend::Outside,
                series,
                ..Figure::default()
            }
        })
        .collect();
    let svg = match figures.as_slice() {
        [one] => plots::render(one, CHART)?,
        many => plots::render_grid(many, COLUMNS, PANEL)?,
    };
    Ok(Some(FigureFile {
        file: "fig-ood-scores.svg".into(),
        title: "OOD AUROC by score".into(),
        caption: format!(
            "Each method's AUROC (mean over seeds) under every listed OOD score, per OOD set and \
             per group, a panel drawn once when another has the same values (its title names \
             both); the y axis is fitted to the values, so bars start at its foot, not at 0. \
             The feature-space detectors are fitted per member on the training split's features \
             (MDS: Mahalanobis, RMDS: Relative Mahalanobis). Scores in listing order: {}.",
            scores.join(", ")
        ),
        svg,
    }))
}

/// The OOD sets any method was scored on by the listed scores.
fn score_sets(inputs: &Inputs<'_>) -> Vec<String> {
    let mut sets: Vec<String> = (inputs.summary.methods.iter())
        .flat_map(|r| {
            r.ood_scores
                .values()
                .flat_map(|by_set| by_set.keys().cloned())
        })
        .collect();
    sets.sort();
    sets.dedup();
    sets
}

/// `panels` with each repeat of an earlier panel's values folded into its title.
fn distinct(panels: Vec<Panel>) -> Vec<Panel> {
    let same = |a: &[Vec<f64>], b: &[Vec<f64>]| {
        let cells = |rows: &[Vec<f64>]| rows.iter().flatten().copied().collect::<Vec<f64>>();
        let (a, b) = (cells(a), cells(b));
        a.len() == b.len() && (a.iter().zip(&b)).all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
    };
    let mut out: Vec<Panel> = Vec::new();
    for (title, rows) in panels {
        match out.iter_mut().find(|(_, kept)| same(kept, &rows)) {
            Some((kept, _)) => *kept = format!("{kept} = {title}"),
            None => out.push((title, rows)),
        }
    }
    out
}

/// A y range around the finite values, padded by a tenth of their span (at least a point)
/// and kept within 0-100; `None` without finite values.
fn fitted<'a>(values: impl Iterator<Item = &'a f64>) -> Option<(f64, f64)> {
    let (lo, hi) = (values.filter(|v| v.is_finite()))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let pad = (0.1 * (hi - lo)).max(1.0);
    (lo <= hi).then(|| ((lo - pad).max(0.0), (hi + pad).min(100.0)))
}
