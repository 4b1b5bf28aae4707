//! Every OOD score a run can list, by one name: the output scores and the detectors.

use super::detector::Detector;
use crate::error::{MetricsError, Result};
use crate::scores::Score;

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
    pub fn about(self) -> &'static str {
        match self {
            Self::Output(s) => s.about(),
            Self::Feature(d) => d.about(),
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
            .map_err(|_| {
                MetricsError::Unknown(registry::Unknown {
                    what: "OOD score (an output score or a feature-space detector)",
                    name: s.to_string(),
                    valid: Self::all().into_iter().map(Self::name).collect(),
                })
            })
    }
}
