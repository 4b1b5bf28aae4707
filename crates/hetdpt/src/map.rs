//! The Model Accuracy Predictor: a least-squares polynomial in the removal ratios
//! (m_a, m_g) = (n_a / L, n_g / L), and the choice of (n_a, n_g) it drives.

use serde::Serialize;

use crate::config::Budget;
use crate::error::HetDptError;

/// One measured grid point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapPoint {
    /// Attention branches removed.
    pub n_attn: usize,
    /// GELUs removed.
    pub n_act: usize,
    /// Validation accuracy after the point's short fine-tune.
    pub accuracy: f64,
    /// Median forward latency of the merged model at `latency_batch` (when measured).
    pub latency_ms: Option<f64>,
    pub flops: u64,
    pub params: usize,
    /// Speed relative to the unpruned model, by the configured measure.
    pub speedup: f64,
}

/// `Σ c_k · m_a^i_k · m_g^j_k` over all monomials of total degree at most `degree`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Polynomial {
    pub degree: usize,
    /// Exponents `[i, j]` of each monomial `m_a^i · m_g^j`.
    pub terms: Vec<[u32; 2]>,
    pub coefficients: Vec<f64>,
}

/// The fitted predictor and its goodness of fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapFit {
    pub polynomial: Polynomial,
    /// Coefficient of determination on the points it was fitted to.
    pub r_squared: f64,
    /// Held-out error: each point predicted by the polynomial fitted to the others
    /// (leave-one-out), as R² over all points and as the largest absolute error. NaN when
    /// the other points cannot determine the coefficients.
    pub loo_r_squared: f64,
    pub loo_max_abs_error: f64,
}

/// The chosen grid point and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub n_attn: usize,
    pub n_act: usize,
    pub predicted_accuracy: f64,
    pub speedup: f64,
    pub reason: String,
}

fn monomials(degree: usize) -> Vec<[u32; 2]> {
    let d = degree as u32;
    (0..=d)
        .flat_map(|total| (0..=total).rev().map(move |i| [i, total - i]))
        .collect()
}

impl Polynomial {
    /// Least-squares fit of `y ≈ p(m_a, m_g)` to `points` `(m_a, m_g, y)` by Householder QR in
    /// f64; an error when the points cannot determine every coefficient.
    pub fn fit(points: &[(f64, f64, f64)], degree: usize) -> Result<MapFit, HetDptError> {
        let terms = monomials(degree);
        let rows: Vec<Vec<f64>> = points
            .iter()
            .map(|&(a, g, _)| terms.iter().map(|&t| eval_term(t, a, g)).collect())
            .collect();
        let y: Vec<f64> = points.iter().map(|p| p.2).collect();
        let coefficients = least_squares(rows.clone(), &y).map_err(|why| {
            HetDptError::Invalid(format!(
                "the MAP fit of degree {degree} ({} coefficients) on {} points failed: {why}",
                terms.len(),
                points.len()
            ))
        })?;
        let polynomial = Self {
            degree,
            terms,
            coefficients,
        };
        let predicted: Vec<f64> = points
            .iter()
            .map(|&(a, g, _)| polynomial.predict(a, g))
            .collect();
        let held_out = leave_one_out(&rows, &y);
        let (loo_r_squared, loo_max_abs_error) = match &held_out {
            Some(p) => (
                r_squared(&y, p),
                (y.iter().zip(p)).fold(0.0f64, |m, (y, p)| m.max((y - p).abs())),
            ),
            None => (f64::NAN, f64::NAN),
        };
        Ok(MapFit {
            r_squared: r_squared(&y, &predicted),
            loo_r_squared,
            loo_max_abs_error,
            polynomial,
        })
    }

    pub fn predict(&self, m_attn: f64, m_act: f64) -> f64 {
        self.terms
            .iter()
            .zip(&self.coefficients)
            .map(|(&t, c)| c * eval_term(t, m_attn, m_act))
            .sum()
    }
}

/// Each observation predicted by the least-squares fit to all the others; `None` when some
/// fit without one point is underdetermined.
fn leave_one_out(rows: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    (0..rows.len())
        .map(|i| {
            let others = |k: &usize| *k != i;
            let x: Vec<Vec<f64>> = (0..rows.len())
                .filter(others)
                .map(|k| rows[k].clone())
                .collect();
            let t: Vec<f64> = (0..y.len()).filter(others).map(|k| y[k]).collect();
            let c = least_squares(x, &t).ok()?;
            Some(rows[i].iter().zip(&c).map(|(x, c)| x * c).sum())
        })
        .collect()
}

fn eval_term([i, j]: [u32; 2], a: f64, g: f64) -> f64 {
    a.powi(i as i32) * g.powi(j as i32)
}

/// `1 - SS_res / SS_tot`; 1 when the observations are all equal and exactly predicted.
pub fn r_squared(observed: &[f64], predicted: &[f64]) -> f64 {
    let mean = observed.iter().sum::<f64>() / observed.len() as f64;
    let ss_tot: f64 = observed.iter().map(|y| (y - mean).powi(2)).sum();
    let ss_res: f64 = observed
        .iter()
        .zip(predicted)
        .map(|(y, p)| (y - p).powi(2))
        .sum();
    if ss_tot == 0.0 {
        return if ss_res == 0.0 {
            1.0
        } else {
            f64::NEG_INFINITY
        };
    }
    1.0 - ss_res / ss_tot
}

/// Minimises `‖A x - y‖` for `A` given by rows (n × p, n ≥ p) with Householder reflections.
fn least_squares(rows: Vec<Vec<f64>>, y: &[f64]) -> Result<Vec<f64>, String> {
    let n = rows.len();
    let p = rows.first().map_or(0, Vec::len);
    if n < p {
        return Err(format!("{n} points are fewer than the {p} unknowns"));
    }
    // Column-major, with y as a last column so it receives the same reflections.
    let mut cols: Vec<Vec<f64>> = (0..p)
        .map(|j| rows.iter().map(|r| r[j]).collect())
        .collect();
    cols.push(y.to_vec());
    let scale = rows.iter().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
    for k in 0..p {
        let norm = cols[k][k..].iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm <= 1e-12 * scale {
            return Err(format!(
                "the points do not determine coefficient {k} (rank-deficient design)"
            ));
        }
        // v = x - α e_k with α = -sign(x_k)·‖x‖ (no cancellation in v_0).
        let alpha = if cols[k][k] > 0.0 { -norm } else { norm };
        let mut v = cols[k][k..].to_vec();
        v[0] -= alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        for col in &mut cols[k..] {
            let tail = &mut col[k..];
            let f = 2.0 * tail.iter().zip(&v).map(|(c, v)| c * v).sum::<f64>() / vv;
            tail.iter_mut().zip(&v).for_each(|(c, v)| *c -= f * v);
        }
    }
    // Back-substitution on the upper-triangular R (row k of R is cols[j][k], j >= k).
    let mut x = vec![0.0; p];
    for k in (0..p).rev() {
        let s: f64 = (k + 1..p).map(|j| cols[j][k] * x[j]).sum();
        x[k] = (cols[p][k] - s) / cols[k][k];
    }
    Ok(x)
}

/// Picks the grid point the budget asks for, ranking points by the fitted accuracy at their
/// ratios (`layers` = L) and their measured speed-up; ties go to the faster point, then to the
/// more accurate.
pub(crate) fn choose(
    points: &[MapPoint],
    fit: &Polynomial,
    layers: usize,
    budget: Budget,
) -> Choice {
    let l = layers as f64;
    let predicted = |p: &MapPoint| fit.predict(p.n_attn as f64 / l, p.n_act as f64 / l);
    let choice = |p: &MapPoint, reason: String| Choice {
        n_attn: p.n_attn,
        n_act: p.n_act,
        predicted_accuracy: predicted(p),
        speedup: p.speedup,
        reason,
    };
    let by_speed = |a: &&MapPoint, b: &&MapPoint| {
        a.speedup
            .total_cmp(&b.speedup)
            .then(predicted(a).total_cmp(&predicted(b)))
    };
    let by_accuracy = |a: &&MapPoint, b: &&MapPoint| {
        predicted(a)
            .total_cmp(&predicted(b))
            .then(a.speedup.total_cmp(&b.speedup))
    };
    let fastest = || {
        points
            .iter()
            .max_by(by_speed)
            .expect("the MAP grid has points")
    };
    match budget {
        Budget::MinSpeedup(s) => match points.iter().filter(|p| p.speedup >= s).max_by(by_accuracy)
        {
            Some(p) => choice(
                p,
                format!("highest predicted accuracy among the points at least {s}x faster"),
            ),
            None => {
                let p = fastest();
                choice(
                    p,
                    format!(
                        "no grid point reaches the {s}x speed-up asked for; chose the fastest \
                         ({:.3}x)",
                        p.speedup
                    ),
                )
            }
        },
        Budget::MaxAccuracyDrop(d) => {
            let floor = fit.predict(0.0, 0.0) - d;
            match points
                .iter()
                .filter(|p| predicted(p) >= floor)
                .max_by(by_speed)
            {
                Some(p) => choice(
                    p,
                    format!(
                        "fastest point whose predicted accuracy is at least {floor:.4} (the \
                         unpruned model's prediction minus {d})"
                    ),
                ),
                None => {
                    let p = points
                        .iter()
                        .max_by(by_accuracy)
                        .expect("the MAP grid has points");
                    choice(
                        p,
                        format!(
                            "no grid point is predicted within {d} of the unpruned model; chose \
                             the most accurate"
                        ),
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
        for i in 0..3 {
            for j in 0..3 {
                // Cofactor C_ji / det: entry (i, j) of the inverse.
                let minor: Vec<f64> = (0..3)
                    .filter(|&r| r != j)
                    .flat_map(|r| (0..3).filter(move |&c| c != i).map(move |c| (r, c)))
                    .map(|(r, c)| m[r][c])
                    .collect();
                let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
                inv[i][j] = sign * (minor[0] * minor[3] - minor[1] * minor[2]) / d;
            }
        }
        let mut worst = 0.0f64;
        let mut ss_res = 0.0;
        for (r, &(a, g, y)) in x.iter().zip(&pts) {
            let h: f64 = (0..3)
                .flat_map(|i| (0..3).map(move |j| (i, j)))
                .map(|(i, j)| r[i] * inv[i][j] * r[j])
                .sum();
            let e = (y - fit.polynomial.predict(a, g)) / (1.0 - h);
            worst = worst.max(e.abs());
            ss_res += e * e;
        }
        let mean = pts.iter().map(|p| p.2).sum::<f64>() / pts.len() as f64;
        let ss_tot: f64 = pts.iter().map(|p| (p.2 - mean).powi(2)).sum();
        assert!(
            (fit.loo_max_abs_error - worst).abs() < 1e-10,
            "{fit:?} vs {worst}"
        );
        assert!((fit.loo_r_squared - (1.0 - ss_res / ss_tot)).abs() < 1e-10);
        // Held out, a fit never does better than in sample.
        assert!(fit.loo_r_squared < fit.r_squared);
        // An exact polynomial is predicted exactly held out too; too few points: NaN.
        let exact = Polynomial::fit(&grid_points(known), 2).unwrap();
        assert!(exact.loo_max_abs_error < 1e-10 && (exact.loo_r_squared - 1.0).abs() < 1e-10);
        let six = Polynomial::fit(&grid_points(known)[..6], 2);
        assert!(six.is_err() || six.unwrap().loo_r_squared.is_nan());
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

    fn point(n_attn: usize, n_act: usize, speedup: f64) -> MapPoint {
        MapPoint {
            n_attn,
            n_act,
            accuracy: 0.0,
            latency_ms: None,
            flops: 0,
            params: 0,
            speedup,
        }
    }

    #[test]
    fn choice_follows_the_budget() {
        // Accuracy 0.9 - 0.2·m_a - 0.4·m_g with L = 4: attention is cheaper to remove.
        let fit = Polynomial {
            degree: 1,
            terms: vec![[0, 0], [1, 0], [0, 1]],
            coefficients: vec![0.9, -0.2, -0.4],
        };
        let points = vec![
            point(0, 0, 1.0),
            point(1, 0, 1.2),
            point(0, 1, 1.3),
            point(2, 0, 1.5),
            point(1, 1, 1.6),
            point(2, 2, 2.0),
        ];
        let c = choose(&points, &fit, 4, Budget::MinSpeedup(1.3));
        assert_eq!((c.n_attn, c.n_act), (2, 0));
        assert!((c.predicted_accuracy - 0.8).abs() < 1e-12);
        assert_eq!(c.speedup, 1.5);
        // Within 0.11 of 0.9: (1, 0) at 0.85, (0, 1) and (2, 0) at 0.8; (2, 0) is fastest.
        let c = choose(&points, &fit, 4, Budget::MaxAccuracyDrop(0.11));
        assert_eq!((c.n_attn, c.n_act), (2, 0));
        let c = choose(&points, &fit, 4, Budget::MaxAccuracyDrop(0.06));
        assert_eq!((c.n_attn, c.n_act), (1, 0));
        let c = choose(&points, &fit, 4, Budget::MinSpeedup(3.0));
        assert_eq!((c.n_attn, c.n_act), (2, 2));
        assert!(c.reason.contains("no grid point"), "{}", c.reason);
    }
}
