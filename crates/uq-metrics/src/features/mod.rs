//! Feature-space OOD detectors: fitted on the training split's features (what a classifier's
//! head reads), then scoring any features, higher = more OOD.
//!
//! - [`Detector::Mahalanobis`]: class means and one shared covariance; the score is the
//!   smallest squared Mahalanobis distance to a class mean.
//! - [`Detector::RelativeMahalanobis`]: the same minus the squared distance to one background
//!   Gaussian fitted on every class together.
//! - [`Detector::Vim`]: the norm of the feature's residual outside the principal subspace of the
//!   centred training features, scaled by the training features' mean max-logit over their
//!   mean residual norm (a virtual logit), minus the logits' log-sum-exp. Needs logits.
//! - [`Detector::Knn`]: the distance from the L2-normalised feature to its k-th nearest
//!   L2-normalised training feature.
//!
//! Covariances are f64, shrunk as [`Shrinkage`] says; a precision is the covariance's
//! pseudo-inverse. A fit that cannot work (too few samples for an unshrunk covariance, k above
//! the training set, a class without features) is a [`MetricsError::Detector`] naming the
//! detector; non-finite features are refused when [`Features`] are built.
//!
//! For an ensemble, [`fit_members`] fits one detector per member and scores a sample by the
//! mean of the members' scores.

mod eigen;
mod gaussian;
mod knn;
mod linalg;
mod members;
mod vim;

pub use gaussian::AUTO_SHRINK_BELOW;
pub use knn::NORM_EPS;
pub use members::{FittedMembers, fit_members};
pub use vim::default_vim_dim;

use crate::error::{MetricsError, Result};
use crate::input::{Features, Logits};
use crate::scores::Score;
use gaussian::Gaussians;
use knn::Knn;
use linalg::rows;
use vim::Vim;

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

/// How the covariance of the Mahalanobis detectors is estimated.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Shrinkage {
    /// Ledoit-Wolf below [`AUTO_SHRINK_BELOW`] degrees of freedom per dimension, none above.
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
    /// ViM's principal subspace dimension; `None`: [`default_vim_dim`].
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

/// A detector fitted on training features.
pub struct Fitted {
    detector: Detector,
    d: usize,
    model: Model,
}

enum Model {
    Mahalanobis(Gaussians),
    Relative {
        classes: Gaussians,
        background: Gaussians,
    },
    Vim(Vim),
    Knn(Knn),
}

/// Fits `detector` on training `features` `[N, D]` with their class `labels`; `logits` `[N, C]`
/// are the training features' logits (ViM needs them; the others ignore them).
pub fn fit(
    detector: Detector,
    features: &Features,
    labels: &[usize],
    logits: Option<&Logits>,
    options: &DetectorOptions,
) -> Result<Fitted> {
    let (n, d, x) = (features.n(), features.d(), features.as_slice());
    let name = detector.name();
    if labels.len() != n {
        return Err(fit_error(
            name,
            format!("{} training labels for {n} training features", labels.len()),
        ));
    }
    let classes = labels.iter().max().map_or(0, |&c| c + 1);
    let model = match detector {
        Detector::Mahalanobis => Model::Mahalanobis(Gaussians::fit(
            x,
            d,
            labels,
            classes,
            options.shrinkage,
            name,
        )?),
        Detector::RelativeMahalanobis => Model::Relative {
            classes: Gaussians::fit(x, d, labels, classes, options.shrinkage, name)?,
            background: Gaussians::fit(x, d, &vec![0; n], 1, options.shrinkage, name)?,
        },
        Detector::Vim => {
            let logits = checked_logits(detector, logits, n)?;
            let dim = options.vim_dim.unwrap_or_else(|| default_vim_dim(d));
            Model::Vim(Vim::fit(x, n, d, logits, dim)?)
        }
        Detector::Knn => {
            if !(1..=n).contains(&options.knn_k) {
                return Err(fit_error(
                    name,
                    format!(
                        "k = {}; expected 1 to the {n} training features",
                        options.knn_k
                    ),
                ));
            }
            Model::Knn(Knn::fit(x, n, d, options.knn_k))
        }
    };
    Ok(Fitted { detector, d, model })
}

impl Fitted {
    pub fn detector(&self) -> Detector {
        self.detector
    }

    /// The OOD score (higher = more OOD) of each row of `features` `[N, D]`; `logits` `[N, C]`
    /// are theirs (ViM needs them).
    pub fn score(&self, features: &Features, logits: Option<&Logits>) -> Result<Vec<f64>> {
        let (n, d) = (features.n(), features.d());
        if d != self.d {
            return Err(fit_error(
                self.detector.name(),
                format!(
                    "features of width {d} scored by a detector fitted on width {}",
                    self.d
                ),
            ));
        }
        let x = rows(features.as_slice(), n, d);
        let min_row = |m: &ndarray::Array2<f64>, i: usize| {
            m.row(i).iter().copied().fold(f64::INFINITY, f64::min)
        };
        Ok(match &self.model {
            Model::Mahalanobis(g) => {
                let dist = g.sq_distances(x);
                (0..n).map(|i| min_row(&dist, i)).collect()
            }
            Model::Relative {
                classes,
                background,
            } => {
                let (dist, base) = (classes.sq_distances(x), background.sq_distances(x));
                (0..n).map(|i| min_row(&dist, i) - base[[i, 0]]).collect()
            }
            Model::Vim(v) => {
                let logits = checked_logits(self.detector, logits, n)?;
                v.score(features.as_slice(), n, d, logits)
            }
            Model::Knn(k) => k.score(x),
        })
    }
}

fn checked_logits(detector: Detector, logits: Option<&Logits>, n: usize) -> Result<&Logits> {
    match logits {
        Some(l) if l.n() == n => Ok(l),
        Some(l) => Err(fit_error(
            detector.name(),
            format!("{} rows of logits for {n} features", l.n()),
        )),
        None => Err(MetricsError::MissingInput {
            score: detector.name(),
            needs: "logits beside the features",
        }),
    }
}

pub(crate) fn fit_error(detector: &'static str, reason: String) -> MetricsError {
    MetricsError::Detector { detector, reason }
}

/// Any OOD score a run can list: one computed from the outputs, or a feature-space detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OodScore {
    Output(Score),
    Feature(Detector),
}

impl OodScore {
    /// Every score, the output scores first.
    pub fn all() -> Vec<Self> {
        (Score::ALL.iter().map(|&s| Self::Output(s)))
            .chain(Detector::ALL.iter().map(|&d| Self::Feature(d)))
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Output(s) => s.name(),
            Self::Feature(d) => d.name(),
        }
    }

    /// What the score measures, in a line.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Output(s) => s.describe(),
            Self::Feature(d) => d.describe(),
        }
    }
}

impl std::fmt::Display for OodScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for OodScore {
    type Err = MetricsError;

    fn from_str(s: &str) -> Result<Self> {
        (s.parse().map(Self::Output))
            .or_else(|_| s.parse().map(Self::Feature))
            .map_err(|_| MetricsError::UnknownOodScore(s.to_string()))
    }
}
