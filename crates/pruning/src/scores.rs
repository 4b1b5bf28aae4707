//! What a criterion gives: a score per unit, `[block][unit within the block]`.

use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// Scores `[L][units in the block]` (`[L][H]` for heads, `[L][1]` for block-level units),
/// higher = more important.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scores(pub Vec<Vec<f64>>);

impl Scores {
    /// Rows of a `[L, U]` tensor.
    pub fn from_tensor(t: Tensor<2>) -> Self {
        let [_, width] = t.dims();
        Self(host(t).chunks(width.max(1)).map(<[f64]>::to_vec).collect())
    }

    /// One row per block, each `[units in the block]`.
    pub fn from_rows(rows: Vec<Tensor<1>>) -> Self {
        Self(rows.into_iter().map(host).collect())
    }

    /// The scores min-max scaled to [0, 1] over all units (all 0 when they are equal).
    pub(crate) fn min_max(&self) -> Self {
        let all = self.0.iter().flatten();
        let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
        let span = all.copied().fold(f64::NEG_INFINITY, f64::max) - lo;
        let scale = |s: f64| if span > 0.0 { (s - lo) / span } else { 0.0 };
        Self(
            self.0
                .iter()
                .map(|row| row.iter().map(|&s| scale(s)).collect())
                .collect(),
        )
    }
}

impl Scores {
    /// `(block, unit)` of the first score that is not a finite number.
    pub(crate) fn position_not_finite(&self) -> Option<(usize, usize)> {
        (self.0.iter().enumerate())
            .find_map(|(l, row)| row.iter().position(|s| !s.is_finite()).map(|u| (l, u)))
    }
}

/// A tensor's values on the host, as f64 (empty if the backend cannot read them back).
fn host<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    (t.into_data().convert::<f64>())
        .try_to_vec::<f64>()
        .unwrap_or_default()
}
