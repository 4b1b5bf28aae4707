//! The metrics of the output contract, from [`Predictions`].

use std::collections::BTreeMap;

use uq_metrics::{ConformalReport, ConformalScore, Diversity, Options, Score, ScoreInput};

use super::predict::Predictions;
use crate::error::Result;
use report::summary::{DiversityMetrics, IdMetrics, OodMetrics, ShiftMetrics};

/// Accuracy, NLL, Brier, ECE, AECE, class-wise ECE, AURC and AUGRC of the ensemble's mean
/// prediction.
pub fn id_metrics(p: &Predictions) -> Result<IdMetrics> {
    let r = uq_metrics::evaluate(&p.members.mean(), &p.labels, &Options::default())?;
    Ok(IdMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        brier: r.brier,
        ece: r.ece,
        aece: r.aece,
        classwise_ece: r.classwise_ece,
        aurc: r.aurc,
        augrc: r.augrc,
    })
}

pub fn shift_metrics(p: &Predictions) -> Result<ShiftMetrics> {
    let r = id_metrics(p)?;
    Ok(ShiftMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        ece: r.ece,
    })
}

/// The uncertainty score of every sample (higher = more likely OOD).
pub fn scores(p: &Predictions, score: Score) -> Result<Vec<f64>> {
    let mean = p.members.mean();
    let input = ScoreInput {
        probs: Some(&mean),
        members: Some(&p.members),
        logits: Some(&p.logits),
    };
    Ok(uq_metrics::score(score, &input)?)
}

/// Bootstrap resamples of each seed's test and OOD sets for the headline AUROC's sampling
/// spread: 200 put a 95% interval's ends within about ±0.2 standard errors.
pub const BOOTSTRAP_RESAMPLES: usize = 200;

/// The OOD metrics from the scores of the test set and of one OOD set ([`scores`]); with
/// `bootstrap_seed`, the AUROC's bootstrap over both sets too.
pub fn ood_metrics(
    id_scores: &[f64],
    ood_scores: &[f64],
    bootstrap_seed: Option<u64>,
) -> Result<OodMetrics> {
    let r = uq_metrics::ood_report(id_scores, ood_scores)?;
    let bootstrap = bootstrap_seed
        .map(|seed| uq_metrics::auroc_bootstrap(id_scores, ood_scores, BOOTSTRAP_RESAMPLES, seed))
        .transpose()?;
    Ok(OodMetrics {
        auroc: r.auroc,
        aupr_in: r.aupr_in,
        aupr_out: r.aupr_out,
        fpr95: r.fpr95,
        auroc_bootstrap: bootstrap,
    })
}

/// Diversity of the members on the test set and on each named OOD set; `None` for one member.
pub fn diversity_metrics(
    test: &Predictions,
    ood: &[(&str, &Predictions)],
) -> Result<Option<DiversityMetrics>> {
    if test.members.m() < 2 {
        return Ok(None);
    }
    let mut per_set = BTreeMap::new();
    for (name, p) in ood {
        per_set.insert(name.to_string(), uq_metrics::diversity(&p.members, None)?);
    }
    let id: Diversity = uq_metrics::diversity(&test.members, Some(&test.labels))?;
    Ok(Some(DiversityMetrics { id, ood: per_set }))
}

/// Split conformal sets at level `alpha`: threshold from `val`, coverage and size on `test`.
pub fn conformal_metrics(
    val: &Predictions,
    test: &Predictions,
    score: ConformalScore,
    alpha: f64,
) -> Result<ConformalReport> {
    let (cal, probs) = (val.members.mean(), test.members.mean());
    Ok(uq_metrics::conformal(
        &cal,
        &val.labels,
        &probs,
        &test.labels,
        score,
        alpha,
    )?)
}
