//! Figures drawn with plotters' SVG backend.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Legend, Mark, Point, Series};
use crate::labels::draw_labels;
use crate::legend;
use crate::marks::draw_series;
use crate::style::{Area, CHAR, Chart, FONT, GRID_MAJOR, GRID_MINOR, MUTED, PlotError, colour};

/// Pixels above the plot area: the caption and the chart's margin (where a legend box outside
/// the plot area starts, level with it).
const CAPTION: i32 = 34;

/// One figure as an SVG document of `width` x `height` pixels.
pub fn render(figure: &Figure, (width, height): (u32, u32)) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root, figure, true)?;
        root.present()?;
    }
    Ok(svg)
}

/// Figures as panels of one SVG, `columns` to a row, each `panel` pixels. When every panel's
/// legend is [`Legend::Outside`], one legend right of the grid (which widens the SVG by it)
/// names the series of all panels.
pub fn render_grid(
    figures: &[Figure],
    columns: usize,
    (width, height): (u32, u32),
) -> Result<String, PlotError> {
    let columns = columns.clamp(1, figures.len().max(1));
    let rows = figures.len().div_ceil(columns).max(1);
    let shared = match figures.iter().all(|f| f.legend == Legend::Outside) {
        true => legend::entries(figures),
        false => Vec::new(),
    };
    let legend_width = match shared.is_empty() {
        true => 0,
        false => legend::width(&shared),
    };
    let mut svg = String::new();
    {
        let size = (width * columns as u32 + legend_width, height * rows as u32);
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        let (panels, right) = root.split_horizontally(width * columns as u32);
        for (area, figure) in panels.split_evenly((rows, columns)).iter().zip(figures) {
            draw(area, figure, shared.is_empty())?;
        }
        legend::draw_box(&right, &shared, CAPTION)?;
        root.present()?;
    }
    Ok(svg)
}

/// One figure on `area`; `with_legend` false leaves an outside legend to the caller (a grid's
/// shared one).
fn draw(area: &Area<'_>, figure: &Figure, with_legend: bool) -> Result<(), PlotError> {
    let outside = match figure.legend == Legend::Outside && with_legend {
        true => legend::entries([figure]),
        false => Vec::new(),
    };
    let (area, right) = match outside.is_empty() {
        true => (area.clone(), None),
        false => {
            let (w, _) = area.dim_in_pixel();
            let (left, right) = area.split_horizontally(w.saturating_sub(legend::width(&outside)));
            (left, Some(right))
        }
    };
    let (x0, x1) = figure
        .x_range
        .unwrap_or_else(|| match figure.x_categories.len() {
            0 => extent(figure, x_values),
            n => (0.5, n as f64 + 0.5),
        });
    let (y0, y1) = figure.y_range.unwrap_or_else(|| extent(figure, y_values));
    let mut chart = axes(&area, figure, (x0, x1), (y0, y1))?;
    categories(&area, &chart, figure, y0)?;
    if figure.diagonal {
        let (lo, hi) = (x0.max(y0), x1.min(y1));
        chart.draw_series(DashedLineSeries::new(
            [(lo, lo), (hi, hi)],
            4,
            4,
            MUTED.stroke_width(1),
        ))?;
    }
    // References first, under the data.
    let (references, data): (Vec<_>, Vec<_>) =
        (figure.series.iter().enumerate()).partition(|(_, s)| s.mark == Mark::Reference);
    for (i, series) in references.into_iter().chain(data) {
        draw_series(&mut chart, series, colour(series, i), (y0, y1))?;
    }
    draw_labels(&mut chart, figure, area.get_pixel_range())?;
    if !figure.series.iter().any(Series::has_data) {
        let note = figure.note.as_deref().unwrap_or("no data");
        let style = (FONT, 13)
            .into_font()
            .color(&MUTED)
            .pos(Pos::new(HPos::Center, VPos::Center));
        chart.draw_series(std::iter::once(Text::new(
            format!("no data: {note}"),
            ((x0 + x1) / 2.0, (y0 + y1) / 2.0),
            style,
        )))?;
    }
    legend(&mut chart, figure)?;
    match right {
        Some(right) => legend::draw_box(&right, &outside, CAPTION),
        None => Ok(()),
    }
}

/// The chart with its caption, axes, tick labels and grid.
fn axes<'a, 'b>(
    area: &'a Area<'b>,
    figure: &Figure,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<Chart<'a, 'b>, PlotError> {
    let mut chart = ChartBuilder::on(area)
        .caption(&figure.title, (FONT, 15))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let (x_span, y_span) = (x1 - x0, y1 - y0);
    let x_tick = move |v: &f64| tick(*v, x_span);
    let y_tick = move |v: &f64| tick(*v, y_span);
    chart
        .configure_mesh()
        .x_desc(&figure.x_label)
        .y_desc(&figure.y_label)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(GRID_MINOR)
        .max_light_lines(1)
        .bold_line_style(GRID_MAJOR)
        // A categorical axis is labelled by `categories`, at its positions only.
        .x_labels(if figure.x_categories.is_empty() { 6 } else { 0 })
        .y_labels(6)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick)
        .draw()?;
    Ok(chart)
}

/// A categorical axis' names under their positions, each with a tick; the font shrinks when
/// the longest name would not fit its slot.
fn categories(
    area: &Area<'_>,
    chart: &Chart<'_, '_>,
    figure: &Figure,
    y0: f64,
) -> Result<(), PlotError> {
    let names = &figure.x_categories;
    let Some(longest) = names.iter().map(|n| n.chars().count()).max() else {
        return Ok(());
    };
    let (base_x, base_y) = area.get_base_pixel();
    let slot = (chart.backend_coord(&(2.0, y0)).0 - chart.backend_coord(&(1.0, y0)).0) as f64;
    let size = (11.0 * 0.9 * slot / (longest as f64 * CHAR)).clamp(8.0, 11.0);
    let style = (FONT, size)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (k, name) in names.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(k as f64 + 1.0, y0));
        let (x, y) = (x - base_x, y - base_y);
        area.draw(&PathElement::new(vec![(x, y), (x, y + 5)], BLACK))?;
        area.draw(&Text::new(name.clone(), (x, y + 8), style.clone()))?;
    }
    Ok(())
}

/// The legend box in the figure's corner, if it has one and any series.
fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, figure: &Figure) -> Result<(), PlotError> {
    let position = match figure.legend {
        Legend::None => None,
        Legend::UpperRight => Some(SeriesLabelPosition::UpperRight),
        Legend::UpperLeft => Some(SeriesLabelPosition::UpperLeft),
        Legend::LowerRight => Some(SeriesLabelPosition::LowerRight),
        Legend::LowerLeft => Some(SeriesLabelPosition::LowerLeft),
        // Drawn beside the plot area by `draw`.
        Legend::Outside => None,
    };
    if let Some(position) = position.filter(|_| !figure.series.is_empty()) {
        chart
            .configure_series_labels()
            .position(position)
            .margin(8)
            .legend_area_size(22)
            .label_font((FONT, 11))
            .background_style(WHITE.mix(0.88))
            .border_style(GRID_MAJOR)
            .draw()?;
    }
    Ok(())
}

fn x_values(p: &Point, mark: Mark) -> Vec<f64> {
    match mark {
        Mark::Bars { width } | Mark::Outlines { width } => {
            vec![p.x - width / 2.0, p.x + width / 2.0]
        }
        _ => vec![p.x],
    }
}

fn y_values(p: &Point, mark: Mark) -> Vec<f64> {
    let mut v = vec![p.y];
    v.extend(p.lo.into_iter().chain(p.hi));
    if let Mark::Bars { .. } | Mark::Outlines { .. } = mark {
        v.push(0.0);
    }
    v
}

/// The finite values' range, padded by 5% (a single value gets a unit-scale window).
fn extent(figure: &Figure, values: fn(&Point, Mark) -> Vec<f64>) -> (f64, f64) {
    let all = (figure.series.iter())
        .flat_map(|s| s.drawable().flat_map(move |p| values(p, s.mark)))
        .filter(|v| v.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = match hi - lo {
        0.0 => 0.05 * lo.abs().max(1.0),
        span => 0.05 * span,
    };
    (lo - pad, hi + pad)
}

/// A tick label with as many decimals as the axis span needs.
fn tick(v: f64, span: f64) -> String {
    let decimals = (-(span / 5.0).log10()).ceil().clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}
