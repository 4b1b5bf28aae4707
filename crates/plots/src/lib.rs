//! Charts as SVG strings, from plain data: a [`Figure`] is a title, two axis labels and
//! [`Series`] of points, each drawn as a line (with an optional ± band), a step histogram, bars
//! or labelled points. [`render`] draws one figure, [`render_grid`] several as panels of one
//! SVG. Drawing is done by `plotters`' SVG backend; this crate only lays figures out: a
//! categorical x axis labelled by name, a legend inside the plot area or right of it (one for
//! a whole grid), points labelled where the labels clash least.
//!
//! Missing data never fails a figure: points with a non-finite coordinate are left out, a
//! series with none left is named "(no data)" in the legend, and a figure with no data at all
//! says so in its plot area (with the figure's [`Figure::note`] when given).

mod figure;
mod labels;
mod legend;
mod marks;
mod palette;
mod render;
mod style;

pub use figure::{Figure, Legend, Mark, Point, Series};
pub use palette::PALETTE;
pub use render::{render, render_grid};
pub use style::PlotError;
