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
    pub flops: u64,
    pub params: usize,
    /// FLOPs of the unpruned model over the point's (its latency is measured only if the
    /// search checks it).
    pub speedup: f64,
    /// Measured because the search was about to choose it unmeasured (not part of the grid).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub added_by_search: bool,
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
    /// Each point's leave-one-out prediction, in the order of the points (NaN as above).
    pub loo_predictions: Vec<f64>,
}

/// A point of the search range: its removals, the accuracy the polynomial predicts for it, its
/// FLOP speed-up (exact for the merged model, so free to compute everywhere), and its speed-up
/// by the configured measure once the search has checked it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub n_attn: usize,
    pub n_act: usize,
    pub predicted_accuracy: f64,
    pub flop_speedup: f64,
    pub speedup: Option<f64>,
}

/// The chosen point and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub n_attn: usize,
    pub n_act: usize,
    pub predicted_accuracy: f64,
    /// By the configured measure (measured latency ratio, or FLOP ratio).
    pub speedup: f64,
    pub reason: String,
    /// Points of the search range the polynomial scored (measured or not).
    pub searched: usize,
    /// Whether the chosen point is one the MAP measured (false: only predicted so far).
    pub measured_point: bool,
    /// The candidates whose speed the search checked, in the order it checked them.
    pub checked: Vec<Candidate>,
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
        let coefficients = least_squares(rows.clone(), &y).map_err(|reason| HetDptError::Fit {
            degree,
            coefficients: terms.len(),
            points: points.len(),
            reason,
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
            loo_predictions: held_out.unwrap_or_else(|| vec![f64::NAN; y.len()]),
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

/// Picks the point of `candidates` (the whole search range, scored by the polynomial) that the
/// budget asks for, checking the speed of only the candidates it considers: `speed` gives the
/// speed-ups of a chunk of at most `chunk` candidates (timed together on a machine, so the
/// chunk shares its conditions). Candidates are ranked by their FLOP speed-up, which the
/// search assumes a measured speed-up does not exceed:
/// - `min_speedup = s`: among points at least `s`x faster by FLOPs, by predicted accuracy,
///   chunk after chunk until one is measured at least `s`x faster; if none is, the fastest
///   checked (or, when no point is fast enough by FLOPs, the fastest of the fastest chunk);
/// - `max_accuracy_drop = d`: among points predicted within `d` of the unpruned model's
///   prediction, the FLOP-fastest chunk is checked and its fastest point chosen.
pub(crate) fn choose(
    candidates: Vec<Candidate>,
    measured: &[(usize, usize)],
    budget: Budget,
    chunk: usize,
    speed: impl FnMut(&[Candidate]) -> Result<Vec<f64>, HetDptError>,
) -> Result<Choice, HetDptError> {
    let searched = candidates.len();
    let mut checker = Checker {
        speed,
        chunk: chunk.max(1),
        checked: Vec::new(),
    };
    let (pick, reason) = match budget {
        Budget::MinSpeedup(s) => min_speedup(candidates, s, &mut checker)?,
        Budget::MaxAccuracyDrop(d) => max_accuracy_drop(candidates, d, &mut checker)?,
    };
    Ok(Choice {
        n_attn: pick.n_attn,
        n_act: pick.n_act,
        predicted_accuracy: pick.predicted_accuracy,
        speedup: speed_of(&pick),
        reason,
        searched,
        measured_point: measured.contains(&(pick.n_attn, pick.n_act)),
        checked: checker.checked,
    })
}

/// Times chunks of candidates and keeps every one it checked, in order.
struct Checker<F> {
    speed: F,
    chunk: usize,
    checked: Vec<Candidate>,
}

impl<F: FnMut(&[Candidate]) -> Result<Vec<f64>, HetDptError>> Checker<F> {
    /// `group` with its measured speed-ups.
    fn check(&mut self, group: &[Candidate]) -> Result<Vec<Candidate>, HetDptError> {
        let speeds = (self.speed)(group)?;
        let done: Vec<Candidate> = (group.iter().zip(speeds))
            .map(|(c, s)| Candidate {
                speedup: Some(s),
                ..c.clone()
            })
            .collect();
        self.checked.extend(done.iter().cloned());
        Ok(done)
    }
}

/// `min_speedup = s`: see [`choose`].
fn min_speedup<F: FnMut(&[Candidate]) -> Result<Vec<f64>, HetDptError>>(
    candidates: Vec<Candidate>,
    s: f64,
    checker: &mut Checker<F>,
) -> Result<(Candidate, String), HetDptError> {
    let (mut fast, mut slow): (Vec<_>, Vec<_>) =
        candidates.into_iter().partition(|c| c.flop_speedup >= s);
    fast.sort_by(by_accuracy);
    for group in fast.chunks(checker.chunk) {
        let done = checker.check(group)?;
        if let Some(c) = done.into_iter().find(|c| speed_of(c) >= s) {
            let reason = format!(
                "highest predicted accuracy among the points measured at least {s}x faster"
            );
            return Ok((c, reason));
        }
    }
    if checker.checked.is_empty() {
        slow.sort_by(by_flops);
        let n = checker.chunk.min(slow.len());
        checker.check(&slow[..n])?;
    }
    let c = fastest(&checker.checked);
    let reason = format!(
        "no point reaches the {s}x speed-up asked for; chose the fastest checked ({:.3}x)",
        speed_of(&c)
    );
    Ok((c, reason))
}

/// `max_accuracy_drop = d`: see [`choose`].
fn max_accuracy_drop<F: FnMut(&[Candidate]) -> Result<Vec<f64>, HetDptError>>(
    mut candidates: Vec<Candidate>,
    d: f64,
    checker: &mut Checker<F>,
) -> Result<(Candidate, String), HetDptError> {
    let unpruned = (candidates.iter())
        .find(|c| c.n_attn == 0 && c.n_act == 0)
        .map_or(f64::NAN, |c| c.predicted_accuracy);
    let floor = unpruned - d;
    // The unpruned point always passes (d >= 0), so the list is never empty.
    candidates.retain(|c| c.predicted_accuracy >= floor || (c.n_attn, c.n_act) == (0, 0));
    candidates.sort_by(by_flops);
    let n = checker.chunk.min(candidates.len());
    let done = checker.check(&candidates[..n])?;
    let reason = format!(
        "fastest checked point whose predicted accuracy is at least {floor:.4} (the unpruned \
         model's prediction minus {d})"
    );
    Ok((fastest(&done), reason))
}

fn speed_of(c: &Candidate) -> f64 {
    c.speedup.expect("checked")
}

/// Highest predicted accuracy first, then the FLOP-fastest.
fn by_accuracy(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    (b.predicted_accuracy.total_cmp(&a.predicted_accuracy))
        .then(b.flop_speedup.total_cmp(&a.flop_speedup))
}

/// FLOP-fastest first, then the highest predicted accuracy.
fn by_flops(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    (b.flop_speedup.total_cmp(&a.flop_speedup))
        .then(b.predicted_accuracy.total_cmp(&a.predicted_accuracy))
}

/// The measured fastest of checked candidates, the more accurate on a tie.
fn fastest(cs: &[Candidate]) -> Candidate {
    cs.iter()
        .max_by(|a, b| {
            speed_of(a)
                .total_cmp(&speed_of(b))
                .then(a.predicted_accuracy.total_cmp(&b.predicted_accuracy))
        })
        .expect("a checked chunk is not empty")
        .clone()
}

#[cfg(test)]
mod tests;
