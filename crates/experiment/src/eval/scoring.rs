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
    let members = train.member_features.len();
    let sets: Vec<&Predictions> = std::iter::once(test).chain(ood).collect();
    let mut sums: Vec<Vec<f64>> = sets.iter().map(|p| vec![0.0; p.labels.len()]).collect();
    let options = DetectorOptions::default();
    for k in 0..members {
        let fitted = uq_metrics::fit(
            detector,
            &train.member_features[k],
            &train.labels,
            Some(&train.member_logits[k]),
            &options,
        )
        .context(format!("member {k}, fitted on the training split"))?;
        for (sum, set) in sums.iter_mut().zip(&sets) {
            let features = set
                .member_features
                .get(k)
                .ok_or_else(|| ExperimentError::invalid(format!("member {k} gave no features")))?;
            let s = fitted.score(features, Some(&set.member_logits[k]))?;
            sum.iter_mut().zip(s).for_each(|(acc, v)| *acc += v);
        }
    }
    let mut means = sums
        .into_iter()
        .map(|s| s.into_iter().map(|v| v / members as f64).collect());
    Ok(SetScores {
        id: means.next().unwrap_or_default(),
        ood: means.collect(),
    })
}
