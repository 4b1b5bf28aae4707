//! Gaussian models of the features: class means with one shared covariance (Mahalanobis), and
//! one background Gaussian over every class (Relative Mahalanobis). Covariances are in f64;
//! a precision is applied as a whitening map, so a squared distance is a sum of squares.

use ndarray::{Array2, ArrayView2};

use super::detector::fit_error;
use super::linalg::{centred, group_means, product, rows, scatter, symmetric_eigen};
use super::options::Shrinkage;
use crate::error::Result;

/// Below this many samples per feature dimension (degrees of freedom over D), the covariance
/// is shrunk (Ledoit-Wolf) under [`Shrinkage::Auto`]: its eigenvalues spread too far there.
pub const AUTO_SHRINK_BELOW: usize = 10;

/// Gaussians sharing one precision: `d²_c(x) = (x − μ_c)ᵀ P (x − μ_c) = |x W − μ_c W|²`, with
/// `P = W Wᵀ` the pseudo-inverse of the covariance (eigenvalues at most `D·ε·λ_max` dropped,
/// as `scipy.linalg.pinvh` does).
pub(crate) struct Gaussians {
    /// `[D, r]`: the kept eigenvectors over the square roots of their eigenvalues.
    whiten: Array2<f64>,
    /// `[C, r]`: each mean, whitened.
    means: Array2<f64>,
    /// The share of the covariance shrunk towards `tr/D · I` (0 when none was).
    pub(crate) shrunk: f64,
}

impl Gaussians {
    /// One Gaussian per group of the `[n, d]` rows `x` (`groups[i] < k`), the covariance of the
    /// rows around their group's mean shared; `detector` names the fit in errors.
    pub(crate) fn fit(
        x: &[f64],
        d: usize,
        groups: &[usize],
        k: usize,
        shrinkage: Shrinkage,
        detector: &'static str,
    ) -> Result<Self> {
        let mut means = Vec::with_capacity(k);
        for (c, mean) in group_means(x, d, groups, k).into_iter().enumerate() {
            means.push(mean.ok_or_else(|| {
                fit_error(detector, format!("class {c} has no training features"))
            })?);
        }
        let n = groups.len();
        let Some(dof) = n.checked_sub(k).filter(|&dof| dof > 0) else {
            return Err(fit_error(
                detector,
                format!("{n} training features in {k} classes leave no degree of freedom"),
            ));
        };
        let residuals = centred(x, d, &means, groups);
        let (whiten, shrunk) = whitening(residuals.view(), dof, shrinkage, detector)?;
        let flat: Vec<f64> = means.concat();
        let means = product(rows(&flat, k, d), whiten.view());
        Ok(Self {
            whiten,
            means,
            shrunk,
        })
    }

    /// Squared distances `[n, C]` of the `[n, d]` rows `x` to every mean.
    pub(crate) fn sq_distances(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let z = product(x, self.whiten.view());
        Array2::from_shape_fn((z.nrows(), self.means.nrows()), |(i, c)| {
            (z.row(i).iter().zip(self.means.row(c)))
                .map(|(a, b)| (a - b).powi(2))
                .sum()
        })
    }
}

/// The whitening map `W` (`P = W Wᵀ`) of the covariance of the centred rows `residuals`,
/// shrunk as `shrinkage` says, and the share shrunk; `dof` is what the samples support (rows
/// minus the means fitted).
fn whitening(
    residuals: ArrayView2<'_, f64>,
    dof: usize,
    shrinkage: Shrinkage,
    detector: &'static str,
) -> Result<(Array2<f64>, f64)> {
    let d = residuals.ncols();
    let mut cov = scatter(residuals);
    let amount = match shrinkage {
        Shrinkage::Auto if dof < AUTO_SHRINK_BELOW * d => ledoit_wolf(residuals, cov.view()),
        Shrinkage::Auto => 0.0,
        Shrinkage::None if dof < d => {
            return Err(fit_error(
                detector,
                format!(
                    "the covariance of {d}-dimensional features has {dof} degrees of freedom \
                     from the training features, so it is singular; shrink it (shrinkage \
                     \"auto\" or \"ledoit_wolf\")"
                ),
            ));
        }
        Shrinkage::None => 0.0,
        Shrinkage::LedoitWolf => ledoit_wolf(residuals, cov.view()),
        Shrinkage::Fixed(a) if (0.0..=1.0).contains(&a) => a,
        Shrinkage::Fixed(a) => {
            return Err(fit_error(
                detector,
                format!("shrinkage {a} is outside [0, 1]"),
            ));
        }
    };
    if amount > 0.0 {
        let mu = cov.diag().sum() / d as f64;
        cov *= 1.0 - amount;
        cov.diag_mut().iter_mut().for_each(|v| *v += amount * mu);
    }
    let (values, vectors) = symmetric_eigen(cov.view()).ok_or_else(|| {
        fit_error(
            detector,
            "the covariance's eigendecomposition failed".into(),
        )
    })?;
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let cutoff = d as f64 * f64::EPSILON * largest;
    let kept: Vec<usize> = (0..d).filter(|&j| values[j] > cutoff).collect();
    if kept.is_empty() {
        return Err(fit_error(
            detector,
            "the training features do not vary: their covariance is zero".into(),
        ));
    }
    let whiten = Array2::from_shape_fn((d, kept.len()), |(i, j)| {
        vectors[[i, kept[j]]] / values[kept[j]].sqrt()
    });
    Ok((whiten, amount))
}

/// The Ledoit-Wolf shrinkage of the covariance `cov = xᵀx / n` of the centred rows `x`
/// towards `tr(cov)/D · I`, as scikit-learn's `ledoit_wolf_shrinkage(x, assume_centered=True)`
/// computes it: `Σ_ij (xᵀx)²_ij` is `n²‖cov‖²_F` and `Σ (x²)ᵀ(x²)` is `Σ_i ‖x_i‖⁴`.
fn ledoit_wolf(x: ArrayView2<'_, f64>, cov: ArrayView2<'_, f64>) -> f64 {
    let (n, d) = (x.nrows() as f64, x.ncols());
    if d == 1 {
        return 0.0;
    }
    let p = d as f64;
    let mu = cov.diag().sum() / p;
    let frobenius: f64 = cov.iter().map(|v| v * v).sum();
    let quartic: f64 = (x.rows().into_iter())
        .map(|row| row.iter().map(|v| v * v).sum::<f64>().powi(2))
        .sum();
    let beta = (quartic / n - frobenius) / (p * n);
    let delta = (frobenius - p * mu * mu) / p;
    let beta = beta.min(delta);
    if beta == 0.0 { 0.0 } else { beta / delta }
}
