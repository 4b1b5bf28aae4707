//! The one error type of the crate.

/// Why a metric could not be computed. Every variant names the offending input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    /// An input that must hold at least one element is empty (`what` names it).
    #[error("{what} is empty; expected at least one element")]
    Empty { what: &'static str },
    /// An OOD metric was given no samples of one side (`missing` is "ID" or "OOD").
    #[error("OOD metrics need both ID and OOD samples, but there are no {missing} samples")]
    MissingClass { missing: &'static str },
    /// A NaN or infinite value in `what` at flat `index`.
    #[error("{what}[{index}] = {value}; expected a finite number")]
    NonFinite {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A probability outside [0, 1] in `what` at flat `index`.
    #[error("{what}[{index}] = {value}; expected a probability in [0, 1]")]
    NotProbability {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A row of probabilities whose sum is further than `tol` from 1.
    #[error("{what} row {row} sums to {sum}; expected 1 within {tol}")]
    NotNormalised {
        what: &'static str,
        row: usize,
        sum: f64,
        tol: f64,
    },
    /// A label `label` at `index` that is not below the number of classes.
    #[error("labels[{index}] = {label}; expected a class below {classes}")]
    LabelOutOfRange {
        index: usize,
        label: usize,
        classes: usize,
    },
    /// `what` has `found` elements where `expected` were needed.
    #[error("{what} has {found} elements; expected {expected}")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// A score needs an input it was not given (`needs` says which).
    #[error("score '{score}' needs {needs}, which was not given")]
    MissingInput {
        score: &'static str,
        needs: &'static str,
    },
    /// An option outside its allowed range.
    #[error("option {name} = {value}; expected {expected}")]
    InvalidOption {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// A name (of a score, conformal score, detector or OOD score) that its registry lacks.
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
    /// A metric over ensemble members (`metric` names it) given fewer than `needed` members.
    #[error("{metric} needs at least {needed} members, but there are {found}")]
    TooFewMembers {
        metric: &'static str,
        needed: usize,
        found: usize,
    },
    /// A feature-space detector that cannot be fitted or applied as asked (`reason` says why).
    #[error("{detector} detector: {reason}")]
    Detector {
        detector: &'static str,
        reason: String,
    },
    /// The error of one ensemble member's part of a computation (the message includes it:
    /// callers print errors by their message alone).
    #[error("member {member}: {error}")]
    Member {
        member: usize,
        error: Box<MetricsError>,
    },
}

impl MetricsError {
    /// This error, as member `member`'s.
    pub fn in_member(self, member: usize) -> Self {
        Self::Member {
            member,
            error: Box::new(self),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, MetricsError>;
