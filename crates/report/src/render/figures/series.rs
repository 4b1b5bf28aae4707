//! Curves over seeds as plotted series: means on a common grid with their ± std bands.

/// Mean and sample standard deviation (NaN with fewer than two values), as the report's
/// statistics over seeds compute them.
pub(super) fn mean_std(xs: &[f64]) -> (f64, f64) {
    let s = uq_metrics::mean_ci(xs);
    (s.mean, s.std)
}

/// `curve` (x ascending) at `x`: linear between the last point at or before `x` and the next,
/// so a vertical jump (a ROC curve's tie) reads its top; clamped to the ends.
pub(super) fn at(curve: &[(f64, f64)], x: f64) -> f64 {
    match curve.iter().position(|p| p.0 > x) {
        None => curve.last().map_or(f64::NAN, |p| p.1),
        Some(0) => curve[0].1,
        Some(i) => {
            let ((x0, y0), (x1, y1)) = (curve[i - 1], curve[i]);
            y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        }
    }
}

/// Several seeds' curves as one series on `grid`: the mean, with a ± std band from two seeds
/// on; one seed's curve is drawn as it is.
pub(super) fn seed_series(curves: &[&[(f64, f64)]], grid: &[f64]) -> Vec<plots::Point> {
    match curves {
        [] => Vec::new(),
        [one] => one.iter().map(|&(x, y)| plots::Point::new(x, y)).collect(),
        many => grid
            .iter()
            .map(|&x| {
                let ys: Vec<f64> = many.iter().map(|c| at(c, x)).collect();
                let (mean, std) = mean_std(&ys);
                plots::Point::new(x, mean).band(mean - std, mean + std)
            })
            .collect(),
    }
}

/// Rates as percentages, on both axes (band included): figures show a rate in %, as the
/// tables do.
pub(super) fn percent(points: Vec<plots::Point>) -> Vec<plots::Point> {
    let scale = |v: Option<f64>| v.map(|v| 100.0 * v);
    (points.into_iter())
        .map(|p| plots::Point {
            x: 100.0 * p.x,
            y: 100.0 * p.y,
            lo: scale(p.lo),
            hi: scale(p.hi),
            ..p
        })
        .collect()
}

/// The most series of one chart drawn with their ± std bands: more bands overlap into a blur.
pub(super) const MAX_BANDS: usize = 3;

/// `series` without their bands when more than [`MAX_BANDS`] have one.
pub(super) fn bands_if_few(mut series: Vec<plots::Series>) -> Vec<plots::Series> {
    let banded = (series.iter())
        .filter(|s| s.points.iter().any(|p| p.lo.is_some()))
        .count();
    if banded > MAX_BANDS {
        for p in series.iter_mut().flat_map(|s| s.points.iter_mut()) {
            (p.lo, p.hi) = (None, None);
        }
    }
    series
}

/// `n + 1` evenly spaced values from `lo` to `hi`.
pub(super) fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| lo + (hi - lo) * i as f64 / n as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_interpolates_and_reads_the_top_of_a_jump() {
        let roc = [(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)];
        assert_eq!(at(&roc, 0.0), 0.5);
        assert_eq!(at(&roc, 0.25), 0.75);
        assert_eq!(at(&roc, 2.0), 1.0);
        assert_eq!(at(&[(0.5, 0.2), (1.0, 0.4)], 0.1), 0.2);
    }

    #[test]
    fn bands_are_dropped_from_crowded_charts() {
        let banded = |k: usize| {
            plots::Series::new(
                format!("m{k}"),
                plots::Mark::Line,
                vec![plots::Point::new(0.0, 1.0).band(0.5, 1.5)],
            )
        };
        let few = bands_if_few((0..MAX_BANDS).map(banded).collect());
        assert!(few.iter().all(|s| s.points[0].lo == Some(0.5)));
        let many = bands_if_few((0..=MAX_BANDS).map(banded).collect());
        assert!(
            many.iter()
                .all(|s| s.points[0].lo.is_none() && s.points[0].y == 1.0)
        );
    }

    #[test]
    fn seed_series_bands_only_with_several_seeds() {
        let a = [(0.0, 0.0), (1.0, 1.0)];
        let b = [(0.0, 0.0), (1.0, 0.5)];
        let one = seed_series(&[&a], &[0.0, 0.5]);
        assert_eq!(one.len(), 2);
        assert!(one.iter().all(|p| p.lo.is_none()));
        let two = seed_series(&[&a, &b], &[0.0, 1.0]);
        assert_eq!((two[1].y, two[1].lo.is_some()), (0.75, true));
        let sd = (2.0f64 * 0.25f64.powi(2)).sqrt();
        assert!((two[1].hi.unwrap() - (0.75 + sd)).abs() < 1e-12);
    }
}
