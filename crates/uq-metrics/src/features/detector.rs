//! The detectors by name: what each scores, and the error a fit names it in.

use crate::error::MetricsError;

/// A feature-space OOD detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Detector {
    Mahalanobis,
    RelativeMahalanobis,
    Vim,
    Knn,
}

impl Detector {
    /// Every variant, in declaration order.
    pub const ALL: [Self; 4] = [
        Self::Mahalanobis,
        Self::RelativeMahalanobis,
        Self::Vim,
        Self::Knn,
    ];

    /// The name configs and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mahalanobis => "mahalanobis",
            Self::RelativeMahalanobis => "relative_mahalanobis",
            Self::Vim => "vim",
            Self::Knn => "knn",
        }
    }

    /// Every name, in the order of [`Self::ALL`], joined for an error message.
    pub(crate) fn listed() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl std::fmt::Display for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Detector {
    type Err = crate::error::MetricsError;

    fn from_str(s: &str) -> crate::error::Result<Self> {
        (Self::ALL.into_iter().find(|v| v.name() == s))
            .ok_or_else(|| crate::error::MetricsError::UnknownDetector(s.to_string()))
    }
}

impl Detector {
    /// What the detector scores, in a line.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Mahalanobis => {
                "smallest Mahalanobis distance to a class mean (one shared covariance)"
            }
            Self::RelativeMahalanobis => {
                "Mahalanobis distance to the nearest class minus that to one Gaussian of all classes"
            }
            Self::Vim => {
                "norm outside the features' principal subspace as a virtual logit, against the energy"
            }
            Self::Knn => {
                "distance to the k-th (50th in runs) nearest training feature, features L2-normalised"
            }
        }
    }

    /// Whether the detector reads logits beside the features.
    pub fn needs_logits(self) -> bool {
        self == Self::Vim
    }
}

/// The error of `detector` that cannot be fitted or applied as asked.
pub(crate) fn fit_error(detector: &'static str, reason: String) -> MetricsError {
    MetricsError::Detector { detector, reason }
}
