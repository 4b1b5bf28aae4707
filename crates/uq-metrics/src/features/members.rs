//! A detector per ensemble member: each member's features are scored by the detector fitted on
//! that member's training features, and a sample's score is the mean over members.

use super::detector::Detector;
use super::fit::{Fitted, fit};
use super::options::DetectorOptions;
use crate::error::{MetricsError, Result};
use crate::input::{Features, Logits};

/// One fitted [`Detector`] per member, in member order.
pub struct FittedMembers {
    members: Vec<Fitted>,
}

/// Fits `detector` once per member on its training `features` `[N, D]` (all with the same
/// `labels`), with each member's training `logits` `[N, C]` when given (ViM needs them).
pub fn fit_members(
    detector: Detector,
    features: &[Features],
    labels: &[usize],
    logits: Option<&[Logits]>,
    options: &DetectorOptions,
) -> Result<FittedMembers> {
    check_members(features, logits)?;
    let members = (features.iter().enumerate())
        .map(|(k, x)| {
            let z = logits.map(|l| &l[k]);
            fit(detector, x, labels, z, options).map_err(|e| e.in_member(k))
        })
        .collect::<Result<_>>()?;
    Ok(FittedMembers { members })
}

impl FittedMembers {
    /// The number of members.
    pub fn m(&self) -> usize {
        self.members.len()
    }

    /// The detector fitted.
    pub fn detector(&self) -> Detector {
        self.members[0].detector()
    }

    /// The mean over members of each member's score of its own `features` (and `logits`):
    /// the members' scores summed in member order, then divided by M.
    pub fn score(&self, features: &[Features], logits: Option<&[Logits]>) -> Result<Vec<f64>> {
        check_members(features, logits)?;
        if features.len() != self.m() {
            return Err(MetricsError::ShapeMismatch {
                what: "features' members (as fitted)",
                expected: self.m(),
                found: features.len(),
            });
        }
        let mut sum = vec![0.0; features[0].n()];
        for (k, (fitted, x)) in self.members.iter().zip(features).enumerate() {
            let s = (fitted.score(x, logits.map(|l| &l[k]))).map_err(|e| e.in_member(k))?;
            if s.len() != sum.len() {
                return Err(MetricsError::ShapeMismatch {
                    what: "a member's feature rows (as member 0's)",
                    expected: sum.len(),
                    found: s.len(),
                });
            }
            sum.iter_mut().zip(s).for_each(|(acc, v)| *acc += v);
        }
        let m = self.m() as f64;
        Ok(sum.into_iter().map(|v| v / m).collect())
    }
}

/// At least one member, and as many members of logits as of features when given.
fn check_members(features: &[Features], logits: Option<&[Logits]>) -> Result<()> {
    if features.is_empty() {
        return Err(MetricsError::Empty {
            what: "features' members",
        });
    }
    match logits {
        Some(l) if l.len() != features.len() => Err(MetricsError::ShapeMismatch {
            what: "logits' members (as the features')",
            expected: features.len(),
            found: l.len(),
        }),
        _ => Ok(()),
    }
}
