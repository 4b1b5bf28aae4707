//! Statistics over seeds: a mean with its 95% Student-t confidence interval, and the paired
//! version for two methods run on the same seeds.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::error::{MetricsError, Result};
use crate::nonfinite::nan_if_null;

/// Mean, sample standard deviation and 95% two-sided Student-t interval of `n` values.
/// Undefined parts are NaN: all of them for n = 0, `std` and the interval for n = 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1).
    #[serde(deserialize_with = "nan_if_null")]
    pub std: f64,
    /// `mean - t_{0.975, n-1} std / sqrt(n)`.
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_low: f64,
    /// `mean + t_{0.975, n-1} std / sqrt(n)`.
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_high: f64,
    pub n: usize,
}

/// The [`Interval`] of `values`. A NaN among them makes every float field NaN; never panics.
pub fn mean_ci(values: &[f64]) -> Interval {
    let n = values.len();
    let nan = f64::NAN;
    if n == 0 {
        return Interval {
            mean: nan,
            std: nan,
            ci_low: nan,
            ci_high: nan,
            n,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    // Two passes: squared deviations from the mean, not sum(x^2) - n mean^2 (cancellation).
    let std = if n > 1 {
        (values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        nan
    };
    let half = t_quantile_975(n - 1) * std / (n as f64).sqrt();
    Interval {
        mean,
        std,
        ci_low: mean - half,
        ci_high: mean + half,
        n,
    }
}

/// The [`Interval`] of the per-seed differences `a[i] - b[i]`: seed-to-seed variation shared by
/// both methods cancels, so the interval is tighter than comparing two unpaired intervals.
pub fn paired(a: &[f64], b: &[f64]) -> Result<Interval> {
    if a.len() != b.len() {
        return Err(MetricsError::ShapeMismatch {
            what: "paired values b",
            expected: a.len(),
            found: b.len(),
        });
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    Ok(mean_ci(&diffs))
}

/// The 90% two-sided Student-t interval of `i`'s mean, `mean ± t_{0.95, n-1} std / sqrt(n)`: the
/// one TOST at 5% agrees with (equivalence is shown exactly when it lies within ± the margin),
/// and whose lower end is the one-sided 95% bound. NaN below two values.
pub(crate) fn interval90(i: &Interval) -> (f64, f64) {
    let half = t_quantile(0.95, i.n.saturating_sub(1)) * i.std / (i.n as f64).sqrt();
    (i.mean - half, i.mean + half)
}

/// `t_{0.975, df}`, the 0.975 quantile of Student's t with `df` degrees of freedom (the
/// half-width factor of a 95% two-sided interval); NaN for df = 0.
pub fn t_quantile_975(df: usize) -> f64 {
    t_quantile(0.975, df)
}

/// The `p` quantile of Student's t with `df` degrees of freedom; NaN for df = 0.
///
/// df up to 100: statrs (agrees with `scipy.stats.t.ppf` to about 1e-12 relative there; its
/// inverse loses digits and time as df grows). Beyond: Hill's (1970) expansion
/// `z + g1/df + g2/df^2 + g3/df^3 + g4/df^4` around the normal quantile z, whose error falls
/// as df^-5 (below 1e-10 relative at df = 100).
pub(crate) fn t_quantile(p: f64, df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=100 => student(df).map_or(f64::NAN, |t| t.inverse_cdf(p)),
        _ => {
            let z = Normal::standard().inverse_cdf(p);
            let (z2, v) = (z * z, df as f64);
            let g1 = z * (z2 + 1.0) / 4.0;
            let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
            let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
            let g4 =
                z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
            z + (g1 + (g2 + (g3 + g4 / v) / v) / v) / v
        }
    }
}

/// `P(T <= x)` for Student's t with `df` degrees of freedom; NaN for df = 0.
pub(crate) fn t_cdf(x: f64, df: usize) -> f64 {
    student(df).map_or(f64::NAN, |t| t.cdf(x))
}

fn student(df: usize) -> Option<StudentsT> {
    (df > 0).then(|| StudentsT::new(0.0, 1.0, df as f64).expect("df > 0 is a valid t"))
}
