//! Selective classification: the risk-coverage curve and the area under it.

use crate::error::{MetricsError, Result};
use crate::input::check_finite;

/// AURC with 0/1 risk. Samples are ranked by `uncertainty` ascending (most confident first);
/// with `risk(k)` the error rate among the `k` most confident samples,
/// `AURC = (1/N) sum_{k=1..N} risk(k)`.
///
/// Ties are resolved by expectation, so the value does not depend on input order: inside a
/// group of `n_g` equal uncertainties holding `e_g` errors that follows `s` samples with `E_s`
/// errors, `risk(s + j) = (E_s + j e_g / n_g) / (s + j)` for `j = 1..n_g` (the mean over all
/// orders of the group).
pub fn aurc(uncertainty: &[f64], correct: &[bool]) -> Result<f64> {
    let n = uncertainty.len() as f64;
    let sum: f64 = expected_errors(uncertainty, correct)?
        .map(|(k, errors)| errors / k as f64)
        .sum();
    Ok(sum / n)
}

/// AUGRC, the area under the generalized risk-coverage curve (Traub et al. 2024): as [`aurc`],
/// but the risk at `k` is the joint probability of being kept and wrong, `errors(k) / N`, so
/// `AUGRC = (1/N^2) sum_{k=1..N} errors(k)`. Unlike AURC it does not weigh the few most confident
/// samples' errors up; 0 is a perfect ranking with no errors, and a random ranking at error rate
/// `e` gives about `e / 2`. Ties are resolved by expectation, as in [`aurc`].
///
/// torch-uncertainty integrates the same curve by the trapezoid rule from coverage `1/N` and
/// rescales by `N / (N - 1)`: with `g_k = errors(k) / N` its value is
/// `(sum_k g_k - (g_1 + g_N) / 2) / (N - 1)`, which differs from this one by `O(1/N)`.
pub fn augrc(uncertainty: &[f64], correct: &[bool]) -> Result<f64> {
    let n = uncertainty.len() as f64;
    let sum: f64 = expected_errors(uncertainty, correct)?
        .map(|(_, errors)| errors)
        .sum();
    Ok(sum / (n * n))
}

/// For `k = 1..N`, the expected number of errors among the `k` most confident samples, ties
/// resolved by expectation (see [`aurc`]).
fn expected_errors(
    uncertainty: &[f64],
    correct: &[bool],
) -> Result<impl Iterator<Item = (usize, f64)>> {
    let ranked = ranked(uncertainty, correct)?;
    let mut at = Vec::with_capacity(ranked.len());
    let (mut seen, mut errors) = (0usize, 0usize);
    for group in ranked.chunk_by(|a, b| a.0 == b.0) {
        let size = group.len();
        let group_errors = group.iter().filter(|s| !s.1).count();
        let per_position = group_errors as f64 / size as f64;
        at.extend((1..=size).map(|j| (seen + j, errors as f64 + j as f64 * per_position)));
        seen += size;
        errors += group_errors;
    }
    Ok(at.into_iter())
}

/// The risk-coverage curve as `(coverage, risk)` points, one per distinct uncertainty from the
/// most confident: keeping every sample at or below that uncertainty covers `k / N` of them
/// with 0/1 risk `errors / k`. The last point is `(1, error rate)`. Without ties there is a
/// point for every `k` and their mean risk is [`aurc`].
pub fn risk_coverage(uncertainty: &[f64], correct: &[bool]) -> Result<Vec<(f64, f64)>> {
    let ranked = ranked(uncertainty, correct)?;
    let n = ranked.len() as f64;
    let (mut seen, mut errors) = (0usize, 0usize);
    let mut points = Vec::new();
    for group in ranked.chunk_by(|a, b| a.0 == b.0) {
        seen += group.len();
        errors += group.iter().filter(|s| !s.1).count();
        points.push((seen as f64 / n, errors as f64 / seen as f64));
    }
    Ok(points)
}

/// The samples as `(uncertainty, correct)`, most confident first.
fn ranked(uncertainty: &[f64], correct: &[bool]) -> Result<Vec<(f64, bool)>> {
    if uncertainty.is_empty() {
        return Err(MetricsError::Empty {
            what: "uncertainty",
        });
    }
    if correct.len() != uncertainty.len() {
        return Err(MetricsError::ShapeMismatch {
            what: "correct",
            expected: uncertainty.len(),
            found: correct.len(),
        });
    }
    check_finite("uncertainty", uncertainty)?;
    // `+ 0.0` maps -0.0 to 0.0 so the total order agrees with `==` on ties.
    let mut ranked: Vec<(f64, bool)> = uncertainty
        .iter()
        .map(|&u| u + 0.0)
        .zip(correct.iter().copied())
        .collect();
    ranked.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    Ok(ranked)
}
