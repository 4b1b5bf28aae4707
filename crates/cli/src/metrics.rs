//! `uqformer metrics`: evaluates predictions saved by any framework as `.npy` files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use uq_metrics::{Options, Score, ScoreInput};

use crate::error::CliError;
use crate::features::{self, FeatureArgs};
use crate::npy::load_labels;
use crate::recalibrate::{self, Recalibrated, Test, ValArgs};
use crate::saved::{Side, load_side};

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
    #[command(flatten)]
    val: ValArgs,
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
) -> crate::error::Result<serde_json::Map<String, serde_json::Value>> {
    let labels = args.labels.as_deref().ok_or("--probs needs --labels")?;
    let score: Score = args.score.parse().map_err(|e| CliError::at("--score", e))?;
    let id = load_side(probs, args.logits.as_deref())?;
    let labels = load_labels(labels, id.probs.n(), "the probabilities")?;
    let opts = Options {
        bins: args.bins,
        adaptive_bins: args.bins,
    };
    let report = uq_metrics::evaluate(&id.probs, &labels, &opts)?;
    let mut values = report_values(&report);
    if let Some(path) = &args.ood_probs {
        let ood = load_side(path, args.ood_logits.as_deref())?;
        if ood.probs.c() != id.probs.c() {
            return Err(format!(
                "{}: {} classes, but {} has {}",
                path.display(),
                ood.probs.c(),
                probs.display(),
                id.probs.c()
            )
            .into());
        }
        let scores = |side, path: &Path| {
            side_scores(score, side)
                .map_err(|e| CliError::at(format_args!("{} ({score})", path.display()), e))
        };
        let (id_scores, ood_scores) = (scores(&id, probs)?, scores(&ood, path)?);
        let r = uq_metrics::ood_report(&id_scores, &ood_scores)?;
        values.extend([
            ("auroc", r.auroc),
            ("aupr_in", r.aupr_in),
            ("aupr_out", r.aupr_out),
            ("fpr95", r.fpr95),
        ]);
    } else if args.ood_logits.is_some() {
        return Err("--ood-logits needs --ood-probs".into());
    }
    let recalibrated = match args.val.given() {
        true => Some(recalibrate::run(
            &args.val,
            &Test {
                probs: &id.probs,
                labels: &labels,
                probs_path: probs,
                logits_path: args.logits.as_deref(),
            },
            args.bins,
        )?),
        false => None,
    };
    if !args.json {
        let ood = args.ood_probs.is_some();
        println!(
            "{}",
            table(&values, report.n, score, ood, recalibrated.as_ref())
        );
    }
    let mut out: serde_json::Map<String, serde_json::Value> = (values.iter())
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
        .collect();
    if let Some(serde_json::Value::Object(extra)) = recalibrated.map(|r| serde_json::json!(r)) {
        out.extend(extra);
    }
    Ok(out)
}

/// The metrics of an [`uq_metrics::Report`] by their JSON keys.
fn report_values(r: &uq_metrics::Report) -> BTreeMap<&'static str, f64> {
    BTreeMap::from([
        ("accuracy", r.accuracy),
        ("nll", r.nll),
        ("brier", r.brier),
        ("ece", r.ece),
        ("aece", r.aece),
        ("classwise_ece", r.classwise_ece),
        ("aurc", r.aurc),
        ("augrc", r.augrc),
    ])
}

fn side_scores(score: Score, side: &Side) -> uq_metrics::Result<Vec<f64>> {
    let input = ScoreInput {
        probs: Some(&side.probs),
        members: side.members.as_ref(),
        logits: side.logits.as_ref(),
    };
    uq_metrics::score(score, &input)
}

fn table(
    values: &BTreeMap<&str, f64>,
    n: usize,
    score: Score,
    ood: bool,
    recalibrated: Option<&Recalibrated>,
) -> String {
    let rows: &[(&str, &str)] = &[
        ("accuracy", "accuracy (%) ↑"),
        ("nll", "NLL ↓"),
        ("brier", "Brier ↓"),
        ("ece", "ECE ↓"),
        ("aece", "adaptive ECE ↓"),
        ("classwise_ece", "class-wise ECE ↓"),
        ("aurc", "AURC ↓"),
        ("augrc", "AUGRC ↓"),
        ("auroc", "AUROC (%) ↑"),
        ("aupr_in", "AUPR-In (%) ↑"),
        ("aupr_out", "AUPR-Out (%) ↑"),
        ("fpr95", "FPR95 (%) ↓"),
    ];
    let mut out = format!(
        "{n} in-distribution samples{}\n",
        if ood {
            format!(", OOD score {score}")
        } else {
            String::new()
        }
    );
    let scaled = recalibrated.and_then(|r| Some((r.temperature?, r.calibrated.as_ref()?)));
    if let Some((t, _)) = scaled {
        out.push_str(&format!(
            "  {:<18} {:>10} {:>12}\n",
            "",
            "raw",
            format!("T = {t:.4}")
        ));
    }
    let scaled_values = scaled.map(|(_, r)| report_values(r));
    for (key, label) in rows {
        // Rates in percent, as the report shows them (the JSON keeps fractions).
        let scale = if label.contains("(%)") { 100.0 } else { 1.0 };
        if let Some(v) = values.get(key) {
            out.push_str(&format!("  {label:<18} {:>10.4}", scale * v));
            if let Some(c) = scaled_values.as_ref().and_then(|s| s.get(key)) {
                out.push_str(&format!(" {:>12.4}", scale * c));
            }
            out.push('\n');
        }
    }
    for entry in recalibrated.map_or(&[][..], |r| &r.conformal) {
        let c = &entry.report;
        out.push_str(&format!(
            "  conformal {} at alpha {} ({}): coverage {:.2}%, mean set size {:.3}, threshold {:.6}\n",
            c.score,
            c.alpha,
            entry.predictions,
            100.0 * c.coverage,
            c.set_size,
            c.threshold
        ));
    }
    out.trim_end().to_string()
}
