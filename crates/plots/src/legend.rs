//! Legends: the sample drawn for each mark, and the legend box right of a plot area (or of a
//! whole grid), where it can hide no data.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Mark, Series};
use crate::style::{Area, CHAR, FONT, GRID_MAJOR, MUTED, PlotError, colour};

/// One legend line: what it names and how its series is drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub name: String,
    pub mark: Mark,
    pub colour: RGBColor,
}

/// Pixels between legend lines, and the sample's width before the name.
const LINE: i32 = 18;
const SAMPLE: i32 = 26;

/// A series' legend name: said empty when it has nothing to draw.
pub(crate) fn name(series: &Series) -> String {
    match series.has_data() {
        true => series.name.clone(),
        false => format!("{} (no data)", series.name),
    }
}

/// The legend entries of figures, in order, each name once (panels of a grid repeat them).
pub(crate) fn entries<'f>(figures: impl IntoIterator<Item = &'f Figure>) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for figure in figures {
        for (i, series) in figure.series.iter().enumerate() {
            let name = name(series);
            // An unnamed series (a validation curve) goes without an entry, as inside the plot.
            if !series.name.is_empty() && !out.iter().any(|e| e.name == name) {
                out.push(Entry {
                    name,
                    mark: series.mark,
                    colour: colour(series, i),
                });
            }
        }
    }
    out
}

/// The legend box's width for `entries`, in pixels.
pub(crate) fn width(entries: &[Entry]) -> u32 {
    let chars = entries.iter().map(|e| e.name.chars().count()).max();
    (chars.unwrap_or(0) as f64 * CHAR) as u32 + SAMPLE as u32 + 28
}

/// Draws the sample of a mark in a legend, centred vertically on `y` from `x` on. (Each mark
/// draws its own element type: plotters' boxed elements would need a `'static` backend.)
pub(crate) fn draw_sample(
    area: &Area<'_>,
    mark: Mark,
    c: RGBColor,
    (x, y): (i32, i32),
) -> Result<(), PlotError> {
    match mark {
        Mark::Bars { .. } => area.draw(&Rectangle::new(
            [(x, y - 5), (x + 14, y + 5)],
            c.mix(0.7).filled(),
        ))?,
        Mark::Outlines { .. } => area.draw(&Rectangle::new(
            [(x, y - 5), (x + 14, y + 5)],
            c.stroke_width(2),
        ))?,
        Mark::Points => area.draw(&Circle::new((x + 7, y), 4, c.filled()))?,
        Mark::Line | Mark::Step => area.draw(&PathElement::new(
            vec![(x, y), (x + 18, y)],
            c.stroke_width(2),
        ))?,
        Mark::Dashed => area.draw(&PathElement::new(
            vec![(x, y), (x + 8, y)],
            c.stroke_width(2),
        ))?,
        Mark::Reference => {
            // Two dashes, as the line is drawn.
            for (a, b) in [(0, 7), (11, 18)] {
                area.draw(&PathElement::new(
                    vec![(x + a, y), (x + b, y)],
                    MUTED.stroke_width(2),
                ))?;
            }
        }
    }
    Ok(())
}

/// The legend box at the top left of `area` (`top` pixels down, level with the plot area).
pub(crate) fn draw_box(area: &Area<'_>, entries: &[Entry], top: i32) -> Result<(), PlotError> {
    if entries.is_empty() {
        return Ok(());
    }
    let right = area.dim_in_pixel().0 as i32 - 6;
    let bottom = top + LINE * entries.len() as i32 + 10;
    area.draw(&Rectangle::new([(4, top), (right, bottom)], WHITE.filled()))?;
    area.draw(&Rectangle::new([(4, top), (right, bottom)], GRID_MAJOR))?;
    let style = (FONT, 11)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (k, e) in entries.iter().enumerate() {
        let y = top + 5 + LINE / 2 + LINE * k as i32;
        draw_sample(area, e.mark, e.colour, (12, y))?;
        area.draw(&Text::new(e.name.clone(), (12 + SAMPLE, y), style.clone()))?;
    }
    Ok(())
}
