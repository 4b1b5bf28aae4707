//! ViM (virtual logit matching): the norm of a feature's residual outside the training
//! features' principal subspace, scaled to the logits' range, against the logits' energy.

use ndarray::{Array2, ArrayView2, s};

use super::detector::fit_error;
use super::linalg::{centred, group_means, product, scatter, symmetric_eigen};
use crate::classification::top_label;
use crate::error::Result;
use crate::input::Logits;
use crate::scores::log_sum_exp;

/// The principal subspace's dimension for D-dimensional features when none is given: 1000
/// from D = 1500, 512 from D = 768, D/2 below (the choices of the ViM paper for its widths,
/// half the width for narrower features).
pub fn default_vim_dim(d: usize) -> usize {
    match d {
        1500.. => 1000,
        768.. => 512,
        _ => (d / 2).max(1),
    }
}

pub(crate) struct Vim {
    /// The training features' mean: the features are centred on it.
    origin: Vec<f64>,
    /// `[D, D − dim]`: the eigenvectors of the `D − dim` smallest eigenvalues.
    residual: Array2<f64>,
    /// Mean max-logit over mean residual norm on the training features.
    alpha: f64,
}

impl Vim {
    pub(crate) fn fit(x: &[f64], n: usize, d: usize, logits: &Logits, dim: usize) -> Result<Self> {
        if dim == 0 || dim >= d {
            return Err(fit_error(
                "vim",
                format!(
                    "a principal subspace of dimension {dim}; expected 1 to {}",
                    d - 1
                ),
            ));
        }
        let groups = vec![0; n];
        let origin = group_means(x, d, &groups, 1).remove(0).unwrap_or_default();
        let centred_x = centred(x, d, std::slice::from_ref(&origin), &groups);
        let (_, vectors) = symmetric_eigen(scatter(centred_x.view()).view())
            .ok_or_else(|| fit_error("vim", "the covariance's eigendecomposition failed".into()))?;
        // Eigenvalues ascend: the first D − dim columns span the residual space.
        let residual = vectors.slice(s![.., ..d - dim]).to_owned();
        let norms = residual_norms(centred_x.view(), residual.view());
        let mean_norm = norms.iter().sum::<f64>() / n as f64;
        let mean_max = logits.rows().map(|l| top_label(l).1).sum::<f64>() / n as f64;
        let alpha = mean_max / mean_norm;
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(fit_error(
                "vim",
                format!(
                    "the scale is the training features' mean max-logit ({mean_max}) over \
                     their mean residual norm ({mean_norm}); expected both positive"
                ),
            ));
        }
        Ok(Self {
            origin,
            residual,
            alpha,
        })
    }

    /// `alpha · |(x − origin) R| − logsumexp(logits)` per row.
    pub(crate) fn score(&self, x: &[f64], n: usize, d: usize, logits: &Logits) -> Vec<f64> {
        let centred_x = centred(x, d, std::slice::from_ref(&self.origin), &vec![0; n]);
        let norms = residual_norms(centred_x.view(), self.residual.view());
        (norms.iter().zip(logits.rows()))
            .map(|(r, l)| self.alpha * r - log_sum_exp(l))
            .collect()
    }
}

fn residual_norms(x: ArrayView2<'_, f64>, residual: ArrayView2<'_, f64>) -> Vec<f64> {
    let projected = product(x, residual);
    (projected.rows().into_iter())
        .map(|row| row.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect()
}
