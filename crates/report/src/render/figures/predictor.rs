//! HetDPT's accuracy predictor (the MAP): its prediction over the whole grid of removals beside
//! the points it was fitted to, and how well it predicts a point it did not see. Accuracies
//! in %.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::FigureFile;
use super::inputs::Inputs;
use crate::curves::PredictorGrid;
use crate::outputs::MethodOutputs;

/// Colours past those of the n_g lines (one per number of GELUs removed, from 0; the search
/// range stays well under these), each used for one thing in every panel.
const MEASURED: usize = 7;
const CHOSEN: usize = 8;
const UNPRUNED: usize = 11;
const FINAL: usize = 12;
const IN_SAMPLE: usize = 15;
const HELD_OUT: usize = 13;

/// Panels of one seed's figure (two per row), and the small multiples of several seeds.
const PANEL: (u32, u32) = (520, 420);
const SMALL: (u32, u32) = (270, 230);
const SMALL_COLUMNS: usize = 5;

/// Per HetDPT method, a panel of the MAP over the grid for each seed, then one of the held-out
/// predictions over all its seeds; small multiples from two seeds on, and one legend right of
/// them all. `None` when the run has no HetDPT.
pub fn predictor(inputs: &Inputs<'_>) -> Result<Option<FigureFile>, PlotError> {
    let grids = hetdpt_grids(inputs);
    if grids.is_empty() {
        return Ok(None);
    }
    let mut methods: Vec<&str> = grids.iter().map(|g| g.method.as_str()).collect();
    methods.dedup();
    let mut panels = Vec::new();
    for method in methods {
        let of: Vec<&PredictorGrid> = grids
            .iter()
            .copied()
            .filter(|g| g.method == method)
            .collect();
        panels.extend(of.iter().map(|g| over_grid(g)));
        panels.push(held_out(&of));
    }
    let svg = match grids.len() {
        1 => plots::render_grid(&panels, 2, PANEL)?,
        _ => plots::render_grid(&panels, SMALL_COLUMNS, SMALL)?,
    };
    let caption = "HetDPT's accuracy predictor, per method and seed: the polynomial's validation \
        accuracy over every (n_a, n_g) of the search range, one line per number of GELUs \
        removed, with the grid points measured to fit it, the chosen point's prediction and its \
        accuracy after the final fine-tune (a longer one than the MAP points had). Last, \
        \"held out\", for all seeds together: each measured point against its prediction from \
        the fit to all points and from the fit without it (leave-one-out, the predictor's real \
        error; its R² over the seeds and worst error in the title); on the diagonal a \
        prediction is exact."
        .to_string();
    Ok(Some(FigureFile {
        file: "fig-hetdpt-map.svg".into(),
        title: "HetDPT accuracy predictor".into(),
        caption,
        svg,
    }))
}

/// The grids of the entries whose outputs are HetDPT's (each method's seeds in curve order): the
/// figure follows the method's variant, the grid its curves.
fn hetdpt_grids<'a>(inputs: &Inputs<'a>) -> Vec<&'a PredictorGrid> {
    let is_hetdpt = |g: &PredictorGrid| {
        (inputs.summary.methods.iter()).any(|r| {
            r.method == g.method
                && r.seed == g.seed
                && matches!(r.extra.outputs, Some(MethodOutputs::HetDpt(_)))
        })
    };
    (inputs.curves.predictors.iter())
        .filter(|g| is_hetdpt(g))
        .collect()
}

fn over_grid(g: &PredictorGrid) -> Figure {
    let mut n_gs: Vec<usize> = g.predicted.iter().map(|p| p.1).collect();
    n_gs.sort_unstable();
    n_gs.dedup();
    let mut series: Vec<Series> = (n_gs.iter())
        .map(|&n_g| {
            let line = (g.predicted.iter())
                .filter(|p| p.1 == n_g)
                .map(|p| (p.0 as f64, 100.0 * p.2));
            Series::line(format!("MAP, {n_g} GELUs removed"), line).colour(n_g)
        })
        .collect();
    let measured = (g.measured.iter())
        .map(|m| Point::new(m.0 as f64, 100.0 * m.2))
        .collect();
    series.push(Series::new("measured (fitted to)", Mark::Points, measured).colour(MEASURED));
    let max_a = g.predicted.iter().map(|p| p.0).max().unwrap_or(0) as f64;
    let base = 100.0 * g.base_accuracy;
    series.push(Series::line("unpruned", [(0.0, base), (max_a, base)]).colour(UNPRUNED));
    let (a, n_g, predicted, after) = g.chosen;
    let mut chosen = Point::new(a as f64, 100.0 * predicted);
    chosen.label = Some(format!("chosen ({a}, {n_g})"));
    series.push(Series::new("chosen: MAP", Mark::Points, vec![chosen]).colour(CHOSEN));
    let after = Point::new(a as f64, 100.0 * after);
    series.push(Series::new("chosen: after fine-tune", Mark::Points, vec![after]).colour(FINAL));
    Figure {
        title: format!("{}, seed {}", g.method, g.seed),
        x_label: "attention branches removed (n_a)".into(),
        y_label: "validation accuracy (%)".into(),
        legend: Legend::Outside,
        series,
        note: Some("no grid stored".into()),
        ..Figure::default()
    }
}

/// Every measured point of `grids` (one method's seeds) against its predictions.
fn held_out(grids: &[&PredictorGrid]) -> Figure {
    let points = |x: fn(&(usize, usize, f64, f64, f64)) -> f64| {
        (grids.iter().flat_map(|g| g.measured.iter()))
            .map(|m| Point::new(100.0 * x(m), 100.0 * m.2))
            .collect::<Vec<_>>()
    };
    let chosen = (grids.iter())
        .map(|g| Point::new(100.0 * g.chosen.2, 100.0 * g.chosen.3))
        .collect();
    let series = vec![
        Series::new("fit to all points", Mark::Points, points(|m| m.3)).colour(IN_SAMPLE),
        Series::new("fit without the point", Mark::Points, points(|m| m.4)).colour(HELD_OUT),
        Series::new("chosen: after fine-tune", Mark::Points, chosen).colour(FINAL),
    ];
    let r2 = grids.iter().map(|g| g.loo_r_squared);
    let (lo, hi) = r2.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let worst = grids
        .iter()
        .map(|g| g.loo_max_abs_error)
        .fold(0.0, f64::max);
    let r2 = match lo == hi {
        true => format!("{lo:.2}"),
        false => format!("{lo:.2} to {hi:.2}"),
    };
    // Short enough for a small panel; the caption says what it is.
    Figure {
        title: format!("held out: R² {r2}, worst {:.1} pts", 100.0 * worst),
        x_label: "predicted validation accuracy (%)".into(),
        y_label: "measured validation accuracy (%)".into(),
        diagonal: true,
        legend: Legend::Outside,
        series,
        note: Some("no measured points stored".into()),
        ..Figure::default()
    }
}
