//! The whole of a run's rendering: the report, its figures and its page.

use std::fmt::Write;

use super::figures::{self, FigureFile, Inputs};
use super::html::render_html;
use super::markdown;
use crate::curves::RunCurves;
use crate::summary::Summary;

/// Everything a run directory shows a reader.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// `report.md`: the tables, then the figures, linked.
    pub markdown: String,
    /// `report.html`: the same, self-contained.
    pub html: String,
    pub figures: Vec<FigureFile>,
}

/// The report, figures and page of a run from its summary and curves; `score` names the OOD
/// score for axis labels.
pub fn render(summary: &Summary, curves: &RunCurves, score: &str) -> crate::Result<Rendered> {
    render_with(summary, curves, score, "")
}

/// [`render`] with `preface` (a join's runs) between the headline and the detail.
pub(crate) fn render_with(
    summary: &Summary,
    curves: &RunCurves,
    score: &str,
    preface: &str,
) -> crate::Result<Rendered> {
    let figures = figures::figures(&Inputs {
        summary,
        curves,
        score,
    })?;
    let pareto = figures.iter().find(|f| f.file == figures::PARETO);
    let mut markdown = markdown::markdown(summary, pareto, preface);
    markdown.push_str("## Figures\n\n");
    // The cost-UQ figure is shown once, under the headline.
    for f in figures.iter().filter(|f| f.file != figures::PARETO) {
        let _ = writeln!(
            markdown,
            "### {}\n\n{}\n\n![{}]({})\n",
            f.title, f.caption, f.title, f.file
        );
    }
    let html = render_html(&summary.experiment, &markdown, &figures);
    Ok(Rendered {
        markdown,
        html,
        figures,
    })
}
