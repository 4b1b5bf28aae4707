//! A figure as the run stores it, and the sizes its SVG is drawn at.

use plots::{Figure, PlotError};

/// The cost-UQ figure's file, which the report also shows under its verdicts.
pub const PARETO: &str = "fig-pareto.svg";

/// One figure of a run: its file name, a one-line caption and the SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureFile {
    pub file: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

/// Pixels of a single-chart figure and of one panel of a grid.
pub(super) const CHART: (u32, u32) = (760, 500);
pub(super) const PANEL: (u32, u32) = (380, 320);
pub(super) const COLUMNS: usize = 3;

/// A figure of `panels`, [`COLUMNS`] to a row.
pub(super) fn grid(
    file: &str,
    title: &str,
    caption: String,
    panels: &[Figure],
) -> Result<FigureFile, PlotError> {
    Ok(FigureFile {
        file: file.into(),
        title: title.into(),
        caption,
        svg: plots::render_grid(panels, COLUMNS, PANEL)?,
    })
}

/// A figure of one chart.
pub(super) fn chart(
    file: &str,
    title: &str,
    caption: String,
    figure: &Figure,
) -> Result<FigureFile, PlotError> {
    Ok(FigureFile {
        file: file.into(),
        title: title.into(),
        caption,
        svg: plots::render(figure, CHART)?,
    })
}
