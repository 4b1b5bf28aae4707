//! Every listed OOD score of a model's predictions: output scores from the predictions alone,
//! feature-space detectors fitted per member on the training split's features and logits, the
//! members' scores averaged.

use uq_metrics::{Detector, DetectorOptions, OodScore, Score};

use super::metrics::scores;
use super::predict::Predictions;
use crate::error::{ErrorContext, ExperimentError, Result};

/// The per-sample scores (higher = more OOD) of the test set and of each OOD set.
pub struct SetScores {
    pub id: Vec<f64>,
    pub ood: Vec<Vec<f64>>,
}

/// `score` on the test set and each OOD set; `train` holds the training split's predictions with
/// features (needed by the detectors only).
pub fn set_scores(
    score: OodScore,
    train: Option<&Predictions>,
    test: &Predictions,
    ood: &[Predictions],
) -> Result<SetScores> {
    match score {
        OodScore::Output(s) => output_scores(s, test, ood),
        OodScore::Feature(d) => {
            let train = train.ok_or_else(|| {
                ExperimentError::invalid(format!(
                    "the {d} detector needs the training split's features"
                ))
            })?;
            detector_scores(d, train, test, ood).context(format!("the {d} detector"))
        }
    }
}

fn output_scores(score: Score, test: &Predictions, ood: &[Predictions]) -> Result<SetScores> {
    Ok(SetScores {
        id: scores(test, score)?,
        ood: ood
            .iter()
            .map(|p| scores(p, score))
            .collect::<Result<_>>()?,
    })
}

/// One detector per member, fitted on that member's training features (and logits), each set
/// scored by every member's detector and the scores averaged over members.
fn detector_scores(
    detector: Detector,
    train: &Predictions,
    test: &Predictions,
    ood: &[Predictions],
) -> Result<SetScores> {
    let fitted = uq_metrics::fit_members(
        detector,
        &train.member_features,
        &train.labels,
        Some(&train.member_logits),
        &DetectorOptions::default(),
    )
    .context("fitted on the training split")?;
    let score = |p: &Predictions| fitted.score(&p.member_features, Some(&p.member_logits));
    Ok(SetScores {
        id: score(test)?,
        ood: ood
            .iter()
            .map(score)
            .collect::<std::result::Result<_, _>>()?,
    })
}
