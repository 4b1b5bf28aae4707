//! Direct labels on points: each placed beside its point where it overlaps no other label and
//! no other point, if such a place exists (points that nearly coincide stay told apart).

use std::ops::Range;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Mark};
use crate::style::{CHAR, Chart, FONT, PlotError};

/// A label's height in pixels at its 11 px font.
const HEIGHT: i32 = 12;

/// A rectangle in pixels: left, top, right, bottom.
type Rect = (i32, i32, i32, i32);

fn overlap(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The radius a point is drawn with, as `draw_points` draws it.
pub(crate) fn radius(size: Option<f64>) -> i32 {
    size.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(4.0) as i32
}

/// Where a label of `w` pixels may go beside a point of radius `r`: the offsets of its top
/// left corner from the point, best first. Right of the point, then left, each level with it,
/// a line above and a line below (three labels of coinciding points fit on one side), then
/// centred above and below.
fn candidates(w: i32, r: i32) -> [(i32, i32); 8] {
    let h = HEIGHT;
    let (level, above, below) = (-h / 2, -h / 2 - h - 1, h / 2 + 1);
    let (right, left) = (r + 3, -r - 3 - w);
    [
        (right, level),
        (left, level),
        (right, above),
        (right, below),
        (left, above),
        (left, below),
        (-w / 2, -r - h - 1),
        (-w / 2, r + 1),
    ]
}

/// Draws the labels of every `Points` series of `figure`, placed in turn: the first place
/// that stays inside the plot area and clear of the points and the labels placed before;
/// failing that, the place that costs least, where a label over another label costs most, then
/// one over a point, then one reaching past the plot area into the margins of `panel` (the
/// area the figure is drawn on, which no label may leave).
pub(crate) fn draw_labels(
    chart: &mut Chart<'_, '_>,
    figure: &Figure,
    panel: (Range<i32>, Range<i32>),
) -> Result<(), PlotError> {
    let points: Vec<_> = (figure.series.iter())
        .filter(|s| s.mark == Mark::Points)
        .flat_map(|s| s.drawable())
        .map(|p| (p, chart.backend_coord(&(p.x, p.y)), radius(p.size)))
        .collect();
    let dots: Vec<Rect> = (points.iter())
        .map(|&(_, (x, y), r)| (x - r, y - r, x + r, y + r))
        .collect();
    let plot = chart.plotting_area().get_pixel_range();
    let mut placed: Vec<Rect> = Vec::new();
    let style = (FONT, 11)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Top));
    for (k, &(p, (x, y), r)) in points.iter().enumerate() {
        let Some(label) = p.label.as_deref().filter(|l| !l.is_empty()) else {
            continue;
        };
        let w = (label.chars().count() as f64 * CHAR) as i32;
        let clashes = |&(dx, dy): &(i32, i32)| {
            let b = (x + dx, y + dy, x + dx + w, y + dy + HEIGHT);
            let beyond = |(xs, ys): &(Range<i32>, Range<i32>)| {
                usize::from(b.0 < xs.start || b.2 > xs.end || b.1 < ys.start || b.3 > ys.end)
            };
            let others = (dots.iter().enumerate())
                .filter(|&(j, d)| j != k && overlap(b, *d))
                .count();
            let labels = placed.iter().filter(|l| overlap(b, **l)).count();
            100 * beyond(&panel) + 4 * labels + 2 * others + beyond(&plot)
        };
        let options = candidates(w, r);
        let best = (options.iter())
            .min_by_key(|o| clashes(o))
            .copied()
            .unwrap_or(options[0]);
        placed.push((x + best.0, y + best.1, x + best.0 + w, y + best.1 + HEIGHT));
        chart.draw_series(std::iter::once(
            EmptyElement::at((p.x, p.y)) + Text::new(label.to_string(), best, style.clone()),
        ))?;
    }
    Ok(())
}
