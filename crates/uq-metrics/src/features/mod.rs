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

mod detector;
mod eigen;
mod fit;
mod gaussian;
mod knn;
mod linalg;
mod members;
mod ood_score;
mod options;
mod vim;

pub use detector::Detector;
pub use fit::{Fitted, fit};
pub use gaussian::AUTO_SHRINK_BELOW;
pub use knn::NORM_EPS;
pub use members::{FittedMembers, fit_members};
pub use ood_score::OodScore;
pub use options::{DetectorOptions, Shrinkage};
pub use vim::default_vim_dim;
