//! The one error type of the crate.

use std::fmt;

/// Why a metric could not be computed. Every variant names the offending input.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricsError {
    /// An input that must hold at least one element is empty (`what` names it).
    Empty { what: &'static str },
    /// An OOD metric was given no samples of one side (`missing` is "ID" or "OOD").
    MissingClass { missing: &'static str },
    /// A NaN or infinite value in `what` at flat `index`.
    NonFinite {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A probability outside [0, 1] in `what` at flat `index`.
    NotProbability {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A row of probabilities whose sum is further than `tol` from 1.
    NotNormalised {
        what: &'static str,
        row: usize,
        sum: f64,
        tol: f64,
    },
    /// A label `label` at `index` that is not below the number of classes.
    LabelOutOfRange {
        index: usize,
        label: usize,
        classes: usize,
    },
    /// `what` has `found` elements where `expected` were needed.
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// A score needs an input it was not given (`needs` says which).
    MissingInput {
        score: &'static str,
        needs: &'static str,
    },
    /// An option outside its allowed range.
    InvalidOption {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// A score name that `Score::from_str` does not know.
    UnknownScore(String),
    /// A metric over ensemble members (`metric` names it) given fewer than `needed` members.
    TooFewMembers {
        metric: &'static str,
        needed: usize,
        found: usize,
    },
    /// A conformal score name that `ConformalScore::from_str` does not know.
    UnknownConformalScore(String),
    /// A detector name that `Detector::from_str` does not know.
    UnknownDetector(String),
    /// An OOD score name that neither `Score` nor `Detector` knows.
    UnknownOodScore(String),
    /// A feature-space detector that cannot be fitted or applied as asked (`reason` says why).
    Detector {
        detector: &'static str,
        reason: String,
    },
}

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty { what } => write!(f, "{what} is empty; expected at least one element"),
            Self::MissingClass { missing } => write!(
                f,
                "OOD metrics need both ID and OOD samples, but there are no {missing} samples"
            ),
            Self::NonFinite { what, index, value } => {
                write!(f, "{what}[{index}] = {value}; expected a finite number")
            }
            Self::NotProbability { what, index, value } => {
                write!(
                    f,
                    "{what}[{index}] = {value}; expected a probability in [0, 1]"
                )
            }
            Self::NotNormalised {
                what,
                row,
                sum,
                tol,
            } => write!(f, "{what} row {row} sums to {sum}; expected 1 within {tol}"),
            Self::LabelOutOfRange {
                index,
                label,
                classes,
            } => write!(
                f,
                "labels[{index}] = {label}; expected a class below {classes}"
            ),
            Self::ShapeMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what} has {found} elements; expected {expected}"),
            Self::MissingInput { score, needs } => {
                write!(f, "score '{score}' needs {needs}, which was not given")
            }
            Self::InvalidOption {
                name,
                value,
                expected,
            } => write!(f, "option {name} = {value}; expected {expected}"),
            Self::UnknownScore(name) => write!(
                f,
                "unknown score '{name}'; expected one of {}",
                crate::Score::NAMES.join(", ")
            ),
            Self::TooFewMembers {
                metric,
                needed,
                found,
            } => write!(
                f,
                "{metric} needs at least {needed} members, but there are {found}"
            ),
            Self::UnknownConformalScore(name) => write!(
                f,
                "unknown conformal score '{name}'; expected one of {}",
                crate::ConformalScore::NAMES.join(", ")
            ),
            Self::UnknownDetector(name) => write!(
                f,
                "unknown detector '{name}'; expected one of {}",
                crate::Detector::NAMES.join(", ")
            ),
            Self::UnknownOodScore(name) => write!(
                f,
                "unknown OOD score '{name}'; expected one of {}, or a feature-space detector: {}",
                crate::Score::NAMES.join(", "),
                crate::Detector::NAMES.join(", ")
            ),
            Self::Detector { detector, reason } => write!(f, "{detector} detector: {reason}"),
        }
    }
}

impl std::error::Error for MetricsError {}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, MetricsError>;
