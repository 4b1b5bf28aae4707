//! Statistics over seeds: t quantiles against the closed-form t CDF, intervals by hand, edge
//! cases, and the coverage of the interval by simulation.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{Interval, mean_ci, paired, t_quantile_975};

/// `P(|T| <= t)` for Student's t with integer `df` (Abramowitz & Stegun 26.7.3 and 26.7.4),
/// with `theta = atan(t / sqrt(df))`; independent of the crate's table and expansion.
fn two_sided_cdf(t: f64, df: usize) -> f64 {
    let theta = (t / (df as f64).sqrt()).atan();
    let (s, c2) = (theta.sin(), theta.cos().powi(2));
    if df % 2 == 1 {
        // (2/pi)(theta + sin(theta) (cos + (2/3) cos^3 + ... + (2*4*..*(df-3))/(1*3*..*(df-2)) cos^(df-2)))
        let (mut term, mut sum) = (theta.cos(), 0.0);
        if df > 1 {
            sum = term;
            for j in 1..=(df - 3) / 2 {
                term *= (2 * j) as f64 / (2 * j + 1) as f64 * c2;
                sum += term;
            }
        }
        2.0 / std::f64::consts::PI * (theta + s * sum)
    } else {
        // sin(theta) (1 + (1/2) cos^2 + (1*3)/(2*4) cos^4 + ... up to cos^(df-2))
        let (mut term, mut sum) = (1.0, 1.0);
        for j in 1..=(df - 2) / 2 {
            term *= (2 * j - 1) as f64 / (2 * j) as f64 * c2;
            sum += term;
        }
        s * sum
    }
}

#[test]
fn quantiles_solve_the_closed_form_cdf() {
    for df in 1..=100 {
        let q = t_quantile_975(df);
        // F(q) = 0.975 means P(|T| <= q) = 0.95; bracket q to 1e-7 relative.
        let (below, above) = (
            two_sided_cdf(q * (1.0 - 1e-7), df),
            two_sided_cdf(q * (1.0 + 1e-7), df),
        );
        assert!(
            below < 0.95 && 0.95 < above,
            "df {df}: q = {q}, {below} .. {above}"
        );
    }
}

#[test]
fn quantiles_fall_towards_the_normal_one() {
    let z = 1.959963984540054;
    let mut previous = f64::INFINITY;
    for df in (1..=200).chain([1000, 100_000]) {
        let q = t_quantile_975(df);
        assert!(q < previous && q > z, "df {df}: {q}");
        previous = q;
    }
    assert!((t_quantile_975(1_000_000_000) - z).abs() < 1e-8);
    assert!(t_quantile_975(0).is_nan());
}

#[test]
fn intervals_by_hand() {
    let i = mean_ci(&[1.0, 2.0, 3.0]);
    let half = 4.302652729749464 / 3f64.sqrt(); // t_{0.975, 2} std / sqrt(n), std = 1
    assert_eq!((i.mean, i.std, i.n), (2.0, 1.0, 3));
    assert!((i.ci_low - (2.0 - half)).abs() < 1e-12 && (i.ci_high - (2.0 + half)).abs() < 1e-12);
    // Constant values: no spread, a point interval.
    let i = mean_ci(&[0.25; 4]);
    assert_eq!((i.std, i.ci_low, i.ci_high), (0.0, 0.25, 0.25));
}

#[test]
fn undefined_parts_are_nan() {
    let empty = mean_ci(&[]);
    assert_eq!(empty.n, 0);
    assert!(
        [empty.mean, empty.std, empty.ci_low, empty.ci_high]
            .iter()
            .all(|x| x.is_nan())
    );
    let one = mean_ci(&[0.7]);
    assert_eq!((one.mean, one.n), (0.7, 1));
    assert!(one.std.is_nan() && one.ci_low.is_nan() && one.ci_high.is_nan());
    let with_nan = mean_ci(&[0.1, f64::NAN, 0.3]);
    assert_eq!(with_nan.n, 3);
    assert!(
        [
            with_nan.mean,
            with_nan.std,
            with_nan.ci_low,
            with_nan.ci_high
        ]
        .iter()
        .all(|x| x.is_nan())
    );
    // NaN fields round-trip through JSON (written as null).
    let json = serde_json::to_string(&one).unwrap();
    let back: Interval = serde_json::from_str(&json).unwrap();
    assert!(
        back.mean == 0.7 && back.std.is_nan() && back.n == 1,
        "{json}"
    );
}

#[test]
fn paired_by_hand() {
    // Method a beats b by exactly 0.125 on every seed, whatever the seed effect.
    let b = [0.5, 0.75, 0.625, 0.25];
    let a: Vec<f64> = b.iter().map(|x| x + 0.125).collect();
    let i = paired(&a, &b).unwrap();
    assert_eq!(
        (i.mean, i.std, i.ci_low, i.ci_high, i.n),
        (0.125, 0.0, 0.125, 0.125, 4)
    );
    // Differences 0.5, 0, 0.25 (exact in binary): mean 0.25, std 0.25.
    let i = paired(&[1.0, 0.5, 0.75], &[0.5, 0.5, 0.5]).unwrap();
    assert_eq!((i.mean, i.std), (0.25, 0.25));
    let half = 4.302652729749464 * 0.25 / 3f64.sqrt();
    assert!((i.ci_high - (0.25 + half)).abs() < 1e-12);
    let empty = paired(&[], &[]).unwrap();
    assert!(empty.n == 0 && empty.mean.is_nan());
}

#[test]
fn intervals_cover_the_true_mean_95_percent_of_the_time() {
    // 4000 samples of n = 5 normals. Coverage is Binomial(4000, 0.95)/4000, sd 0.0034; four
    // sd is 0.014. Normal quantiles instead of t would cover 0.88, a divisor n instead of
    // n - 1 about 0.93: both far outside.
    let mut rng = StdRng::seed_from_u64(31);
    let mut normal = || {
        let u: f64 = 1.0 - rng.random::<f64>();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.random::<f64>()).cos()
    };
    let (reps, mu) = (4000, 3.0);
    let covered = (0..reps)
        .filter(|_| {
            let x: Vec<f64> = (0..5).map(|_| mu + 0.5 * normal()).collect();
            let i = mean_ci(&x);
            i.ci_low <= mu && mu <= i.ci_high
        })
        .count();
    let rate = covered as f64 / reps as f64;
    let sd = (0.95 * 0.05 / reps as f64).sqrt();
    assert!((rate - 0.95).abs() <= 4.0 * sd, "coverage {rate}");
}

/// The bootstrap's O(n) sweep over multiplicities equals resampling the arrays and calling
/// `auroc` on each resample, draw for draw (the draws replayed as documented).
#[test]
fn auroc_bootstrap_equals_resampling_by_hand() {
    let mut rng = StdRng::seed_from_u64(7);
    // Rounded scores: many ties, within and across the sets.
    let id: Vec<f64> = (0..300)
        .map(|_| (rng.random::<f64>() * 20.0).round())
        .collect();
    let ood: Vec<f64> = (0..200)
        .map(|_| (rng.random::<f64>() * 20.0 + 4.0).round())
        .collect();
    let (resamples, seed) = (50, 11);
    let b = uq_metrics::auroc_bootstrap(&id, &ood, resamples, seed).unwrap();
    let mut draws = StdRng::seed_from_u64(seed);
    let mut values: Vec<f64> = (0..resamples)
        .map(|_| {
            let i: Vec<f64> = (0..id.len())
                .map(|_| id[draws.random_range(0..id.len())])
                .collect();
            let o: Vec<f64> = (0..ood.len())
                .map(|_| ood[draws.random_range(0..ood.len())])
                .collect();
            uq_metrics::auroc(&i, &o).unwrap()
        })
        .collect();
    let mean = values.iter().sum::<f64>() / resamples as f64;
    let std =
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (resamples - 1) as f64).sqrt();
    assert!((b.std - std).abs() < 1e-12, "{} vs {std}", b.std);
    values.sort_by(f64::total_cmp);
    // 2.5% of 49 gaps: between the 2nd and 3rd smallest.
    let low = values[1] + 0.225 * (values[2] - values[1]);
    assert!((b.ci_low - low).abs() < 1e-12);
}

/// Against the Hanley-McNeil (1982) standard error of an AUROC, for two normal score sets whose
/// AUROC is Φ(1/√2) = 0.760: the bootstrap std agrees within 15%, and the interval holds the
/// full-sample AUROC.
#[test]
fn auroc_bootstrap_matches_the_analytic_standard_error() {
    let mut rng = StdRng::seed_from_u64(3);
    let normal = |rng: &mut StdRng| {
        // Box-Muller.
        let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let id: Vec<f64> = (0..1000).map(|_| normal(&mut rng)).collect();
    let ood: Vec<f64> = (0..800).map(|_| normal(&mut rng) + 1.0).collect();
    let a = uq_metrics::auroc(&id, &ood).unwrap();
    let (q1, q2) = (a / (2.0 - a), 2.0 * a * a / (1.0 + a));
    let (n_id, n_ood) = (id.len() as f64, ood.len() as f64);
    let se = ((a * (1.0 - a) + (n_ood - 1.0) * (q1 - a * a) + (n_id - 1.0) * (q2 - a * a))
        / (n_id * n_ood))
        .sqrt();
    let b = uq_metrics::auroc_bootstrap(&id, &ood, 400, 5).unwrap();
    assert!(
        (b.std / se - 1.0).abs() < 0.15,
        "bootstrap {} vs analytic {se}",
        b.std
    );
    assert!(b.ci_low < a && a < b.ci_high);
    assert!(uq_metrics::auroc_bootstrap(&id, &ood, 1, 5).is_err());
    assert!(uq_metrics::auroc_bootstrap(&[], &ood, 10, 5).is_err());
}
