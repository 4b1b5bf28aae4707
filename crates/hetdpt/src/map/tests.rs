use super::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

fn grid_points(f: impl Fn(f64, f64) -> f64) -> Vec<(f64, f64, f64)> {
    let mut pts = Vec::new();
    for a in 0..=3 {
        for g in 0..=3 {
            let (ma, mg) = (a as f64 / 6.0, g as f64 / 6.0);
            pts.push((ma, mg, f(ma, mg)));
        }
    }
    pts
}

// 0.9 - 0.3 m_a - 0.1 m_g + 0.2 m_a² - 0.05 m_a m_g - 0.4 m_g².
fn known(a: f64, g: f64) -> f64 {
    0.9 - 0.3 * a - 0.1 * g + 0.2 * a * a - 0.05 * a * g - 0.4 * g * g
}

#[test]
fn fit_recovers_a_known_polynomial() {
    let fit = Polynomial::fit(&grid_points(known), 2).unwrap();
    let p = &fit.polynomial;
    assert_eq!(
        p.terms,
        vec![[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]]
    );
    let expected = [0.9, -0.3, -0.1, 0.2, -0.05, -0.4];
    for (c, e) in p.coefficients.iter().zip(expected) {
        assert!((c - e).abs() < 1e-10, "{:?}", p.coefficients);
    }
    assert!((fit.r_squared - 1.0).abs() < 1e-12);
    assert!((p.predict(0.4, 0.7) - known(0.4, 0.7)).abs() < 1e-10);
}

#[test]
fn noise_lowers_r_squared_and_a_line_misses_curvature() {
    let mut rng = StdRng::seed_from_u64(5);
    let noisy: Vec<_> = grid_points(known)
        .into_iter()
        .map(|(a, g, y)| (a, g, y + rng.random_range(-0.02..0.02)))
        .collect();
    let fit = Polynomial::fit(&noisy, 2).unwrap();
    assert!(
        fit.r_squared < 1.0 && fit.r_squared > 0.5,
        "{}",
        fit.r_squared
    );
    // A plane cannot follow the quadratic terms: R² < 1 even without noise.
    let plane = Polynomial::fit(&grid_points(known), 1).unwrap();
    assert!(plane.r_squared < 0.999, "{}", plane.r_squared);
}

#[test]
fn leave_one_out_errors_match_the_hat_matrix() {
    // For least squares, the held-out residual of point i is e_i / (1 - h_ii), with h the
    // diagonal of X (XᵀX)⁻¹ Xᵀ: an identity independent of refitting. Checked on a plane
    // (X = [1, m_a, m_g]) fitted to noisy points, with (XᵀX)⁻¹ by Cramer's rule.
    let mut rng = StdRng::seed_from_u64(3);
    let pts: Vec<_> = grid_points(known)
        .into_iter()
        .map(|(a, g, y)| (a, g, y + rng.random_range(-0.02..0.02)))
        .collect();
    let fit = Polynomial::fit(&pts, 1).unwrap();
    let x: Vec<[f64; 3]> = pts.iter().map(|&(a, g, _)| [1.0, a, g]).collect();
    let mut m = [[0.0; 3]; 3];
    for r in &x {
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += r[i] * r[j];
            }
        }
    }
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(&m);
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            // Cofactor C_ji / det: entry (i, j) of the inverse.
            let minor: Vec<f64> = (0..3)
                .filter(|&r| r != j)
                .flat_map(|r| (0..3).filter(move |&c| c != i).map(move |c| (r, c)))
                .map(|(r, c)| m[r][c])
                .collect();
            let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
            *entry = sign * (minor[0] * minor[3] - minor[1] * minor[2]) / d;
        }
    }
    let mut worst = 0.0f64;
    let mut ss_res = 0.0;
    for ((r, &(a, g, y)), held_out) in x.iter().zip(&pts).zip(&fit.loo_predictions) {
        let h: f64 = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| r[i] * inv[i][j] * r[j])
            .sum();
        let e = (y - fit.polynomial.predict(a, g)) / (1.0 - h);
        assert!((y - held_out - e).abs() < 1e-10, "{held_out} vs {}", y - e);
        worst = worst.max(e.abs());
        ss_res += e * e;
    }
    assert_eq!(fit.loo_predictions.len(), pts.len());
    let mean = pts.iter().map(|p| p.2).sum::<f64>() / pts.len() as f64;
    let ss_tot: f64 = pts.iter().map(|p| (p.2 - mean).powi(2)).sum();
    assert!(
        (fit.loo_max_abs_error - worst).abs() < 1e-10,
        "{fit:?} vs {worst}"
    );
    assert!((fit.loo_r_squared - (1.0 - ss_res / ss_tot)).abs() < 1e-10);
    // Held out, a fit never does better than in sample.
    assert!(fit.loo_r_squared < fit.r_squared);
    // An exact polynomial is predicted exactly held out too.
    let exact = Polynomial::fit(&grid_points(known), 2).unwrap();
    assert!(exact.loo_max_abs_error < 1e-10 && (exact.loo_r_squared - 1.0).abs() < 1e-10);
    // Six points that determine a quadratic's six coefficients: an exact fit, but five left
    // after holding one out cannot, so the held-out figures are NaN.
    let six: Vec<(f64, f64, f64)> = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)]
        .iter()
        .map(|&(a, g)| (a as f64 / 6.0, g as f64 / 6.0))
        .map(|(a, g)| (a, g, known(a, g)))
        .collect();
    let six = Polynomial::fit(&six, 2).unwrap();
    assert!((six.r_squared - 1.0).abs() < 1e-10);
    assert!(six.loo_r_squared.is_nan() && six.loo_max_abs_error.is_nan());
    assert!(six.loo_predictions.iter().all(|p| p.is_nan()));
    // Six points on only two values of m_a cannot tell m_a² from m_a: an error that says so.
    let e = Polynomial::fit(&grid_points(known)[..6], 2).unwrap_err();
    assert!(e.to_string().contains("6 coefficients) on 6 points"), "{e}");
}

#[test]
fn residuals_are_orthogonal_to_the_design() {
    // The least-squares optimality condition, checked independently of the solver.
    let mut rng = StdRng::seed_from_u64(9);
    let pts: Vec<_> = (0..12)
        .map(|_| {
            let (a, g) = (rng.random_range(0.0..1.0), rng.random_range(0.0..1.0));
            (a, g, rng.random_range(0.0..1.0))
        })
        .collect();
    let fit = Polynomial::fit(&pts, 2).unwrap();
    for &t in &fit.polynomial.terms {
        let dot: f64 = pts
            .iter()
            .map(|&(a, g, y)| (y - fit.polynomial.predict(a, g)) * eval_term(t, a, g))
            .sum();
        assert!(dot.abs() < 1e-10, "term {t:?}: {dot}");
    }
}

#[test]
fn degenerate_designs_are_rejected() {
    // Two values of m_a cannot determine an m_a² term.
    let pts: Vec<_> = grid_points(known)
        .into_iter()
        .filter(|&(a, _, _)| a < 0.3)
        .collect();
    let err = Polynomial::fit(&pts, 2).unwrap_err().to_string();
    assert!(err.contains("rank-deficient"), "{err}");
    assert!(Polynomial::fit(&pts[..3], 2).is_err());
}

/// The (n_a, n_g) range 0..=4 each, predicted 0.9 - 0.2·m_a - 0.4·m_g at L = 4 (attention
/// is cheaper to remove), FLOP speed-up 1 + 0.1·n_a + 0.15·n_g.
fn range() -> Vec<Candidate> {
    let mut out = Vec::new();
    for a in 0..=4 {
        for g in 0..=4 {
            out.push(Candidate {
                n_attn: a,
                n_act: g,
                predicted_accuracy: 0.9 - 0.2 * a as f64 / 4.0 - 0.4 * g as f64 / 4.0,
                flop_speedup: 1.0 + 0.1 * a as f64 + 0.15 * g as f64,
                speedup: None,
            });
        }
    }
    out
}

/// A measure that gives `factor` of the FLOP speed-up and counts the candidates it timed.
fn measure(
    factor: f64,
    timed: &mut usize,
) -> impl FnMut(&[Candidate]) -> Result<Vec<f64>, HetDptError> + '_ {
    move |cs| {
        *timed += cs.len();
        Ok(cs.iter().map(|c| c.flop_speedup * factor).collect())
    }
}

#[test]
fn choice_follows_the_budget_and_checks_few_candidates() {
    let grid: Vec<(usize, usize)> = (0..=2).flat_map(|a| (0..=2).map(move |g| (a, g))).collect();
    // Speed measured as the FLOPs say: 1.3x needs n_a + 1.5·n_g >= 3; the most accurate such
    // point is (3, 0) at 0.75 (beyond the measured grid), and it is the first one checked.
    let mut timed = 0;
    let c = choose(
        range(),
        &grid,
        Budget::MinSpeedup(1.3),
        4,
        measure(1.0, &mut timed),
    )
    .unwrap();
    assert_eq!((c.n_attn, c.n_act), (3, 0));
    assert!((c.predicted_accuracy - 0.75).abs() < 1e-12);
    assert!((c.speedup - 1.3).abs() < 1e-12);
    assert_eq!((c.searched, timed, c.checked.len()), (25, 4, 4));
    assert!(!c.measured_point);
    // Measured 10% slower than the FLOPs: a point needs 1.3 / 0.9 = 1.444x by FLOPs, and the
    // most accurate such point (found by brute force) is only the fifth by predicted
    // accuracy among those 1.3x by FLOPs: the search checks a second chunk.
    let mut timed = 0;
    let c = choose(
        range(),
        &grid,
        Budget::MinSpeedup(1.3),
        4,
        measure(0.9, &mut timed),
    )
    .unwrap();
    let best = range()
        .into_iter()
        .filter(|p| p.flop_speedup * 0.9 >= 1.3)
        .max_by(|a, b| {
            a.predicted_accuracy
                .total_cmp(&b.predicted_accuracy)
                .then(a.flop_speedup.total_cmp(&b.flop_speedup))
        })
        .unwrap();
    assert_eq!((c.n_attn, c.n_act), (best.n_attn, best.n_act));
    assert_eq!((c.n_attn, c.n_act, timed), (3, 1, 8));
    assert!(c.speedup >= 1.3);
    // Out of reach: every point fast enough by FLOPs (only (4, 4)) is checked, and the
    // fastest checked chosen.
    let mut timed = 0;
    let c = choose(
        range(),
        &grid,
        Budget::MinSpeedup(2.0),
        4,
        measure(0.5, &mut timed),
    )
    .unwrap();
    assert!(c.reason.contains("no point reaches"), "{}", c.reason);
    assert_eq!((c.n_attn, c.n_act), (4, 4));
    assert_eq!(timed, 1);
    // Nothing fast enough even by FLOPs: the FLOP-fastest chunk is checked.
    let mut timed = 0;
    let c = choose(
        range(),
        &grid,
        Budget::MinSpeedup(3.0),
        4,
        measure(1.0, &mut timed),
    )
    .unwrap();
    assert_eq!(((c.n_attn, c.n_act), timed), ((4, 4), 4));
    // Within 0.11 of 0.9 (predicted >= 0.79): (2, 0), (0, 1), (1, 0), (0, 0); the fastest of
    // that one chunk is (2, 0), a measured point.
    let mut timed = 0;
    let c = choose(
        range(),
        &grid,
        Budget::MaxAccuracyDrop(0.11),
        4,
        measure(1.0, &mut timed),
    )
    .unwrap();
    assert_eq!((c.n_attn, c.n_act), (2, 0));
    assert!(c.measured_point);
    assert_eq!(timed, 4);
}
