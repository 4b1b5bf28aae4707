//! The detectors' settings.

/// How the covariance of the Mahalanobis detectors is estimated.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Shrinkage {
    /// Ledoit-Wolf below [`AUTO_SHRINK_BELOW`](super::AUTO_SHRINK_BELOW) degrees of freedom per
    /// dimension, none above.
    #[default]
    Auto,
    /// The empirical covariance (an error when the samples cannot support it).
    None,
    /// Ledoit-Wolf's estimate of the shrinkage towards `tr(Σ)/D · I`.
    LedoitWolf,
    /// `(1 − a) Σ + a tr(Σ)/D · I` for `a` in [0, 1].
    Fixed(f64),
}

/// The detectors' settings; `Default` is what runs use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectorOptions {
    /// KNN's k (50, as the KNN paper on CIFAR-10).
    pub knn_k: usize,
    /// ViM's principal subspace dimension; `None`: [`default_vim_dim`](super::default_vim_dim).
    pub vim_dim: Option<usize>,
    pub shrinkage: Shrinkage,
}

impl Default for DetectorOptions {
    fn default() -> Self {
        Self {
            knn_k: 50,
            vim_dim: None,
            shrinkage: Shrinkage::Auto,
        }
    }
}
