//! `uqformer metrics`: evaluates predictions saved by any framework as `.npy` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use ndarray::{ArrayD, Axis, Dimension, Ix2, Ix3};
use uq_metrics::{Logits, MemberProbs, Options, Probs, Score, ScoreInput};

use crate::features::{self, FeatureArgs};
use crate::npy::{load_labels, read_floats};

#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// In-distribution probabilities, [N, C] or member probabilities [M, N, C] (f32 or f64).
    #[arg(long, requires = "labels", required_unless_present = "train_features")]
    probs: Option<PathBuf>,
    /// Integer labels [N].
    #[arg(long)]
    labels: Option<PathBuf>,
    /// OOD probabilities, same layout as --probs; adds AUROC, AUPR-In, AUPR-Out and FPR95.
    #[arg(long)]
    ood_probs: Option<PathBuf>,
    /// In-distribution logits [N, C] (or [M, N, C]: members averaged), for max_logit / energy.
    #[arg(long)]
    logits: Option<PathBuf>,
    /// OOD logits, same layout as --logits.
    #[arg(long)]
    ood_logits: Option<PathBuf>,
    /// OOD score (higher = more likely OOD): msp, entropy, mutual_info, max_logit, energy,
    /// disagreement, member_variance.
    #[arg(long, default_value = "msp")]
    score: String,
    /// Equal-width bins of ECE (and equal-mass bins of adaptive ECE).
    #[arg(long, default_value_t = uq_metrics::DEFAULT_BINS)]
    bins: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    features: FeatureArgs,
}

/// Predictions of one side (ID or OOD): mean probabilities, members if any, logits if given.
struct Side {
    probs: Probs,
    members: Option<MemberProbs>,
    logits: Option<Logits>,
}

pub fn run(args: &MetricsArgs) -> crate::error::Result<()> {
    let detectors = match args.features.given() {
        true => Some(features::run(&args.features)?),
        false => None,
    };
    let json = match &args.probs {
        Some(probs) => Some(probability_metrics(args, probs)?),
        None => None,
    };
    if let Some(detectors) = detectors {
        match args.json {
            true => {
                let mut out = json.unwrap_or_default();
                out.insert("detectors".into(), serde_json::json!(detectors));
                println!("{}", serde_json::Value::Object(out));
            }
            false => println!("{}", features::table(&detectors)),
        }
    } else if let (true, Some(out)) = (args.json, json) {
        println!("{}", serde_json::Value::Object(out));
    }
    Ok(())
}

/// The metrics of saved probabilities, printed as a table, or returned for `--json`.
fn probability_metrics(
    args: &MetricsArgs,
    probs: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let labels = args.labels.as_deref().ok_or("--probs needs --labels")?;
    let score: Score = args.score.parse().map_err(|e| format!("--score: {e}"))?;
    let id = load_side(probs, args.logits.as_deref())?;
    let labels = load_labels(labels, id.probs.n(), "the probabilities")?;
    let opts = Options {
        bins: args.bins,
        adaptive_bins: args.bins,
    };
    let report = uq_metrics::evaluate(&id.probs, &labels, &opts).map_err(|e| e.to_string())?;
    let mut values = BTreeMap::from([
        ("accuracy", report.accuracy),
        ("nll", report.nll),
        ("brier", report.brier),
        ("ece", report.ece),
        ("aece", report.aece),
        ("aurc", report.aurc),
    ]);
    if let Some(path) = &args.ood_probs {
        let ood = load_side(path, args.ood_logits.as_deref())?;
        if ood.probs.c() != id.probs.c() {
            return Err(format!(
                "{}: {} classes, but {} has {}",
                path.display(),
                ood.probs.c(),
                probs.display(),
                id.probs.c()
            ));
        }
        let id_scores =
            side_scores(score, &id).map_err(|e| format!("{} ({score}): {e}", probs.display()))?;
        let ood_scores =
            side_scores(score, &ood).map_err(|e| format!("{} ({score}): {e}", path.display()))?;
        let r = uq_metrics::ood_report(&id_scores, &ood_scores).map_err(|e| e.to_string())?;
        values.extend([
            ("auroc", r.auroc),
            ("aupr_in", r.aupr_in),
            ("aupr_out", r.aupr_out),
            ("fpr95", r.fpr95),
        ]);
    } else if args.ood_logits.is_some() {
        return Err("--ood-logits needs --ood-probs".into());
    }
    if !args.json {
        println!(
            "{}",
            table(&values, report.n, score, args.ood_probs.is_some())
        );
    }
    Ok((values.iter())
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
        .collect())
}

fn side_scores(score: Score, side: &Side) -> uq_metrics::Result<Vec<f64>> {
    let input = ScoreInput {
        probs: Some(&side.probs),
        members: side.members.as_ref(),
        logits: side.logits.as_ref(),
    };
    uq_metrics::score(score, &input)
}

fn load_side(probs: &Path, logits: Option<&Path>) -> Result<Side, String> {
    let array = read_floats(probs)?;
    let named = |e: uq_metrics::MetricsError| format!("{}: {e}", probs.display());
    let (probs_mean, members) = match array.ndim() {
        2 => (
            Probs::from_array(as_dim::<Ix2>(&array)).map_err(named)?,
            None,
        ),
        3 => {
            let members = MemberProbs::from_array(as_dim::<Ix3>(&array)).map_err(named)?;
            (members.mean(), Some(members))
        }
        _ => {
            return Err(format!(
                "{}: shape {:?}, expected [N, C] or [M, N, C]",
                probs.display(),
                array.shape()
            ));
        }
    };
    let logits = logits
        .map(|p| load_logits(p, probs_mean.n(), probs_mean.c()))
        .transpose()?;
    Ok(Side {
        probs: probs_mean,
        members,
        logits,
    })
}

/// A view of `array` with the number of axes `D` (the caller checked `ndim`).
fn as_dim<D: Dimension>(array: &ArrayD<f64>) -> ndarray::ArrayView<'_, f64, D> {
    (array.view().into_dimensionality::<D>())
        .unwrap_or_else(|_| unreachable!("the number of axes was checked"))
}

/// Logits [N, C], or [M, N, C] averaged over members, checked against the probabilities' shape.
fn load_logits(path: &Path, n: usize, c: usize) -> Result<Logits, String> {
    let array = read_floats(path)?;
    let mean = match array.shape() {
        &[rows, cols] if (rows, cols) == (n, c) => as_dim::<Ix2>(&array).to_owned(),
        &[m, rows, cols] if (rows, cols) == (n, c) && m > 0 => (as_dim::<Ix3>(&array))
            .mean_axis(Axis(0))
            .unwrap_or_else(|| unreachable!("M > 0")),
        shape => {
            return Err(format!(
                "{}: shape {shape:?}, expected [{n}, {c}] or [M, {n}, {c}]",
                path.display()
            ));
        }
    };
    Logits::from_array(mean.view()).map_err(|e| format!("{}: {e}", path.display()))
}

fn table(values: &BTreeMap<&str, f64>, n: usize, score: Score, ood: bool) -> String {
    let rows: &[(&str, &str)] = &[
        ("accuracy", "accuracy ↑"),
        ("nll", "NLL ↓"),
        ("brier", "Brier ↓"),
        ("ece", "ECE ↓"),
        ("aece", "adaptive ECE ↓"),
        ("aurc", "AURC ↓"),
        ("auroc", "AUROC ↑"),
        ("aupr_in", "AUPR-In ↑"),
        ("aupr_out", "AUPR-Out ↑"),
        ("fpr95", "FPR95 ↓"),
    ];
    let mut out = format!(
        "{n} in-distribution samples{}\n",
        if ood {
            format!(", OOD score {score}")
        } else {
            String::new()
        }
    );
    for (key, label) in rows {
        if let Some(v) = values.get(key) {
            out.push_str(&format!("  {label:<16} {v:>10.6}\n"));
        }
    }
    out.trim_end().to_string()
}
