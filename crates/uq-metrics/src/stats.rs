//! Statistics over seeds: a mean with its 95% Student-t confidence interval, and the paired
//! version for two methods run on the same seeds.

use serde::{Deserialize, Serialize};

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

/// `t_{0.975, df}`, the 0.975 quantile of Student's t with `df` degrees of freedom (the
/// half-width factor of a 95% two-sided interval); NaN for df = 0.
///
/// df 1 to 30: a table from `scipy.stats.t.ppf` to 12 significant digits (the tests check each
/// entry against the closed-form CDF for integer df). Beyond 30: Hill's (1970) expansion
/// `z + g1/df + g2/df^2 + g3/df^3 + g4/df^4` around the normal quantile z, relative error
/// below 2e-8 at df = 31 and falling as df^-5.
pub fn t_quantile_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T_975[df - 1],
        _ => {
            let z = Z_975;
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

/// The 0.975 quantile of the standard normal.
const Z_975: f64 = 1.959963984540054;

/// `t_{0.975, df}` for df = 1..=30.
#[rustfmt::skip]
const T_975: [f64; 30] = [
    12.7062047362, 4.30265272975, 3.18244630528, 2.7764451052, 2.57058183564, // df 1-5
    2.44691185114, 2.36462425159, 2.3060041352, 2.2621571628, 2.22813885199, // df 6-10
    2.20098516009, 2.17881282967, 2.16036865646, 2.14478668792, 2.13144954556, // df 11-15
    2.11990529922, 2.10981557783, 2.10092204024, 2.09302405441, 2.08596344727, // df 16-20
    2.07961384473, 2.0738730679, 2.06865761042, 2.06389856163, 2.05953855275, // df 21-25
    2.05552943864, 2.05183051648, 2.0484071418, 2.04522964213, 2.0422724563, // df 26-30
];
