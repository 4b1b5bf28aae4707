//! What a strategy gives: a score per (block, head).

use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// Scores `[L][H]`, higher = more important.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadScores(pub Vec<Vec<f64>>);

impl HeadScores {
    /// Rows of a `[L, H]` tensor.
    pub(crate) fn from_tensor(t: Tensor<2>) -> Self {
        let [_, heads] = t.dims();
        let values = t
            .into_data()
            .convert::<f64>()
            .try_to_vec::<f64>()
            .unwrap_or_default();
        Self(values.chunks(heads.max(1)).map(<[f64]>::to_vec).collect())
    }

    /// The scores min-max scaled to [0, 1] over all heads (all 0 when they are equal).
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
