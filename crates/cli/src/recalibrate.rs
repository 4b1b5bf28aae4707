//! `uqformer metrics` on a validation split: a temperature fitted on it (the metrics of the
//! scaled test predictions beside the raw ones), and split conformal sets calibrated on it,
//! measured on the test predictions. The same functions as a run's, so the same predictions
//! give the same temperature, thresholds, coverage and set sizes.

use std::path::{Path, PathBuf};

use clap::Args;
use uq_metrics::{ConformalScore, Logits, MemberProbs, Probs, Raps};

use crate::error::CliError;
use crate::npy::load_labels;
use crate::saved::{load_members, load_side};

#[derive(Args, Debug)]
pub struct ValArgs {
    /// Validation probabilities, [N, C] or [M, N, C]: where conformal thresholds are
    /// calibrated (default: the softmax of --val-logits).
    #[arg(long, requires = "val_labels")]
    val_probs: Option<PathBuf>,
    /// Validation logits, [N, C] or [M, N, C]: a temperature is fitted on them (one T for
    /// every member, the NLL of the members' mean softmax), and the test predictions of
    /// --logits are scored again scaled by it.
    #[arg(long, requires_all = ["val_labels", "logits"])]
    val_logits: Option<PathBuf>,
    /// Integer labels of the validation split [N].
    #[arg(long)]
    val_labels: Option<PathBuf>,
    /// Conformal scores, comma-separated (thr, aps, raps): sets calibrated on the validation
    /// split at --alpha, their coverage and mean size measured on --probs and --labels.
    #[arg(long, value_delimiter = ',', requires = "val_labels")]
    conformal: Vec<String>,
    /// Miscoverage level of the conformal sets.
    #[arg(long, default_value_t = 0.1)]
    alpha: f64,
    /// RAPS's penalty per rank past --raps-k-reg.
    #[arg(long, default_value_t = Raps::default().penalty)]
    raps_penalty: f64,
    /// The ranks RAPS leaves unpenalised.
    #[arg(long, default_value_t = Raps::default().k_reg)]
    raps_k_reg: usize,
}

impl ValArgs {
    pub fn given(&self) -> bool {
        self.val_logits.is_some() || !self.conformal.is_empty()
    }

    fn scores(&self) -> crate::error::Result<Vec<ConformalScore>> {
        (self.conformal.iter())
            .map(|name| match name.parse() {
                Ok(ConformalScore::Raps(_)) => Raps::new(self.raps_penalty, self.raps_k_reg)
                    .map(ConformalScore::Raps)
                    .map_err(|e| CliError::at("--raps-penalty", e)),
                Ok(score) => Ok(score),
                Err(e) => Err(CliError::at("--conformal", e)),
            })
            .collect()
    }
}

/// The test side as `metrics` loaded it: probabilities (the members' mean), and the file paths.
pub struct Test<'a> {
    pub probs: &'a Probs,
    pub labels: &'a [usize],
    pub probs_path: &'a Path,
    pub logits_path: Option<&'a Path>,
}

/// What the validation split gives: a temperature and the scaled test metrics, conformal sets.
#[derive(serde::Serialize)]
pub struct Recalibrated {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The test metrics of the temperature-scaled predictions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<uq_metrics::Report>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conformal: Vec<ConformalEntry>,
}

/// One conformal score's sets on raw or temperature-scaled predictions.
#[derive(serde::Serialize)]
pub struct ConformalEntry {
    /// `raw` or `temperature-scaled`.
    pub predictions: &'static str,
    #[serde(flatten)]
    pub report: uq_metrics::ConformalReport,
}

pub fn run(args: &ValArgs, test: &Test<'_>, bins: usize) -> crate::error::Result<Recalibrated> {
    let labels_path = args
        .val_labels
        .as_deref()
        .ok_or("--val-* needs --val-labels")?;
    let scores = args.scores()?;
    let val_logits = args.val_logits.as_deref().map(load_members).transpose()?;
    let n = match (&val_logits, &args.val_probs) {
        (Some(z), _) => z[0].n(),
        (None, Some(p)) => load_side(p, None)?.probs.n(),
        (None, None) => return Err("--conformal needs --val-probs or --val-logits".into()),
    };
    let val_labels = load_labels(labels_path, n, "the validation predictions")?;
    let mut out = Recalibrated {
        temperature: None,
        calibrated: None,
        conformal: Vec::new(),
    };
    let raw_val = match (&args.val_probs, &val_logits) {
        (Some(path), _) => load_side(path, None)?.probs,
        (None, Some(z)) => scaled(z, 1.0)?.mean(),
        (None, None) => unreachable!("one of them was required above"),
    };
    if raw_val.c() != test.probs.c() {
        return Err(format!(
            "validation predictions have {} classes, but {} has {}",
            raw_val.c(),
            test.probs_path.display(),
            test.probs.c()
        )
        .into());
    }
    let calibrated = match &val_logits {
        Some(z) => {
            let path = args.val_logits.as_deref().unwrap_or(labels_path);
            let t = uq_metrics::fit_ensemble_temperature(z, &val_labels)
                .map_err(|e| CliError::at(path.display(), e))?;
            let test_path = test.logits_path.ok_or("--val-logits needs --logits")?;
            let test_logits = load_members(test_path)?;
            let options = uq_metrics::Options {
                bins,
                adaptive_bins: bins,
            };
            let probs = scaled(&test_logits, t)?.mean();
            let report = uq_metrics::evaluate(&probs, test.labels, &options)
                .map_err(|e| CliError::at(test_path.display(), e))?;
            (out.temperature, out.calibrated) = (Some(t), Some(report));
            Some((scaled(z, t)?.mean(), probs))
        }
        None => None,
    };
    for score in scores {
        let mut sets = |predictions, val: &Probs, probs: &Probs| -> crate::error::Result<()> {
            let report =
                uq_metrics::conformal(val, &val_labels, probs, test.labels, score, args.alpha)
                    .map_err(|e| CliError::at(format_args!("--conformal {score}"), e))?;
            out.conformal.push(ConformalEntry {
                predictions,
                report,
            });
            Ok(())
        };
        sets("raw", &raw_val, test.probs)?;
        if let Some((val, probs)) = &calibrated {
            sets("temperature-scaled", val, probs)?;
        }
    }
    Ok(out)
}

/// Each member's `softmax(z / t)`.
fn scaled(members: &[Logits], t: f64) -> crate::error::Result<MemberProbs> {
    uq_metrics::scaled_members(members, t).map_err(|e| CliError::at("temperature scaling", e))
}
