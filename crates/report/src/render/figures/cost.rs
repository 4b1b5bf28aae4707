//! The cost-UQ trade-off: OOD AUROC and NLL against latency, one point per method, the Pareto
//! front joining the methods no other beats on both.

use plots::{Figure, Legend, Mark, PlotError, Point, Series};

use super::file::FigureFile;
use super::inputs::Inputs;
use super::notes::seeds_note;
use super::series::mean_std;
use crate::summary::MethodResult;

/// Two panels, OOD AUROC (%, mean over OOD sets) and test NLL against latency at the
/// evaluation batch; a point's area grows with the method's parameters, its bar is ± std over
/// seeds, its name beside it; one legend right of both panels.
pub fn pareto(inputs: &Inputs<'_>) -> Result<FigureFile, PlotError> {
    let auroc = |r: &MethodResult| match r.ood.is_empty() {
        true => f64::NAN,
        false => 100.0 * r.ood.values().map(|m| m.auroc).sum::<f64>() / r.ood.len() as f64,
    };
    let left = panel(
        inputs,
        (
            "OOD AUROC against latency",
            "OOD AUROC (%, mean over sets) ↑",
        ),
        &auroc,
        true,
    );
    let right = panel(
        inputs,
        ("Test NLL against latency", "NLL ↓"),
        &|r| r.id.nll,
        false,
    );
    let svg = plots::render_grid(&[left, right], 2, (560, 440))?;
    Ok(FigureFile {
        file: super::file::PARETO.into(),
        title: "Cost against uncertainty quality".into(),
        caption: format!(
            "Each method once (no `+ts` or `+bf16` variants); up-left is better on the left panel, \
             down-left on the right, and the dashed line (the Pareto front) joins the methods \
             that no other is both faster than and better than. Point area grows with the \
             parameter count; bars are ± std over seeds ({}).",
            seeds_note(inputs.summary)
        ),
        svg,
    })
}

/// One panel: `value` (higher is better when `higher`) against latency, the front first.
fn panel(
    inputs: &Inputs<'_>,
    (title, y_label): (&str, &str),
    value: &dyn Fn(&MethodResult) -> f64,
    higher: bool,
) -> Figure {
    let max_params = (inputs.summary.methods.iter())
        .map(|r| r.cost.params as f64)
        .fold(1.0, f64::max);
    let mut points: Vec<(Point, usize, String)> = Vec::new();
    for e in inputs.entries().into_iter().filter(|e| !e.variant) {
        let rs: Vec<&MethodResult> = (inputs.summary.methods.iter())
            .filter(|r| r.name == e.name)
            .collect();
        let (latency, _) = mean_std(&rs.iter().map(|r| r.cost.latency_ms).collect::<Vec<_>>());
        let (y, sd) = mean_std(&rs.iter().map(|r| value(r)).collect::<Vec<_>>());
        let params = rs.first().map_or(0.0, |r| r.cost.params as f64);
        let mut p = Point::new(latency, y);
        if sd.is_finite() {
            p = p.band(y - sd, y + sd);
        }
        p.size = Some(3.0 + 8.0 * (params / max_params).sqrt());
        p.label = Some(e.name.clone());
        points.push((p, e.colour, e.name));
    }
    let xy: Vec<(f64, f64)> = points.iter().map(|(p, ..)| (p.x, p.y)).collect();
    let front: Vec<Point> = (front(&xy, higher).into_iter())
        .map(|i| Point::new(xy[i].0, xy[i].1))
        .collect();
    let mut series = vec![Series::new("Pareto front", Mark::Reference, front)];
    series.extend(
        (points.into_iter())
            .map(|(p, colour, name)| Series::new(name, Mark::Points, vec![p]).colour(colour)),
    );
    // Room right of the slowest method for its name.
    let slowest = xy
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    Figure {
        title: title.into(),
        x_label: "latency per evaluation batch (ms)".into(),
        y_label: y_label.into(),
        x_range: (slowest > 0.0).then_some((0.0, 1.2 * slowest)),
        legend: Legend::Outside,
        series,
        note: Some("no finite value (no OOD set, or not timed)".into()),
        ..Figure::default()
    }
}

/// The indices of the points (latency, value) on the Pareto front, fastest first: those with a
/// finite latency and value that no other point matches or beats on both while beating on one
/// (`higher`: a higher value is better, else a lower one).
fn front(points: &[(f64, f64)], higher: bool) -> Vec<usize> {
    let better = |a: f64, b: f64| if higher { a > b } else { a < b };
    let finite = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite();
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| finite(&points[i])).collect();
    // By latency, the better value first among equal latencies.
    order.sort_by(|&i, &j| {
        let (a, b) = (points[i], points[j]);
        a.0.total_cmp(&b.0).then(match higher {
            true => b.1.total_cmp(&a.1),
            false => a.1.total_cmp(&b.1),
        })
    });
    let mut out: Vec<usize> = Vec::new();
    for i in order {
        // Sorted by latency: a point is on the front when it beats the best value so far.
        if out.last().is_none_or(|&j| better(points[i].1, points[j].1)) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::front;

    /// Pareto optimality by its definition: no point at most as slow and at least as good,
    /// and strictly better on one of the two.
    fn dominated(points: &[(f64, f64)], i: usize, higher: bool) -> bool {
        let (x, y) = points[i];
        let at_least = |v: f64| if higher { v >= y } else { v <= y };
        let beats = |v: f64| if higher { v > y } else { v < y };
        (points.iter().enumerate())
            .any(|(j, &(a, b))| j != i && a <= x && at_least(b) && (a < x || beats(b)))
    }

    #[test]
    fn the_front_is_exactly_the_non_dominated_points() {
        // A fixed pseudo-random cloud with ties in both coordinates.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 20) as f64
        };
        for higher in [true, false] {
            for _ in 0..50 {
                let points: Vec<(f64, f64)> = (0..12).map(|_| (next(), next())).collect();
                let mut got = front(&points, higher);
                got.sort_unstable();
                let want: Vec<usize> = (0..points.len())
                    .filter(|&i| !dominated(&points, i, higher))
                    .collect();
                // Identical points are both optimal but drawn once.
                let distinct = |v: &[usize]| {
                    let mut p: Vec<(f64, f64)> = v.iter().map(|&i| points[i]).collect();
                    p.sort_by(|a, b| a.partial_cmp(b).unwrap());
                    p.dedup();
                    p
                };
                assert_eq!(distinct(&got), distinct(&want), "{points:?}");
            }
        }
    }

    #[test]
    fn missing_values_are_off_the_front() {
        let points = [(1.0, f64::NAN), (2.0, 0.8), (f64::NAN, 0.9), (3.0, 0.9)];
        assert_eq!(front(&points, true), [1, 3]);
        assert_eq!(front(&points, false), [1]);
    }
}
