//! Each mark drawn on a chart, with its legend entry inside the plot area.

use plotters::chart::SeriesAnno;
use plotters::prelude::*;

use crate::figure::{Mark, Point, Series};
use crate::labels::radius;
use crate::legend;
use crate::style::{Chart, MUTED, PlotError};

/// One series in its mark, with its legend entry; bars are cut to the y range `ys`.
pub(crate) fn draw_series<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    series: &Series,
    c: RGBColor,
    ys: (f64, f64),
) -> Result<(), PlotError> {
    let points: Vec<&Point> = series.drawable().collect();
    let mark = series.mark;
    let anno = match mark {
        Mark::Line => draw_line(chart, &points, c)?,
        Mark::Step => draw_steps(chart, &points, c)?,
        Mark::Bars { width } => draw_bars(chart, &points, c, (width, ys), false)?,
        Mark::Outlines { width } => draw_bars(chart, &points, c, (width, ys), true)?,
        Mark::Points => draw_points(chart, &points, c)?,
        Mark::Reference => {
            let xy = points.iter().map(|p| (p.x, p.y));
            chart.draw_series(DashedLineSeries::new(xy, 6, 4, MUTED.stroke_width(2)))?
        }
        Mark::Dashed => draw_dashed(chart, &points, c)?,
    };
    // An unnamed series (a validation curve beside its named training curve) has no entry.
    if series.name.is_empty() {
        return Ok(());
    }
    let anno = anno.label(legend::name(series));
    match mark {
        Mark::Bars { .. } => anno.legend(move |(x, y)| {
            Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.mix(0.7).filled())
        }),
        Mark::Outlines { .. } => anno
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.stroke_width(2))),
        Mark::Points => anno.legend(move |(x, y)| Circle::new((x + 7, y), 4, c.filled())),
        Mark::Line | Mark::Step => anno
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))),
        // Two dashes, as the line is drawn.
        Mark::Reference => anno.legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (7, 0)], MUTED.stroke_width(2))
                + PathElement::new(vec![(11, 0), (18, 0)], MUTED.stroke_width(2))
        }),
        // A short stroke as its sample; a dashed series is usually unnamed (its solid partner
        // names the colour).
        Mark::Dashed => {
            anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], c.stroke_width(2)))
        }
    };
    Ok(())
}

/// The drawn series a legend entry is attached to.
type Anno<'c, 'a, 'b> = &'c mut SeriesAnno<'a, SVGBackend<'b>>;

/// A line through the points, its interval as a shaded band where both bounds are finite, and
/// a lone point marked (a single point is no line).
fn draw_line<'c, 'a, 'b>(
    chart: &'c mut Chart<'a, 'b>,
    points: &[&Point],
    c: RGBColor,
) -> Result<Anno<'c, 'a, 'b>, PlotError> {
    let band: Vec<&Point> = (points.iter().copied())
        .filter(|p| p.lo.is_some_and(f64::is_finite) && p.hi.is_some_and(f64::is_finite))
        .collect();
    if band.len() >= 2 {
        let upper = band.iter().map(|p| (p.x, p.hi.unwrap_or(p.y)));
        let lower = band.iter().rev().map(|p| (p.x, p.lo.unwrap_or(p.y)));
        chart.draw_series(std::iter::once(Polygon::new(
            upper.chain(lower).collect::<Vec<_>>(),
            c.mix(0.18).filled(),
        )))?;
    }
    if let [only] = points {
        chart.draw_series(std::iter::once(Circle::new(
            (only.x, only.y),
            3,
            c.filled(),
        )))?;
    }
    let xy = points.iter().map(|p| (p.x, p.y));
    Ok(chart.draw_series(LineSeries::new(xy, c.stroke_width(2)))?)
}

/// A line through the points in dashes of 6 px with gaps of 4; a lone point as a ring (a
/// `Line`'s lone point is a dot).
fn draw_dashed<'c, 'a, 'b>(
    chart: &'c mut Chart<'a, 'b>,
    points: &[&Point],
    c: RGBColor,
) -> Result<Anno<'c, 'a, 'b>, PlotError> {
    if let [only] = points {
        chart.draw_series(std::iter::once(Circle::new(
            (only.x, only.y),
            3,
            c.stroke_width(1),
        )))?;
    }
    let xy = points.iter().map(|p| (p.x, p.y));
    Ok(chart.draw_series(DashedLineSeries::new(xy, 6, 4, c.stroke_width(2)))?)
}

/// A step function: each point's value held until the next point.
fn draw_steps<'c, 'a, 'b>(
    chart: &'c mut Chart<'a, 'b>,
    points: &[&Point],
    c: RGBColor,
) -> Result<Anno<'c, 'a, 'b>, PlotError> {
    let mut xy = Vec::with_capacity(2 * points.len());
    for pair in points.windows(2) {
        xy.push((pair[0].x, pair[0].y));
        xy.push((pair[1].x, pair[0].y));
    }
    if let Some(last) = points.last() {
        xy.push((last.x, last.y));
    }
    Ok(chart.draw_series(LineSeries::new(xy, c.stroke_width(2)))?)
}

/// Bars `width` wide from `lo` (or 0) to the value: filled, or outlined over a light fill.
/// Both ends are cut to the y range `(y0, y1)`: on an axis that does not start at 0, a bar
/// starts at the axis.
fn draw_bars<'c, 'a, 'b>(
    chart: &'c mut Chart<'a, 'b>,
    points: &[&Point],
    c: RGBColor,
    (width, (y0, y1)): (f64, (f64, f64)),
    outlined: bool,
) -> Result<Anno<'c, 'a, 'b>, PlotError> {
    let corners = |p: &Point| {
        let base = p.lo.filter(|v| v.is_finite()).unwrap_or(0.0).clamp(y0, y1);
        [
            (p.x - width / 2.0, base),
            (p.x + width / 2.0, p.y.clamp(y0, y1)),
        ]
    };
    if outlined {
        chart.draw_series(
            (points.iter()).map(|p| Rectangle::new(corners(p), c.mix(0.25).filled())),
        )?;
        Ok(chart
            .draw_series((points.iter()).map(|p| Rectangle::new(corners(p), c.stroke_width(2))))?)
    } else {
        Ok(chart.draw_series(
            (points.iter()).map(|p| Rectangle::new(corners(p), c.mix(0.7).filled())),
        )?)
    }
}

/// Dots (sized by `size`), with error bars where both bounds are finite; their labels are
/// placed by [`draw_labels`] once every series is drawn.
fn draw_points<'c, 'a, 'b>(
    chart: &'c mut Chart<'a, 'b>,
    points: &[&Point],
    c: RGBColor,
) -> Result<Anno<'c, 'a, 'b>, PlotError> {
    let bars = points.iter().filter_map(|p| match (p.lo, p.hi) {
        (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => Some(PathElement::new(
            vec![(p.x, lo), (p.x, hi)],
            c.stroke_width(1),
        )),
        _ => None,
    });
    chart.draw_series(bars)?;
    Ok(chart.draw_series(
        (points.iter()).map(|p| Circle::new((p.x, p.y), radius(p.size), c.mix(0.85).filled())),
    )?)
}
