//! Samplers the corruptions need beyond uniform draws: standard normal and Poisson.

use rand::{Rng, RngExt};

/// A standard normal draw (Box-Muller; one of the pair is discarded for simplicity).
pub(crate) fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Poisson draw with mean `lambda` (>= 0): multiplication of uniforms for small means,
/// Hörmann's transformed rejection (PTRS, 1993) from 10 up, exact in both regimes.
pub(crate) fn poisson<R: Rng + ?Sized>(rng: &mut R, lambda: f64) -> u64 {
    if lambda <= 0.0 {
        return 0;
    }
    if lambda < 10.0 {
        let limit = (-lambda).exp();
        let mut k = 0;
        let mut product = rng.random::<f64>();
        while product > limit {
            k += 1;
            product *= rng.random::<f64>();
        }
        return k;
    }
    let log_lambda = lambda.ln();
    let b = 0.931 + 2.53 * lambda.sqrt();
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    let v_r = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = rng.random::<f64>() - 0.5;
        let v = rng.random::<f64>();
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
        if us >= 0.07 && v <= v_r {
            return k as u64;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let accept = v.ln() + inv_alpha.ln() - (a / (us * us) + b).ln();
        if accept <= -lambda + k * log_lambda - ln_factorial(k) {
            return k as u64;
        }
    }
}

/// ln(k!) for a non-negative integer `k`: exact products below 10, Stirling's series above
/// (error below 1e-10 there).
fn ln_factorial(k: f64) -> f64 {
    if k < 10.0 {
        return (2..=k as u64).map(|i| (i as f64).ln()).sum();
    }
    let k2 = k * k;
    (k + 0.5) * k.ln() - k + 0.5 * std::f64::consts::TAU.ln() + 1.0 / (12.0 * k)
        - 1.0 / (360.0 * k * k2)
        + 1.0 / (1260.0 * k2 * k2 * k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    fn moments(draws: &[f64]) -> (f64, f64) {
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<f64>() / n;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, var)
    }

    #[test]
    fn ln_factorial_matches_direct_sums_across_the_switch() {
        for k in [0u64, 1, 5, 9, 10, 11, 30, 170] {
            let direct: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
            assert!((ln_factorial(k as f64) - direct).abs() < 1e-9, "k = {k}");
        }
    }

    #[test]
    fn normal_has_unit_moments() {
        let mut rng = StdRng::seed_from_u64(1);
        let draws: Vec<f64> = (0..40_000).map(|_| standard_normal(&mut rng)).collect();
        let (mean, var) = moments(&draws);
        // Standard errors: 0.005 for the mean, about 0.007 for the variance.
        assert!(
            mean.abs() < 0.025 && (var - 1.0).abs() < 0.04,
            "{mean} {var}"
        );
    }

    #[test]
    fn poisson_mean_and_variance_equal_lambda_in_both_regimes() {
        let mut rng = StdRng::seed_from_u64(2);
        for lambda in [0.7, 4.0, 10.0, 37.5, 500.0] {
            let draws: Vec<f64> = (0..20_000)
                .map(|_| poisson(&mut rng, lambda) as f64)
                .collect();
            let (mean, var) = moments(&draws);
            // Five standard errors of each estimate.
            let se_mean = (lambda / 20_000.0).sqrt();
            let se_var = lambda * (2.0 / 20_000.0f64).sqrt() * (1.0 + 1.0 / (2.0 * lambda)).sqrt();
            assert!(
                (mean - lambda).abs() < 5.0 * se_mean,
                "lambda {lambda}: mean {mean}"
            );
            assert!(
                (var - lambda).abs() < 5.0 * se_var,
                "lambda {lambda}: var {var}"
            );
        }
        assert_eq!(poisson(&mut rng, 0.0), 0);
    }

    #[test]
    fn poisson_pmf_matches_at_small_counts_for_ptrs() {
        // P(K = 12) for lambda = 12 is 0.114389...; PTRS must reproduce point probabilities too.
        let mut rng = StdRng::seed_from_u64(3);
        let n = 50_000;
        let hits = (0..n).filter(|_| poisson(&mut rng, 12.0) == 12).count() as f64 / n as f64;
        let exact = (-12.0 + 12.0 * 12f64.ln() - ln_factorial(12.0)).exp();
        assert!(
            (hits - exact).abs() < 5.0 * (exact * (1.0 - exact) / n as f64).sqrt(),
            "{hits} vs {exact}"
        );
    }
}
