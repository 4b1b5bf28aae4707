//! The detectors by name: what each scores, and the error a fit names it in.

use crate::error::{MetricsError, Result};
use registry::{Entry, Registry};

/// A feature-space OOD detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Detector {
    Mahalanobis,
    RelativeMahalanobis,
    Vim,
    Knn,
}

impl Detector {
    /// Each detector's name (configs and the command line use it) and what it scores, in a line.
    pub const NAMES: Registry<Self> = Registry::new(
        "detector",
        &[
            Entry {
                name: "mahalanobis",
                about: "smallest Mahalanobis distance to a class mean (one shared covariance)",
                item: Self::Mahalanobis,
            },
            Entry {
                name: "relative_mahalanobis",
                about: "Mahalanobis distance to the nearest class minus that to one Gaussian of all classes",
                item: Self::RelativeMahalanobis,
            },
            Entry {
                name: "vim",
                about: "norm outside the features' principal subspace as a virtual logit, against the energy",
                item: Self::Vim,
            },
            Entry {
                name: "knn",
                about: "distance to the k-th (50th in runs) nearest training feature, features L2-normalised",
                item: Self::Knn,
            },
        ],
    );

    /// Every variant, in declaration order.
    pub const ALL: [Self; 4] = Self::NAMES.values();

    /// The name configs and the command line use.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// What the detector scores, in a line.
    pub fn about(self) -> &'static str {
        Self::NAMES.entry_of(self).about
    }

    /// Whether the detector reads logits beside the features.
    pub fn needs_logits(self) -> bool {
        self == Self::Vim
    }
}

impl std::fmt::Display for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Detector {
    type Err = MetricsError;

    fn from_str(s: &str) -> Result<Self> {
        Ok(Self::NAMES.get(s)?.item)
    }
}

/// The error of `detector` that cannot be fitted or applied as asked.
pub(crate) fn fit_error(detector: &'static str, reason: String) -> MetricsError {
    MetricsError::Detector { detector, reason }
}
