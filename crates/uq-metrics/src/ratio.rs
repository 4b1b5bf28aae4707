//! The ratio of two paired means over seeds with Fieller's confidence set: the share of a
//! reference's gain that a method keeps is `mean(method gain) / mean(reference gain)`.
//!
//! Fieller's set (Fieller 1954) is every ratio ρ for which a paired t-test of `x − ρ y` does
//! not reject 0 at the 95% level. Unlike the delta method it stays valid when the denominator
//! is near 0, and says so: when the reference's gain is not itself distinguishable from 0 the
//! set is unbounded (the whole line, or the line less an interval), which a symmetric
//! delta-method interval would hide.

use serde::{Deserialize, Serialize};

use crate::error::{MetricsError, Result};
use crate::stats::t_quantile;

/// Fieller's 95% confidence set for a ratio of means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RatioSet {
    /// The interval `[low, high]`: the denominator's mean is clearly away from 0.
    Bounded { low: f64, high: f64 },
    /// Every ratio but those strictly between `low` and `high` (`(−∞, low] ∪ [high, ∞)`): the
    /// denominator's mean is not distinguishable from 0.
    Outside { low: f64, high: f64 },
    /// Every ratio: neither mean is distinguishable from 0.
    Unbounded,
    /// Fewer than two pairs, or a value not finite.
    Undefined,
}

/// A ratio of paired means with its [`RatioSet`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// `mean(x) / mean(y)`; NaN when `mean(y)` is 0 or undefined.
    pub estimate: f64,
    pub set: RatioSet,
}

/// `mean(x) / mean(y)` over paired values (one pair per seed) and its 95% Fieller set, from
/// the sample covariance of the pairs (the pairing is what makes the set narrow: seed-to-seed
/// variation the two share cancels).
pub fn fieller(x: &[f64], y: &[f64]) -> Result<Ratio> {
    if x.len() != y.len() {
        return Err(MetricsError::ShapeMismatch {
            what: "ratio denominators",
            expected: x.len(),
            found: y.len(),
        });
    }
    let n = x.len();
    let finite = x.iter().chain(y).all(|v| v.is_finite());
    let undefined = Ratio {
        estimate: f64::NAN,
        set: RatioSet::Undefined,
    };
    if n < 2 || !finite {
        return Ok(undefined);
    }
    let nf = n as f64;
    let (mx, my) = (x.iter().sum::<f64>() / nf, y.iter().sum::<f64>() / nf);
    let cov = |a: &[f64], ma: f64, b: &[f64], mb: f64| {
        a.iter()
            .zip(b)
            .map(|(u, v)| (u - ma) * (v - mb))
            .sum::<f64>()
            / ((nf - 1.0) * nf)
    };
    // Variances and covariance of the two means.
    let (vxx, vyy, vxy) = (cov(x, mx, x, mx), cov(y, my, y, my), cov(x, mx, y, my));
    let t2 = t_quantile(0.975, n - 1).powi(2);
    // ρ is in the set when (mx − ρ my)² <= t² (vxx − 2ρ vxy + ρ² vyy):
    // a ρ² − 2 b ρ + c <= 0.
    let (a, b, c) = (my * my - t2 * vyy, mx * my - t2 * vxy, mx * mx - t2 * vxx);
    let estimate = if my != 0.0 { mx / my } else { f64::NAN };
    let disc = b * b - a * c;
    let set = if a > 0.0 {
        let root = disc.max(0.0).sqrt();
        RatioSet::Bounded {
            low: (b - root) / a,
            high: (b + root) / a,
        }
    } else if a < 0.0 && disc > 0.0 {
        let root = disc.sqrt();
        // a < 0 flips the inequality: ρ outside the roots.
        RatioSet::Outside {
            low: (b + root) / a,
            high: (b - root) / a,
        }
    } else {
        RatioSet::Unbounded
    };
    Ok(Ratio { estimate, set })
}
