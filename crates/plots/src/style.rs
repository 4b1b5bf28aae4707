//! What every part of a figure shares: fonts, greys, series colours, the drawing types and
//! the error.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::figure::Series;
use crate::palette::PALETTE;

pub(crate) const FONT: &str = "sans-serif";
pub(crate) const GRID_MINOR: RGBColor = RGBColor(238, 238, 238);
pub(crate) const GRID_MAJOR: RGBColor = RGBColor(215, 215, 215);
pub(crate) const MUTED: RGBColor = RGBColor(110, 110, 110);

/// A drawing failure inside plotters (not expected for an in-memory SVG); plotters' error is
/// the source.
#[derive(Debug, thiserror::Error)]
#[error("drawing a figure")]
pub struct PlotError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

impl<E: std::error::Error + Send + Sync + 'static> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        Self(Box::new(e))
    }
}

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(crate) fn colour(series: &Series, position: usize) -> RGBColor {
    let (r, g, b) = PALETTE[series.colour.unwrap_or(position) % PALETTE.len()];
    RGBColor(r, g, b)
}

pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// An estimate of a character's width at the 11 px font of legends and labels: plotters has
/// no font metrics without the `ttf` feature, and an overestimate only leaves a margin.
pub(crate) const CHAR: f64 = 5.6;
