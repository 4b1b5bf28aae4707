//! HetDPT's accuracy predictor (the MAP): its prediction over the whole grid of removals beside
//! the points it was fitted to, and how well it predicts a point it did not see.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::{FigureFile, Inputs};
use crate::curves::PredictorGrid;

/// Colours past those of the n_g lines (at most L + 1 of them, from 0).
const MEASURED: usize = 7;
const CHOSEN: usize = 8;
const FINAL: usize = 3;
const UNPRUNED: usize = 11;

/// Pixels of one panel (two per row).
const PANEL: (u32, u32) = (600, 460);

/// Two panels per HetDPT method and seed; `None` when the run has no HetDPT.
pub fn predictor(inputs: &Inputs<'_>) -> Result<Option<FigureFile>, PlotError> {
    let grids = &inputs.curves.predictors;
    if grids.is_empty() {
        return Ok(None);
    }
    let panels: Vec<Figure> = grids
        .iter()
        .flat_map(|g| [over_grid(g), held_out(g)])
        .collect();
    let caption = "HetDPT's accuracy predictor, per method and seed. Left: the polynomial's \
        validation accuracy over every (n_a, n_g) of the search range, one line per number of \
        GELUs removed, with the grid points measured to fit it, the chosen point's prediction \
        and its accuracy after the final fine-tune (a longer one than the MAP points had). \
        Right: each measured point against its prediction from the fit to all points and from \
        the fit without it (leave-one-out, the predictor's real error); on the diagonal a \
        prediction is exact."
        .to_string();
    Ok(Some(FigureFile {
        file: "fig-hetdpt-map.svg".into(),
        title: "HetDPT accuracy predictor".into(),
        caption,
        svg: plots::render_grid(&panels, 2, PANEL)?,
    }))
}

fn over_grid(g: &PredictorGrid) -> Figure {
    let mut n_gs: Vec<usize> = g.predicted.iter().map(|p| p.1).collect();
    n_gs.sort_unstable();
    n_gs.dedup();
    let mut series: Vec<Series> = (n_gs.iter())
        .map(|&n_g| {
            let line = (g.predicted.iter())
                .filter(|p| p.1 == n_g)
                .map(|p| (p.0 as f64, p.2));
            Series::line(format!("MAP, {n_g} GELUs removed"), line).colour(n_g)
        })
        .collect();
    let measured = (g.measured.iter())
        .map(|m| Point::new(m.0 as f64, m.2))
        .collect();
    series.push(Series::new("measured (fitted to)", Mark::Points, measured).colour(MEASURED));
    let max_a = g.predicted.iter().map(|p| p.0).max().unwrap_or(0) as f64;
    series.push(
        Series::line(
            "unpruned",
            [(0.0, g.base_accuracy), (max_a, g.base_accuracy)],
        )
        .colour(UNPRUNED),
    );
    let (a, n_g, predicted, after) = g.chosen;
    let mut chosen = Point::new(a as f64, predicted);
    chosen.label = Some(format!("chosen ({a}, {n_g})"));
    series.push(Series::new("chosen: MAP", Mark::Points, vec![chosen]).colour(CHOSEN));
    series.push(
        Series::new(
            "chosen: after fine-tune",
            Mark::Points,
            vec![Point::new(a as f64, after)],
        )
        .colour(FINAL),
    );
    Figure {
        title: format!("{}, seed {}: MAP over the grid", g.method, g.seed),
        x_label: "attention branches removed (n_a)".into(),
        y_label: "validation accuracy".into(),
        y_range: headroom(&series, 0.1 * series.len() as f64),
        legend: Legend::UpperRight,
        series,
        note: Some("no grid stored".into()),
        ..Figure::default()
    }
}

fn held_out(g: &PredictorGrid) -> Figure {
    let points = |x: fn(&(usize, usize, f64, f64, f64)) -> f64| {
        (g.measured.iter())
            .map(|m| Point::new(x(m), m.2))
            .collect::<Vec<_>>()
    };
    let (_, _, predicted, after) = g.chosen;
    let series = vec![
        Series::new("fit to all points", Mark::Points, points(|m| m.3)).colour(MEASURED),
        Series::new("fit without the point", Mark::Points, points(|m| m.4)).colour(CHOSEN),
        Series::new(
            "chosen, after fine-tune",
            Mark::Points,
            vec![Point::new(predicted, after)],
        )
        .colour(FINAL),
    ];
    Figure {
        title: format!(
            "held out: R² {:.2}, worst error {:.1} points",
            g.loo_r_squared,
            100.0 * g.loo_max_abs_error
        ),
        x_label: "predicted validation accuracy".into(),
        y_label: "measured validation accuracy".into(),
        diagonal: true,
        y_range: headroom(&series, 0.35),
        legend: Legend::UpperLeft,
        series,
        note: Some("no measured points stored".into()),
        ..Figure::default()
    }
}

/// The y range of `series` with `fraction` of its span added on top, where the legend goes
/// (over no data); `None` without finite values.
fn headroom(series: &[Series], fraction: f64) -> Option<(f64, f64)> {
    let ys = || series.iter().flat_map(|s| s.drawable()).map(|p| p.y);
    let lo = ys().fold(f64::INFINITY, f64::min);
    let hi = ys().fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1e-3);
    (lo <= hi).then_some((lo - 0.05 * span, hi + fraction * span))
}
